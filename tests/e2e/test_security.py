"""Security: hostile event files (tags, run names, text, hparams, graph node names chosen by an attacker)
must not run code, inject markup or direct a write outside the chosen output.

* The HTML report: every user string is escaped or cleaned -- no script element, no event-handler
  attribute, no ``javascript:`` link, every ``src`` an inline ``data:`` URI (so nothing is fetched).
* Text renderings: ``tfevents inspect`` prints no terminal control sequence from a file; SVG plots
  are well-formed XML without scripts; a tag full of matplotlib mathtext (``$``) still plots.
* The package source never unpickles, evals, execs or YAML-loads anything read from a file: each use
  of such a function is found by grep and must be on an allowlist that says why it is safe.
* Names read from event files never direct a write outside the output (``tfevents export
  --format tensorboard-csv`` with tags like ``../../evil``; ``report``/``plot`` write one file).
"""
import ast
import html.parser
import io
import os
import re
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest

from tfevents.proto import event_pb2, graph_pb2, summary_pb2
from tfevents.summaries import SummaryWriter
from conftest import REPO

XSS = [
    '<script>alert("xss")</script>',
    '"><img src=x onerror=alert(1)>',
    "'><svg onload=alert(2)>",
    "</title><script>alert(3)</script>",
    "javascript:alert(4)",
    "<a href=\"javascript:alert(5)\">x</a>",
    "{{7*7}}${7*7}<%= 7*7 %>",
]
TEXTS = XSS + [
    "[click](javascript:alert(6))",
    "![img](http://evil.example/x.png)",
    '<img src="http://evil.example/track.png">',
    "<iframe src=//evil.example></iframe>",
    "<style>body{display:none}</style>",
    "<a href='data:text/html,<script>alert(7)</script>'>d</a>",
    "<!-- comment --><scr<script>ipt>alert(8)</script>",
    "<math><mi xlink:href=\"javascript:alert(9)\">m</mi></math>",
]


def _summary(tag, **value):
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, **value)])


def _hostile_logdir(root):
    """Runs and tags named with markup, text with scripts, hparams and graph names with markup.

    Written with ``add_summary`` and raw protos, which keep a tag as given (as TensorFlow, torch and
    other writers may): the reader and viewers must cope with any string."""
    from tfevents.summaries import builders

    run = os.path.join(root, "run<b>\"'&")
    with SummaryWriter(run) as w:
        for i, tag in enumerate(XSS):
            for step in range(3):
                w.add_summary(_summary(tag, simple_value=float(step + i)), step)
            if i < 2:   # (each histogram is two charts: a few are enough)
                w.add_summary(_summary(tag + "/h", histo=builders.histogram("h", np.arange(5.0)).value[0].histo), 1)
        text = builders.text("t", "x").value[0]
        for i, t in enumerate(TEXTS):
            value = summary_pb2.Summary.Value()
            value.CopyFrom(text)
            value.tag = XSS[i % len(XSS)] + "/text"
            value.tensor.string_val[:] = [t.encode()]
            w.add_summary(summary_pb2.Summary(value=[value]), i)
        img = builders.image("i", np.zeros((3, 2, 2))).value[0]
        img.tag = XSS[1]
        w.add_summary(summary_pb2.Summary(value=[img]), 0)
        graph = graph_pb2.GraphDef(node=[graph_pb2.NodeDef(name=XSS[0] + "/n%d" % i, op=XSS[1]) for i in range(3)])
        w.add_graph(graph)
    hp_run = os.path.join(root, "hp")
    with SummaryWriter(hp_run) as w:
        w.add_hparams({XSS[0]: XSS[1], "lr": 0.1}, {"m": 1.0})
    return root


class _Collector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend((tag, k, v or "") for k, v in attrs)

    def handle_data(self, data):
        self.text.append(data)


def test_html_report_escapes_every_user_string(tmp_path):
    from tfevents.viewer.reports.static import render_report

    logdir = _hostile_logdir(str(tmp_path / "logs"))
    with open(os.path.join(logdir, "run<b>\"'&", "events.out.tfevents.9.torn"), "wb") as f:
        f.write(b"\x01" * 7)                          # a problem whose path shows up in the report
    page = render_report(logdir, title=XSS[3])
    parser = _Collector()
    parser.feed(page)
    allowed = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "p", "nav", "a", "main",
               "section", "div", "span", "i", "img", "small", "table", "thead", "tbody", "tr", "th", "td", "ul", "li",
               "b", "audio", "br", "pre", "code", "em", "strong"}
    assert set(parser.tags) <= allowed, set(parser.tags) - allowed
    assert "script" not in parser.tags and "iframe" not in parser.tags and "svg" not in parser.tags
    for tag, name, value in parser.attrs:
        assert not name.startswith("on"), (tag, name, value)
        if name in ("src", "href"):
            v = value.strip().lower()
            assert v.startswith(("data:image/", "data:audio/", "#", "http://", "https://")) and \
                "javascript" not in v, (tag, name, value)
            if name == "src":
                assert v.startswith(("data:image/", "data:audio/")), (tag, name, value)   # nothing fetched
    # the hostile strings are there, as text the reader can see
    visible = "".join(parser.text)
    assert XSS[0] in visible and "run<b>\"'&" in visible and "alert(3)" in visible
    assert "<script>" not in page.lower().replace("&lt;script&gt;", "")


