"""Training graphs of tfevents.core against TF1's, node for node (the GraphDef TensorBoard shows).

Each program below is built once by ``tensorflow.compat.v1`` as TF 1.x built it (reference variables:
``VariableV2`` and ``<var>/read``; the Switch/Merge control flow) and once by ``tfevents.core``; the two GraphDefs
are compared node by node: name, op, data inputs in order, control inputs as a set, and attrs (TF's ``_class``
and ``_output_shapes`` aside). Every difference that remains is listed in ``KNOWN`` with its reason: the test
fails on a difference not listed, and on a listed one that no longer occurs. Then TF imports core's GATE_OP
Adam training graph and trains it to core's numbers.

Node counts and differences per graph (issue 23; "before" is the tree the issue was filed against, e56f623,
measured with this file's programs and comparison):

    graph                        TF nodes   ours before  differences before   ours after  differences after
    GradientDescent/GATE_NONE          75            72                  51           75                  0
    GradientDescent/GATE_OP            87            72                  65           87                  0
    GradientDescent/GATE_GRAPH         80            77                  61           80                  0
    Momentum/GATE_NONE                 92            89                  55           92                  0
    Momentum/GATE_OP                  104            89                  69          104                  0
    Momentum/GATE_GRAPH                97            94                  65           97                  0
    Momentum_nesterov/GATE_NONE        92            89                  55           92                  0
    Momentum_nesterov/GATE_OP         104            89                  69          104                  0
    Momentum_nesterov/GATE_GRAPH       97            94                  65           97                  0
    Adagrad/GATE_NONE                  91            88                  55           91                  0
    Adagrad/GATE_OP                   103            88                  69          103                  0
    Adagrad/GATE_GRAPH                 96            93                  65           96                  0
    Adadelta/GATE_NONE                109           106                  59          109                  0
    Adadelta/GATE_OP                  121           106                  73          121                  0
    Adadelta/GATE_GRAPH               114           111                  69          114                  0
    RMSProp/GATE_NONE                 110           107                  59          110                  0
    RMSProp/GATE_OP                   122           107                  73          122                  0
    RMSProp/GATE_GRAPH                115           112                  69          115                  0
    RMSProp_centered/GATE_NONE        126           123                  63          126                  0
    RMSProp_centered/GATE_OP          138           123                  77          138                  0
    RMSProp_centered/GATE_GRAPH       131           128                  73          131                  0
    Adam/GATE_NONE                    122           119                  61          122                  0
    Adam/GATE_OP                      134           119                  75          134                  0
    Adam/GATE_GRAPH                   127           124                  71          127                  0
    Ftrl/GATE_NONE                    128           116                  77          128                  0
    Ftrl/GATE_OP                      140           116                  91          140                  0
    Ftrl/GATE_GRAPH                   133           121                  87          133                  0
    gradients/gate_gradients           75            60                  57           75                  0
    clip_by_value                     125           116                 104          125                  0
    clip_by_norm                      149           126                  89          149                  0
    clip_by_global_norm                97            94                  52           97                  0
    ExponentialMovingAverage          199           100                 154          199                  0
    batch_normalization               196           161                 159          196                  0
    exponential_decay                  95            79                  73           95                  0
    polynomial_decay                  100            84                  79          100                  0
    Saver                             160           119                 101          160                  0
    Saver_sharded                     172           119                 113          172                  0
    summary.merge_all                  92            77                  75           92                  0
    softmax_cross_entropy_v2          109            59                  98          109                  0
    reductions                         54            43                  49           54                  0
    pow                                91            88                  40           91                  0

(the last three go beyond the issue's list: the dense cross-entropy, tanh/sigmoid/softmax, partial reductions;
Pow, ones_like and a new axis, whose "before" is 0cffcfa, the tree the program was added to.)

Batch norm with each kind of ``training`` and the UPDATE_OPS pattern (issue 37, item 9; "before" is a706033):

    graph                                                  TF nodes   ours before  differences before   after
    batch_normalization_2d/training_placeholder_with_default    164           138                  82       0
    batch_normalization_2d/training_placeholder                 163           137                  82       0
    batch_normalization_2d/training_constant                    131           131                   0       0
    batch_normalization_2d/training_python_bool                 130           130                   0       0
    batch_normalization_fused/training_placeholder_with_default 165           153                 143       0
    batch_normalization_fused/training_placeholder              164           152                 143       0
    batch_normalization_fused/training_constant                 100           117                  51       0
    batch_normalization_fused/training_python_bool               99           116                  51       0
"""
import numpy as np
import pytest

