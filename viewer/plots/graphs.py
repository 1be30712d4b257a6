"""A summary of a logged GraphDef: node count, nodes per top-level name scope, and op types."""
from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple, Optional

from .. import logdir_data
from . import matplotlib_figures
from .matplotlib_figures import literal


class GraphSummary(NamedTuple):
    nodes: int
    scopes: Counter      # top-level name scope ("(root)" for nodes without one) -> node count
    op_types: Counter    # op type -> node count
    functions: int       # functions in the graph's library


def summarize_graph(graph_def) -> GraphSummary:
    """Counts for a GraphDef (a parsed message or its serialized bytes)."""
    if isinstance(graph_def, (bytes, bytearray, memoryview)):
        from tfevents.proto import graph_pb2  # lazy: protobuf, only for a GraphDef given as bytes
        parsed = graph_pb2.GraphDef()
        parsed.ParseFromString(bytes(graph_def))
        graph_def = parsed
    scopes: Counter = Counter()
    ops: Counter = Counter()
    for node in graph_def.node:
        scopes[node.name.split("/", 1)[0] if "/" in node.name else "(root)"] += 1
        ops[node.op] += 1
    return GraphSummary(len(graph_def.node), scopes, ops, len(graph_def.library.function))


def graph_summaries(source: Any, runs: Optional[str] = None) -> dict[str, GraphSummary]:
    graphs = logdir_data.select(logdir_data.kind(source, "graphs"), None, runs)
    return {run: summarize_graph(g) for run, g in graphs.items()}


def plot_graph_summary(source: Any, runs: Optional[str] = None, top: int = 15):
    """A Figure per run row: nodes by top-level scope and by op type (the ``top`` most common)."""
    summaries = graph_summaries(source, runs)
    fig = matplotlib_figures.new_figure(11.0, 0.28 * top * max(len(summaries), 1) + 1.2)
    if not summaries:
        matplotlib_figures.empty(fig.add_subplot(), "no graphs")
        return fig
    axes = fig.subplots(len(summaries), 2, squeeze=False)
    for (run, s), (ax_scope, ax_ops) in zip(summaries.items(), axes):
        for ax, counts, what in ((ax_scope, s.scopes, "scope"), (ax_ops, s.op_types, "op type")):
            items = counts.most_common(top)[::-1]
            ax.barh([literal(k) for k, _ in items], [v for _, v in items], color="#1f77b4")
            ax.tick_params(axis="y", labelsize=7)
            ax.set_title(literal("%s: %d nodes by %s" % (run, s.nodes, what)), fontsize=9)
    return fig