def _run_cli(argv):
    from tfevents.viewer.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


CONTROL = ["\x1b[2J\x1b[H", "\x1b]0;owned\x07", "\r\x1b[Kfake line", "\x08\x08", "\x9b31m"]


def test_inspect_prints_no_terminal_control_sequences(tmp_path):
    logdir = str(tmp_path / "logs")
    with SummaryWriter(os.path.join(logdir, "run\x1b[31m")) as w:
        for i, tag in enumerate(CONTROL):
            w.add_summary(_summary("t" + tag, simple_value=1.0), i)
    code, out, err = _run_cli(["inspect", logdir])
    assert code == 0
    bad = [c for c in out + err if (ord(c) < 32 and c not in "\n") or 0x7f <= ord(c) < 0xa0]
    assert not bad, "control characters reach the terminal: %r" % sorted(set(bad))
    assert "\\x1b[2J" in out or "\\x1b" in out        # shown, escaped, not dropped
    code, out, _ = _run_cli(["inspect", logdir, "--json"])
    assert code == 0 and "\x1b" not in out


def test_svg_plot_is_well_formed_and_mathtext_tags_plot(tmp_path):
    logdir = str(tmp_path / "logs")
    with SummaryWriter(os.path.join(logdir, "r")) as w:
        for tag in XSS[:3] + ["cost $ (usd) $x^{", "a$b$c", r"\frac{$"]:
            for step in range(3):
                w.add_summary(_summary(tag, simple_value=float(step)), step)
    out = str(tmp_path / "plot.svg")
    code, _, err = _run_cli(["plot", logdir, "-o", out, "--smoothing", "0"])
    assert code == 0, err
    root = ET.parse(out).getroot()                   # well-formed XML despite the markup in titles
    names = {el.tag.split("}")[-1] for el in root.iter()}
    assert "script" not in names and "foreignObject" not in names
    assert not any(k.startswith("on") for el in root.iter() for k in el.attrib)


# ---------------------------------------------------------------------------------------------- source audit

DANGEROUS = re.compile(r"\b(pickle|cPickle|dill|marshal|shelve|yaml\.(unsafe_)?load|eval|exec|compile|__import__|"
                       r"os\.system|os\.popen|subprocess|allow_pickle\s*=\s*True|np\.load|numpy\.load)\b")
# file -> (allowed names, why it is safe)
ALLOWED = {
    "core/runtime/codegen.py": ({"compile", "exec"},
                     "runs Python source it generates itself from op indices (names like v3_0, f3); "
                     "checked by test_session_exec_uses_no_names_from_the_graph"),
    "core/framework/graph.py": ({"eval"}, "Tensor.eval(), the TF1 method (runs the graph in a session)"),
    "core/variables.py": ({"eval"}, "Variable.eval(), the TF1 method"),
    "core/train/__init__.py": ({"__import__"}, "imports its own queue_runner submodule by a fixed name"),
    "viewer/cli/cmd_demo.py": ({"subprocess"},
                               "starts the tensorboard binary on the demo's logdir (argv list, no shell)"),
    "summaries/runs/hparams.py": ({"yaml.load"}, "with its own yaml.SafeLoader subclass: Python tags (Lightning's "
                                                 "!!python/tuple) are read as plain lists and maps, never constructed"),
    "summaries/live/workers.py": ({"pickle"}, "unpickles only the runs that the worker processes it started itself "
                                              "send back over multiprocessing's pipe (as ProcessPoolExecutor does "
                                              "with any result), never a file's contents"),
    "viewer/serve/web.py": ({"subprocess"}, "starts TensorBoard's web server on our data provider (argv list, no "
                                            "shell; the logdir is one argument)"),
}


def _source_files():
    for folder in ("summaries", "core", "viewer", "proto"):
        for d, _, names in os.walk(os.path.join(REPO, folder)):
            for n in names:
                if n.endswith(".py") and not n.endswith("_pb2.py"):
                    yield os.path.relpath(os.path.join(d, n), REPO)


