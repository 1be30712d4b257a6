"""MonitoredSession, MonitoredTrainingSession and the standard hooks, run as written under tf.compat.v1 and
tfevents.core: the steps at which each hook acts, what the event files contain (read back with our
summary_iterator), checkpoints, listener calls, and a two-session training program resumed from a checkpoint."""
import glob
import json
import os

import numpy as np
import pytest

from _events import event_files, read_events
from _graph_compare import meta_graph_differences, node_differences
from _oracle import as_tf1_built_graphs, tf1_and_core
from _tolerance import assert_float32_close
from tfevents import core
from tfevents.proto import graph_pb2, meta_graph_pb2

RNG = np.random.RandomState(7)
X = RNG.randn(8, 3).astype(np.float32)
Y = RNG.randn(8, 2).astype(np.float32)
W0 = RNG.randn(3, 2).astype(np.float32)


def _flush_writers(tf):
    """TF keeps its cached writers open across sessions, and so do we; close them before reading."""
    tf.summary.FileWriterCache.clear()


def _events(logdir):
    """Every event of every event file in ``logdir``, in write order, as comparable tuples (graph, meta graph
    and file_version events are counted separately: TF writes them once per cached writer)."""
    out, extra = [], {"graph": 0, "meta": 0}
    events = sorted((e for path in event_files(logdir) for e in read_events(path, skip_version=False)),
                    key=lambda e: e.wall_time)
    for e in events:
        kind = e.WhichOneof("what")
        if kind == "summary":
            for v in e.summary.value:
                value = v.simple_value if v.tag != "global_step/sec" else None
                out.append((e.step, "summary", v.tag, value))
        elif kind == "session_log":
            out.append((e.step, "log", e.session_log.status, os.path.basename(e.session_log.checkpoint_path)))
        elif kind == "graph_def":
            extra["graph"] += 1
        elif kind == "meta_graph_def":
            extra["meta"] += 1
        elif kind == "tagged_run_metadata":
            out.append((e.step, "run_metadata", e.tagged_run_metadata.tag, None))
    return out, extra


def _same_events(got, want):
    assert [e[:3] for e in got] == [e[:3] for e in want]
    for g, w in zip(got, want):
        if isinstance(w[3], float):         # a loss logged within 12 steps
            assert_float32_close(g[3], w[3], n=12 * N_STEP + N_LOSS, err_msg=str(g))
        else:
            assert g[3] == w[3]


def _step_read(tf):
    """The global-step read tensor the hooks fetch. Made before the train op and a control input of it, it
    holds the step before the update; otherwise TF reads it in parallel with the update and hooks that act on
    the fetched (stale) step act at steps that vary from run to run."""
    if tf is core:
        from tfevents.core.train.monitored.basic_session_run_hooks import _get_or_create_global_step_read
    else:
        from tensorflow.python.training.training_util import _get_or_create_global_step_read
    return _get_or_create_global_step_read()


# float32 roundings (tests/_tolerance.py) of _model's loss (a dot of 3, the difference, the squares' mean of 16)
# and of a step (the gradient's difference, 2/16 and sum over 8 rows; the update)
N_LOSS = 3 + 1 + 1 + 16
N_STEP = N_LOSS + 2 + 8 + 2


def _model(tf):
    gs = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", initializer=W0)
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(X), w) - Y), name="loss")
    tf.summary.scalar("loss", loss)
    with tf.control_dependencies([_step_read(tf)]):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return gs, w, loss, train


def _listener(tf, calls):
    class Listener(tf.train.CheckpointSaverListener):
        def begin(self):
            calls.append(("begin",))

        def before_save(self, session, step):
            calls.append(("before_save", int(step)))

        def after_save(self, session, step):
            calls.append(("after_save", int(step)))

        def end(self, session, step):
            calls.append(("end", int(step)))
    return Listener()


# ---------------------------------------------------------------------------------------------------------
# the training program of the issue, two sessions, the second resuming from the first's checkpoint


