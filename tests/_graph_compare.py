"""Comparing two GraphDefs node for node, as TensorBoard would show them: the nodes only in one, and for the others
the op, the data inputs in order, the control inputs as a set and the attrs (TF's ``_class`` and
``_output_shapes`` aside). Used by the graph fidelity tests of core's training graphs and of the example programs."""
from __future__ import annotations

IGNORED_ATTRS = ("_class", "_output_shapes")


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
