"""tf.layers (conv, pooling, dense, flatten, dropout, batch norm) of tfevents.core against TF1's tf.layers.

A layer case is built in both libraries in a fresh graph; the variables (same names, shapes and order as TF's)
are loaded with the same random values, then the outputs, the gradients of ``sum(out * w)`` with respect to the
inputs and to every trainable variable, and the op types of the layer's computation are compared with TF's.
"""
import numpy as np
import pytest

from tfevents import core
from _op_cases import SAME_OP, SUM_OF_TERMS, Case, _attr_dict, check_case
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close

R = np.random.RandomState(3)


def rnd(*shape):
    return R.uniform(-2, 2, size=shape)


# variable plumbing and constants differ by design (TF: resource variables; core: ref variables)
_PLUMBING = {"Const", "Placeholder", "VariableV2", "VarHandleOp", "VarIsInitializedOp", "AssignVariableOp",
             "ReadVariableOp", "Assign", "Identity", "NoOp", "Shape"}
_SAME_OP = dict(SAME_OP, AssignSubVariableOp="AssignSub")    # resource-variable update = ref-variable update


def _values_for(variables, seed=0):
    rng = np.random.RandomState(seed)
    values = []
    for v in variables:
        shape = v.shape.as_list()
        low = 0.5 if "moving_variance" in v.name else -1.0
        values.append(rng.uniform(low, 1.5, size=shape))
    return values


class _Model:
    """``build(tf, *placeholders)`` in ``tf`` (core or TF1), variables loaded, evaluated at ``inputs``."""

    def __init__(self, tf, build, inputs, dtype_name, shapes=None, training_feed=None):
        dtype = getattr(tf, dtype_name)
        self.graph = tf.Graph()
        with self.graph.as_default():
            shapes = shapes or [(None,) + np.shape(x)[1:] for x in inputs]
            phs = [tf.placeholder(dtype, s, name="x%d" % i) for i, s in enumerate(shapes)]
            n_before = len(self.graph.get_operations())
            out = build(tf, *phs)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            built = self.graph.get_operations()[n_before:]
            self.variables = [(v.name, v.shape.as_list()) for v in tf.global_variables()]
            self.trainable = [v.name for v in tf.trainable_variables()]
            self.updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
            self.reg_losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
            var_prefixes = tuple(v.op.name + "/" for v in tf.global_variables())
            computing = {op.name for op in built
                         if op.type not in _PLUMBING and not op.name.startswith(var_prefixes)}
            self.op_types = {_SAME_OP.get(op.type, op.type) for op in built if op.name in computing}
            self.first_nodes = {}       # op type -> attrs of its first node in the GraphDef
            for node in self.graph.as_graph_def().node:
                if node.name in computing:
                    self.first_nodes.setdefault(_SAME_OP.get(node.op, node.op), _attr_dict(node, ()))
            self.sess = tf.Session()
            self.sess.run(tf.global_variables_initializer())
            for v, value in zip(tf.global_variables(), _values_for(tf.global_variables())):
                v.load(value.astype(dtype.as_numpy_dtype), self.sess)
            self.feed = {p: np.asarray(x, dtype.as_numpy_dtype) for p, x in zip(phs, inputs)}
            self.static = [o.shape.as_list() if o.shape.ndims is not None else None for o in outs]
            self.values = self.sess.run(outs, self.feed)
            w = [tf.constant(np.random.RandomState(7).uniform(0.5, 1.5, size=np.shape(v)), dtype=o.dtype)
                 for o, v in zip(outs, self.values)]
            objective = tf.add_n([tf.reduce_sum(o * c) for o, c in zip(outs, w)])
            grads = tf.gradients(objective, phs + tf.trainable_variables())
            self.grads = self.sess.run([g for g in grads if g is not None], self.feed)
            self.reg_values = self.sess.run(self.reg_losses, self.feed)