from _graph_compare import assert_only_known_differences
from _oracle import as_tf1_built_graphs
from tfevents import core


RNG = np.random.RandomState(23)
W1 = RNG.normal(0, 0.5, (4, 5)).astype(np.float32)
B1 = RNG.normal(0, 0.1, (5,)).astype(np.float32)
W2 = RNG.normal(0, 0.5, (5, 3)).astype(np.float32)
B2 = RNG.normal(0, 0.1, (3,)).astype(np.float32)
X = RNG.normal(0, 1, (8, 4)).astype(np.float32)
Y = RNG.randint(0, 3, 8).astype(np.int64)


# ---- the programs: each builds its graph in the default graph of ``tf``

def _mlp(tf, clip_logits=False):
    """Two layers under name scopes and a softmax loss: ``(loss, [w1, b1, w2, b2])``."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    with tf.name_scope("hidden"):
        w1 = tf.Variable(W1, name="weights")
        b1 = tf.Variable(B1, name="biases")
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
    with tf.name_scope("softmax_linear"):
        w2 = tf.Variable(W2, name="weights")
        b2 = tf.Variable(B2, name="biases")
        logits = tf.matmul(hidden, w2) + b2
    if clip_logits:
        logits = tf.clip_by_value(logits, -3.0, 3.0)
    with tf.name_scope("loss"):
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits),
                              name="xentropy_mean")
    return loss, [w1, b1, w2, b2]


OPTIMIZERS = {
    "GradientDescent": lambda tf: tf.train.GradientDescentOptimizer(0.1),
    "Momentum": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9),
    "Momentum_nesterov": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "Adagrad": lambda tf: tf.train.AdagradOptimizer(0.1),
    "Adadelta": lambda tf: tf.train.AdadeltaOptimizer(1.0),
    "RMSProp": lambda tf: tf.train.RMSPropOptimizer(0.01),
    "RMSProp_centered": lambda tf: tf.train.RMSPropOptimizer(0.01, centered=True),
    "Adam": lambda tf: tf.train.AdamOptimizer(1e-3),
    "Ftrl": lambda tf: tf.train.FtrlOptimizer(0.1),
}
GATES = {"GATE_NONE": 0, "GATE_OP": 1, "GATE_GRAPH": 2}


def _minimize(optimizer, gate):
    def program(tf):
        loss, _ = _mlp(tf)
        global_step = tf.train.get_or_create_global_step()
        train = OPTIMIZERS[optimizer](tf).minimize(loss, global_step=global_step, gate_gradients=GATES[gate])
        return dict(loss=loss, train=train)
    return program


def _gated_gradients(tf):
    loss, params = _mlp(tf)
    return dict(grads=tf.gradients(loss, params, gate_gradients=True))


def _clip_by_value(tf):
    loss, _ = _mlp(tf, clip_logits=True)
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads_and_vars = [(tf.clip_by_value(g, -1.0, 1.0), v) for g, v in opt.compute_gradients(loss)]
    return dict(train=opt.apply_gradients(grads_and_vars))


def _clip_by_norm(tf):
    loss, _ = _mlp(tf)
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads_and_vars = [(tf.clip_by_norm(g, 1.0), v) for g, v in opt.compute_gradients(loss)]
    return dict(train=opt.apply_gradients(grads_and_vars))


def _clip_by_global_norm(tf):
    loss, params = _mlp(tf)
    grads, norm = tf.clip_by_global_norm(tf.gradients(loss, params), 5.0)
    opt = tf.train.GradientDescentOptimizer(0.1)
    return dict(train=opt.apply_gradients(list(zip(grads, params))), norm=norm)


def _moving_average(tf):
    loss, params = _mlp(tf)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    ema = tf.train.ExponentialMovingAverage(0.99)
    with tf.control_dependencies([train]):
        train_and_average = ema.apply(params)
    return dict(train=train_and_average, averages=[ema.average(p) for p in params])


def _batch_norm(tf):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    with tf.name_scope("hidden"):
        w1 = tf.Variable(W1, name="weights")
        hidden = tf.nn.relu(tf.layers.batch_normalization(tf.matmul(x, w1), training=True))
    with tf.name_scope("softmax_linear"):
        w2 = tf.Variable(W2, name="weights")
        logits = tf.matmul(hidden, w2)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    return dict(train=train)


# what ``training`` is in the batch-norm programs below: Keras's smart_cond builds a cond for a tensor known only
# when run, and only the taken side for a Python bool or a constant tensor
TRAINING = {
    "placeholder_with_default": lambda tf: tf.placeholder_with_default(True, [], name="training"),
    "placeholder": lambda tf: tf.placeholder(tf.bool, [], name="training"),
    "constant": lambda tf: tf.constant(True, name="training"),
    "python_bool": lambda tf: True,
}


def _batch_norm_training(training, fused):
    """A batch-normalized layer trained with its updates as the train op's control dependencies (the TF1
    pattern): rank 2 (normalized op by op) or rank 4 (``FusedBatchNormV3``)."""
    def program(tf):
        is_training = TRAINING[training](tf)
        if fused:
            x = tf.placeholder(tf.float32, [None, 2, 2, 1], name="x")
            hidden = tf.layers.batch_normalization(x, training=is_training, momentum=0.9)
            hidden = tf.reshape(hidden, [-1, 4])
        else:
            x = tf.placeholder(tf.float32, [None, 4], name="x")
            hidden = tf.layers.batch_normalization(x, training=is_training, momentum=0.9)
        y = tf.placeholder(tf.int64, [None], name="y")
        w = tf.Variable(W1, name="weights")
        logits = tf.matmul(tf.nn.relu(hidden), w)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        return dict(train=train)
    return program


def _decay(schedule):
    def program(tf):
        loss, _ = _mlp(tf)
        global_step = tf.train.get_or_create_global_step()
        if schedule == "exponential":
            rate = tf.train.exponential_decay(0.1, global_step, 100, 0.96, staircase=True)
        else:
            rate = tf.train.polynomial_decay(0.1, global_step, 1000, 0.01, power=0.5)
        train = tf.train.GradientDescentOptimizer(rate).minimize(loss, global_step=global_step)
        return dict(train=train)
    return program


def _saver(tf):
    loss, _ = _mlp(tf)
    global_step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(1e-3).minimize(loss, global_step=global_step)
    saver = tf.train.Saver()
    return dict(train=train, saver=saver)


def _sharded_saver(tf):
    """The Saver MonitoredTrainingSession's scaffold makes (TF's _get_saver_or_default)."""
    loss, _ = _mlp(tf)
    global_step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(1e-3).minimize(loss, global_step=global_step)
    saver = tf.train.Saver(sharded=True, allow_empty=True)
    return dict(train=train, saver=saver)


def _summaries(tf):
    loss, params = _mlp(tf)
    tf.summary.scalar("loss", loss)
    for p in params:
        tf.summary.histogram(p.op.name, p)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return dict(train=train, summary=tf.summary.merge_all())


def _dense_softmax(tf):
    """Beyond the issue's list: tanh, sigmoid, softmax and the dense cross-entropy (TF flattens it to 2-D)."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w1 = tf.Variable(W1, name="w1")
    h = tf.tanh(tf.matmul(x, w1))
    h = tf.sigmoid(h) * tf.nn.softmax(h)
    labels = tf.one_hot(tf.placeholder(tf.int64, [None], name="y"), 5)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=h))
    return dict(train=tf.train.GradientDescentOptimizer(0.1).minimize(loss))