def _resume_program(tf, root):
    ckpt = os.path.join(root, "tf1" if tf is not core else "core")
    os.makedirs(ckpt)
    out = {"calls": [], "logged": [], "final": [], "runs": []}
    for last_step in (7, 12):
        with tf.Graph().as_default():
            gs, w, loss, train = _model(tf)
            fin = tf.train.FinalOpsHook([gs, w])
            hooks = [tf.train.StopAtStepHook(last_step=last_step),
                     tf.train.CheckpointSaverHook(ckpt, save_steps=3, listeners=[_listener(tf, out["calls"])]),
                     tf.train.NanTensorHook(loss),
                     tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=2, formatter=lambda v: out[
                         "logged"].append(float(v["loss"])) or "logged"),
                     fin]
            runs = 0
            with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, hooks=hooks, save_checkpoint_secs=None,
                                                   save_checkpoint_steps=None, save_summaries_steps=2,
                                                   log_step_count_steps=4) as sess:
                while not sess.should_stop():
                    sess.run(train)
                    runs += 1
            out["runs"].append(runs)
            out["final"].append((int(fin.final_ops_values[0]), fin.final_ops_values[1]))
            state = tf.train.get_checkpoint_state(ckpt)
            out.setdefault("ckpts", []).append([os.path.basename(p) for p in state.all_model_checkpoint_paths])
    _flush_writers(tf)
    out["events"], out["extra"] = _events(ckpt)
    out["graph_pbtxt"] = os.path.isfile(os.path.join(ckpt, "graph.pbtxt"))
    return out


def test_two_session_training_resumes_like_tf1(tf1, tmp_path):
    want, got = tf1_and_core(tf1, _resume_program, str(tmp_path))
    assert got["runs"] == want["runs"] == [7, 5]
    assert got["calls"] == want["calls"]
    assert got["calls"][:3] == [("begin",), ("before_save", 0), ("after_save", 0)]
    assert ("end", 12) in got["calls"]
    assert got["ckpts"] == want["ckpts"]
    assert got["ckpts"][-1][-1] == "model.ckpt-12"
    for (gstep, gw), (wstep, ww) in zip(got["final"], want["final"]):
        assert gstep == wstep
        assert_float32_close(gw, ww, n=gstep * N_STEP)
    assert len(got["logged"]) == len(want["logged"]) == 4 + 3     # iterations 0,2,4,6 then 0,2,4
    assert_float32_close(got["logged"], want["logged"], n=12 * N_STEP + N_LOSS)
    _same_events(got["events"], want["events"])
    kinds = {e[1:3] for e in got["events"]}
    assert ("summary", "global_step/sec") in kinds and ("summary", "loss_1") in kinds  # the op "loss" took the name
    assert got["extra"]["graph"] >= 1 and got["extra"]["meta"] >= 1 and got["graph_pbtxt"]


# ---------------------------------------------------------------------------------------------------------
# single hooks


def _stop_program(tf, kwargs, start, inc):
    gs = tf.Variable(start, dtype=tf.int64, name="global_step", trainable=False,
                     collections=[tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.GLOBAL_STEP])
    step = tf.assign_add(gs, inc)
    hook = tf.train.StopAtStepHook(**kwargs)
    seen = []
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            seen.append(int(sess.run(step)))
    return seen, hook.last_step if tf is core else hook._last_step


@pytest.mark.parametrize("kwargs,start,inc", [({"num_steps": 4}, 3, 1), ({"last_step": 5}, 3, 1),
                                              ({"last_step": 6}, 3, 2), ({"num_steps": 0}, 2, 1)])
def test_stop_at_step_hook(tf1, kwargs, start, inc):
    want, got = tf1_and_core(tf1, _stop_program, kwargs, start, inc)
    assert got == want
    if "num_steps" in kwargs:
        assert got[1] == start + kwargs["num_steps"]


def test_stop_at_step_hook_arguments():
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        core.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of"):
        core.train.StopAtStepHook(num_steps=1, last_step=2)


def _nan_program(tf, fail):
    gs = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [], name="x")
    loss = tf.identity(x, name="loss")
    step = tf.assign_add(gs, 1)
    runs, feeds = [], [1.0, 2.0, float("nan"), 3.0]
    try:
        with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss, fail_on_nan_loss=fail)]) as sess:
            for v in feeds:
                if sess.should_stop():
                    break
                sess.run(step, {x: v})
                runs.append(v)
    except tf.train.NanLossDuringTrainingError as e:
        return len(runs), str(e)
    return len(runs), None


@pytest.mark.parametrize("fail", [True, False])
def test_nan_tensor_hook(tf1, fail):
    want, got = tf1_and_core(tf1, _nan_program, fail)
    assert got == want
    assert got == ((2, "NaN loss during training.") if fail else (3, None))


