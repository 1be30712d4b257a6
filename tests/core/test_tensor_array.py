"""tf.TensorArray against TF1 (graph mode, control flow v1): values and gradients of write/read/gather/scatter/
stack/unstack/concat/split/size, inside and outside while loops, the TensorArray and control-flow nodes of the
GraphDef (TF's names, inputs, frames, attrs), and TF's run-time errors."""

import numpy as np
import pytest

from _oracle import tf1_and_core
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close


@pytest.fixture(autouse=True, scope="module")
def tf1_control_flow_v1(tf):
    """TF1's graph-mode control flow (Enter/Exit frames, TensorArrayV3) instead of TF2's While and TensorLists."""
    tf.compat.v1.disable_control_flow_v2()
    yield
    tf.compat.v1.enable_control_flow_v2()


TENSOR_ARRAY = {"TensorArrayV3", "TensorArrayWriteV3", "TensorArrayReadV3", "TensorArrayGatherV3",
                "TensorArrayScatterV3", "TensorArrayConcatV3", "TensorArraySplitV3", "TensorArraySizeV3",
                "TensorArrayCloseV3", "TensorArrayGradV3"}
STRUCTURAL = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "StackV2", "StackPushV2",
              "StackPopV2", "ControlTrigger"} | TENSOR_ARRAY
TA_ATTRS = ("dtype", "element_shape", "dynamic_size", "clear_after_read", "identical_element_shapes",
            "tensor_array_name", "source", "T", "element_shape_except0")


def _broadcast_args(name: str) -> bool:
    """core's Mul/Add/... gradients compute BroadcastGradientArgs at run time where TF computes it when the graph
    is built (both shapes fully known), so inside a loop core also keeps those shapes on stacks: arithmetic, not
    control flow (reported to the coordinator)."""
    return "_grad/broadcastgradientargs" in name


def structural_nodes(graph):
    """(name, op, inputs, frame, is_constant, TensorArray attrs) of every control-flow and TensorArray node.
    Names are lower-cased and an input from an arithmetic op is written "*" (its name depends on how each library
    builds arithmetic gradients, not on control flow); control inputs are an unordered set."""
    nodes = graph.as_graph_def().node
    kinds = {n.name: n.op for n in nodes}
    out = set()
    for n in nodes:
        if n.op not in STRUCTURAL or _broadcast_args(n.name.lower()):
            continue
        frame = n.attr["frame_name"].s.decode() if "frame_name" in n.attr else ""
        constant = n.attr["is_constant"].b if "is_constant" in n.attr else None
        inputs = [i.lower() if kinds.get(i.lstrip("^").split(":")[0]) in STRUCTURAL | {"Placeholder"} else "*"
                  for i in n.input]
        inputs = [i for i in inputs if not (i.startswith("^") and _broadcast_args(i))]
        data = [i for i in inputs if not i.startswith("^")]
        inputs = tuple(data + sorted(set(inputs[len(data):])))
        attrs = tuple((k, n.attr[k].SerializeToString()) for k in TA_ATTRS if k in n.attr)
        out.add((n.name.lower(), n.op, inputs, frame, constant, attrs))
    return out


def run_program(tf, build, feeds_list):
    """Build with ``tf``, run the fetches once per feed dict; returns (values per feed, structural nodes)."""
    graph = tf.get_default_graph()
    fetches, placeholders = build(tf)
    with tf.Session() as sess:
        values = [sess.run(fetches, {placeholders[k]: v for k, v in feeds.items()}) for feeds in feeds_list]
    return values, structural_nodes(graph)


def assert_nested_close(want, got, n, path="value"):
    """Every leaf within the float32 bound of ``n`` roundings (tests/_tolerance.py; integers exactly)."""
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(want) == len(got), (want, got)
        for i, (w, g) in enumerate(zip(want, got)):
            assert_nested_close(w, g, n, "%s[%d]" % (path, i))
    else:
        assert np.asarray(got).dtype == np.asarray(want).dtype, path
        assert np.asarray(got).shape == np.asarray(want).shape, path
        assert_float32_close(got, want, n=n, err_msg=path)


def check(tf1, build, feeds_list, *, n, graph=True):
    """Values equal to TF1's for every feed, within ``n`` float32 roundings (the program's longest path, forward
    and back: tests/_tolerance.py), and (``graph``) the same structural nodes."""
    (want, want_nodes), (got, got_nodes) = tf1_and_core(tf1, run_program, build, feeds_list)
    assert len(want) == len(got)
    for i, (w, g) in enumerate(zip(want, got)):
        assert_nested_close(w, g, n, "feeds %d" % i)
    if graph:
        assert got_nodes == want_nodes, (sorted(got_nodes - want_nodes)[:6], sorted(want_nodes - got_nodes)[:6])
    return got


X = np.array([[1.5, -2.0, 0.5], [0.25, 3.0, -1.0], [2.0, 0.5, 1.25], [-0.75, 1.0, 2.5]], np.float32)


