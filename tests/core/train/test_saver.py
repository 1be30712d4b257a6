"""tf.train.Saver of tfevents.core: round trips, the checkpoint state file, max_to_keep, restoring EMA shadow
values by average_name, crash safety (a save killed before its rename leaves the previous checkpoint
restorable) and clear errors."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tfevents import core



def _model():
    w = core.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="layer/w")
    b = core.Variable(np.zeros(3, np.float64), name="layer/b")
    step = core.Variable(0, dtype=core.int64, trainable=False, name="step")
    return w, b, step


def test_round_trip_state_file_and_max_to_keep(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    with core.Graph().as_default():
        w, b, step = _model()
        bump = core.group(core.assign_add(w, core.ones_like(w)), core.assign_add(b, [1.0, 2.0, 3.0]),
                          core.assign_add(step, 1))
        # the portable .npz format of earlier versions (SaverDef.V1 here); V2 is tested in train/test_checkpoints_tf.py
        saver = core.train.Saver(max_to_keep=2, write_version=core.train.SaverDef.V1)
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            paths = []
            for _ in range(3):
                sess.run(bump)
                paths.append(saver.save(sess, prefix, global_step=step))
            saved = sess.run([w, b, step])
    assert paths == [prefix + "-1", prefix + "-2", prefix + "-3"]
    assert saver.last_checkpoints == paths[1:]
    assert not os.path.exists(paths[0] + ".npz") and not os.path.exists(paths[0] + ".meta")
    assert all(os.path.exists(p + ".npz") and os.path.exists(p + ".meta") for p in paths[1:])
    assert core.train.latest_checkpoint(str(tmp_path)) == paths[-1]
    state = (tmp_path / "checkpoint").read_text()
    assert state.splitlines() == ['model_checkpoint_path: "%s"' % paths[2],
                                  'all_model_checkpoint_paths: "%s"' % paths[1],
                                  'all_model_checkpoint_paths: "%s"' % paths[2]]
    # the format: a plain zip of .npy arrays + a JSON manifest, readable without pickle
    with np.load(paths[-1] + ".npz", allow_pickle=False) as npz:
        manifest = json.loads(bytes(npz["manifest.json"]) if not isinstance(npz["manifest.json"], bytes)
                              else npz["manifest.json"])
        assert sorted(manifest["variables"]) == ["layer/b", "layer/w", "step"]
        entry = manifest["variables"]["layer/w"]["entry"][:-4]
        np.testing.assert_array_equal(npz[entry], saved[0])
    assert core.train.list_variables(str(tmp_path)) == [("layer/b", [3]), ("layer/w", [2, 3]), ("step", [])]
    np.testing.assert_array_equal(core.train.load_variable(paths[-1], "layer/b"), saved[1])

    with core.Graph().as_default():
        w, b, step = _model()
        saver = core.train.Saver()
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            saver.restore(sess, core.train.latest_checkpoint(str(tmp_path)))
            got = sess.run([w, b, step])
            assert got[0].dtype == np.float32 and got[1].dtype == np.float64
            for g, s in zip(got, saved):
                np.testing.assert_array_equal(g, s)
            sess.run(core.assign_add(w, core.ones_like(w)))        # restored buffers are the session's own
            saver.restore(sess, paths[1])
            np.testing.assert_array_equal(sess.run(w), saved[0] - 1)


def test_restore_ema_shadows_into_variables(tmp_path):
    prefix = str(tmp_path / "ema.ckpt")
    with core.Graph().as_default():
        v = core.Variable(0.0, name="v")
        ema = core.train.ExponentialMovingAverage(0.99)
        maintain = ema.apply([v])
        saver = core.train.Saver()
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            sess.run(core.assign(v, 5.0))
            sess.run(maintain)
            shadow = sess.run(ema.average(v))
            saver.save(sess, prefix)
    assert shadow == pytest.approx(0.05)
    with core.Graph().as_default():
        v = core.Variable(0.0, name="v")
        ema = core.train.ExponentialMovingAverage(0.99)
        assert ema.variables_to_restore() == {"v/ExponentialMovingAverage": v}
        saver = core.train.Saver(ema.variables_to_restore())
        with core.Session() as sess:
            saver.restore(sess, prefix)                    # no initializer needed
            assert sess.run(v) == pytest.approx(shadow)
        with core.Session() as sess:
            core.train.Saver({ema.average_name(v): v}).restore(sess, prefix)
            assert sess.run(v) == pytest.approx(shadow)


CRASH = r"""
import os, sys
import numpy as np
from tfevents import core
prefix, phase = sys.argv[1], sys.argv[2]
w = core.Variable(np.zeros((300, 300)), name="w")
saver = core.train.Saver()
with core.Session() as sess:
    sess.run(core.global_variables_initializer())
    if phase == "first":
        sess.run(core.assign(w, np.full((300, 300), 1.0)))
        saver.save(sess, prefix)
    else:
        sess.run(core.assign(w, np.full((300, 300), 2.0)))
        real_replace = os.replace
        def die(src, dst):          # killed after the data is written, before it replaces the old file
            os._exit(17)
        os.replace = die
        saver.save(sess, prefix)