def _reductions(tf):
    """Beyond the issue's list: gradients of static partial Sum, Max and Mean reductions, Square and Sqrt."""
    w = tf.Variable(W1, name="w")
    loss = tf.reduce_sum(tf.sqrt(tf.reduce_sum(tf.square(w), axis=1))) + tf.reduce_mean(tf.reduce_max(w, axis=0))
    return dict(grads=tf.gradients(loss, [w]))


def _pow(tf):
    """Beyond the issue's list: Pow's gradient (both inputs; a static and a dynamic shape, broadcast) and
    ``ones_like``/``zeros_like`` of both kinds of shape."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(W1, name="w")
    e = tf.Variable(B1[:4] + 2.0, name="e")
    loss = tf.reduce_sum(tf.matmul(x, w) ** 2) + tf.reduce_sum(tf.pow(w, e[:, None]))
    return dict(grads=tf.gradients(loss, [w, e]), ones=[tf.ones_like(x), tf.ones_like(w)], zeros=tf.zeros_like(x))


PROGRAMS = {"%s/%s" % (o, g): _minimize(o, g) for o in OPTIMIZERS for g in GATES}
PROGRAMS.update({
    "gradients/gate_gradients": _gated_gradients,
    "clip_by_value": _clip_by_value,
    "clip_by_norm": _clip_by_norm,
    "clip_by_global_norm": _clip_by_global_norm,
    "ExponentialMovingAverage": _moving_average,
    "batch_normalization": _batch_norm,
    **{"batch_normalization_%s/training_%s" % (kind, training): _batch_norm_training(training, kind == "fused")
       for kind in ("2d", "fused") for training in TRAINING},
    "exponential_decay": _decay("exponential"),
    "polynomial_decay": _decay("polynomial"),
    "Saver": _saver,
    "Saver_sharded": _sharded_saver,
    "summary.merge_all": _summaries,
    "softmax_cross_entropy_v2": _dense_softmax,
    "reductions": _reductions,
    "pow": _pow,
})


# ---- building and comparing

def graph_defs(tf1, program):
    """``(TF's GraphDef, ours)`` of ``program``, both as TF's ``GraphDef`` protos. TF builds as TF 1.x did:
    reference variables and the Switch/Merge control flow (both restored afterwards: other tests run TF 2.x's
    defaults in this process)."""
    with as_tf1_built_graphs(tf1), tf1.Graph().as_default() as graph:
        program(tf1)
        want = graph.as_graph_def()
    with core.Graph().as_default() as graph:
        program(core)
        got = tf1.GraphDef.FromString(graph.as_graph_def().SerializeToString())
    return want, got


# ---- the differences that remain, per graph: {node name: why}. None remain for these programs; a difference
# listed here must keep occurring (the test fails once it is gone, so the table stays honest). Known limits
# outside these programs: a V1-format Saver (core's own npz format) builds no save/restore ops.
KNOWN: dict = {}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_graph_is_tf1s_node_for_node(tf1, name):
    want, got = graph_defs(tf1, PROGRAMS[name])
    assert_only_known_differences(name, want, got, KNOWN.get(name, {}))


# ---- TF runs core's GATE_OP Adam training graph

STEPS = 20


def _train(sess, names) -> tuple:
    """``STEPS`` Adam steps on (X, Y) from the initial values: the loss before each step, then the
    parameters."""
    feed = {names["x"]: X, names["y"]: Y}
    sess.run(names["init"])
    losses = [sess.run([names["loss"], names["train"]], feed)[0] for _ in range(STEPS)]
    return np.array(losses), sess.run(names["params"])


def test_tensorflow_trains_our_gated_adam_graph_to_our_numbers(tf1):
    """The race GATE_OP prevents: without the tuple around MatMul_grad, TF's executor may apply ApplyAdam to
    ``softmax_linear/weights`` (updated in place, aliased by its ``read``) before the backprop MatMul through it
    has read it. TF, importing core's graph, trains it 20 steps on 2 intra-op threads to core's numbers, 10
    times in a row."""
    with core.Graph().as_default() as graph:
        out = _minimize("Adam", "GATE_OP")(core)
        names = dict(x="x:0", y="y:0", loss=out["loss"].name, train=out["train"].name,
                     init=core.global_variables_initializer().name,
                     params=[v.name for v in core.trainable_variables()])
        with core.Session() as sess:
            want_losses, want_params = _train(sess, names)
        graph_def = graph.as_graph_def().SerializeToString()
    assert "gradients/softmax_linear/MatMul_grad/tuple/control_dependency_1" in {
        n.name for n in tf1.GraphDef.FromString(graph_def).node}
    assert want_losses[-1] < want_losses[0]
    config = tf1.ConfigProto(intra_op_parallelism_threads=2, inter_op_parallelism_threads=2)
    for attempt in range(10):
        with tf1.Graph().as_default():
            tf1.import_graph_def(tf1.GraphDef.FromString(graph_def), name="")
            with tf1.Session(config=config) as sess:
                losses, params = _train(sess, names)
        np.testing.assert_allclose(losses, want_losses, rtol=1e-5, atol=1e-6, err_msg="attempt %d" % attempt)
        for got, want, name in zip(params, want_params, names["params"]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg="%s, attempt %d" % (name, attempt))
