"""Comparing two GraphDefs node for node, as TensorBoard would show them: the nodes only in one, and for the others
the op, the data inputs in order, the control inputs as a set and the attrs (TF's ``_class`` and
``_output_shapes`` aside); and two MetaGraphDefs (graph, SaverDef, collections). Used by the graph fidelity tests
of core's training graphs and of the example programs, and by the meta-graph tests."""
from __future__ import annotations

from tfevents.proto import control_flow_pb2, meta_graph_pb2, variable_pb2

IGNORED_ATTRS = ("_class", "_output_shapes")
VARIABLE_COLLECTIONS = ("variables", "trainable_variables", "local_variables", "model_variables",
                        "moving_average_variables", "metric_variables", "global_step")


def _split_inputs(node):
    data = [i for i in node.input if not i.startswith("^")]
    control = {i for i in node.input if i.startswith("^")}
    return data, control


def _attrs(node):
    return {k: v for k, v in node.attr.items() if k not in IGNORED_ATTRS}


def node_differences(want, got):
    """``{node name: what differs}`` between two GraphDefs: nodes only in one, or with another op, other data
    inputs (in order), other control inputs (as a set) or other attrs."""
    want_nodes = {n.name: n for n in want.node}
    got_nodes = {n.name: n for n in got.node}
    out = {}
    for name in want_nodes.keys() - got_nodes.keys():
        out[name] = "only in TF (%s)" % want_nodes[name].op
    for name in got_nodes.keys() - want_nodes.keys():
        out[name] = "only in ours (%s)" % got_nodes[name].op
    for name in want_nodes.keys() & got_nodes.keys():
        w, g = want_nodes[name], got_nodes[name]
        what = []
        if w.op != g.op:
            what.append("op %s, ours %s" % (w.op, g.op))
        (w_data, w_control), (g_data, g_control) = _split_inputs(w), _split_inputs(g)
        if w_data != g_data:
            what.append("inputs %s, ours %s" % (w_data, g_data))
        if w_control != g_control:
            what.append("control inputs %s, ours %s" % (sorted(w_control), sorted(g_control)))
        w_attrs, g_attrs = _attrs(w), _attrs(g)
        for key in sorted(w_attrs.keys() | g_attrs.keys()):
            if w_attrs.get(key) != g_attrs.get(key):
                what.append("attr %s %s, ours %s" % (key, _short(w_attrs.get(key)), _short(g_attrs.get(key))))
        if what:
            out[name] = "; ".join(what)
    return out


def _short(attr):
    return "-" if attr is None else str(attr).replace("\n", " ")[:120]


def assert_only_known_differences(name: str, want, got, known: dict) -> None:
    """Fail on a difference not in ``known`` ({node name: why}), and on a ``known`` one that no longer occurs (so
    the table of remaining differences stays honest)."""
    found = node_differences(want, got)
    new = {k: v for k, v in found.items() if k not in known}
    gone = sorted(set(known) - set(found))
    assert not new, "%s: %d differences not listed as known (TF %d nodes, ours %d):\n%s" % (
        name, len(new), len(want.node), len(got.node), "\n".join("  %s: %s" % kv for kv in sorted(new.items())))
    assert not gone, "%s: listed as known but no longer different: %s" % (name, gone)


def meta_graph_differences(want, got) -> dict:
    """``{what: how}`` between two MetaGraphDefs (TF's and ours, as protos of either library): the GraphDefs node
    for node (``node_differences``), the SaverDef, and each collection's kind and values (``VariableDef`` and
    ``SaverDef`` and control-flow context values compared as messages)."""
    want = meta_graph_pb2.MetaGraphDef.FromString(want.SerializeToString())
    got = meta_graph_pb2.MetaGraphDef.FromString(got.SerializeToString())
    out = {"node " + k: v for k, v in node_differences(want.graph_def, got.graph_def).items()}
    if want.saver_def != got.saver_def:
        out["saver_def"] = "%s, ours %s" % (_short(want.saver_def), _short(got.saver_def))
    parse = {"savers": meta_graph_pb2.SaverDef, "cond_context": control_flow_pb2.CondContextDef,
             "while_context": control_flow_pb2.WhileContextDef}
    parse.update((key, variable_pb2.VariableDef) for key in VARIABLE_COLLECTIONS)
    for key in sorted(want.collection_def.keys() | got.collection_def.keys()):
        if key not in got.collection_def:
            out["collection " + key] = "only in TF"
            continue
        if key not in want.collection_def:
            out["collection " + key] = "only in ours"
            continue
        w, g = want.collection_def[key], got.collection_def[key]
        kind = w.WhichOneof("kind")
        if kind != g.WhichOneof("kind"):
            out["collection " + key] = "kind %s, ours %s" % (kind, g.WhichOneof("kind"))
            continue
        w_values, g_values = list(getattr(w, kind).value), list(getattr(g, kind).value)
        if kind == "bytes_list" and key in parse:
            message = parse[key]
            w_values = [message.FromString(v) for v in w_values]
            g_values = [message.FromString(v) for v in g_values]
        if w_values != g_values:
            out["collection " + key] = "%s, ours %s" % (_short(w_values), _short(g_values))
    return out
