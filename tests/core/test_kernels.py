"""The optional C extension ``tfevents.core.runtime._kernels`` (fused single-pass optimizer updates) against the numpy
updates in core/ops/training_ops.py, which stay the fallback: the same numbers bit for bit, the fallback taken for
arrays the kernels do not handle, and both paths against real TF1 optimizers."""
import numpy as np
import pytest

from tfevents import core
from tfevents.core.ops import training_ops as ops
from _oracle import tf1_and_core
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close

kernels = pytest.importorskip("tfevents.core.runtime._kernels", reason="C extension not built")

# kernel name, numpy math, number of variable/slot arrays, scalar inputs (name -> value), flags (name, values)
RULES = {
    "gradient_descent": (ops._gradient_descent, ["var"], {"alpha": 0.1}, None, ["delta"]),
    "momentum": (ops._momentum, ["var", "accum"], {"lr": 0.05, "momentum": 0.9}, "use_nesterov", ["grad"]),
    "adagrad": (ops._adagrad, ["var", "accum"], {"lr": 0.2}, "update_slots", ["grad"]),
    "adam": (ops._adam, ["var", "m", "v"], dict(beta1_power=0.9 ** 3, beta2_power=0.999 ** 3, lr=0.01, beta1=0.9,
                                                beta2=0.999, epsilon=1e-7), "use_nesterov", ["grad"]),
    "rms_prop": (ops._rms_prop, ["var", "ms", "mom"], dict(lr=0.01, rho=0.9, momentum=0.5, epsilon=1e-6), None,
                 ["grad"]),
}
INPUTS = {  # TF's input order of each op (the kernels take it, then the flag)
    "gradient_descent": "var alpha delta",
    "momentum": "var accum lr grad momentum",
    "adagrad": "var accum lr grad",
    "adam": "var m v beta1_power beta2_power lr beta1 beta2 epsilon grad",
    "rms_prop": "var ms mom lr rho momentum epsilon grad",
}


def _state(rule, dtype, shape, seed=0):
    math, refs, scalars, flag, grads = RULES[rule]
    rng = np.random.RandomState(seed)
    arrays = {name: rng.randn(*shape).astype(dtype) for name in refs + grads}
    for slot in refs[1:]:
        arrays[slot] = np.abs(arrays[slot]) + 0.1         # accumulators of squares are positive
    arrays.update({k: np.array(v, dtype) for k, v in scalars.items()})
    return arrays


def _call_kernel(rule, arrays, flag_value):
    args = [arrays[n] for n in INPUTS[rule].split()]
    if RULES[rule][3] is not None:
        args.append(flag_value)
    return getattr(kernels, "apply_" + rule)(*args)


def _call_numpy(rule, arrays, flag_value):
    math, _, _, flag, _ = RULES[rule]
    kw = {flag: flag_value} if flag else {}
    math(*[arrays[n] for n in INPUTS[rule].split()], **kw)


