"""Array manipulation ops of tfevents.core (core/ops/manip_ops.py, slicing_ops.py, random_ops.py) against TF1:
pad (Pad/PadV2/MirrorPad), slice, reverse, gather_nd/scatter_nd, boolean_mask, sequence_mask, sort/argsort/top_k,
unique, meshgrid, linspace, space_to_depth/depth_to_space, broadcast_to; random_shuffle and multinomial by
their properties (their random bits cannot match TF's)."""
import numpy as np
import pytest

from tfevents import core
from tfevents.core.ops import manip_ops

from _op_cases import Case as _Case, check_case
from _tolerance import assert_float32_close

R = np.random.RandomState(4321)

# attrs TF 2.x added to these ops with defaults; core writes the TF 1.x ops without them (TF 2.x imports both)
TF2_ATTRS = ("Tk", "index_type", "bad_indices_policy")
# core/framework/graph_def.py adds "T" (input 0's dtype) to every op not in its _NO_T set; GatherNd (which has
# Tparams) is not there yet, so core's GatherNd node carries an extra T
GATHER_ND_ATTRS = TF2_ATTRS + ("T",)


def rnd(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


def distinct(*shape):
    """Values at least 0.05 apart (sorting them has no ties within a finite-difference step)."""
    n = int(np.prod(shape))
    return (R.permutation(n) * 0.1 - 0.05 * n + R.uniform(0, 0.02, n)).reshape(shape)


def top_k(tf):
    """tf.nn.top_k (core: manip_ops.top_k until the coordinator wires it into tf.nn)."""
    return getattr(tf.nn, "top_k", None) or manip_ops.top_k


def _ints(tf, x, dtype=None):
    return tf.cast(tf.round(x * 3.0), dtype or tf.int32)


def Case(*args, n32=0, **kwargs):
    """An op case whose float32 values must be exactly TF's (``n32=0``): these ops copy, gather, sort or mask,
    with at most one IEEE operation per element (tests/_tolerance.py); linspace says otherwise."""
    return _Case(*args, n32=n32, **kwargs)


CASES = {
    # ---- pad
    "pad_constant": Case(lambda tf, x: tf.pad(x, [[1, 2], [0, 1]]), [rnd(3, 4)]),
    "pad_constant_values": Case(lambda tf, x: tf.pad(x, [[1, 0], [2, 2]], constant_values=2.5), [rnd(3, 4)]),
    "pad_3d_zero_width": Case(lambda tf, x: tf.pad(x, [[0, 0], [2, 0], [1, 3]]), [rnd(2, 3, 2)]),
    "pad_empty_dim": Case(lambda tf, x: tf.pad(x, [[1, 1], [0, 2]]), [rnd(0, 3)]),
    "pad_unknown_dim": Case(lambda tf, x: tf.pad(x, [[1, 1], [0, 2]]), [rnd(3, 2)], shapes=[[None, 2]]),
    "pad_reflect": Case(lambda tf, x: tf.pad(x, [[1, 2], [3, 2]], mode="REFLECT"), [rnd(3, 4)]),
    "pad_symmetric": Case(lambda tf, x: tf.pad(x, [[3, 0], [1, 4]], mode="symmetric"), [rnd(3, 4)]),
    "pad_reflect_3d": Case(lambda tf, x: tf.pad(x, [[0, 1], [1, 1], [2, 0]], mode="reflect"), [rnd(2, 3, 3)]),
    "pad_int": Case(lambda tf, x: tf.pad(_ints(tf, x), [[1, 0], [0, 2]], constant_values=7), [rnd(2, 3)]),
    # ---- slice
    "slice": Case(lambda tf, x: tf.slice(x, [1, 0], [2, -1]), [rnd(3, 4)]),
    "slice_3d": Case(lambda tf, x: tf.slice(x, [0, 1, 2], [-1, 2, 3]), [rnd(3, 4, 5)]),
    "slice_empty": Case(lambda tf, x: tf.slice(x, [1, 2], [0, 2]), [rnd(3, 4)]),
    "slice_unknown_dim": Case(lambda tf, x: tf.slice(x, [1, 1], [-1, 2]), [rnd(3, 4)], shapes=[[None, 4]]),
    "slice_int64": Case(lambda tf, x: tf.slice(x, tf.constant([1, 0], tf.int64), tf.constant([1, 3], tf.int64)),
                        [rnd(2, 3)]),
    # ---- reverse
    "reverse": Case(lambda tf, x: tf.reverse(x, [1]), [rnd(3, 4)]),
    "reverse_v2_negative": Case(lambda tf, x: tf.reverse_v2(x, [-1, 0]), [rnd(2, 3, 4)]),
    "reverse_no_axes": Case(lambda tf, x: tf.reverse(x, tf.constant([], tf.int32)) * 2.0, [rnd(2, 3)]),
    "reverse_int64_axis": Case(lambda tf, x: tf.reverse(x, tf.constant([1], tf.int64)), [rnd(2, 3)]),
    # ---- gather_nd / scatter_nd
    "gather_nd_elements": Case(lambda tf, x: tf.gather_nd(x, [[1, 2], [0, 0], [2, 3], [1, 2]]), [rnd(3, 4)],
                               skip_attrs=GATHER_ND_ATTRS),
    "gather_nd_rows": Case(lambda tf, x: tf.gather_nd(x, [[2], [0], [2]]), [rnd(3, 4)], skip_attrs=GATHER_ND_ATTRS),
    "gather_nd_slices_batched": Case(lambda tf, x: tf.gather_nd(x, [[[0, 1]], [[2, 0]]]), [rnd(3, 2, 4)],
                                     skip_attrs=GATHER_ND_ATTRS),
    "gather_nd_int64": Case(lambda tf, x: tf.gather_nd(x, tf.constant([[1, 0, 1]], tf.int64)), [rnd(2, 2, 3)],
                            skip_attrs=GATHER_ND_ATTRS),
    "scatter_nd_rows_duplicates": Case(lambda tf, x: tf.scatter_nd([[1], [0], [1]], x, [4, 4]), [rnd(3, 4)],
                                       skip_attrs=TF2_ATTRS),
    "scatter_nd_elements": Case(lambda tf, x: tf.scatter_nd([[0, 1], [2, 2]], x, [3, 3]), [rnd(2)],
                                skip_attrs=TF2_ATTRS),
    # ---- boolean_mask
    "boolean_mask": Case(lambda tf, x: tf.boolean_mask(x, [True, False, True]), [rnd(3, 4)]),
    "boolean_mask_2d": Case(lambda tf, x: tf.boolean_mask(x, np.array([[True, False, True], [False, True, True]])),
                            [rnd(2, 3, 2)]),
    "boolean_mask_axis1": Case(lambda tf, x: tf.boolean_mask(x, [False, True, True, False], axis=1), [rnd(3, 4)]),
    "boolean_mask_from_data": Case(lambda tf, x: tf.boolean_mask(x, x[:, 0] > 0.0), [rnd(5, 2)]),
    "boolean_mask_none_true": Case(lambda tf, x: tf.boolean_mask(x, [False, False]), [rnd(2, 3)]),
    # ---- sequence_mask (boolean, or float times x)
    "sequence_mask": Case(lambda tf, x: tf.sequence_mask([1, 3, 0], 4), [rnd(2)]),
    "sequence_mask_no_maxlen": Case(lambda tf, x: tf.sequence_mask(tf.constant([[1, 3], [2, 0]])), [rnd(2)]),
    "sequence_mask_float": Case(lambda tf, x: x * tf.sequence_mask([2, 4, 1], 4, dtype=tf.float64 if x.dtype ==
                                                                    tf.float64 else tf.float32), [rnd(3, 4)]),
    # ---- top_k, sort, argsort
    "top_k": Case(lambda tf, x: top_k(tf)(x, 2), [distinct(3, 5)], skip_attrs=TF2_ATTRS),
    "top_k_all_3d": Case(lambda tf, x: top_k(tf)(x, k=4), [distinct(2, 3, 4)], skip_attrs=TF2_ATTRS),
    "top_k_ties": Case(lambda tf, x: top_k(tf)(x, 3), [np.array([[1.0, 3.0, 3.0, 1.0, 3.0], [2.0, 2.0, 2.0, 2.0,
                                                                                               1.0]])],
                       numeric=False, skip_attrs=TF2_ATTRS),  # ties: finite differences move values across
    "top_k_int": Case(lambda tf, x: top_k(tf)(_ints(tf, x), 2), [rnd(3, 4)], skip_attrs=TF2_ATTRS),
    "sort": Case(lambda tf, x: tf.sort(x), [distinct(3, 4)], skip_attrs=TF2_ATTRS),
    "sort_axis0_descending": Case(lambda tf, x: tf.sort(x, axis=0, direction="DESCENDING"), [distinct(4, 3)],
                                  skip_attrs=TF2_ATTRS),
    "sort_3d_axis1": Case(lambda tf, x: tf.sort(x, axis=-2), [distinct(2, 3, 2)], skip_attrs=TF2_ATTRS),
    "sort_int": Case(lambda tf, x: tf.sort(_ints(tf, x)), [rnd(2, 5)], skip_attrs=TF2_ATTRS),
    "argsort": Case(lambda tf, x: tf.argsort(x), [distinct(3, 4)], skip_attrs=TF2_ATTRS),
    "argsort_ties_descending": Case(lambda tf, x: tf.argsort(x, direction="DESCENDING", axis=0),
                                    [np.array([[1.0, 2.0], [3.0, 2.0], [1.0, 2.0]])], skip_attrs=TF2_ATTRS),
    "argsort_ties_int64": Case(lambda tf, x: tf.argsort(_ints(tf, x, tf.int64)), [rnd(2, 6)],
                               skip_attrs=TF2_ATTRS),
    # ---- unique (TF registers no gradient for Unique: tf.gradients raises, core gives None)
    "unique": Case(lambda tf, x: tf.unique(x), [np.array([2.0, 1.0, 2.0, -3.0, 1.0, 0.5])], tf_grads=False,
                   numeric=False),
    "unique_int64_idx": Case(lambda tf, x: tf.unique(_ints(tf, x), out_idx=tf.int64), [rnd(7)]),
    "unique_unknown_length": Case(lambda tf, x: tf.unique(x)[1], [np.array([1.0, 1.0, 4.0])], shapes=[[None]]),
    # ---- meshgrid
    "meshgrid_xy": Case(lambda tf, x, y: tf.meshgrid(x, y), [rnd(3), rnd(4)]),
    "meshgrid_ij_3": Case(lambda tf, x, y, z: tf.meshgrid(x, y, z, indexing="ij"), [rnd(2), rnd(3), rnd(1)]),
    "meshgrid_xy_3": Case(lambda tf, x, y, z: tf.meshgrid(x, y, z), [rnd(2), rnd(3), rnd(2)]),
    "meshgrid_one": Case(lambda tf, x: tf.meshgrid(x), [rnd(3)]),
    # ---- linspace: TF 2.x's compat.v1 builds it from ~40 ops (linspace_nd); core writes TF 1.x's LinSpace op
    # (which TF 2.x still imports and runs) with a gradient equal to the composite's. float32: start + i·step,
    # step = (stop − start) / (num − 1), three roundings
    "linspace": Case(lambda tf, x: tf.linspace(x[0], x[1], 5), [np.array([-1.5, 2.25])], same_ops=False, n32=3),
    "lin_space_one": Case(lambda tf, x: tf.lin_space(x[0], x[1], 1), [np.array([0.5, 3.0])], same_ops=False,
                          n32=3),
    "linspace_descending": Case(lambda tf, x: tf.linspace(x[1], x[0], 7), [np.array([-1.0, 2.0])],
                                same_ops=False, n32=3),
    # ---- space_to_depth / depth_to_space
    "space_to_depth": Case(lambda tf, x: tf.space_to_depth(x, 2), [rnd(2, 4, 6, 3)], num_rtol=1e-4),
    "space_to_depth_3": Case(lambda tf, x: tf.space_to_depth(x, 3), [rnd(1, 3, 6, 2)]),
    "depth_to_space": Case(lambda tf, x: tf.depth_to_space(x, 2), [rnd(2, 2, 3, 8)], num_rtol=1e-4),
    "depth_to_space_unknown_batch": Case(lambda tf, x: tf.depth_to_space(x, 2), [rnd(1, 2, 1, 4)],
                                         shapes=[[None, 2, 1, 4]]),
    # ---- broadcast_to (array_ops)
    "broadcast_to": Case(lambda tf, x: tf.broadcast_to(x, [2, 3, 4]), [rnd(3, 1)]),
    "broadcast_to_rank": Case(lambda tf, x: tf.broadcast_to(x, [2, 4]), [rnd(4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_tensorflow(tf1, name):
    check_case(tf1, CASES[name])


# ---- what the case harness cannot express


def _tf1_graph(tf1, build):
    g = tf1.Graph()
    with g.as_default():
        out = build()
        with tf1.Session() as sess:
            return sess.run(out)


@pytest.mark.parametrize("build,error", [
    (lambda tf, x: tf.pad(x, [[1, 0]]), ValueError),
    (lambda tf, x: tf.pad(x, [[-1, 0], [0, 0]]), ValueError),
    (lambda tf, x: tf.pad(x, [[0, 0], [0, 0]], mode="WRAP"), ValueError),
    (lambda tf, x: tf.nn.top_k(x, 5) if hasattr(tf.nn, "top_k") else manip_ops.top_k(x, 5), ValueError),
    (lambda tf, x: tf.nn.top_k(x, -1) if hasattr(tf.nn, "top_k") else manip_ops.top_k(x, -1), ValueError),
    (lambda tf, x: tf.unique(x), ValueError),
    (lambda tf, x: tf.space_to_depth(tf.reshape(x, [1, 3, 4, 1]), 2), ValueError),
    (lambda tf, x: tf.space_to_depth(tf.reshape(x, [1, 2, 6, 1]), 1), ValueError),
    (lambda tf, x: tf.depth_to_space(tf.reshape(x, [1, 1, 4, 3]), 2), ValueError),
    (lambda tf, x: tf.boolean_mask(x, True), ValueError),
    (lambda tf, x: tf.boolean_mask(x, [True, False]), ValueError),
    (lambda tf, x: tf.reverse(x, [1, 1]), ValueError),
    (lambda tf, x: tf.reverse(x, [2]), ValueError),
    (lambda tf, x: tf.slice(x, [2], [2]), ValueError),
    (lambda tf, x: tf.sort(x, axis=tf.placeholder(tf.int32, [])), ValueError),
    (lambda tf, x: tf.sort(x, direction="UP"), ValueError),
    (lambda tf, x: tf.sequence_mask([1, 2], [3]), ValueError),
    (lambda tf, x: tf.meshgrid(x[0], indexing="ab"), ValueError),
    (lambda tf, x: tf.multinomial(x[0], 2), ValueError),
], ids=["pad_rank", "pad_negative", "pad_mode", "top_k_too_big", "top_k_negative", "unique_rank",
        "space_to_depth_indivisible", "space_to_depth_block_1", "depth_to_space_indivisible", "mask_scalar",
        "mask_shape", "reverse_duplicate", "reverse_axis_range", "slice_rank", "sort_axis_tensor",
        "sort_direction", "sequence_mask_maxlen", "meshgrid_indexing", "multinomial_rank"])
def test_bad_arguments_raise_when_built_like_tensorflow(tf1, build, error):
    for tf in (tf1, core):
        with tf.Graph().as_default():
            with pytest.raises(error):
                build(tf, tf.placeholder(tf.float32, [3, 4]))


@pytest.mark.parametrize("build", [
    lambda tf, x: tf.pad(x, [[3, 0], [0, 0]], mode="REFLECT"),
    lambda tf, x: tf.pad(x, [[0, 0], [0, 5]], mode="SYMMETRIC"),
    lambda tf, x: tf.gather_nd(x, [[3, 0]]),
    lambda tf, x: tf.gather_nd(x, [[-1, 0]]),
    lambda tf, x: tf.scatter_nd([[5]], x[:1], [4, 4]),
    lambda tf, x: tf.slice(x, [2, 0], [2, -1]),
], ids=["reflect_too_wide", "symmetric_too_wide", "gather_nd_range", "gather_nd_negative", "scatter_nd_range",
        "slice_range"])
def test_bad_values_raise_invalid_argument_when_run(tf1, build):
    x = np.arange(12.0).reshape(3, 4)
    for tf in (tf1, core):
        with tf.Graph().as_default():
            p = tf.placeholder(tf.float64, [3, 4])
            out = build(tf, p)
            with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(out, {p: x})


@pytest.mark.parametrize("build", [
    lambda tf, x: tf.pad(x, [[1, 2], [2, 1]], mode="REFLECT"),
    lambda tf, x: tf.pad(x, [[2, 0], [1, 3]], mode="SYMMETRIC"),
    lambda tf, x: tf.pad(x, [[2, 0], [1, 3]]),
    lambda tf, x: tf.slice(x, [1, 1], [2, 2]),
    lambda tf, x: tf.reverse(x, [0]),
    lambda tf, x: tf.gather_nd(x, [[0, 1], [2, 3], [0, 1]]),
    lambda tf, x: tf.scatter_nd([[1], [3]], x[:2], [4, 4]),
    lambda tf, x: tf.sort(x, axis=0),
    lambda tf, x: tf.space_to_depth(tf.reshape(x, [1, 2, 6, 1]), 2),
], ids=["mirror_pad", "mirror_pad_symmetric", "pad", "slice", "reverse", "gather_nd", "scatter_nd", "sort",
        "space_to_depth"])
def test_second_derivatives_match_tensorflow(tf1, build):
    """d/dx of (d/dx sum(w * f(x)^3)) . v: the gradient ops' own gradients (MirrorPadGrad's is MirrorPad...)."""
    x = distinct(3, 4)
    results = []
    for tf in (tf1, core):
        with tf.Graph().as_default():
            p = tf.placeholder(tf.float64, [3, 4])
            y = build(tf, p)
            w = tf.constant(np.linspace(0.5, 1.5, int(np.prod(y.shape.as_list()))).reshape(y.shape.as_list()))
            g = tf.gradients(tf.reduce_sum(w * y * y * y), p)[0]
            gg = tf.gradients(tf.reduce_sum(g * tf.constant(np.arange(12.0).reshape(3, 4))), p)[0]
            with tf.Session() as sess:
                results.append(sess.run(tf.convert_to_tensor(gg), {p: x}))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10)
    assert np.abs(results[0]).max() > 0


def test_gather_nd_of_rows_has_an_indexed_slices_gradient():
    with core.Graph().as_default():
        p = core.placeholder(core.float64, [3, 4])
        y = core.gather_nd(p, [[2], [0], [2]])
        g = core.gradients(core.reduce_sum(y * 2.0), p)[0]
        assert isinstance(g, core.IndexedSlices)
        with core.Session() as sess:
            indices, dense = sess.run([g.indices, core.convert_to_tensor(g)], {p: np.zeros((3, 4))})
    np.testing.assert_array_equal(indices, [2, 0, 2])
    np.testing.assert_array_equal(dense, [[2.0] * 4, [0.0] * 4, [4.0] * 4])


def test_gather_gradient_along_an_inner_axis_matches_tensorflow(tf1):
    """boolean_mask(axis=1) differentiates a GatherV2 along axis 1 (array_ops' dense gradient)."""
    x = rnd(2, 5, 3)
    results = []
    for tf in (tf1, core):
        with tf.Graph().as_default():
            p = tf.placeholder(tf.float64, [2, 5, 3])
            y = tf.gather(p, [4, 0, 4, 1], axis=1) * tf.constant(np.arange(24.0).reshape(2, 4, 3))
            g = tf.gradients(tf.reduce_sum(y), p)[0]
            with tf.Session() as sess:
                results.append(sess.run(tf.convert_to_tensor(g), {p: x}))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


def test_graph_def_with_these_ops_imports_and_runs_in_tensorflow(tf1):
    """TF imports core's GraphDef (TF 1.x ops without TF 2.x's defaulted attrs) and computes the same values."""
    x = distinct(2, 4, 6, 3)
    with core.Graph().as_default() as g:
        p = core.placeholder(core.float32, [2, 4, 6, 3], name="x")
        flat = core.reshape(core.depth_to_space(core.space_to_depth(p, 2), 2), [8, 18])
        outs = [core.pad(flat, [[1, 1], [2, 0]], mode="REFLECT"), core.pad(flat, [[0, 1], [0, 0]], constant_values=1.5),
                core.slice(flat, [1, 2], [3, -1]), core.reverse(flat, [0]), core.gather_nd(flat, [[1, 2], [3, 4]]),
                core.scatter_nd([[1], [0]], flat[:2], [3, 18]), core.sort(flat, axis=0), core.argsort(flat),
                manip_ops.top_k(flat, 3)[1], core.unique(core.reshape(flat, [-1]))[0], core.linspace(flat[0, 0],
                                                                                                      flat[0, 1], 4),
                core.boolean_mask(flat, flat[:, 0] > 0), core.sequence_mask([1, 3], 4),
                core.meshgrid(flat[0], flat[1, :3])[1]]
        names = [o.name for o in outs]
        with core.Session() as sess:
            ours = sess.run(outs, {p: x})
        graph_def = g.as_graph_def().SerializeToString()
    with tf1.Graph().as_default():
        gd = tf1.GraphDef()
        gd.ParseFromString(graph_def)
        tf1.import_graph_def(gd, name="")
        with tf1.Session() as sess:
            theirs = sess.run(names, {"x:0": x.astype(np.float32)})
    for name, a, b in zip(names, ours, theirs):
        if name.startswith("LinSpace"):     # start + i·(stop − start)/(num − 1): three roundings
            assert_float32_close(a, b, n=3, err_msg=name)
        else:                               # copies, sorts and masks: exactly TF's
            np.testing.assert_array_equal(a, b, err_msg=name)


# ---- random_shuffle and multinomial: properties and seeding (the random bits differ from TF's)


def test_random_shuffle_permutes_rows_and_matches_tensorflow_graph(tf1):
    x = np.arange(40.0).reshape(10, 4)
    with core.Graph().as_default() as g:
        out = core.random_shuffle(core.constant(x), seed=5)
        assert out.shape.as_list() == [10, 4] and out.dtype is core.float64
        with core.Session() as sess:
            a, b = sess.run(out), sess.run(out)
        node = [n for n in g.as_graph_def().node if n.op == "RandomShuffle"][0]
    with tf1.Graph().as_default() as tg:
        tf1.random_shuffle(tf1.constant(x), seed=5)
        tf_node = [n for n in tg.as_graph_def().node if n.op == "RandomShuffle"][0]
    assert {k: str(v) for k, v in node.attr.items() if not k.startswith("_")} == \
        {k: str(v) for k, v in tf_node.attr.items() if not k.startswith("_")}
    for v in (a, b):
        np.testing.assert_array_equal(np.sort(v[:, 0]), x[:, 0])           # a permutation of the rows
        np.testing.assert_array_equal(v, x[(v[:, 0] // 4).astype(int)])    # rows kept whole
    assert not np.array_equal(a, b)                                         # a new permutation each run


def _shuffles(seed, graph_seed=None, runs=3):
    with core.Graph().as_default():
        if graph_seed is not None:
            core.set_random_seed(graph_seed)
        out = core.random_shuffle(core.constant(np.arange(20)), seed=seed)
        with core.Session() as sess:
            return [sess.run(out) for _ in range(runs)]


def test_random_shuffle_seeds_repeat_across_sessions_like_tf1():
    first = _shuffles(seed=7)
    assert all(np.array_equal(a, b) for a, b in zip(first, _shuffles(seed=7)))       # same sequence per session
    assert not all(np.array_equal(a, b) for a, b in zip(first, _shuffles(seed=8)))
    assert all(np.array_equal(a, b) for a, b in zip(_shuffles(None, 3), _shuffles(None, 3)))
    with core.Graph().as_default():                     # two ops with the same seeds draw the same permutation
        core.set_random_seed(1)
        a = core.random_shuffle(core.constant(np.arange(20)), seed=2)
        b = core.random_shuffle(core.constant(np.arange(20)), seed=2)
        with core.Session() as sess:
            va, vb = sess.run([a, b])
    np.testing.assert_array_equal(va, vb)


def test_multinomial_graph_shapes_and_seeds_match_tensorflow(tf1):
    logits = np.log([[0.1, 0.2, 0.7], [0.5, 0.5, 1e-30]])
    nodes = []
    for tf in (core, tf1):
        with tf.Graph().as_default() as g:
            p = tf.placeholder(tf.float32, [None, 3])
            out = tf.multinomial(p, 6, seed=11)
            out32 = tf.multinomial(p, 2, output_dtype=tf.int32)
            assert out.shape.as_list() == [None, 6] and out.dtype == tf.int64 and out32.dtype == tf.int32
            nodes.append([(n.op, sorted((k, str(v)) for k, v in n.attr.items() if not k.startswith("_")))
                          for n in g.as_graph_def().node if n.op == "Multinomial"])
            if tf is core:
                with tf.Session() as sess:
                    draws = sess.run(out, {p: logits})
    assert nodes[0][0] == nodes[1][0]
    assert draws.shape == (2, 6) and draws.dtype == np.int64 and set(draws[1]) <= {0, 1}


def test_multinomial_sample_frequencies(tf1):
    """Chi-square of 20000 draws per row against softmax(logits) (99.99% bound); seeded, so reproducible."""
    probs = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1], [0.0, 0.5, 0.0, 0.5]])
    with core.Graph().as_default():
        logits = core.constant(np.log(np.maximum(probs, 1e-300)) + 3.0, dtype=core.float32)
        out = core.multinomial(logits, 20000, seed=1)
        with core.Session() as sess:
            draws, again = sess.run(out), sess.run(out)
    assert not np.array_equal(draws, again)
    counts = np.stack([np.bincount(row, minlength=4) for row in draws])
    assert counts[2, 0] == counts[2, 2] == 0                             # zero probability never drawn
    expected = probs * 20000
    seen = expected > 0
    chi2 = ((counts - expected)[seen] ** 2 / expected[seen]).sum()
    assert chi2 < 36.0                                                   # 7 degrees of freedom: p < 1e-5


def test_space_depth_nchw_is_nhwc_transposed():
    """TF's CPU kernels take NHWC only; core's NCHW is the NHWC result with channels moved, both ways."""
    x = rnd(2, 4, 6, 8)
    with core.Graph().as_default():
        p = core.constant(x)
        nchw = core.transpose(p, [0, 3, 1, 2])
        outs = [core.space_to_depth(p, 2), core.space_to_depth(nchw, 2, data_format="NCHW"),
                core.depth_to_space(p, 2), core.depth_to_space(nchw, 2, data_format="NCHW")]
        assert outs[1].shape.as_list() == [2, 32, 2, 3] and outs[3].shape.as_list() == [2, 2, 8, 12]
        with core.Session() as sess:
            s2d, s2d_nchw, d2s, d2s_nchw = sess.run(outs)
    np.testing.assert_array_equal(s2d_nchw, s2d.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(d2s_nchw, d2s.transpose(0, 3, 1, 2))
