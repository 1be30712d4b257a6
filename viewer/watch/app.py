"""The terminal dashboard of ``tfevents watch``: a Textual app over a :class:`~.state.WatchState`.

Layout: on the left the runs (their colours; space toggles one) above the tag filter (a regex) and the tags (space
selects the charts); on the right one chart per selected tag (plotext's braille lines, TensorBoard-smoothed)
with a table of each run's last step and value, smoothed last value, min and max; at the bottom the status line
(runs, tags, smoothing, x axis, the logdir's problems, a logdir deleted) and the keys. Each refresh interval a
worker thread runs one pass of the live loader; the screen is redrawn when it ends (an error there ends the app
with its traceback, never a screen that stops changing). Without colours (``NO_COLOR``, ``--mono``) each run's
line takes a marker of its own instead.

Run names and tags come from files: each is shown as plain text (a ``rich.text.Text``, never Textual markup, in
which ``acc[/]`` is a closing tag) with its control characters escaped (``plain_text.printable``), so a run named
``\x1b]0;title\x07`` cannot retitle the terminal.
"""
from __future__ import annotations

import dataclasses
import os
import re
import threading
from typing import Dict, List, Optional, Sequence

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import Footer, Input, SelectionList, Static
from textual.widgets.selection_list import Selection
from textual_plotext import PlotextPlot

from .. import logdir_data
from ..plain_text import printable
from ..smoothing import DEFAULT_SMOOTHING, Smoothing
from .state import X_AXES, Line, WatchState
from .text import fit_words, number, problem_text

__all__ = ["WatchApp", "SMOOTHING_STEPS", "MONO_MARKERS"]

SMOOTHING_STEPS = (0.0, 0.3, 0.6, 0.8, 0.9, 0.95, 0.99)   # what `s` / `S` step through
MONO_MARKERS = ("braille", "dot", "+", "x", "*", "o", "#", "@")   # one per run when there are no colours
FIRST_CHARTS = 2   # tags charted at start (more are selected with space in the tag list)


class CheckList(SelectionList):
    """A SelectionList whose boxes read ``▐X▌`` when selected and ``▐ ▌`` when not, so the state shows without
    colours too (Textual's draws an X in both, told apart by colour only)."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        segments = list(strip)
        if len(segments) < 3 or segments[1].text != "X":
            return strip
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except Exception:   # a line below the last option
            return strip
        if option.value not in self._selected:
            segments[1] = Segment(" ", segments[1].style)
        return Strip(segments, strip.cell_length)


class Chart(Vertical):
    """One tag: its plot and the table of each shown run's last/min/max."""

    DEFAULT_CSS = """
    Chart { height: auto; min-height: 11; border-top: solid $primary-darken-2; }
    Chart PlotextPlot { height: 9; }
    Chart .stats { height: auto; }
    """

    def __init__(self, tag: str):
        super().__init__()
        self.tag = tag
        self.plot = PlotextPlot()
        self.stats = Static(classes="stats")

    def compose(self) -> ComposeResult:
        yield self.plot
        yield self.stats