def compare(tf1, build, inputs, shapes=None, same_ops=True, dtype_name="float64", rtol=1e-9, atol=1e-10, n32=None):
    """Variables, outputs, static shapes, gradients, regularization losses and op types against TF1; in float32,
    within the rounding bound of ``n32`` roundings (tests/_tolerance.py) instead of ``rtol``/``atol``."""
    ours = _Model(core, build, inputs, dtype_name, shapes)
    theirs = _Model(tf1, build, inputs, dtype_name, shapes)
    assert ours.variables == theirs.variables
    assert ours.trainable == theirs.trainable
    assert ours.static == theirs.static
    for label, a, b in [("out", ours.values, theirs.values), ("grad", ours.grads, theirs.grads),
                        ("reg", ours.reg_values, theirs.reg_values)]:
        assert len(a) == len(b), label
        for i, (x, y) in enumerate(zip(a, b)):
            assert np.shape(x) == np.shape(y) and np.asarray(x).dtype == np.asarray(y).dtype, (label, i)
            if dtype_name == "float32":
                assert_float32_close(x, y, n=n32, err_msg="%s %d" % (label, i))
            else:
                np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg="%s %d" % (label, i))
    if same_ops:
        assert ours.op_types == theirs.op_types
        for op_type, attrs in ours.first_nodes.items():
            if op_type != "AssignSub":      # a resource variable's AssignSubVariableOp has other attrs
                assert attrs == theirs.first_nodes[op_type], op_type
    return ours, theirs


def _const(value):
    return lambda tf: tf.constant_initializer(value)


# ---- layer cases: build(tf, x) -> output(s)
LAYER_CASES = {
    "conv2d_same_relu": (lambda tf, x: tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu),
                         [rnd(2, 7, 6, 3)]),
    "conv2d_valid_strides_rect": (lambda tf, x: tf.layers.conv2d(x, 3, (3, 2), strides=(2, 1)), [rnd(2, 7, 6, 2)]),
    "conv2d_same_stride2_odd": (lambda tf, x: tf.layers.conv2d(x, 2, 2, strides=2, padding="SAME"),
                                [rnd(1, 5, 7, 3)]),
    "conv2d_dilated_no_bias": (lambda tf, x: tf.layers.conv2d(x, 2, 3, dilation_rate=2, padding="same",
                                                              use_bias=False), [rnd(2, 7, 7, 2)]),
    # TF's CPU Conv2D cannot run NCHW (core can): channels_first is checked through static shapes and names
    "conv1d_valid": (lambda tf, x: tf.layers.conv1d(x, 4, 3), [rnd(2, 9, 3)]),
    "conv1d_same_stride": (lambda tf, x: tf.layers.conv1d(x, 2, 4, strides=2, padding="same",
                                                          activation=tf.nn.tanh), [rnd(3, 9, 2)]),
    "conv1d_channels_first": (lambda tf, x: tf.layers.conv1d(x, 4, 3, data_format="channels_first"),
                              [rnd(2, 3, 1)], [(None, 3, 9)]),
    "conv2d_transpose_same": (lambda tf, x: tf.layers.conv2d_transpose(x, 2, 3, strides=2, padding="same"),
                              [rnd(2, 4, 3, 3)]),
    "conv2d_transpose_valid": (lambda tf, x: tf.layers.conv2d_transpose(x, 3, (2, 3), strides=(2, 1)),
                               [rnd(1, 3, 4, 2)]),
    "separable_conv2d": (lambda tf, x: tf.layers.separable_conv2d(x, 5, 3, depth_multiplier=2),
                         [rnd(2, 6, 5, 3)]),
    "separable_conv2d_same_strided": (lambda tf, x: tf.layers.separable_conv2d(x, 3, 2, strides=2, padding="same"),
                                      [rnd(1, 5, 5, 2)]),
    "dense_2d": (lambda tf, x: tf.layers.dense(x, 3, activation=tf.nn.sigmoid), [rnd(4, 5)]),
    "conv1d_causal": (lambda tf, x: tf.layers.Conv1D(2, 3, padding="causal")(x), [rnd(2, 7, 3)]),
    "flatten": (lambda tf, x: tf.layers.flatten(x), [rnd(2, 3, 4, 2)]),
    "dense_after_flatten": (lambda tf, x: tf.layers.dense(tf.layers.flatten(x), 2, use_bias=False),
                            [rnd(3, 2, 2, 2)]),
    "batch_norm_nhwc_training": (lambda tf, x: tf.layers.batch_normalization(x, training=True, momentum=0.9),
                                 [rnd(3, 2, 3, 4)]),
    "batch_norm_2d_inference": (lambda tf, x: tf.layers.batch_normalization(x, training=False, epsilon=0.01),
                                [rnd(5, 3)]),
}
_NO_RUN = {"conv1d_channels_first"}     # TF's CPU Conv2D has no NCHW kernel: compared without running below