# ------------------------------------------------------------------ outside loops

def _write_read_stack(tf):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    ta = tf.TensorArray(tf.float32, size=4)
    for i in range(4):
        ta = ta.write(i, x[3 - i] * float(i + 1))
    a = ta.read(2)
    b = tf.TensorArray(tf.float32, size=4, clear_after_read=False).unstack(x)
    stacked = b.stack()
    g = b.gather([3, 0, 3])
    loss = tf.reduce_sum(a * a) + tf.reduce_sum(stacked * g[0])
    return [a, stacked, g, ta.size(), tf.gradients(loss, x)[0]], {"x": x}


# float32 roundings of each program (tests/_tolerance.py), forward and back
E = ELEMENTWISE_ULPS
N_WRITE_READ_STACK = 4          # copies and products by constants; the gradient adds up to 4 contributions
N_LOOP_ACCUMULATE = 2 * 4 * (E + 3)   # four steps of tanh(h·w + x) forward and back (tanh, a product, sums)
N_COND_ARRAY = 2                # x·2, −x; the gradient 2·out times the same


def test_write_read_unstack_stack_gather_and_their_gradients(tf1):
    check(tf1, _write_read_stack, [{"x": X}], n=N_WRITE_READ_STACK)


def _scatter_concat_split(tf):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    lengths = tf.placeholder(tf.int32, [2], name="lengths")
    sc = tf.TensorArray(tf.float32, size=5, element_shape=[3]).scatter([4, 0, 2, 1], x)
    picked = sc.gather([0, 1, 2, 4])
    sp = tf.TensorArray(tf.float32, size=2, infer_shape=False, clear_after_read=False).split(x, lengths)
    cat = sp.concat()
    first = sp.read(0)
    loss = tf.reduce_sum(picked * picked) + tf.reduce_sum(tf.sin(cat))
    return [picked, cat, first, tf.gradients(loss, x)[0]], {"x": x, "lengths": lengths}


def test_scatter_concat_split_and_their_gradients(tf1):
    check(tf1, _scatter_concat_split, [{"x": X, "lengths": np.array([1, 3], np.int32)},
                                       {"x": X, "lengths": np.array([3, 1], np.int32)}], n=E + 2)   # sin's gradient


def _dynamic(tf):
    x = tf.placeholder(tf.float32, [None], name="x")
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
    ta = ta.write(0, x).write(2, x * 3.0)
    return [ta.size(), ta.read(2), ta.read(1), ta.stack()], {"x": x}


def test_dynamic_size_grows_and_unwritten_elements_read_as_zeros(tf1):
    check(tf1, _dynamic, [{"x": X[0]}], n=0)      # copies and x·3


# ------------------------------------------------------------------ in while loops

def _loop_accumulate(tf):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = tf.placeholder(tf.float32, [3], name="w")
    inputs = tf.TensorArray(tf.float32, size=4).unstack(x)
    outputs = tf.TensorArray(tf.float32, size=4)

    def body(i, h, out):
        h = tf.tanh(h * w + inputs.read(i))
        return i + 1, h, out.write(i, h)
    _, h, out = tf.while_loop(lambda i, h, out: i < 4, body, [tf.constant(0), tf.zeros([3]), outputs])
    ys = out.stack()
    loss = tf.reduce_sum(ys * ys) + tf.reduce_sum(h)
    gx, gw = tf.gradients(loss, [x, w])
    return [ys, h, gx, gw], {"x": x, "w": w}


def test_tensor_arrays_as_loop_variables_and_invariants_with_gradients(tf1):
    check(tf1, _loop_accumulate, [{"x": X, "w": np.array([0.5, -1.0, 2.0], np.float32)}], n=N_LOOP_ACCUMULATE)


def _loop_dynamic(tf):
    x = tf.placeholder(tf.float32, [2], name="x")
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

    def body(i, v, ta):       # (unary ops only: core's broadcasting gradients keep shapes on stacks, TF's not)
        v = tf.sin(v)
        return i + 1, v, ta.write(i, v)
    _, _, ta = tf.while_loop(lambda i, v, ta: i < 5, body, [0, x, ta])
    out = ta.stack()
    return [out, ta.size(), tf.gradients(tf.reduce_sum(out * out), x)[0]], {"x": x}


def test_a_dynamically_sized_array_grown_by_a_loop(tf1):
    check(tf1, _loop_dynamic, [{"x": X[0, :2]}], n=5 * (2 * E + 2))     # five sines, forward and back


def _cond_array(tf):
    x = tf.placeholder(tf.float32, [3], name="x")
    p = tf.placeholder(tf.bool, [], name="p")
    ta = tf.TensorArray(tf.float32, size=2)
    ta = tf.cond(p, lambda: ta.write(0, x * 2.0).write(1, x), lambda: ta.write(0, x).write(1, -x))
    out = ta.stack()
    return [out, tf.gradients(tf.reduce_sum(out * out), x)[0]], {"x": x, "p": p}


