"""The static report (``tfevents report --static``): one self-contained HTML file for a logdir, every chart
and image inline as a data URI, inline CSS, no scripts and nothing fetched from a network. ``watch_report``
re-renders it whenever event files grow. The default, interactive report is ``viewer/reports/interactive``."""
from __future__ import annotations

import datetime
import os
import threading
from typing import Any, Callable, Optional, Sequence

from tfevents.summaries.atomic import atomic_write

from .. import logdir_data
from ..colors import run_colors
from ..plots import matplotlib_figures
from ..plots.graphs import graph_summaries
from ..plots.histograms import draw_distribution, draw_ridge
from ..plots.hparams import hparams_table, plot_parallel_coordinates
from ..plots.media import data_uri, image_mime, pick_steps, plot_pr_curves
from ..plots.projections import plot_embedding, plot_mesh
from ..plots.scalars import scalar_figures
from ..smoothing import DEFAULT_SMOOTHING, Smoothing, smoothing_of
from .rerender_on_change import watch
from .safe_html import escape, text_to_safe_html

MAX_TEXT_STEPS = 10    # TensorBoard's default sampling keeps 10 images / audio clips per series
MAX_AUDIO_STEPS = 5

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;color:#212121;
     background:#f5f5f5}
header{background:#ff6f00;color:#fff;padding:12px 24px}
header h1{margin:0;font-size:20px;font-weight:500} header p{margin:4px 0 0;font-size:12px;opacity:.9}
nav{padding:8px 24px;background:#fff;border-bottom:1px solid #ddd;font-size:14px}
nav a{margin-right:16px;color:#e65100;text-decoration:none}
main{padding:8px 24px 40px}
section{margin-top:16px} h2{font-size:17px;font-weight:500;border-bottom:2px solid #ff6f00;padding-bottom:4px}
h3{font-size:14px;font-weight:500;margin:14px 0 6px}
.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{background:#fff;border:1px solid #ddd;border-radius:4px;padding:8px;max-width:100%;box-sizing:border-box}
.card img.chart{max-width:100%;height:auto;display:block}
.runs span{display:inline-block;margin:2px 12px 2px 0;font-size:13px}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;vertical-align:-1px}
.thumb{display:inline-block;margin:4px;text-align:center;font-size:11px;color:#555;vertical-align:top}
.thumb img{display:block;max-width:256px;max-height:256px;image-rendering:pixelated;border:1px solid #ccc;
     min-width:32px}
table{border-collapse:collapse;font-size:13px;background:#fff}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#fafafa;font-weight:500}
.text-entry{background:#fff;border:1px solid #ddd;padding:4px 10px;margin:6px 0}
.text-entry .step{font-size:11px;color:#777}
.problems{background:#fff3e0;border:1px solid #ffb74d;padding:6px 12px;font-size:13px}
.empty{color:#777;font-style:italic}
"""


def render_report(source: Any, *, tags: Optional[str] = None, runs: Optional[str] = None,
                  smoothing: float = DEFAULT_SMOOTHING, x: str = "step", logy: bool = False,
                  group: Optional[str] = None, title: Optional[str] = None,
                  refresh_seconds: Optional[int] = None, max_images: int = 6,
                  image_steps: Optional[Sequence[int]] = None, logx: bool = False,
                  smooth: "Optional[str | Smoothing]" = None, where: Optional[str] = None,
                  archived: bool = False) -> str:
    """The report's HTML text. ``source``: a logdir path or a loaded Logdir; ``tags`` / ``runs``: regexes;
    ``image_steps``: show images at these steps (nearest recorded), else ``max_images`` spread over the run;
    ``x``: step, relative, wall or a scalar tag (as ``plot_scalars``); ``logx`` / ``logy``: log axes; ``smooth``:
    ``"KIND:PARAM"``, another smoothing than TensorBoard's EMA of weight ``smoothing``; ``where``: a run query
    choosing the runs shown (archived runs left out unless ``archived``)."""
    spec = smoothing_of(smoothing, smooth)
    if isinstance(source, (str, os.PathLike)):
        logdir = logdir_data.load(source, on_error="skip",  # problems are listed in the report instead
                                  where=where, archived=archived)
        path = os.fspath(source)
        title = title or (path if logdir_data.is_url(path) else os.path.abspath(path))
    else:
        logdir = logdir_data.load(source, where=where, archived=archived)
    problems = [str(p) for p in getattr(logdir, "problems", None) or ()]
    title = title or "tfevents report"
    colors = run_colors(logdir_data.all_runs(logdir, {}))
    parts = [
        ("Scalars", _scalars(logdir, tags, runs, colors, smoothing, x, logy, group, logx, spec)),
        ("Distributions", _histograms(logdir, tags, runs, "distribution")),
        ("Histograms", _histograms(logdir, tags, runs, "ridge")),
        ("Images", _images(logdir, tags, runs, max_images, image_steps)),
        ("Videos", _videos(logdir, tags, runs, max_images, image_steps)),
        ("Audio", _audio(logdir, tags, runs)),
        ("Text", _text(logdir, tags, runs)),
        ("PR curves", _pr_curves(logdir, tags, runs)),
        ("Embeddings", _embeddings(logdir, tags, runs)),
        ("Meshes", _meshes(logdir, tags, runs)),
        ("HParams", _hparams(logdir, runs)),
        ("Graphs", _graphs(logdir, runs)),
    ]
    parts = [(name, body) for name, body in parts if body]
    head = ['<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            # no network, no scripts: everything the page shows is inline
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
            'media-src data:; style-src \'unsafe-inline\'">',
            "<title>%s</title>" % escape(title), "<style>%s</style>" % CSS]
    if refresh_seconds:
        head.append('<meta http-equiv="refresh" content="%d">' % int(refresh_seconds))
    run_list = "".join('<span><i class="swatch" style="background:%s"></i>%s</span>' % (c, escape(r))
                       for r, c in colors.items())
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    body = ["<header><h1>%s</h1><p>%d runs · rendered %s · smoothing %s · x: %s</p></header>"
            % (escape(title), len(colors), now, "%.3g" % smoothing if smooth is None else escape(str(spec)),
               escape(x))]
    if parts:
        body.append("<nav>%s</nav>" % "".join('<a href="#%s">%s</a>' % (_anchor(n), n) for n, _ in parts))
    body.append("<main>")
    if problems:
        body.append('<div class="problems"><b>Problems while reading</b><ul>%s</ul></div>'
                    % "".join("<li>%s</li>" % escape(p) for p in problems))
    body.append('<section id="runs"><h2>Runs</h2><div class="runs">%s</div></section>'
                % (run_list or '<span class="empty">no runs found</span>'))
    for name, html in parts:
        body.append('<section id="%s"><h2>%s</h2>%s</section>' % (_anchor(name), name, html))
    if not parts:
        body.append('<p class="empty">No summaries found.</p>')
    body.append("</main>")
    return "<!DOCTYPE html>\n<html lang=\"en\"><head>%s</head><body>%s</body></html>\n" % (
        "".join(head), "\n".join(body))


def write_report(source: Any, path: str, **kwargs) -> str:
    """Render and write atomically (a reader never sees a half-written file); returns ``path``."""
    return atomic_write(path, render_report(source, **kwargs).encode("utf-8"), durable=False)


def watch_report(logdir: str, path: str, *, interval: float = 2.0, stop: Optional[threading.Event] = None,
                 on_render: Optional[Callable[[str], None]] = None, **kwargs) -> None:
    """Write the report, then re-render it each time the logdir's event files change, until ``stop`` is
    set (or Ctrl-C). The page reloads itself in the browser every ``interval`` seconds (at least 2)."""
    kwargs.setdefault("refresh_seconds", max(2, int(round(interval))))
    watch(logdir, lambda: write_report(logdir, path, **kwargs), interval=interval, stop=stop,
          on_render=(lambda: on_render(path)) if on_render else None)


def _anchor(name: str) -> str:
    return name.lower().replace(" ", "-")


def _img(fig, alt: str) -> str:
    return '<img class="chart" alt="%s" src="%s">' % (escape(alt), matplotlib_figures.to_data_uri(fig))


def _cards(items) -> str:
    return '<div class="cards">%s</div>' % "".join('<div class="card">%s</div>' % i for i in items)


def _scalars(logdir, tags, runs, colors, smoothing, x, logy, group, logx=False, smooth=None) -> str:
    figs = scalar_figures(logdir, tags, runs, smoothing=smoothing, x=x, logy=logy, group=group, colors=colors,
                          logx=logx, smooth=smooth)
    return _cards(_img(f, "scalar chart " + t) for t, f in figs.items()) if figs else ""


def _histograms(logdir, tags, runs, style) -> str:
    chosen = logdir_data.select(dict(getattr(logdir, "histograms", {}) or {}), tags, runs)
    colors = run_colors(logdir_data.all_runs(logdir, chosen))
    cards = []
    for (run, tag), s in chosen.items():
        if not len(s.step):
            continue
        fig = matplotlib_figures.new_figure(6.0, 3.6 if style == "distribution" else 4.4)
        ax = fig.add_subplot()
        title = "%s (%s)" % (tag, run)
        if style == "distribution":
            draw_distribution(ax, s, colors[run], title)
        else:
            draw_ridge(ax, s, colors[run], title)
        cards.append(_img(fig, "%s %s" % (style, title)))
    return _cards(cards) if cards else ""


def _images(logdir, tags, runs, max_images, steps) -> str:
    chosen = logdir_data.select(dict(getattr(logdir, "images", {}) or {}), tags, runs)
    out = []
    for (run, tag), recs in chosen.items():
        thumbs = []
        for rec in pick_steps(list(recs), steps, max_images):
            data = bytes(rec.data)
            thumbs.append('<div class="thumb"><img alt="%s step %d" src="%s" width="%d">step %d</div>'
                          % (escape(tag), rec.step, data_uri(data, image_mime(data)),
                             _thumb_width(int(rec.width or 0)), rec.step))
        if thumbs:
            out.append('<h3>%s <small>(%s)</small></h3><div>%s</div>' % (escape(tag), escape(run),
                                                                          "".join(thumbs)))
    return "".join(out)


def _videos(logdir, tags, runs, max_videos, steps) -> str:
    """Each video's GIF inline (``data:image/gif``): the browser plays it, no script needed."""
    chosen = logdir_data.select(dict(getattr(logdir, "videos", {}) or {}), tags, runs)
    out = []
    for (run, tag), recs in chosen.items():
        clips = ['<div class="thumb"><img alt="%s step %d" src="%s" width="%d">step %d</div>'
                 % (escape(tag), rec.step, data_uri(bytes(rec.data), "image/gif"),
                    _thumb_width(int(rec.width or 0)), rec.step)
                 for rec in pick_steps(list(recs), steps, max_videos)]
        if clips:
            out.append('<h3>%s <small>(%s)</small></h3><div>%s</div>' % (escape(tag), escape(run), "".join(clips)))
    return "".join(out)


def _embeddings(logdir, tags, runs) -> str:
    """A PCA scatter per embedding, or why it cannot be drawn (a checkpoint tensor, an unreadable file)."""
    chosen = logdir_data.select(dict(getattr(logdir, "embeddings", {}) or {}), tags, runs)
    cards = []
    for (run, name), rec in chosen.items():
        title = "%s (%s)" % (name, run)
        try:
            cards.append(_img(plot_embedding(rec, title=title), "embedding PCA " + title))
        except (OSError, ValueError) as err:
            cards.append('<b>%s</b><p class="empty">not drawn: %s</p>' % (escape(title), escape(str(err))))
    return _cards(cards) if cards else ""


def _meshes(logdir, tags, runs) -> str:
    """The latest step of each mesh, rendered in 3-D."""
    chosen = logdir_data.select(dict(getattr(logdir, "meshes", {}) or {}), tags, runs)
    cards = [_img(plot_mesh(recs[-1], title="%s (%s)" % (name, run)), "mesh %s (%s)" % (name, run))
             for (run, name), recs in chosen.items() if recs]
    return _cards(cards) if cards else ""


def _thumb_width(width: int) -> int:
    """Small images are scaled up by a whole factor (crisp pixels) to at least 96 px; big ones capped."""
    if width <= 0:
        return 128
    return min(256, width * max(1, -(-96 // width)))


def _audio(logdir, tags, runs) -> str:
    chosen = logdir_data.select(dict(getattr(logdir, "audio", {}) or {}), tags, runs)
    out = []
    for (run, tag), recs in chosen.items():
        clips = []
        for rec in list(recs)[-MAX_AUDIO_STEPS:]:
            mime = getattr(rec, "content_type", None) or "audio/wav"
            clips.append('<div class="thumb"><audio controls preload="metadata" src="%s"></audio><br>'
                         'step %d · %g Hz · %d ch</div>'
                         % (data_uri(bytes(rec.data), mime), rec.step, rec.sample_rate, rec.num_channels or 1))
        if clips:
            out.append('<h3>%s <small>(%s)</small></h3><div>%s</div>' % (escape(tag), escape(run),
                                                                          "".join(clips)))
    return "".join(out)


def _text(logdir, tags, runs) -> str:
    chosen = logdir_data.select(dict(getattr(logdir, "text", {}) or {}), tags, runs)
    out = []
    for (run, tag), recs in chosen.items():
        entries = ['<div class="text-entry"><div class="step">step %d</div>%s</div>'
                   % (rec.step, text_to_safe_html(rec.text)) for rec in list(recs)[-MAX_TEXT_STEPS:]]
        if entries:
            out.append("<h3>%s <small>(%s)</small></h3>%s" % (escape(tag), escape(run), "".join(entries)))
    return "".join(out)


def _pr_curves(logdir, tags, runs) -> str:
    if not logdir_data.select(dict(getattr(logdir, "pr_curves", {}) or {}), tags, runs):
        return ""
    return _cards([_img(plot_pr_curves(logdir, tags, runs), "pr curves")])


def _hparams(logdir, runs) -> str:
    names, metrics, rows = hparams_table(logdir, runs)
    if not rows:
        return ""
    head = "<tr><th>run</th>%s%s</tr>" % ("".join("<th>%s</th>" % escape(n) for n in names),
                                          "".join("<th>%s</th>" % escape(m) for m in metrics))
    body = "".join("<tr><td>%s</td>%s%s</tr>" % (
        escape(r["run"]), "".join("<td>%s</td>" % escape(_cell(r["hparams"].get(n))) for n in names),
        "".join("<td>%s</td>" % escape(_cell(r["metrics"].get(m))) for m in metrics)) for r in rows)
    table = "<table><thead>%s</thead><tbody>%s</tbody></table>" % (head, body)
    return table + _cards([_img(plot_parallel_coordinates(logdir, runs), "hparams parallel coordinates")])


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "%.6g" % v
    return str(v)


def _graphs(logdir, runs) -> str:
    out = []
    for run, s in graph_summaries(logdir, runs).items():
        scopes = "".join("<tr><td>%s</td><td>%d</td></tr>" % (escape(k), v) for k, v in s.scopes.most_common(30))
        ops = "".join("<tr><td>%s</td><td>%d</td></tr>" % (escape(k), v) for k, v in s.op_types.most_common(30))
        out.append('<h3>%s <small>%d nodes, %d functions</small></h3><div class="cards">'
                   '<div class="card"><table><thead><tr><th>scope</th><th>nodes</th></tr></thead>%s</table></div>'
                   '<div class="card"><table><thead><tr><th>op type</th><th>nodes</th></tr></thead>%s</table></div>'
                   "</div>" % (escape(run), s.nodes, s.functions, scopes, ops))
    return "".join(out)