class WatchApp(App):
    """``WatchApp(state, interval=2.0, smoothing=0.6, x="step", tags=None, runs=None, mono=False).run()``;
    ``smooth=Smoothing`` draws another smoothing than TensorBoard's EMA of weight ``smoothing`` (``s`` / ``S``
    step a weight through SMOOTHING_STEPS, and double / halve a window or a sigma)."""

    CSS = """
    #side { width: 22; border-right: solid $primary-darken-2; }
    #side CheckList { height: 1fr; border: none; padding: 0; }
    #side .caption { height: 1; color: $text-muted; }
    #filter { height: 1; border: none; padding: 0 1; }
    #filter.-invalid { color: $error; }
    #charts { width: 1fr; }
    #status { height: auto; max-height: 2; background: $panel; }
    #empty { color: $text-muted; padding: 1 2; }
    """
    BINDINGS = [
        Binding("q", "quit", "quit"),
        Binding("s", "smoothing(1)", "smooth+"),
        Binding("S", "smoothing(-1)", "smooth-"),
        Binding("x", "x_axis", "x axis"),
        Binding("slash", "focus('filter')", "filter"),
        Binding("r", "focus_list('runs')", "runs"),
        Binding("t", "focus_list('tags')", "tags"),
    ]
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, state: WatchState, *, interval: float = 2.0, smoothing: float = DEFAULT_SMOOTHING,
                 x: str = "step", tags: Optional[str] = None, runs: Optional[str] = None, mono: bool = False,
                 smooth: Optional[Smoothing] = None, logx: bool = False):
        super().__init__()
        if not isinstance(x, str) or not x:   # step, relative, or a scalar tag (e.g. samples_seen)
            raise ValueError("x must be one of %s or a scalar tag, got %r" % (", ".join(X_AXES), x))
        self.state = state
        self.interval = float(interval)
        self.smoothing = float(smoothing)
        self.smooth = smooth if smooth is None or smooth.kind != "ema" else None
        if smooth is not None and smooth.kind == "ema":
            self.smoothing = float(smooth.param)
        self.x = x
        self.x_axes = X_AXES if x in X_AXES else X_AXES + (x,)   # what the x key cycles through
        self.logx = bool(logx)
        self.mono = mono
        self.tag_filter = tags or ""
        self.run_filter = re.compile(runs) if runs else None
        self.hidden_runs: set = set()
        self.chosen_tags: List[str] = []
        self._known_runs: List[str] = []
        self._listed_tags: List[str] = []
        self._loading = threading.Lock()
        self._charts: Dict[str, Chart] = {}
        self._logdir_gone = False   # a local logdir found missing by the last pass

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="side"):
                yield Static("runs (space toggles)", classes="caption")
                yield CheckList(id="runs")
                yield Input(value=self.tag_filter, placeholder="tag regex", id="filter")
                yield CheckList(id="tags")
            yield VerticalScroll(Static(Text("reading %s ..." % printable(self.state.path)), id="empty"),
                                 id="charts")
        yield Static(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#runs", CheckList).border_title = "runs"
        self.set_interval(self.interval, self._start_reload)
        self._start_reload()

    # ------------------------------------------------------------------ refresh

    def _start_reload(self) -> None:
        """Run one pass of the live loader on a worker thread, unless one is still running; then redraw, on the
        app's thread (``call_later`` posts it, and does nothing once the app is closing). An error in either is
        raised in the app, which ends with its traceback."""
        if not self._loading.acquire(blocking=False):
            return

        def work() -> None:
            try:
                self.state.reload()
                path = self.state.path
                self._logdir_gone = not logdir_data.is_url(path) and not os.path.isdir(path)
            except Exception as error:
                self.call_later(_raise, error)
                return
            finally:
                self._loading.release()
            self.call_later(self.refresh_view)

        threading.Thread(target=work, name="tfevents-watch-reload", daemon=True).start()

    def refresh_view(self) -> None:
        self._update_runs()
        self._update_tags()
        self._update_charts()
        self._update_status()

    def _update_runs(self) -> None:
        runs = self.state.runs()
        if runs == self._known_runs:
            return
        widget = self.query_one("#runs", CheckList)
        for run in runs:
            if run not in self._known_runs:
                shown = self.run_filter is None or bool(self.run_filter.search(run))
                if not shown:
                    self.hidden_runs.add(run)
                widget.add_option(Selection(self._run_label(run, runs), run, shown))
        self._known_runs = runs

    def _run_label(self, run: str, runs: Sequence[str]) -> Text:
        if self.mono:
            return Text("%s %s" % (self._marker_char(run, runs), printable(run)))
        return Text.assemble(("■ ", self.state.colors.get(run, "")), printable(run))

    def _marker_char(self, run: str, runs: Sequence[str]) -> str:
        marker = MONO_MARKERS[sorted(runs).index(run) % len(MONO_MARKERS)] if run in runs else "dot"
        return {"braille": "⣿", "dot": "•"}.get(marker, marker)

    def _update_tags(self) -> None:
        try:
            tags = self.state.tags(self.tag_filter)
        except re.error:
            self.query_one("#filter", Input).add_class("-invalid")
            return
        self.query_one("#filter", Input).remove_class("-invalid")
        if not self.chosen_tags and tags and not self._listed_tags:
            self.chosen_tags = tags[:FIRST_CHARTS]
        if tags == self._listed_tags:
            return
        widget = self.query_one("#tags", CheckList)
        with widget.prevent(SelectionList.SelectedChanged):
            widget.clear_options()
            widget.add_options([Selection(Text(printable(tag)), tag, tag in self.chosen_tags) for tag in tags])
        self._listed_tags = tags

    def _update_charts(self) -> None:
        area = self.query_one("#charts", VerticalScroll)
        wanted = [t for t in self.chosen_tags if t in self._listed_tags]
        if list(self._charts) != wanted:
            for chart in self._charts.values():
                chart.remove()
            for empty in area.query("#empty"):
                empty.remove()
            self._charts = {tag: Chart(tag) for tag in wanted}
            if wanted:
                area.mount_all(self._charts.values())
            else:
                area.mount(Static("no tag selected: choose tags in the list (t, then space)"
                                  if self._listed_tags else "no scalars yet", id="empty"))
        runs = [r for r in self._known_runs if r not in self.hidden_runs]
        for tag, chart in self._charts.items():
            self._draw(chart, [line for line in (self.state.line(r, tag, self._smoothing(), self.x) for r in runs)
                               if line is not None])

    def _draw(self, chart: Chart, lines: List[Line]) -> None:
        plt = chart.plot.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(printable(chart.tag))
        lost = sum(line.dropped for line in lines)
        plt.xlabel({"step": "step", "relative": "seconds since start"}.get(self.x, printable(self.x))
                   + (" (%d point%s without it dropped)" % (lost, "" if lost == 1 else "s") if lost else ""))
        drawn = lines
        if self.logx:   # x <= 0 has no place on a log axis
            plt.xscale("log")
            drawn = [dataclasses.replace(line, x=line.x[line.x > 0], y=line.y[line.x > 0]) for line in lines]
        for line in drawn:
            if self.mono:
                marker = MONO_MARKERS[self._known_runs.index(line.run) % len(MONO_MARKERS)]
                plt.plot(line.x.tolist(), line.y.tolist(), marker=marker)
            else:
                color = self.state.colors.get(line.run, "#888888")
                plt.plot(line.x.tolist(), line.y.tolist(), marker="braille",
                         color=tuple(int(color[i:i + 2], 16) for i in (1, 3, 5)))
        chart.plot.refresh()
        table = Table(box=None, padding=(0, 1, 0, 0), show_edge=False, header_style="bold")
        table.add_column("run", no_wrap=True, overflow="ellipsis", max_width=14)
        for name in ("step", "last", "smoothed", "min", "max"):
            table.add_column(name, justify="right", no_wrap=True)
        for line in lines:
            s = line.stats
            table.add_row(self._run_label(line.run, self._known_runs), str(s.step), number(s.last),
                          number(s.smoothed), number(s.min), number(s.max))
        chart.stats.update(table)

    def _update_status(self) -> None:
        width = max(20, self.size.width)
        head = [_count(len(self._known_runs), "run"), _count(len(self._listed_tags), "tag"),
                "smoothing %.2f" % self.smoothing if self.smooth is None else "smoothing %s" % (self.smooth,),
                "x: %s" % self.x, "pass %d" % self.state.passes]
        problems = self.state.problems
        lines = [fit_words(head, width)]
        if self._logdir_gone:
            lines.append(fit_words(["⚠ logdir deleted or moved:", printable(self.state.path)], width, sep=" "))
        elif problems:
            lines.append(fit_words(["⚠ %d problem%s:" % (len(problems), "" if len(problems) == 1 else "s")]
                                   + problem_text(problems[-1], self.state.path).split(" "), width, sep=" "))
        self.query_one("#status", Static).update(Text("\n".join(lines), no_wrap=True))

    # ------------------------------------------------------------------ input

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged) -> None:
        if event.selection_list.id == "runs":
            selected = set(event.selection_list.selected)
            self.hidden_runs = {r for r in self._known_runs if r not in selected}
        else:
            selected = set(event.selection_list.selected)
            # keep the order tags were chosen in; tags filtered out of the list stay chosen
            self.chosen_tags = [t for t in self.chosen_tags if t in selected or t not in self._listed_tags] + \
                               [t for t in self._listed_tags if t in selected and t not in self.chosen_tags]
        self._update_charts()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.tag_filter = event.value
        self._listed_tags = []   # rebuild the list
        self._update_tags()
        self._update_charts()
        self._update_status()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#tags", CheckList).focus()

    def _smoothing(self) -> Smoothing:
        return Smoothing.of("ema", self.smoothing) if self.smooth is None else self.smooth

    def action_smoothing(self, direction: int) -> None:
        """Step the smoothing weight through SMOOTHING_STEPS (up for ``direction`` 1, down for -1); with
        ``--smooth`` of a window or Gaussian kind, double or halve its window or sigma."""
        steps = SMOOTHING_STEPS
        if self.smooth is not None:
            kind, p = self.smooth
            if kind == "twema":
                p = next((w for w in steps if w > p + 1e-9), steps[-1]) if direction > 0 else \
                    next((w for w in reversed(steps) if w < p - 1e-9), steps[0])
            elif kind == "gaussian":
                p = p * 2 if direction > 0 else p / 2
            else:
                p = p * 2 if direction > 0 else max(1, p // 2)
            self.smooth = Smoothing.of(kind, p)
            self._update_charts()
            self._update_status()
            return
        if direction > 0:
            self.smoothing = next((w for w in steps if w > self.smoothing + 1e-9), steps[-1])
        else:
            self.smoothing = next((w for w in reversed(steps) if w < self.smoothing - 1e-9), steps[0])
        self._update_charts()
        self._update_status()

    def action_x_axis(self) -> None:
        self.x = self.x_axes[(self.x_axes.index(self.x) + 1) % len(self.x_axes)]
        self._update_charts()
        self._update_status()

    def action_focus_list(self, name: str) -> None:
        """Focus the runs or tags list with its first entry highlighted (arrows move, space toggles)."""
        widget = self.query_one("#" + name, CheckList)
        widget.focus()
        if widget.highlighted is None and widget.option_count:
            widget.highlighted = 0

    def on_resize(self) -> None:
        self._update_status()


def _raise(error: Exception) -> None:
    raise error


def _count(n: int, noun: str) -> str:
    return "%d %s%s" % (n, noun, "" if n == 1 else "s")


def mono_terminal() -> bool:
    """Whether the terminal asks for no colours: ``NO_COLOR`` set (no-color.org) or ``TERM=dumb``."""
    return "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb"