def test_a_tensor_array_through_cond(tf1):
    check(tf1, _cond_array, [{"x": X[0], "p": True}, {"x": X[0], "p": False}], n=N_COND_ARRAY)


# ------------------------------------------------------------------ the Python object and errors

def test_tensor_array_objects_share_handle_and_element_shape():
    from tfevents import core as tf
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=3)
        assert ta.handle.dtype == tf.dtypes.resource and ta.flow.dtype == tf.float32
        assert ta.element_shape.dims is None
        w = ta.write(0, tf.zeros([2, 5]))
        assert w.handle is ta.handle and w.flow is not ta.flow
        assert ta.element_shape == tf.TensorShape([2, 5])         # shared, as TF's _element_shape list
        assert ta.read(1).shape == tf.TensorShape([2, 5])
        assert w.identity().flow.op.type == "Identity"
        with pytest.raises(ValueError, match="Inconsistent shapes"):
            w.write(1, tf.zeros([3]))
        with pytest.raises(TypeError, match="dtype float32 but the value written has dtype int32"):
            ta.write(1, tf.constant([1, 2]))
        with pytest.raises(ValueError, match="size` must be provided"):
            tf.TensorArray(tf.float32)
        with pytest.raises(ValueError, match="both `handle` and `tensor_array_name`"):
            tf.TensorArray(tf.float32, handle=ta.handle, flow=ta.flow, tensor_array_name="a")


def _run_error(tf, build):
    with tf.Graph().as_default():
        fetch, feeds = build(tf)
        with tf.Session() as sess:
            with pytest.raises(Exception) as info:
                sess.run(fetch, feeds)
    return info.value


@pytest.mark.parametrize("case", ["unwritten", "twice", "size", "cleared", "closed"])
def test_run_time_errors_are_tf_errors_naming_the_array(tf1, case):
    def build(tf):
        x = tf.placeholder(tf.float32, None, name="x")
        ta = tf.TensorArray(tf.float32, size=2, tensor_array_name="my_array")
        if case == "unwritten":                 # unknown element shape: no zeros to return
            fetch = ta.read(1)
        elif case == "twice":
            fetch = ta.write(0, x).write(0, x).flow
        elif case == "size":
            fetch = ta.write(2, x).flow
        elif case == "cleared":
            w = ta.write(0, x)
            r = w.read(0)
            with tf.control_dependencies([r]):
                fetch = [r, w.read(0)]
        else:
            w = ta.write(0, x)
            with tf.control_dependencies([w.flow]):
                c = w.close()
            with tf.control_dependencies([c]):
                fetch = w.read(0)
        return fetch, {x: np.float32(1.0)}
    want, got = tf1_and_core(tf1, _run_error, build)
    assert type(want).__name__ == type(got).__name__ == "InvalidArgumentError", (want, got)
    assert "my_array" in str(got)
    key = {"unwritten": "Could not read from TensorArray index 1", "twice": "already been written to",
           "size": "Tried to write to index 2 but array is not resizeable and size is: 2",
           "cleared": "Could not read index 0 twice because it was cleared", "closed": "already been closed"}[case]
    assert key in str(want) and key in str(got), (str(want), str(got))


def test_writing_the_wrong_shape_fails_when_the_graph_is_built_or_run():
    from tfevents import core as tf
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, None, name="x")
        ta = tf.TensorArray(tf.float32, size=2, element_shape=[2])
        flow = ta.write(0, x).flow
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="incompatible with the "
                                                 "TensorArray's inferred element shape: \\[2\\]"):
            sess.run(flow, {x: np.zeros(3, np.float32)})


# (_scatter_concat_split is not here: core's gradient of reduce_sum over a tensor of unknown shape writes a
# "ReducedShape" node, which is not a TF op; reported to the coordinator)
@pytest.mark.parametrize("build", [_write_read_stack, _loop_accumulate, _cond_array],
                         ids=["write_read_stack", "loop", "cond"])
def test_tensorflow_imports_and_runs_our_graph_def(tf1, build):
    """Our GraphDef of TensorArrays and their gradients (ops, attrs, frames), imported with tf.import_graph_def,
    runs in TF1 to the numbers core computes."""
    from _oracle import core_then_imported_into_tf
    feeds = {"x": X, "w": np.array([0.5, -1.0, 2.0], np.float32), "lengths": np.array([1, 3], np.int32),
             "p": False}
    want, got = core_then_imported_into_tf(tf1, build, lambda placeholders: {
        k: v if k != "x" or placeholders[k].shape.ndims == 2 else v[0] for k, v in feeds.items()
        if k in placeholders})
    n = {_write_read_stack: N_WRITE_READ_STACK, _loop_accumulate: N_LOOP_ACCUMULATE, _cond_array: N_COND_ARRAY}[build]
    for w, g in zip(want, got):
        assert_float32_close(g, w, n=n)