@pytest.mark.parametrize("name", sorted(set(LAYER_CASES) - _NO_RUN))
def test_layer_matches_tensorflow(tf1, name):
    build, inputs = LAYER_CASES[name][:2]
    compare(tf1, build, inputs)


# float32 roundings (tests/_tolerance.py) of each case's longest sum, outputs and gradients alike: the kernel's
# gradient sums over the batch's 2·7·6 positions; the separable kernels' over 2·4·3, after the 3·3 and 6-long dots;
# batch norm's moments over 3·2·3 values, the normalization and its gradient's two sums again
FLOAT32_N32 = {"conv2d_same_relu": 2 * 7 * 6 + 2, "separable_conv2d": 2 * 4 * 3 + 3 * 3 + 6,
               "batch_norm_nhwc_training": 3 * (3 * 2 * 3) + ELEMENTWISE_ULPS + 4}


@pytest.mark.parametrize("name", sorted(FLOAT32_N32))
def test_layer_matches_tensorflow_float32(tf1, name):
    build, inputs = LAYER_CASES[name][:2]
    compare(tf1, build, inputs, dtype_name="float32", n32=FLOAT32_N32[name])




@pytest.mark.parametrize("padding", ["same", "valid", "causal"])
def test_dilated_conv1d_matches_tensorflow(tf1, padding):
    # TF writes SpaceToBatchND + Conv2D + BatchToSpaceND; core one dilated Conv2D with the same values
    compare(tf1, lambda tf, x: tf.layers.conv1d(x, 2, 3, dilation_rate=2, padding=padding), [rnd(2, 9, 2)],
            same_ops=False)


def test_conv2d_transpose_with_unknown_spatial_dims_matches_tensorflow(tf1):
    build = lambda tf, x: tf.layers.conv2d_transpose(x, 2, 3, strides=2, padding="valid")  # noqa: E731
    compare(tf1, build, [rnd(2, 3, 4, 3)], shapes=[(None, None, None, 3)])  # output shape from tf.shape


def test_dense_on_rank3_inputs_matches_tensorflow(tf1):
    build = lambda tf, x: tf.layers.dense(x, 3, activation=tf.nn.relu)  # noqa: E731
    compare(tf1, build, [rnd(2, 4, 5)], shapes=[(2, 4, 5)])             # Tensordot: Reshape, MatMul, Reshape
    # unknown batch: TF's Tensordot computes the shapes in the graph (Shape/GatherV2/Prod/...) while
    # core's tensordot needs static shapes: the layer reshapes around one MatMul itself (same values)
    compare(tf1, build, [rnd(2, 4, 5)], same_ops=False)
    compare(tf1, build, [rnd(2, 3, 4, 5)], shapes=[(None, None, 4, 5)], same_ops=False)


def _graph_only(tf, build, shapes):
    """Variables, output static shapes and op types of ``build`` without running it."""
    g = tf.Graph()
    with g.as_default():
        phs = [tf.placeholder(tf.float32, s) for s in shapes]
        n = len(g.get_operations())
        out = build(tf, *phs)
        built = g.get_operations()[n:]
        prefixes = tuple(v.op.name + "/" for v in tf.global_variables())
        ops = {_SAME_OP.get(o.type, o.type) for o in built
               if o.type not in _PLUMBING and not o.name.startswith(prefixes)}
        return ([(v.name, v.shape.as_list()) for v in tf.global_variables()], out.shape.as_list(), out.name, ops)