def _summary_program(tf, logdir):
    gs, w, loss, train = _model(tf)
    tf.summary.histogram("w", w)
    hooks = [tf.train.SummarySaverHook(save_steps=3, output_dir=logdir, summary_op=tf.summary.merge_all()),
             tf.train.StepCounterHook(every_n_steps=4, output_dir=logdir)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        for _ in range(11):
            sess.run(train)
    _flush_writers(tf)
    return _events(logdir)


def test_summary_saver_and_step_counter_hooks(tf1, tmp_path):
    (want, want_extra), (got, got_extra) = tf1_and_core(
        tf1, lambda tf: _summary_program(tf, str(tmp_path / ("tf1" if tf is not core else "core"))))
    _same_events(got, want)
    assert [e[0] for e in got if e[2] == "loss_1"] == [1, 4, 7, 10]
    assert [e[0] for e in got if e[2] == "global_step/sec"] == [5, 9]
    assert got[0][:3] == (1, "log", 1)                      # SessionLog.START at the first step
    assert got_extra == want_extra == {"graph": 1, "meta": 1}


def _logging_program(tf, records):
    gs = tf.train.get_or_create_global_step()
    read = tf.identity(gs.read_value() if tf is not core else gs, name="read")
    double = tf.multiply(tf.cast(read, tf.float32), 2.0, name="double")
    with tf.control_dependencies([double]):       # the logged values are those before this step's update
        step = tf.assign_add(gs, 1)
    hook = tf.train.LoggingTensorHook({"double": double, "gs": read}, every_n_iter=3, at_end=True,
                                      formatter=lambda v: records.append((float(v["double"]), int(v["gs"]))) or "")
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(7):
            sess.run(step)
    return records


def test_logging_tensor_hook(tf1, caplog):
    want, got = tf1_and_core(tf1, lambda tf: _logging_program(tf, []))
    assert got == want == [(0.0, 0), (6.0, 3), (12.0, 6), (14.0, 7)]
    with core.Graph().as_default():
        x = core.constant([1.5, 2.0], name="x")
        with caplog.at_level("INFO", logger="tfevents.core.train"):
            with core.train.MonitoredSession(hooks=[core.train.LoggingTensorHook(["x"], every_n_iter=1)]) as sess:
                sess.run(x)
    assert "x = [1.5 2. ]" in caplog.text


def _feed_final_program(tf):
    gs = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [], name="x")
    acc = tf.Variable(0.0, name="acc")
    step = tf.group(tf.assign_add(acc, x), tf.assign_add(gs, 1))
    values = iter([1.0, 2.5, 4.0])
    final = tf.train.FinalOpsHook([acc, acc * 2.0])
    hooks = [tf.train.FeedFnHook(lambda: {x: next(values)}), final, tf.train.GlobalStepWaiterHook(0)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        for _ in range(3):
            sess.run(step)
    return [float(v) for v in final.final_ops_values]


def test_feed_fn_final_ops_and_waiter_hooks(tf1):
    want, got = tf1_and_core(tf1, _feed_final_program)
    assert got == want == [7.5, 15.0]


def _profiler_program(tf, logdir):
    gs, w, loss, train = _model(tf)
    with tf.train.MonitoredSession(hooks=[tf.train.ProfilerHook(save_steps=3, output_dir=logdir)]) as sess:
        for _ in range(8):
            sess.run(train)
    _flush_writers(tf)
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(logdir, "timeline-*.json")))
    with open(os.path.join(logdir, files[0])) as f:
        trace = json.load(f)
    names = {e["args"].get("name") for e in trace["traceEvents"] if e.get("ph") == "X"}
    return files, [e for e in _events(logdir)[0] if e[1] == "run_metadata"], names


def test_profiler_hook(tf1, tmp_path):
    want, got = tf1_and_core(tf1, lambda tf: _profiler_program(
        tf, str(tmp_path / ("tf1" if tf is not core else "core"))))
    assert got[0] == want[0] == ["timeline-3.json", "timeline-6.json"]
    assert got[1] == want[1]
    for node in ("MatMul", "GradientDescent", "global_step/add"):
        assert node in got[2] and node in want[2]