print("unreachable" if phase != "first" else "saved")
"""


def _restore_value(prefix):
    with core.Graph().as_default():
        w = core.Variable(np.zeros((300, 300)), name="w")
        with core.Session() as sess:
            core.train.Saver().restore(sess, prefix)
            return sess.run(w)


def test_process_killed_mid_save_keeps_previous_checkpoint(tmp_path):
    prefix = str(tmp_path / "m.ckpt")
    run = lambda phase: subprocess.run([sys.executable, "-c", CRASH, prefix, phase], cwd=str(tmp_path),  # noqa
                                       capture_output=True, text=True, timeout=120)
    first = run("first")
    assert first.returncode == 0, first.stderr
    second = run("second")
    assert second.returncode == 17, second.stdout + second.stderr
    assert core.train.latest_checkpoint(str(tmp_path)) == prefix
    assert (_restore_value(prefix) == 1.0).all()


def test_failed_save_cleans_up_and_keeps_previous(tmp_path, monkeypatch):
    prefix = str(tmp_path / "m.ckpt")
    with core.Graph().as_default():
        w = core.Variable(np.zeros((300, 300)), name="w")
        saver = core.train.Saver()
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            sess.run(core.assign(w, np.full((300, 300), 1.0)))
            saver.save(sess, prefix)
            sess.run(core.assign(w, np.full((300, 300), 2.0)))
            monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(28, "No space left")))
            with pytest.raises(OSError, match="No space left"):
                saver.save(sess, prefix)
            monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m.ckpt.data-00000-of-00001", "m.ckpt.index",
                                            "m.ckpt.meta"]
    assert (_restore_value(prefix) == 1.0).all()


def test_errors(tmp_path):
    prefix = str(tmp_path / "e.ckpt")
    with core.Graph().as_default():
        a = core.Variable(np.ones(3), name="a")
        core.train.Saver().save(_initialized_session(), prefix)
    with core.Graph().as_default():
        a = core.Variable(np.ones(4), name="a")
        missing = core.Variable(1.0, name="missing")
        with core.Session() as sess:
            with pytest.raises(core.errors.NotFoundError, match="Key missing not found in checkpoint"):
                core.train.Saver([missing]).restore(sess, prefix)
            with pytest.raises(core.errors.InvalidArgumentError, match=r"shape mismatch for a.*\[4\].*\[3\]"):
                core.train.Saver([a]).restore(sess, prefix)
            with pytest.raises(ValueError, match="not a valid checkpoint"):
                core.train.Saver([a]).restore(sess, prefix + "-nope")
            with pytest.raises(ValueError, match="None"):
                core.train.Saver([a]).restore(sess, None)
            with pytest.raises(core.errors.FailedPreconditionError, match="uninitialized"):
                core.train.Saver([a]).save(sess, str(tmp_path / "u.ckpt"))
            with pytest.raises(ValueError, match="Parent directory"):
                core.train.Saver([a]).save(sess, str(tmp_path / "no" / "such" / "x.ckpt"))
        with pytest.raises(ValueError, match="same name"):
            core.train.Saver({"x": a, "x": a} if False else [a, a])
        with pytest.raises(TypeError, match="not a Variable"):
            core.train.Saver([core.constant(1.0)])
    (tmp_path / "bad.ckpt.npz").write_bytes(b"PK\x03\x04 truncated")
    with core.Graph().as_default():
        a = core.Variable(np.ones(3), name="a")
        with core.Session() as sess, pytest.raises(core.errors.DataLossError, match="bad.ckpt.npz"):
            core.train.Saver([a]).restore(sess, str(tmp_path / "bad.ckpt"))
    assert core.train.latest_checkpoint(str(tmp_path / "nothing")) is None


def _initialized_session():
    sess = core.Session()
    sess.run(core.global_variables_initializer())
    return sess


def test_train_namespace_event_helpers(tmp_path):
    """tf.train.SummaryWriter / summary_iterator / write_graph as TF1 code calls them."""
    with core.Graph().as_default() as graph:
        core.Variable(1.0, name="v")
        with core.train.SummaryWriter(str(tmp_path / "run")) as writer:
            writer.add_scalar("loss", 0.5, 3)
        path = core.train.write_graph(graph, str(tmp_path), "graph.pbtxt")
    assert "VariableV2" in open(path).read()
    files = [str(p) for p in (tmp_path / "run").iterdir()]
    values = [(e.step, v.tag, v.simple_value) for f in files for e in core.train.summary_iterator(f)
              for v in e.summary.value]
    assert values == [(3, "loss", 0.5)]


def test_checkpoint_reader(tmp_path):
    with core.Graph().as_default():
        w, b, step = _model()
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            prefix = core.train.Saver().save(sess, str(tmp_path / "r.ckpt"), global_step=7)
    reader = core.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {"layer/w": [2, 3], "layer/b": [3], "step": []}
    assert reader.get_variable_to_dtype_map()["layer/b"] == core.float64
    assert reader.has_tensor("step") and not reader.has_tensor("nope")
    np.testing.assert_array_equal(reader.get_tensor("layer/w"), np.arange(6).reshape(2, 3))
    with pytest.raises(core.errors.NotFoundError):
        core.train.NewCheckpointReader(str(tmp_path / "absent"))


@pytest.mark.parametrize("version", ["V1", "V2"])
@pytest.mark.parametrize("missing", ["ckpt", "a/b"])
def test_save_into_a_missing_directory_as_tf1(tf1, tmp_path, version, missing):
    """TF's SaveV2 kernel makes the prefix's directory when only that one level is missing; two missing levels,
    or any for V1, raise TF's ValueError. Same files written, or the same error."""
    def save(tf, root):
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver(write_version=getattr(tf.train.SaverDef, version))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = os.path.join(str(root), missing, "model.ckpt")
            try:
                return saver.save(sess, path) == path, sorted(os.listdir(os.path.dirname(path)))
            except ValueError as e:
                return "ValueError", str(e).replace(str(root), "ROOT")
    (tmp_path / "tf").mkdir()
    (tmp_path / "core").mkdir()
    with tf1.Graph().as_default():
        want = save(tf1, tmp_path / "tf")
    with core.Graph().as_default():
        got = save(core, tmp_path / "core")
    if version == "V2" and missing == "ckpt":
        assert want == (True, ["checkpoint", "model.ckpt.data-00000-of-00001", "model.ckpt.index",
                               "model.ckpt.meta"])
    else:
        assert want == ("ValueError", "Parent directory of ROOT/%s/model.ckpt doesn't exist, can't save." % missing)
    assert got == want