@pytest.mark.parametrize("build", [
    lambda tf, x: tf.layers.conv2d(x, 2, 3, data_format="channels_first"),
    lambda tf, x: tf.layers.conv2d(x, 2, 3, strides=2, padding="same", data_format="channels_first"),
])
def test_channels_first_conv2d_graph_matches_tensorflow(tf1, build):
    ours = _graph_only(core, build, [(None, 3, 7, 6)])
    theirs = _graph_only(tf1, build, [(None, 3, 7, 6)])
    # TF adds the bias with BiasAdd(data_format="NCHW"); core's nn.bias_add is NHWC-only, so the layer adds a
    # [1, C, 1, 1] reshaped bias instead (same values, see test_conv_and_bn_channels_first_values_...)
    assert ours[:2] == theirs[:2]


def test_channels_first_conv1d_graph_and_values(tf1):
    build, inputs, shapes = LAYER_CASES["conv1d_channels_first"]
    ours = _graph_only(core, build, shapes)
    assert ours == _graph_only(tf1, build, shapes)        # incl. the reshaped-bias Add, as TF
    # values: a channels-first conv1d is the channels-last one of the transposed input
    x = rnd(2, 3, 9)
    with core.Graph().as_default():
        ph = core.placeholder(core.float64, [None, 3, 9])
        first = core.layers.conv1d(ph, 4, 3, data_format="channels_first", name="c")
        last = core.layers.conv1d(core.transpose(ph, [0, 2, 1]), 4, 3, name="c", reuse=True)
        sess = core.Session()
        sess.run(core.global_variables_initializer())
        a, b = sess.run([first, last], {ph: x})
    np.testing.assert_allclose(a, b.transpose(0, 2, 1), rtol=1e-12)


def test_conv_and_bn_channels_first_values_match_channels_last():
    x = rnd(2, 3, 5, 4)
    with core.Graph().as_default():
        ph = core.placeholder(core.float64, [None, 3, 5, 4])
        nhwc = core.transpose(ph, [0, 2, 3, 1])
        outs = [core.layers.conv2d(ph, 2, 3, padding="same", data_format="channels_first", name="c"),
                core.layers.conv2d(nhwc, 2, 3, padding="same", name="c", reuse=True),
                core.layers.batch_normalization(ph, axis=1, training=True, name="bn"),
                core.layers.batch_normalization(nhwc, training=True, name="bn", reuse=True)]
        sess = core.Session()
        sess.run(core.global_variables_initializer())
        for v, value in zip(core.global_variables(), _values_for(core.global_variables())):
            v.load(value, sess)
        a, b, c, d = sess.run(outs, {ph: x})
    np.testing.assert_allclose(a.transpose(0, 2, 3, 1), b, rtol=1e-12)
    np.testing.assert_allclose(c.transpose(0, 2, 3, 1), d, rtol=1e-12)


# ---- pooling (no variables): the op-case harness, incl. float32 and central differences (float32: maxima and
# reshapes exactly TF's; an average sums its window, then divides, against Σ|terms|)
POOL_CASES = {
    "max2d_valid": Case(lambda tf, x: tf.layers.max_pooling2d(x, 2, 2), [rnd(2, 5, 6, 3)], n32=0),
    "max2d_same_odd": Case(lambda tf, x: tf.layers.max_pooling2d(x, (3, 2), (2, 1), padding="same"),
                           [rnd(1, 5, 5, 2)], n32=0),
    "avg2d_same": Case(lambda tf, x: tf.layers.average_pooling2d(x, 3, 2, padding="same"), [rnd(2, 5, 4, 2)],
                       n32=3 * 3 + 1, scale32=SUM_OF_TERMS),
    "avg2d_valid": Case(lambda tf, x: tf.layers.average_pooling2d(x, [2, 3], 1), [rnd(1, 4, 5, 3)],
                        n32=2 * 3 + 1, scale32=SUM_OF_TERMS),
    "max1d": Case(lambda tf, x: tf.layers.max_pooling1d(x, 2, 2), [rnd(2, 9, 3)], n32=0),
    "avg1d_same": Case(lambda tf, x: tf.layers.average_pooling1d(x, 3, 2, padding="same"), [rnd(2, 7, 2)],
                       n32=3 + 1, scale32=SUM_OF_TERMS),
    "avg1d_channels_first": Case(lambda tf, x: tf.layers.average_pooling1d(x, 2, 2, data_format="channels_first"),
                                 [rnd(2, 3, 9)], n32=2 + 1, scale32=SUM_OF_TERMS),
    "max_pooling_class": Case(lambda tf, x: tf.layers.MaxPooling2D(2, 1, name="pool")(x), [rnd(1, 3, 4, 2)], n32=0),
    "flatten_unknown_dims": Case(lambda tf, x: tf.layers.flatten(x), [rnd(2, 3, 4)], shapes=[(None, None, 4)], n32=0),
}