def test_writers_flushed_after_exception(tmp_path):
    logdir = str(tmp_path)
    calls = []
    with core.Graph().as_default():
        gs, w, loss, train = _model(core)
        saver_hook = core.train.CheckpointSaverHook(logdir, save_steps=100, listeners=[_listener(core, calls)])
        with pytest.raises(ValueError, match="boom"):
            with core.train.MonitoredTrainingSession(checkpoint_dir=logdir, hooks=[saver_hook],
                                                     save_checkpoint_secs=None, save_summaries_steps=1,
                                                     log_step_count_steps=1) as sess:
                for _ in range(3):
                    sess.run(train)
                raise ValueError("boom")
        assert list(core.train.SummaryWriterCache._cache) == [logdir]      # open, as TF leaves it
        assert not core.get_default_graph().finalized
    events, extra = _events(logdir)                                        # and flushed: nothing lost
    core.train.SummaryWriterCache.clear()
    assert [e[0] for e in events if e[2] == "loss_1"] == [1, 2, 3]
    assert [e[0] for e in events if e[2] == "global_step/sec"] == [2, 3]
    assert calls == [("begin",), ("before_save", 0), ("after_save", 0)]   # no end() after an exception, as TF
    assert extra["graph"] >= 1


def test_run_after_stop_and_conflicting_feeds():
    with core.Graph().as_default():
        gs = core.train.get_or_create_global_step()
        x = core.placeholder(core.float32, [])
        step = core.assign_add(gs, 1)
        with core.train.MonitoredSession(hooks=[core.train.StopAtStepHook(last_step=1),
                                                core.train.FeedFnHook(lambda: {x: 1.0})]) as sess:
            with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
                sess.run(step, {x: 2.0})
            sess.run(step)
            assert sess.should_stop()
            with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
                sess.run(step)


def _queue_program(tf):
    counter = tf.Variable(0, dtype=tf.int32, name="counter")
    queue = tf.FIFOQueue(capacity=4, dtypes=tf.int32, shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue(tf.assign_add(counter, 1))]))
    batch = queue.dequeue_many(3)
    with tf.train.MonitoredSession() as sess:            # the queue runner is started for us
        got = [v for _ in range(4) for v in sess.run(batch).tolist()]
        threads = list(sess._threads) if tf is core else []
    assert not any(t.is_alive() for t in threads)         # stopped and joined on close
    return got


def test_queue_runners_started_and_joined(tf1):
    want, got = tf1_and_core(tf1, _queue_program)
    assert got == want == list(range(1, 13))


def _singular_program(tf, ckpt):
    with tf.Graph().as_default():
        gs, w, loss, train = _model(tf)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, hooks=[tf.train.StopAtStepHook(num_steps=3)],
                                               save_summaries_steps=None, log_step_count_steps=None) as sess:
            while not sess.should_stop():
                sess.run(train)
    with tf.Graph().as_default():
        gs, w, loss, train = _model(tf)
        with tf.train.SingularMonitoredSession(checkpoint_dir=ckpt) as sess:
            values = sess.raw_session().run([gs, w])
    _flush_writers(tf)
    return int(values[0]), values[1], os.path.basename(tf.train.latest_checkpoint(ckpt))


def test_singular_monitored_session_restores_latest_checkpoint(tf1, tmp_path):
    want, got = tf1_and_core(tf1, lambda tf: _singular_program(
        tf, str(tmp_path / ("tf1" if tf is not core else "core"))))
    assert got[0] == want[0] == 3 and got[2] == want[2] == "model.ckpt-3"   # saved at the end by the default hook
    assert_float32_close(got[1], want[1], n=3 * N_STEP)
    assert not np.allclose(got[1], W0)


def _kinds_per_file(logdir):
    """Per event file, in name order: each event's kind and step (``V`` file_version, ``G`` graph, ``M`` meta
    graph, ``L<status>`` SessionLog, ``S:<tags>`` summary)."""
    files = []
    for path in event_files(logdir):
        row = []
        for e in read_events(path, skip_version=False):
            kind = e.WhichOneof("what")
            short = {"file_version": "V", "graph_def": "G", "meta_graph_def": "M"}.get(kind)
            if kind == "session_log":
                short = "L%d" % e.session_log.status
            elif kind == "summary":
                short = "S:" + ",".join(v.tag for v in e.summary.value)
            row.append((short or kind, e.step))
        files.append(row)
    return files


