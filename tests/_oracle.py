"""TF1 as the oracle: one program built and run by TensorFlow's ``tf.compat.v1`` and by ``tfevents.core``."""
import contextlib

from tfevents import core


@contextlib.contextmanager
def as_tf1_built_graphs(tf1):
    """TF builds as TF 1.x did inside: reference variables (``VariableV2``, ``<var>/read``) and the Switch/Merge
    control flow; TF 2.x's defaults come back afterwards (other tests of the process run with them)."""
    tf1.disable_resource_variables()
    tf1.disable_control_flow_v2()
    try:
        yield
    finally:
        tf1.enable_control_flow_v2()
        tf1.enable_resource_variables()


def tf1_and_core(tf1, program, *args):
    """``(program(tf1, *args), program(core, *args))``, each in a fresh default graph of its own library."""
    with tf1.Graph().as_default():
        want = program(tf1, *args)
    with core.Graph().as_default():
        got = program(core, *args)
    return want, got


def core_then_imported_into_tf(tf1, build, choose_feeds):
    """Build ``build(core) -> (fetches, placeholders)`` in core and run it on ``choose_feeds(placeholders)``
    ({placeholder key: value}); then import its GraphDef into TF1 with ``tf.import_graph_def`` and run the same
    fetches on the same feeds. ``(core's values, TF's values)``."""
    with core.Graph().as_default() as graph:
        fetches, placeholders = build(core)
        used = choose_feeds(placeholders)
        with core.Session() as sess:
            want = sess.run(fetches, {placeholders[k]: v for k, v in used.items()})
        graph_def = graph.as_graph_def().SerializeToString()
        names = [t.name for t in fetches]
        feed_names = {placeholders[k].name: v for k, v in used.items()}
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_def), name="")
        with tf1.Session() as sess:
            got = sess.run(names, feed_names)
    return want, got