@pytest.mark.parametrize("name", sorted(POOL_CASES))
def test_pooling_matches_tensorflow(tf1, name):
    if "pool" in name or name[:3] in ("max", "avg"):
        if not hasattr(core.nn, "max_pool"):
            pytest.skip("tf.nn.max_pool/avg_pool not in core yet (core/ops/pool_ops.py)")
    check_case(tf1, POOL_CASES[name])


# ---- names, uniquification and reuse
def _cnn(tf):
    x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
    training = tf.placeholder_with_default(False, [], name="training")
    with tf.name_scope("net"):
        h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
        h = tf.layers.conv2d(h, 4, 3)
        h = tf.layers.batch_normalization(h, training=training)
        h = tf.layers.conv2d(h, 5, [2, 2], name="c")
    with tf.variable_scope("outer"):
        conv = tf.layers.Conv2D(2, 1)
        a, b = conv(h), conv.apply(h)
        with tf.variable_scope("inner"):
            f = tf.layers.flatten(b)
            d = tf.layers.Dense(3, name="dd")
            o = d(f)
            tf.layers.dense(f, 3)
            tf.layers.dense(f, 3)
    with tf.variable_scope("outer", reuse=True), tf.variable_scope("inner"):
        o3 = tf.layers.dense(f, 3, name="dense")
    with tf.variable_scope("outer", reuse=tf.AUTO_REUSE):
        o5 = tf.layers.dense(f, 3, name="auto")
        o6 = tf.layers.dense(f, 3, name="auto")
    drop = tf.layers.Dropout(0.3)
    y = drop(o6, training=training)
    return dict(vars=[(v.name, v.shape.as_list()) for v in tf.global_variables()],
                trainable=[v.name for v in tf.trainable_variables()],
                outs=[t.name for t in (a, b, o, o3, o5, o6)],
                dropout=y.name.split("/")[0],    # TF selects with a functional cond (dropout/cond/...)
                conv=(conv.kernel.name, conv.bias.name, [v.name for v in conv.variables],
                      [v.name for v in conv.trainable_variables], [v.name for v in conv.weights], conv.scope_name),
                dense=(d.name, d.scope_name, d.kernel.shape.as_list()),
                names=[conv.name, drop.name, tf.layers.Dense(2).name],    # Keras: one-based, per graph
                updates=[op.name for op in tf.get_collection(tf.GraphKeys.UPDATE_OPS)])


def test_variable_names_scopes_and_reuse_match_tensorflow(tf1):
    with core.Graph().as_default():
        ours = _cnn(core)
    with tf1.Graph().as_default():
        theirs = _cnn(tf1)
    for key in ("vars", "trainable", "outs", "conv", "dense", "dropout", "names"):
        assert ours[key] == theirs[key], key
    # TF's resource-variable update is ``.../AssignMovingAvg/AssignSubVariableOp``: same scope
    assert [n.rsplit("/", 1)[0] for n in theirs["updates"]] == ["net/batch_normalization/AssignMovingAvg",
                                                                "net/batch_normalization/AssignMovingAvg_1"]
    assert ours["updates"] == ["net/batch_normalization/AssignMovingAvg", "net/batch_normalization/AssignMovingAvg_1"]


@pytest.mark.parametrize("lib", ["core", "tf1"])
def test_reuse_errors(tf1, lib):
    tf = core if lib == "core" else tf1
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        tf.layers.dense(x, 3, name="fc")
        with pytest.raises(ValueError, match="already exists"):
            tf.layers.dense(x, 3, name="fc")
        with pytest.raises(ValueError, match="does not exist"):
            tf.layers.dense(x, 3, name="nope", reuse=True)
        with pytest.raises(ValueError, match="[Ss]hape"):       # sharing with another shape
            tf.layers.dense(x, 5, name="fc", reuse=True)
        with pytest.raises(ValueError):                          # Dense needs a known last dimension
            tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)
        with pytest.raises(ValueError):                          # Conv2D needs 4-D inputs
            tf.layers.conv2d(x, 2, 3)
        with pytest.raises(ValueError):                          # pooling strides are required
            tf.layers.MaxPooling2D(2, None)
        with pytest.raises(ValueError):
            tf.layers.conv2d(tf.placeholder(tf.float32, [None, 4, 4, 1]), 2, 3, padding="full")