def _calls_and_imports(path):
    """Names the module calls or imports that DANGEROUS matches (from the AST: comments and strings
    do not count)."""
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else (ast.unparse(f) if isinstance(f, ast.Attribute) else "")
            found.add(name)
            for kw in node.keywords:
                if kw.arg == "allow_pickle" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                    found.add("allow_pickle=True")
    return {m.group(0).replace(" ", "") for n in found for m in [DANGEROUS.fullmatch(n)] if m}


def test_no_unpickling_eval_or_exec_of_file_contents():
    problems = {}
    for path in _source_files():
        hits = _calls_and_imports(path)
        if not hits:
            continue
        allowed, _why = ALLOWED.get(path, (set(), ""))
        extra = hits - allowed
        if extra:
            problems[path] = sorted(extra)
    assert not problems, "unreviewed dangerous calls (add to ALLOWED only with a reason): %s" % problems
    # the checkpoint reader and writer refuse pickles
    with open(os.path.join(REPO, "core/train/checkpoints/checkpoint_files.py"), encoding="utf-8") as f:
        files = f.read()
    assert files.count("allow_pickle=False") >= 2 and "allow_pickle=True" not in files


def test_session_exec_uses_no_names_from_the_graph(tmp_path):
    """Op names are attacker-chosen in an imported graph; the generated plan must not contain them."""
    from tfevents import core

    marker = tmp_path / "pwned"
    hostile = "x'); open(%r, 'w'); ('" % str(marker)
    with core.Graph().as_default():
        try:
            a = core.constant(2.0, name=hostile)
        except ValueError:
            a = core.constant(2.0, name="a")            # names are validated: also fine
        b = core.add(a, 3.0, name="b")
        with core.Session() as sess:
            assert sess.run(b) == 5.0
    assert not marker.exists()


def test_a_pickle_checkpoint_is_refused_not_loaded(tmp_path):
    """A checkpoint whose array entry is a pickle (code execution on load) is a DataLossError."""
    import pickle
    import zipfile

    from tfevents import core

    class Boom:
        def __reduce__(self):
            return (open, (str(tmp_path / "pwned"), "w"))

    prefix = str(tmp_path / "model.ckpt")
    buf = io.BytesIO()
    np.save(buf, np.array([Boom()], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(prefix + ".npz", "w") as zf:
        zf.writestr("manifest.json", '{"format": "tfevents.checkpoint", "version": 1, "variables": '
                                     '{"w": {"entry": "arrays/00000.npy", "dtype": "object", "shape": [1]}}}')
        zf.writestr("arrays/00000.npy", buf.getvalue())
    with pytest.raises(Exception) as info:
        core.train.load_variable(prefix, "w")
    assert "pickle" in str(info.value).lower() or isinstance(info.value, core.errors.DataLossError)
    assert not (tmp_path / "pwned").exists()
    del pickle


# ---------------------------------------------------------------------------------------------- paths

EVIL_TAGS = ["../../evil", "../../../../tmp/evil-abs", "/etc/evil", "..", ".", "a/../../b", "C:\\evil", "~/evil",
             "nul\x00byte", "x" * 300]


def _snapshot(root):
    return {os.path.join(d, n) for d, _, names in os.walk(root) for n in names}


def test_export_report_and_plot_never_write_outside_their_output(tmp_path):
    logdir = tmp_path / "logs"
    with SummaryWriter(str(logdir / "run")) as w:
        for tag in EVIL_TAGS:
            w.add_summary(_summary(tag, simple_value=1.0), 0)
    before = _snapshot(tmp_path)
    out_dir = tmp_path / "out" / "csv"
    code, _, err = _run_cli(["export", str(logdir), "--format", "tensorboard-csv", "-o", str(out_dir)])
    assert code == 0, err
    written = _snapshot(tmp_path) - before
    assert written and all(os.path.realpath(p).startswith(str(out_dir.resolve()) + os.sep) for p in written), written
    assert len(written) == len(EVIL_TAGS)            # one file per series: none overwrote another
    assert not os.path.exists("/tmp/evil-abs") and not os.path.exists("/etc/evil")

    before = _snapshot(tmp_path)
    code, _, err = _run_cli(["report", str(logdir), "-o", str(tmp_path / "out" / "r.html"), "--tags", "evil"])
    assert code == 0, err
    assert _snapshot(tmp_path) - before == {str(tmp_path / "out" / "r.html")}
    before = _snapshot(tmp_path)
    code, _, err = _run_cli(["plot", str(logdir), "-o", str(tmp_path / "out" / "p.png"), "--tags", "evil"])
    assert code == 0, err
    assert _snapshot(tmp_path) - before == {str(tmp_path / "out" / "p.png")}