CASES = [(rule, flag) for rule in RULES for flag in ((False, True) if RULES[rule][3] else (False,))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rule,flag", CASES)
def test_kernel_equals_numpy_bitwise(rule, flag, dtype):
    """Five steps on a 3-D variable (odd size: the vector loops' tails run too): every array identical."""
    fast, slow = _state(rule, dtype, (7, 11, 13)), _state(rule, dtype, (7, 11, 13))
    start = fast["var"].copy()
    rng = np.random.RandomState(1)
    for _ in range(5):
        for name in RULES[rule][4]:
            fast[name][...] = slow[name][...] = rng.randn(*start.shape)
        assert _call_kernel(rule, fast, flag) is True
        _call_numpy(rule, slow, flag)
    assert not np.array_equal(fast["var"], start)
    for name in RULES[rule][1]:
        assert fast[name].dtype == dtype
        np.testing.assert_array_equal(fast[name], slow[name], err_msg=name)


def _unsupported_variants(rule):
    """(description, arrays) pairs the kernel must refuse."""
    base = lambda: _state(rule, np.float32, (6, 4))              # noqa: E731
    out = []
    a = base()
    a["var"] = np.ones((6, 8), np.float32)[:, ::2]
    out.append(("non-contiguous variable", a))
    a = base()
    a["var"] = a["var"].astype(np.float16)
    out.append(("float16 variable", a))
    a = base()
    a["var"] = a["var"].astype(np.int32)
    out.append(("int32 variable", a))
    a = base()
    grad = RULES[rule][4][0]
    a[grad] = a[grad][:, :3]
    out.append(("gradient of another shape", a))
    a = base()
    a[grad] = a[grad].reshape(4, 6)
    out.append(("gradient of the same size, other shape", a))
    a = base()
    a[grad] = a[grad].astype(np.float64)
    out.append(("float64 gradient", a))
    a = base()
    a[grad] = a["var"]
    out.append(("gradient aliasing the variable", a))
    a = base()
    a["var"].setflags(write=False)
    out.append(("read-only variable", a))
    scalar = next(iter(RULES[rule][2]))
    a = base()
    a[scalar] = np.array(a[scalar], np.float64)
    out.append(("float64 scalar for a float32 variable", a))
    a = base()
    a[scalar] = np.full((2,), a[scalar])
    out.append(("two-element scalar", a))
    return out


@pytest.mark.parametrize("rule", list(RULES))
def test_unsupported_arrays_are_refused_untouched(rule):
    """False (the caller falls back to numpy) and no array changed."""
    for what, arrays in _unsupported_variants(rule):
        before = {k: np.array(v, copy=True) for k, v in arrays.items()}
        assert _call_kernel(rule, arrays, False) is False, what
        for k, v in arrays.items():
            np.testing.assert_array_equal(v, before[k], err_msg="%s: %s changed" % (what, k))


def test_python_float_scalars_are_cast_to_float32_like_numpy():
    fast, slow = _state("momentum", np.float32, (5, 5)), _state("momentum", np.float32, (5, 5))
    for a in (fast, slow):
        a["lr"], a["momentum"] = 0.1, 0.7          # weak Python floats: numpy casts them to float32
    assert _call_kernel("momentum", fast, False) is True
    _call_numpy("momentum", slow, False)
    np.testing.assert_array_equal(fast["var"], slow["var"])
    np.testing.assert_array_equal(fast["accum"], slow["accum"])


def test_wrong_argument_count_is_a_type_error():
    with pytest.raises(TypeError, match="apply_momentum"):
        kernels.apply_momentum(np.zeros(3, np.float32))


# ---- in a graph: the session's update ops take the kernel, and both paths agree with TF1

OPTIMIZERS = {
    "GradientDescent": lambda tf: tf.train.GradientDescentOptimizer(0.1),
    "Momentum": lambda tf: tf.train.MomentumOptimizer(0.05, 0.9),
    "MomentumNesterov": lambda tf: tf.train.MomentumOptimizer(0.05, 0.7, use_nesterov=True),
    "Adagrad": lambda tf: tf.train.AdagradOptimizer(0.2, initial_accumulator_value=0.3),
    "Adam": lambda tf: tf.train.AdamOptimizer(0.05),
    "AdamBetas": lambda tf: tf.train.AdamOptimizer(0.05, beta1=0.5, beta2=0.9, epsilon=1e-3),
    "RMSProp": lambda tf: tf.train.RMSPropOptimizer(0.01, momentum=0.3),
}


def _train(tf, make_opt, dtype, steps=4):
    rng = np.random.RandomState(3)
    w0, x0, y0 = rng.randn(6, 5).astype(dtype), rng.randn(8, 6).astype(dtype), rng.randn(8, 5).astype(dtype)
    w = tf.Variable(w0, name="w")
    loss = tf.reduce_sum(tf.square(tf.tanh(tf.matmul(tf.constant(x0), w)) - y0))
    opt = make_opt(tf)
    train_op = opt.minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train_op)
        return sess.run({"w": w, **{n: opt.get_slot(w, n) for n in opt.get_slot_names()}})


@pytest.fixture
def kernel_calls(monkeypatch):
    """Counts the calls of each kernel that took the arrays."""
    calls = {}

    class Spy:
        def __getattr__(self, name):
            fn = getattr(kernels, name)

            def wrapped(*args):
                done = fn(*args)
                calls[name] = calls.get(name, 0) + bool(done)
                return done
            return wrapped
    monkeypatch.setattr(ops, "_kernels", Spy())
    return calls


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_graph_both_paths_match_each_other_and_tf1(tf1, kernel_calls, monkeypatch, name, dtype):
    with tf1.Graph().as_default():
        expected = _train(tf1, OPTIMIZERS[name], dtype)
    with core.Graph().as_default():
        fast = _train(core, OPTIMIZERS[name], dtype)
    assert sum(kernel_calls.values()) == 4, kernel_calls        # every step's dense update ran in C
    monkeypatch.setattr(ops, "_kernels", None)
    with core.Graph().as_default():
        slow = _train(core, OPTIMIZERS[name], dtype)
    assert sorted(fast) == sorted(slow) == sorted(expected)
    for key in expected:
        np.testing.assert_array_equal(fast[key], slow[key], err_msg=key)      # the C kernel is the numpy update
        if dtype == "float64":
            np.testing.assert_allclose(fast[key], expected[key], rtol=1e-9, atol=1e-9, err_msg=key)
        else:
            # Roundings along one step's longest path: x·w (6 terms), tanh (Eigen's approximation against libm's),
            # the loss gradient (3), xᵀ·δ (8 terms, whose signs cancel: counted twice), the slot and weight
            # updates (up to 8, Adam's); four steps in a row.
            assert_float32_close(fast[key], expected[key], n=4 * (6 + ELEMENTWISE_ULPS + 3 + 2 * 8 + 8), err_msg=key)