def test_layer_object_shares_variables_and_builds_once():
    with core.Graph().as_default():
        layer = core.layers.Dense(2, name="shared")
        assert not layer.built and layer.variables == []
        with pytest.raises(ValueError, match="has not been used yet"):
            layer.scope_name
        a = layer(core.ones([3, 4]))
        b = layer(core.zeros([1, 4]))
        assert layer.built and len(core.global_variables()) == 2
        assert [v.name for v in layer.weights] == ["shared/kernel:0", "shared/bias:0"]
        assert a.op.name == "shared/BiasAdd" and b.op.name == "shared/BiasAdd_1"
        with pytest.raises(ValueError):                          # built for 4 inputs
            layer(core.ones([3, 5]))


def test_regularizers_and_trainable_match_tensorflow(tf1):
    def build(tf, x):
        reg = lambda w: tf.reduce_sum(tf.square(w)) * 0.1  # noqa: E731
        h = tf.layers.conv2d(x, 2, 2, kernel_regularizer=reg, bias_regularizer=reg, name="c")
        h = tf.layers.dense(tf.layers.flatten(h), 2, kernel_regularizer=reg, trainable=False, name="frozen")
        return tf.layers.dense(h, 1, activity_regularizer=reg, name="act")

    ours, theirs = compare(tf1, build, [rnd(2, 3, 3, 2)])
    assert ours.trainable == ["c/kernel:0", "c/bias:0", "act/kernel:0", "act/bias:0"]
    assert len(ours.reg_values) == 4
    with core.Graph().as_default():
        layer = core.layers.Dense(2, trainable=False)
        layer(core.ones([1, 3]))
        assert layer.trainable_variables == [] and len(layer.non_trainable_variables) == 2
        assert core.trainable_variables() == []


def test_batch_norm_class_updates_and_moving_statistics_match_tensorflow(tf1):
    x = rnd(4, 3, 2, 3)

    def run(tf, sess_cls):
        ph = tf.placeholder(tf.float32, [None, 3, 2, 3])
        training = tf.placeholder(tf.bool, [])
        layer = tf.layers.BatchNormalization(momentum=0.7, name="bn")
        y = layer(ph, training=training)
        y2 = layer.apply(ph * 2.0, training=False)
        assert [v.name for v in layer.trainable_variables] == ["bn/gamma:0", "bn/beta:0"]
        assert [v.name for v in layer.non_trainable_variables] == ["bn/moving_mean:0", "bn/moving_variance:0"]
        assert len(layer.updates) == 2 and len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2
        with sess_cls() as sess:
            sess.run(tf.global_variables_initializer())
            out = [sess.run(y, {ph: x, training: True})]
            sess.run(layer.updates, {ph: x, training: True})
            sess.run(layer.updates, {ph: x * 3, training: False})     # decay 0: no change
            out += sess.run([layer.moving_mean, layer.moving_variance])
            out += sess.run([y, y2], {ph: x, training: False})
            return out

    with core.Graph().as_default():
        ours = run(core, core.Session)
    with tf1.Graph().as_default():
        theirs = run(tf1, tf1.Session)
    # float32 (tests/_tolerance.py): the moments over 4·3·2 values and the normalization (square root, product and
    # sums) for y; the moving averages' update is the moments and two products and a difference
    for label, a, b in zip(["y_train", "moving_mean", "moving_var", "y_infer", "y2"], ours, theirs):
        assert_float32_close(a, b, n=2 * (4 * 3 * 2) + ELEMENTWISE_ULPS + 6, err_msg=label)


