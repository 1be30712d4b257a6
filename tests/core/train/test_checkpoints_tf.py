"""TensorFlow-format (V2) checkpoints of tfevents.core against the real TensorFlow: an MLP trained with Momentum,
ExponentialMovingAverage shadows and a global step, saved by one library and read by the other (values, names,
``list_variables``); the SSTable index against files TF writes; corruption; max_to_keep; a missing directory."""
import os

import numpy as np
import pytest

from _tolerance import assert_float32_close
from tfevents import core
from tfevents.core.train.checkpoints import tensor_bundle

X = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(6, 4)
Y = np.stack([np.sin(3 * X[:, 0]), X[:, 1] * X[:, 2]], axis=1).astype(np.float32)
SHAPES = [("dense", 4, 8), ("dense_1", 8, 2)]


def _mlp(tf):
    """The example MLP in ``tf`` (TF1 or core): two dense layers, Momentum, EMA of every weight, global step."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 2], name="y")
    h = x
    for i, (scope, n_in, n_out) in enumerate(SHAPES):
        with tf.variable_scope(scope):
            init = np.random.RandomState(i).uniform(-0.5, 0.5, (n_in, n_out)).astype(np.float32)
            k = tf.get_variable("kernel", initializer=tf.constant(init))
            b = tf.get_variable("bias", [n_out], initializer=tf.zeros_initializer())
        h = tf.matmul(h, k) + b
        if i == 0:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.square(h - y))
    step = tf.train.get_or_create_global_step()
    minimize = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=step)
    ema = tf.train.ExponentialMovingAverage(0.9)
    with tf.control_dependencies([minimize]):
        train = ema.apply(tf.trainable_variables())
    return {"x": x, "y": y, "train": train}


def _values(tf, sess):
    return {v.op.name: sess.run(v) for v in tf.global_variables()}


def _train_and_save(tf, directory, steps=3, **saver_args):
    with tf.Graph().as_default():
        m = _mlp(tf)
        saver = tf.train.Saver(**saver_args)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(m["train"], {m["x"]: X, m["y"]: Y})
            prefix = saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=tf.train.get_global_step())
            return prefix, _values(tf, sess)


def _restore(tf, prefix):
    with tf.Graph().as_default():
        _mlp(tf)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            return _values(tf, sess)


def _assert_same(got, want):
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name].dtype == want[name].dtype, name
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


EXPECTED_NAMES = sorted(["global_step"] + ["%s/%s%s" % (s, v, suffix) for s, _, _ in SHAPES for v in ("kernel", "bias")
                                           for suffix in ("", "/Momentum", "/ExponentialMovingAverage")])


def test_ours_is_read_by_tensorflow(tf, tf1, tmp_path):
    prefix, ours = _train_and_save(core, str(tmp_path))
    assert sorted(ours) == EXPECTED_NAMES and ours["global_step"] == 3
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-3.data-00000-of-00001", "model.ckpt-3.index",
                                            "model.ckpt-3.meta"]
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix
    theirs_list = tf.train.list_variables(str(tmp_path))
    assert theirs_list == core.train.list_variables(str(tmp_path))
    assert [n for n, _ in theirs_list] == EXPECTED_NAMES
    reader = tf.train.load_checkpoint(prefix)
    _assert_same({n: reader.get_tensor(n) for n in EXPECTED_NAMES}, ours)
    # a TF1 Saver restores it into the same graph built by TensorFlow
    _assert_same(_restore(tf1, prefix), ours)
    # and TF's import_meta_graph rebuilds the graph and a Saver from our .meta
    with tf1.Graph().as_default():
        saver = tf1.train.import_meta_graph(prefix + ".meta")
        with tf1.Session() as sess:
            saver.restore(sess, prefix)
            _assert_same(_values(tf1, sess), ours)
            assert sorted(v.op.name for v in tf1.trainable_variables()) == sorted(
                "%s/%s" % (s, v) for s, _, _ in SHAPES for v in ("kernel", "bias"))
    # tf.train.export_meta_graph as text: TF's text parser reads the same MetaGraphDef
    from google.protobuf import text_format
    from tensorflow.core.protobuf import meta_graph_pb2
    with core.Graph().as_default():
        _mlp(core)
        binary = core.train.export_meta_graph(str(tmp_path / "g.meta.txt"), as_text=True).SerializeToString()
    parsed = text_format.Parse(open(str(tmp_path / "g.meta.txt")).read(), meta_graph_pb2.MetaGraphDef())
    assert parsed.SerializeToString(deterministic=True) == meta_graph_pb2.MetaGraphDef.FromString(
        binary).SerializeToString(deterministic=True)
    assert len(parsed.collection_def["variables"].bytes_list.value) == len(EXPECTED_NAMES)


def test_tensorflows_is_read_by_ours(tf, tf1, tmp_path):
    prefix, theirs = _train_and_save(tf1, str(tmp_path))
    assert sorted(theirs) == EXPECTED_NAMES and theirs["global_step"] == 3
    latest = core.train.latest_checkpoint(str(tmp_path))
    assert latest == prefix and core.train.checkpoint_exists(prefix)
    assert core.train.list_variables(str(tmp_path)) == tf.train.list_variables(str(tmp_path))
    _assert_same(_restore(core, latest), theirs)
    reader = core.train.load_checkpoint(str(tmp_path))
    assert reader.get_variable_to_shape_map() == tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
    assert reader.get_variable_to_dtype_map()["global_step"] == core.int64
    np.testing.assert_array_equal(core.train.load_variable(prefix, "dense/kernel/Momentum:0"),
                                  tf.train.load_variable(prefix, "dense/kernel/Momentum"))
    # our restored model trains on exactly as TF's does
    want = _continue(tf1, prefix)
    got = _continue(core, prefix)
    # float32 roundings (tests/_tolerance.py) of the step: the MLP's dots of 4 and 8, biases, relu, the squares'
    # mean of 12; back, the 6 rows' sums into the kernels' gradients and δ·wᵀ (2); Momentum's and the moving
    # average's products and sums (the global step exactly)
    n = (4 + 1 + 8 + 1 + 2 + 12) + (2 + 6 + 2 + 6 + 4) + 3 + 3
    for name in EXPECTED_NAMES:
        assert_float32_close(got[name], want[name], n=n, err_msg=name)


def _continue(tf, prefix):
    with tf.Graph().as_default():
        m = _mlp(tf)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            sess.run(m["train"], {m["x"]: X, m["y"]: Y})
            return _values(tf, sess)


def test_index_table_is_tensorflows_byte_for_byte(tf1, tmp_path):
    prefix, theirs = _train_and_save(tf1, str(tmp_path))
    index = open(prefix + ".index", "rb").read()
    table = tensor_bundle.parse_table(index, prefix + ".index")
    assert [k for k, _ in table] == [b""] + [n.encode() for n in EXPECTED_NAMES]
    assert tensor_bundle.build_table(table) == index
    # our bundle of the same values is the same two files
    tensor_bundle.write_bundle(str(tmp_path / "ours"), theirs)
    assert open(str(tmp_path / "ours.index"), "rb").read() == index
    assert (open(str(tmp_path / "ours.data-00000-of-00001"), "rb").read()
            == open(prefix + ".data-00000-of-00001", "rb").read())


def test_multi_block_index_read_by_tensorflow(tf, tmp_path):
    """Many blocks (restart points, index separators) and several dtypes, read back by TF."""
    rng = np.random.RandomState(0)
    values = {"scope_%03d/var_%d" % (i, i % 7): rng.randn(i % 5, 3).astype([np.float32, np.float64, np.int32,
                                                                          np.int64, np.bool_][i % 5] if i % 5 != 4
                                                                         else np.float16)
              for i in range(300)}
    values["flags"] = np.array([True, False, True])
    values["bytes"] = np.arange(7, dtype=np.uint8)
    prefix = str(tmp_path / "many")
    tensor_bundle.write_bundle(prefix, values, block_size=512)
    table = tensor_bundle.parse_table(open(prefix + ".index", "rb").read())
    assert len(table) == len(values) + 1
    reader = tf.train.load_checkpoint(prefix)
    assert sorted(reader.get_variable_to_shape_map()) == sorted(values)
    for name, value in values.items():
        got = reader.get_tensor(name)
        assert got.dtype == value.dtype and got.shape == value.shape, name
        np.testing.assert_array_equal(got, value)
    ours = core.train.load_checkpoint(prefix)
    for name, value in values.items():
        np.testing.assert_array_equal(ours.get_tensor(name), value)


def test_corruption_is_a_clear_data_loss_error(tf1, tmp_path):
    prefix, _ = _train_and_save(tf1, str(tmp_path))
    index_bytes = open(prefix + ".index", "rb").read()
    data_bytes = open(prefix + ".data-00000-of-00001", "rb").read()

    def restore():
        return _restore(core, prefix)

    flipped = bytearray(index_bytes)
    flipped[40] ^= 0x10                                 # inside the data block: its checksum no longer matches
    open(prefix + ".index", "wb").write(bytes(flipped))
    with pytest.raises(core.errors.DataLossError, match=r"model\.ckpt-3\.index.*checksum"):
        restore()
    open(prefix + ".index", "wb").write(index_bytes[:-10])
    with pytest.raises(core.errors.DataLossError, match=r"model\.ckpt-3\.index.*magic"):
        core.train.list_variables(prefix)
    open(prefix + ".index", "wb").write(index_bytes)
    flipped = bytearray(data_bytes)
    flipped[5] ^= 0x01
    open(prefix + ".data-00000-of-00001", "wb").write(bytes(flipped))
    with pytest.raises(core.errors.DataLossError, match=r"Checksum does not match.*model\.ckpt-3\.data-00000-of"):
        restore()
    open(prefix + ".data-00000-of-00001", "wb").write(data_bytes[:100])
    with pytest.raises(core.errors.DataLossError, match=r"model\.ckpt-3\.data-00000-of-00001 is truncated"):
        restore()


def test_max_to_keep_state_file_and_mtimes(tf, tmp_path):
    with core.Graph().as_default():
        v = core.Variable(np.zeros(3, np.float32), name="v")
        bump = core.assign_add(v, np.ones(3, np.float32))
        saver = core.train.Saver(max_to_keep=2)
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            paths = []
            for step in range(3):
                sess.run(bump)
                paths.append(saver.save(sess, str(tmp_path / "m.ckpt"), global_step=step))
    assert saver.last_checkpoints == paths[1:]
    files = sorted(os.listdir(tmp_path))
    assert files == ["checkpoint"] + sorted("m.ckpt-%d.%s" % (s, e) for s in (1, 2)
                                            for e in ("data-00000-of-00001", "index", "meta"))
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == paths[-1]
    assert list(state.all_model_checkpoint_paths) == paths[1:]
    ours = core.train.get_checkpoint_state(str(tmp_path))
    assert ours.all_model_checkpoint_paths == list(state.all_model_checkpoint_paths)
    assert core.train.get_checkpoint_mtimes(paths) == tf.compat.v1.train.get_checkpoint_mtimes(paths)
    assert [core.train.checkpoint_exists(p) for p in paths] == [False, True, True]
    assert [tf.compat.v1.train.checkpoint_exists(p) for p in paths] == [False, True, True]
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "v"), [3, 3, 3])


def test_var_list_dict_and_list(tf, tmp_path):
    with core.Graph().as_default():
        a = core.Variable(np.arange(4.0), name="a")
        b = core.Variable(np.int32(7), name="b")
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            core.train.Saver({"renamed/a": a, "b_too": b}).save(sess, str(tmp_path / "d.ckpt"))
            core.train.Saver([b]).save(sess, str(tmp_path / "l.ckpt"))
    assert tf.train.list_variables(str(tmp_path / "d.ckpt")) == [("b_too", []), ("renamed/a", [4])]
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path / "d.ckpt"), "renamed/a"), np.arange(4.0))
    assert tf.train.list_variables(str(tmp_path / "l.ckpt")) == [("b", [])]
    assert tf.train.load_variable(str(tmp_path / "l.ckpt"), "b") == 7


def test_missing_parent_directory_as_tensorflow(tf1, tmp_path):
    target = str(tmp_path / "no" / "such" / "model.ckpt")
    with tf1.Graph().as_default():
        v = tf1.Variable(1.0, name="v")
        with tf1.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(ValueError) as theirs:
                tf1.train.Saver().save(sess, target)
    with core.Graph().as_default():
        v = core.Variable(1.0, name="v")
        with core.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(ValueError) as ours:
                core.train.Saver().save(sess, target)
    assert str(ours.value) == str(theirs.value) == "Parent directory of %s doesn't exist, can't save." % target
    assert not os.path.exists(str(tmp_path / "no"))


def test_old_npz_checkpoints_still_restore_and_bad_write_version(tmp_path):
    with core.Graph().as_default():
        v = core.Variable(np.arange(3.0), name="v")
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            prefix = core.train.Saver(write_version=core.train.SaverDef.V1).save(sess, str(tmp_path / "old"))
            with pytest.raises(ValueError, match="write_version"):
                core.train.Saver(write_version=3)
    assert os.path.exists(prefix + ".npz") and not os.path.exists(prefix + ".index")
    assert core.train.latest_checkpoint(str(tmp_path)) == prefix
    assert core.train.list_variables(prefix) == [("v", [3])]
    assert len(core.train.get_checkpoint_mtimes([prefix])) == 1
    with core.Graph().as_default():
        v = core.Variable(np.zeros(3), name="v")
        with core.Session() as sess:
            core.train.Saver().restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(v), np.arange(3.0))


def test_tf2_object_checkpoint_with_a_string_tensor(tf, tmp_path):
    """A TF2 ``tf.train.Checkpoint`` holds a DT_STRING entry (the object graph): listed and read as TF does."""
    ckpt = tf.train.Checkpoint(v=tf.Variable(np.arange(5, dtype=np.int64)), w=tf.Variable([[1.5, -2.0]]))
    prefix = ckpt.write(str(tmp_path / "obj"))
    assert core.train.list_variables(prefix) == tf.train.list_variables(prefix)
    theirs, ours = tf.train.load_checkpoint(prefix), core.train.load_checkpoint(prefix)
    for name in theirs.get_variable_to_shape_map():
        want, got = theirs.get_tensor(name), ours.get_tensor(name)
        if isinstance(want, bytes):                     # the scalar DT_STRING: bytes, as TF returns it
            assert isinstance(got, bytes) and got == want, name
            assert b"VARIABLE_VALUE" in got
        else:
            assert got.dtype == want.dtype, name
            np.testing.assert_array_equal(got, want)
    assert ours.get_variable_to_dtype_map()["_CHECKPOINTABLE_OBJECT_GRAPH"] == core.string


def test_tf1_string_variable_is_read(tf1, tmp_path):
    words = [[b"a", b"bcd"], [b"", b"\xff" * 300]]
    with tf1.Graph().as_default():
        v = tf1.Variable(words, name="words")
        with tf1.Session() as sess:
            sess.run(v.initializer)
            prefix = tf1.train.Saver().save(sess, str(tmp_path / "s.ckpt"))
    got = core.train.load_variable(prefix, "words")
    assert got.dtype == object and got.shape == (2, 2) and got.tolist() == words
    data = bytearray(open(prefix + ".data-00000-of-00001", "rb").read())
    data[-1] ^= 0x01                                    # a string byte: the entry checksum catches it
    open(prefix + ".data-00000-of-00001", "wb").write(bytes(data))
    with pytest.raises(core.errors.DataLossError, match=r"string tensor words.*s\.ckpt\.data-00000-of-00001"):
        core.train.load_variable(prefix, "words")
