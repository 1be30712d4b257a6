"""Plots and reports of runs; the tfevents command line.

Every plot function takes a logdir path, a loaded ``tfevents.summaries.Logdir``, or a plain
``{(run, tag): record}`` mapping, and returns a ``matplotlib.figure.Figure`` (shown inline in Jupyter)::

    from tfevents.viewer import plot_scalars
    fig = plot_scalars("runs/", tags="loss", smoothing=0.6, x="relative")
    fig.savefig("loss.png")

matplotlib is imported only when a plot is made, not by ``import tfevents.viewer``.

The parts: ``cli/`` (the ``tfevents`` command line, one ``cmd_<name>.py`` per subcommand), ``plots/`` (the
matplotlib plots), ``reports/`` (the one-file HTML reports, interactive and static, and their safe HTML), ``serve/``
(``tfevents serve``), ``dashboard/`` (``tfevents api``: the HTTP JSON API), ``notebook.py`` (``show()``: the
interactive report inline in a notebook), ``watch/`` (``tfevents watch``, the terminal dashboard); shared by plots
and reports: ``logdir_data.py`` (a path, a Logdir or a mapping as the viewer's data), ``colors.py`` (a colour per
run) and ``smoothing.py`` (the smoothings: TensorBoard's EMA, W&B's time-weighted EMA, running averages,
Gaussian); by the command line and ``watch/``: ``plain_text.py`` (names from files as plain terminal text, control
characters escaped).
"""
from __future__ import annotations

from tfevents.summaries.lazy import lazy_exports


# public name -> submodule that defines it
_EXPORTS = {
    "smooth": "smoothing", "ema": "smoothing", "parse_smoothing": "smoothing", "Smoothing": "smoothing",
    "minmax_indices": "smoothing", "DEFAULT_SMOOTHING": "smoothing",
    "run_colors": "colors",
    "plot_scalars": "plots.scalars", "scalar_figures": "plots.scalars",
    "plot_distributions": "plots.histograms", "plot_histograms": "plots.histograms", "distribution": "plots.histograms",
    "plot_images": "plots.media", "plot_pr_curves": "plots.media",
    "plot_embedding": "plots.projections", "plot_mesh": "plots.projections", "pca_2d": "plots.projections",
    "hparams_table": "plots.hparams", "plot_parallel_coordinates": "plots.hparams",
    "summarize_graph": "plots.graphs", "graph_summaries": "plots.graphs", "plot_graph_summary": "plots.graphs",
    "markdown_to_safe_html": "reports.safe_html", "text_to_safe_html": "reports.safe_html",
    "show": "notebook", "report_view": "notebook", "ReportView": "notebook",
    "render_report": "reports.static", "write_report": "reports.static", "watch_report": "reports.static",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