def test_two_monitored_sessions_on_one_directory_write_as_tf1(tf1, tmp_path):
    """The second MonitoredTrainingSession resumes from the first's checkpoint and, as in TF (its
    FileWriterCache keeps one writer per directory open), goes on writing the same event file: graph, meta graph,
    SessionLog and summary events per step as TF1 writes them."""
    def two_sessions(tf, logdir):
        for last_step in (20, 40):
            with tf.Graph().as_default():
                gs, _, _, train = _model(tf)
                saver_hook = tf.train.CheckpointSaverHook(logdir, save_steps=10)
                with tf.train.MonitoredTrainingSession(
                        checkpoint_dir=logdir, chief_only_hooks=[saver_hook], save_checkpoint_secs=None,
                        save_summaries_steps=5, log_step_count_steps=None,
                        hooks=[tf.train.StopAtStepHook(last_step=last_step)]) as sess:
                    while not sess.should_stop():
                        sess.run(train)
        _flush_writers(tf)
        return _kinds_per_file(logdir)
    want, got = tf1_and_core(tf1, lambda tf: two_sessions(tf, str(tmp_path / ("tf" if tf is tf1 else "core"))))
    assert len(want) == 1 and [k for k, _ in want[0]].count("G") == 3      # the writer's graph, then the hook's
    assert got == want


def _graphs_and_meta_graphs(logdir):
    """Every graph and meta graph event of ``logdir`` in order, then the newest checkpoint's ``.meta`` file."""
    out = []
    for path in event_files(logdir):
        for e in read_events(path):
            if e.HasField("graph_def"):
                out.append(("graph", graph_pb2.GraphDef.FromString(e.graph_def)))
            elif e.HasField("meta_graph_def"):
                out.append(("meta", meta_graph_pb2.MetaGraphDef.FromString(e.meta_graph_def)))
    meta_file = meta_graph_pb2.MetaGraphDef.FromString(open(sorted(glob.glob(logdir + "/*.meta"))[-1], "rb").read())
    return out + [("meta", meta_file)]


def test_graph_and_meta_graph_events_are_tf1s(tf1, tmp_path):
    """The graph and meta graph events a MonitoredTrainingSession writes (the cached writer's at creation, the
    CheckpointSaverHook's once the Scaffold made its ops) and the checkpoint's ``.meta`` file are TF1's: the
    graphs node for node (Scaffold's init/ready ops, the global step's read through a cond, the Saver), the
    SaverDef, and every collection (VariableDefs, node lists, ``savers``, the global step's ``cond_context``)."""
    def program(tf, logdir):
        with tf.Graph().as_default():
            _, _, _, train = _model(tf)
            with tf.train.MonitoredTrainingSession(checkpoint_dir=logdir, save_checkpoint_steps=5,
                                                   save_checkpoint_secs=None, save_summaries_steps=5,
                                                   log_step_count_steps=None) as sess:
                for _ in range(3):
                    sess.run(train)
        _flush_writers(tf)
        return _graphs_and_meta_graphs(logdir)
    with as_tf1_built_graphs(tf1):
        want, got = tf1_and_core(tf1, lambda tf: program(tf, str(tmp_path / ("tf" if tf is tf1 else "core"))))
    assert [kind for kind, _ in got] == [kind for kind, _ in want] == ["graph", "meta", "graph", "meta", "meta"]
    for i, ((kind, w), (_, g)) in enumerate(zip(want, got)):
        if kind == "graph":
            assert node_differences(w, g) == {}, i
        else:
            assert len(g.graph_def.node) == len(w.graph_def.node), i
            assert meta_graph_differences(w, g) == {}, i
    assert want[-1][1].HasField("saver_def") and {"train_op", "cond_context"} <= set(want[-1][1].collection_def)


def test_export_meta_graph_is_tf1s(tf1, tmp_path):
    """``tf.train.export_meta_graph`` and ``Saver.export_meta_graph`` of a training graph are TF1's: graph,
    SaverDef and collections (incl. the train op, summaries and variables), also read back from the file."""
    def program(tf, path):
        with tf.Graph().as_default():
            _model(tf)
            saver = tf.train.Saver()
            plain = tf.train.export_meta_graph()
            with_saver = saver.export_meta_graph(path)
            return plain, with_saver, open(path, "rb").read()
    with as_tf1_built_graphs(tf1):
        want, got = tf1_and_core(tf1, lambda tf: program(tf, str(tmp_path / ("tf" if tf is tf1 else "core"))))
    for w, g in zip(want[:2], got[:2]):
        assert meta_graph_differences(w, g) == {}
    assert not want[0].HasField("saver_def") and not got[0].HasField("saver_def")
    assert got[1].saver_def.restore_op_name == "save/restore_all"
    assert meta_graph_differences(meta_graph_pb2.MetaGraphDef.FromString(want[2]),
                                  meta_graph_pb2.MetaGraphDef.FromString(got[2])) == {}