def test_dropout_class_training_switch():
    with core.Graph().as_default():
        core.set_random_seed(1)
        x = core.ones([100, 100])
        training = core.placeholder(core.bool, [])
        layer = core.layers.Dropout(rate=0.25, noise_shape=[None, 1])
        y = layer(x, training=training)
        sess = core.Session()
        np.testing.assert_array_equal(sess.run(y, {training: False}), np.ones((100, 100)))
        kept = sess.run(y, {training: True})
        assert np.all(kept == kept[:, :1])                           # one draw per row (noise_shape)
        assert 0.6 < (kept[:, 0] != 0).mean() < 0.9
        np.testing.assert_allclose(kept[kept != 0], 1 / 0.75, rtol=1e-6)
        assert layer(x).op.type == "Identity"                         # training=False by default


def test_second_derivatives_through_dense_match_tensorflow(tf1):
    x = rnd(3, 4)

    def run(tf):
        ph = tf.placeholder(tf.float64, [None, 4])
        y = tf.layers.dense(ph, 3, activation=tf.nn.tanh, kernel_initializer=tf.constant_initializer(
            np.linspace(-1, 1, 12).reshape(4, 3)), bias_initializer=tf.constant_initializer(0.1))
        g = tf.gradients(tf.reduce_sum(y * y), ph)[0]
        gg = tf.gradients(tf.reduce_sum(g * g), tf.trainable_variables())
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        return sess.run(gg, {ph: x})

    with core.Graph().as_default():
        ours = run(core)
    with tf1.Graph().as_default():
        theirs = run(tf1)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def _custom_layer(tf):
    class Scale(tf.layers.Layer):
        """A user layer: one weight per channel, built on first call."""

        def build(self, input_shape):
            self.w = self.add_weight("w", [int(input_shape[-1])], initializer=tf.ones_initializer())
            self.c = self.add_weight("c", [], initializer=tf.zeros_initializer(), trainable=False)
            super().build(input_shape)

        def call(self, inputs):
            return inputs * self.w + self.c

    x = tf.placeholder(tf.float32, [None, 3])
    with tf.variable_scope("model"):
        layer = Scale()
        y = layer(x)
        y2 = Scale(name="named")(layer(y))
    return ([v.name for v in tf.global_variables()], [v.name for v in tf.trainable_variables()],
            [v.name for v in layer.weights], layer.built, y.name, y2.name)


def test_custom_layer_subclass_matches_tensorflow(tf1):
    with core.Graph().as_default():
        ours = _custom_layer(core)
    with tf1.Graph().as_default():
        theirs = _custom_layer(tf1)
    assert ours == theirs


def test_cnn_graph_def_imports_and_runs_in_tensorflow(tf1):
    x = rnd(2, 6, 6, 2).astype(np.float32)
    with core.Graph().as_default() as g:
        ph = core.placeholder(core.float32, [None, 6, 6, 2], name="x")
        init = core.constant_initializer(0.05)
        h = core.layers.conv2d(ph, 3, 3, padding="same", activation=core.nn.relu, kernel_initializer=init)
        h = core.layers.max_pooling2d(h, 2, 2)
        h = core.layers.conv2d_transpose(h, 2, 2, strides=2, kernel_initializer=init)
        h = core.layers.separable_conv2d(h, 2, 3, depthwise_initializer=init, pointwise_initializer=init)
        h = core.layers.batch_normalization(h, training=False)
        out = core.layers.dense(core.layers.flatten(h), 2, kernel_initializer=init)
        init_op = core.global_variables_initializer()
        sess = core.Session()
        sess.run(init_op)
        ours = sess.run(out, {ph: x})
        gd = g.as_graph_def()
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(gd.SerializeToString()), name="")
        with tf1.Session() as tsess:
            tsess.run(init_op.name)
            theirs = tsess.run(out.name, {"x:0": x})
    # float32 (tests/_tolerance.py): the chain's dots, conv 3·3·2, transpose 3, separable 3·3 + 2, dense 4·4·2, and
    # the biases, inference batch norm (a square root, products and sums), relu and max pool exact
    assert_float32_close(ours, theirs, n=3 * 3 * 2 + 3 + 3 * 3 + 2 + 4 * 4 * 2 + 4 + ELEMENTWISE_ULPS + 4)