def test_environment_variable_disables_the_kernels():
    import os
    import subprocess
    import sys
    code = "from tfevents.core.ops import training_ops as ops; print(ops._kernels is None)"
    env = dict(os.environ, TFEVENTS_CORE_KERNELS="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
    env["TFEVENTS_CORE_KERNELS"] = "1"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- relu and its gradient

SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 3.5, -2.25])


def _relu_inputs(dtype, shape=(9, 37)):
    rng = np.random.RandomState(5)
    x = rng.randn(*shape).astype(dtype)
    x.flat[:SPECIAL.size] = SPECIAL           # NaN, infinities, signed zeros and subnormals
    g = rng.randn(*shape).astype(dtype)
    g.flat[SPECIAL.size:2 * SPECIAL.size] = SPECIAL
    g.flat[:SPECIAL.size] = SPECIAL[::-1]
    return x, g


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def _same_values(a, b):
    """Equal values, NaN where the other has NaN; the sign of a zero may differ: numpy's own np.maximum(-0.0, 0)
    is +0.0 or -0.0 depending on its SIMD path; the kernel gives TF's ``x < 0 ? 0 : x`` (-0.0)."""
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_kernels_equal_numpy(dtype):
    x, g = _relu_inputs(dtype)
    out = np.empty_like(x)
    assert kernels.relu(x, out) is True
    _same_values(out, np.maximum(x, 0))
    assert np.signbit(out[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()      # TF keeps -0.0
    inplace = x.copy()
    assert kernels.relu(inplace, inplace) is True
    _same_bits(inplace, out)
    with np.errstate(invalid="ignore"):                     # inf * 0 is NaN, in both
        want = g * (x > 0)
    assert kernels.relu_grad(g, x, out) is True
    _same_bits(out, want)
    inplace = g.copy()
    assert kernels.relu_grad(inplace, x, inplace) is True
    _same_bits(inplace, want)


def test_relu_kernels_refuse_what_they_do_not_handle():
    x, g = _relu_inputs(np.float32)
    assert kernels.relu(x.astype(np.float16), np.empty(x.shape, np.float16)) is False
    assert kernels.relu(x[:, ::2], np.empty((9, 19), np.float32)) is False           # a strided view
    assert kernels.relu(x, np.empty((9, 36), np.float32)) is False                   # another shape
    assert kernels.relu(x, np.empty(x.shape, np.float64)) is False                   # another dtype
    buf = np.zeros(2 * x.size, np.float32)
    buf[:x.size] = x.ravel()
    assert kernels.relu(buf[:x.size], buf[5:5 + x.size]) is False                     # partial overlap
    ro = np.empty_like(x)
    ro.setflags(write=False)
    assert kernels.relu(x, ro) is False
    assert kernels.relu_grad(g, x.astype(np.float64), np.empty_like(g)) is False


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_graph_both_paths_match_tf1(tf1, monkeypatch, dtype):
    """relu forward and gradient through a session, with the kernels and with the numpy fallback, against TF1
    (the in-place variants run: the relu's input and the gradient are dead temporaries)."""
    from tfevents.core.ops import nn_ops
    x0 = np.random.RandomState(2).randn(9, 37).astype(dtype)
    x0[0, :3] = 0.0

    w0 = np.linspace(-1, 1, 37 * 4).reshape(37, 4).astype(dtype)

    def run(tf):
        x = tf.placeholder(dtype, (None, 37))                 # fed: nothing is constant-folded
        w = tf.constant(w0)
        y = tf.nn.relu(tf.matmul(x, w) + 0.25)
        z = tf.nn.relu(x * 3.0)
        loss = tf.reduce_sum(y * y) + tf.reduce_sum(z)
        with tf.Session() as sess:
            return sess.run([y, z] + tf.gradients(loss, [x]), {x: x0})

    with tf1.Graph().as_default():
        expected = run(tf1)
    with core.Graph().as_default():
        fast = run(core)
    monkeypatch.setattr(nn_ops, "_kernels", None)
    with core.Graph().as_default():
        slow = run(core)
    for f, s, e in zip(fast, slow, expected):
        _same_values(f, s)
    if dtype == "float64":
        for f, e in zip(fast, expected):
            np.testing.assert_allclose(f, e, rtol=1e-5, atol=1e-5)
        return
    # float32 (tests/_tolerance.py): y's dot of 37 products and the bias, against Σ|terms|; z = relu(3x) exact;
    # dx = 2y·wᵀ (4 products, the relu's mask) + 3, against its Σ|terms|
    y_terms = float((np.abs(x0) @ np.abs(w0)).max()) + 0.25
    assert_float32_close(fast[0], expected[0], n=37 + 1, scale=y_terms, err_msg="y")
    np.testing.assert_array_equal(fast[1], expected[1], err_msg="z")
    assert_float32_close(fast[2], expected[2], n=37 + 1 + 4 + 1,
                         scale=float((2 * y_terms * np.abs(w0)).sum(axis=1).max()) + 3, err_msg="dx")


# ---- denormals flushed to zero during a step, as TF does

def _denormal_program(tf):
    p = tf.placeholder(tf.float32, [4])
    return p, [p * np.float32(1.0), p * np.float32(1e-30), p + p]


def test_session_flushes_denormals_like_tf1_and_restores_the_mode(tf1):
    from tfevents.core.runtime import session
    if session._flush_denormals is None:
        pytest.skip("kernels disabled with TFEVENTS_CORE_KERNELS=0")
    feed = np.array([1e-39, -3e-40, 1e-20, 1.0], np.float32)          # two float32 denormals
    with tf1.Graph().as_default():
        p, outs = _denormal_program(tf1)
        with tf1.Session() as sess:
            expected = sess.run(outs, {p: feed})
    with core.Graph().as_default():
        p, outs = _denormal_program(core)
        with core.Session() as sess:
            got = sess.run(outs, {p: feed})
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    assert got[0][0] == 0 and got[2][1] == 0           # denormal inputs read as zero, not 1e-39
    # outside a step numpy keeps IEEE denormals: the mode was put back
    assert feed[0] * np.float32(1.0) == np.float32(1e-39)
    assert np.float32(1e-20) * np.float32(1e-20) > 0


def test_flush_bits_round_trip():
    before = kernels.flush_denormals()
    try:
        flushed = np.float32(1e-39) * np.float32(1.0)
    finally:
        kernels.restore_denormals(before)
    assert flushed == 0
    assert np.float32(1e-39) * np.float32(1.0) == np.float32(1e-39)


# ---- sigmoid and tanh gradients (every LSTM/GRU step)

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_and_tanh_grad_kernels_equal_numpy_bit_for_bit(dtype):
    y, g = _relu_inputs(dtype)
    for name, numpy_forward in (("sigmoid_grad", lambda y, g: g * y * (1.0 - y)),
                                ("tanh_grad", lambda y, g: g * (1.0 - y * y))):
        out = np.empty_like(g)
        assert getattr(kernels, name)(y, g, out) is True
        with np.errstate(all="ignore"):
            _same_bits(out, numpy_forward(y, g))
        assert getattr(kernels, name)(y[:, ::2], g[:, ::2], np.empty((9, 19), dtype)) is False


def test_sigmoid_grad_and_tanh_grad_ops_match_tf1_with_and_without_kernels(tf1, monkeypatch):
    from tfevents import core
    from tfevents.core.ops import math_ops
    x_value = np.linspace(-4, 4, 24, dtype=np.float32).reshape(4, 6)

    def program(tf):
        x = tf.placeholder(tf.float32, [4, 6])
        y = tf.reduce_sum(tf.sigmoid(x) * tf.tanh(x * 0.7))
        with tf.Session() as sess:
            return sess.run([y, tf.gradients(y, x)[0]], {x: x_value})
    want, got = tf1_and_core(tf1, program)
    monkeypatch.setattr(math_ops, "_kernels", None)
    with core.Graph().as_default():
        fallback = program(core)
    # float32 (tests/_tolerance.py): y sums 24 products of a sigmoid and a tanh, against Σ|terms|; the gradient's
    # terms are each function's derivative (the function, and twice more in y·(1 − y) or 1 − y²) times the other
    terms = float(np.sum(np.abs(1 / (1 + np.exp(-x_value)) * np.tanh(0.7 * x_value))))
    assert_float32_close(got[0], want[0], n=24 + 2 * ELEMENTWISE_ULPS + 1, scale=terms, err_msg="y")
    assert_float32_close(got[1], want[1], n=2 * 3 * ELEMENTWISE_ULPS + 4, err_msg="dy/dx")
    for g, f in zip(got, fallback):
        _same_bits(np.atleast_1d(g), np.atleast_1d(f))
