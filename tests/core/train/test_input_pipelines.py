"""TF1 queue input pipelines of tfevents.core (string/range/slice/input_producer, limit_epochs, batch,
batch_join, shuffle_batch, shuffle_batch_join, RandomShuffleQueue) against real tf.compat.v1: the same graphs
(op types, names, queue attrs), the same outputs where the order is deterministic, and TF's contracts where it is
not: every element once per epoch, OutOfRangeError after the last epoch, batch shapes, capacity and
min_after_dequeue respected."""
import collections
import threading
import time

import numpy as np
import pytest

from _oracle import tf1_and_core
from tfevents import core


@pytest.fixture
def tf1_ref_vars(tf1):
    """TF 2.x's compat.v1 makes resource variables by default; core (like TF1) makes ref ``VariableV2``s."""
    tf1.disable_resource_variables()
    try:
        yield tf1
    finally:
        tf1.enable_resource_variables()


def _text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def _drain(tf, fetch, limit=1000):
    """Run ``fetch`` with the queue runners until OutOfRangeError; the results, in order."""
    out = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            for _ in range(limit):
                out.append(sess.run(fetch))
            raise AssertionError("no OutOfRangeError after %d runs" % limit)
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
            coord.join(threads)
    return out


def _graph_program(tf):
    names = tf.train.string_input_producer(["a", "b", "c"], num_epochs=2, shuffle=False)
    rng = tf.train.range_input_producer(7, num_epochs=1, capacity=16)
    x, y = tf.train.slice_input_producer([tf.constant([1, 2, 3]), tf.constant([[1., 2], [3, 4], [5, 6]])],
                                         num_epochs=1)
    tf.train.batch([names.dequeue()], 2)
    tf.train.shuffle_batch([x, y], 2, capacity=10, min_after_dequeue=3, allow_smaller_final_batch=True)
    tf.train.batch_join([[rng.dequeue()], [rng.dequeue()]], 3, capacity=9)
    tf.train.shuffle_batch_join([[rng.dequeue()], [rng.dequeue()]], 2, 12, 4, seed=5)
    graph = tf.get_default_graph()
    ops = sorted((op.type, op.name if op.type != "Const" else "") for op in graph.get_operations())
    queues = {op.name: (op.get_attr("capacity"),
                        op.get_attr("min_after_dequeue") if op.type == "RandomShuffleQueueV2" else None)
              for op in graph.get_operations() if op.type.endswith("QueueV2") and "Queue" in op.type[:-2]}
    runners = sorted((qr.queue.name, sorted(op.name for op in qr.enqueue_ops))
                     for qr in graph.get_collection(tf.GraphKeys.QUEUE_RUNNERS))
    summaries = sorted(op.name for op in graph.get_collection(tf.GraphKeys.SUMMARIES))
    local = sorted(v.op.name for v in tf.local_variables())
    return ops, queues, runners, summaries, local


def test_graph_matches_tf1(tf1_ref_vars):
    want, got = tf1_and_core(tf1_ref_vars, _graph_program)
    (w_ops, w_queues, w_runners, w_summaries, w_local), (g_ops, g_queues, g_runners, g_summaries, g_local) = want, got
    assert g_queues == w_queues
    assert {"FIFOQueueV2", "RandomShuffleQueueV2"} <= {t for t, _ in g_ops}
    assert g_runners == w_runners
    assert g_summaries == w_summaries
    assert g_local == w_local
    assert collections.Counter(t for t, _ in g_ops) == collections.Counter(t for t, _ in w_ops)
    assert [o for o in g_ops if o[1]] == [o for o in w_ops if o[1]]


def _fifo_program(tf, which):
    if which == "string":
        q = tf.train.string_input_producer(["a", "b", "c"], num_epochs=3, shuffle=False, capacity=4)
        return q.dequeue()
    if which == "range":
        return tf.train.range_input_producer(5, num_epochs=2, shuffle=False).dequeue()
    if which == "input_producer":
        q = tf.train.input_producer(tf.constant([[1, 2], [3, 4], [5, 6]]), num_epochs=2, shuffle=False)
        return q.dequeue()
    if which == "slice":
        return tf.train.slice_input_producer([tf.constant([10, 20, 30, 40]), tf.constant(["p", "q", "r", "s"])],
                                            num_epochs=2, shuffle=False)
    if which == "batch":
        x = tf.train.range_input_producer(7, num_epochs=2, shuffle=False).dequeue()
        return tf.train.batch([x, x * 10], 3)
    if which == "batch_smaller_final":
        x = tf.train.range_input_producer(7, num_epochs=2, shuffle=False).dequeue()
        return tf.train.batch({"a": x, "b": tf.cast(x, tf.float32) / 2}, 3, allow_smaller_final_batch=True)
    if which == "batch_enqueue_many":
        rows = tf.train.limit_epochs(tf.reshape(tf.range(12), [4, 3]), num_epochs=2)
        return tf.train.batch([rows], 5, enqueue_many=True, allow_smaller_final_batch=True)
    if which == "limit_epochs":
        return tf.train.limit_epochs(tf.constant([1.5, 2.5]), num_epochs=3)
    raise ValueError(which)


def _normalize(value):
    if isinstance(value, dict):
        return {k: _normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalize(v) for v in value]
    arr = np.asarray(value)
    if arr.dtype.kind in "OSU":
        return [_text(v) for v in arr.reshape(-1)] if arr.ndim else _text(arr.item())
    return arr.tolist(), arr.dtype.name, arr.shape


@pytest.mark.parametrize("which", ["string", "range", "input_producer", "slice", "batch", "batch_smaller_final",
                                   "batch_enqueue_many", "limit_epochs"])
def test_deterministic_pipelines_match_tf1(tf1_ref_vars, which):
    want, got = tf1_and_core(tf1_ref_vars, lambda tf: _drain(tf, _fifo_program(tf, which)))
    assert len(got) > 0
    assert _normalize(got) == _normalize(want)


def _epochs_program(tf, n, epochs, seed):
    return tf.train.range_input_producer(n, num_epochs=epochs, shuffle=True, seed=seed).dequeue()


@pytest.mark.parametrize("seed", [None, 3])
def test_shuffled_producer_every_element_once_per_epoch(tf1, seed):
    n, epochs = 9, 4
    for out in tf1_and_core(tf1, lambda tf: _drain(tf, _epochs_program(tf, n, epochs, seed))):
        values = [int(v) for v in out]
        assert len(values) == n * epochs
        for e in range(epochs):
            assert sorted(values[e * n:(e + 1) * n]) == list(range(n))
        assert values[:n] != list(range(n)) or values[n:2 * n] != list(range(n))     # really shuffled


def _shuffle_batch_program(tf, join, smaller):
    xs = tf.train.slice_input_producer([tf.range(23), tf.range(23) * 2], num_epochs=3, shuffle=False)
    kw = dict(capacity=12, min_after_dequeue=5, allow_smaller_final_batch=smaller)
    if join:
        other = tf.train.slice_input_producer([tf.range(100, 105), tf.range(100, 105) * 2], num_epochs=3)
        return tf.train.shuffle_batch_join([xs, other], 4, **kw)
    return tf.train.shuffle_batch(xs, 4, num_threads=2, **kw)


@pytest.mark.parametrize("join", [False, True])
@pytest.mark.parametrize("smaller", [False, True])
def test_shuffle_batch_every_element_per_epoch(tf1, join, smaller):
    expected = collections.Counter(list(range(23)) * 3 + (list(range(100, 105)) * 3 if join else []))
    total = sum(expected.values())
    for out in tf1_and_core(tf1, lambda tf: _drain(tf, _shuffle_batch_program(tf, join, smaller))):
        firsts = [np.asarray(a) for a, _ in out]
        assert all(b.shape == (4,) and b.dtype == np.int32 for b in firsts[:-1])
        for a, b in out:
            np.testing.assert_array_equal(np.asarray(b), np.asarray(a) * 2)       # rows stay together
        seen = collections.Counter(int(v) for a in firsts for v in a)
        if smaller:
            assert seen == expected and firsts[-1].shape == ((total % 4 or 4),)
        else:
            assert len(firsts) == total // 4 and sum(seen.values()) == total - total % 4
            assert not seen - expected
        flat = [int(v) for a in firsts for v in a]
        assert flat[:23] != sorted(flat[:23])                                      # shuffled


def _fill_program(tf, kind):
    x = tf.train.range_input_producer(1000, shuffle=False, capacity=50).dequeue()
    if kind == "batch":
        tf.train.batch([x], 4, capacity=7)
    else:
        tf.train.shuffle_batch([x], 4, capacity=9, min_after_dequeue=6)
    sizes = [qr.queue.size() for qr in tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)]
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        time.sleep(0.5)
        out = sess.run(sizes)
        coord.request_stop()
        coord.join(threads)
    return [int(s) for s in out]


@pytest.mark.parametrize("kind", ["batch", "shuffle_batch"])
def test_capacity_respected(tf1, kind):
    want, got = tf1_and_core(tf1, _fill_program, kind)
    assert got == want == [50, 7 if kind == "batch" else 9]


def _min_after_dequeue_program(tf):
    """Enqueue 3 with min_after_dequeue=3: a dequeue blocks; a 4th element releases it, leaving 3 queued; after
    close the rest drains in one dequeue_up_to and then OutOfRangeError."""
    q = tf.RandomShuffleQueue(10, 3, [tf.int32], shapes=[[]], seed=7) if hasattr(tf, "RandomShuffleQueue") \
        else tf.train.RandomShuffleQueue(10, 3, [tf.int32], shapes=[[]], seed=7)
    v = tf.placeholder(tf.int32, [None])
    enq, deq, close, size = q.enqueue_many([v]), q.dequeue(), q.close(), q.size()
    rest = q.dequeue_up_to(10)
    log = {}
    with tf.Session() as sess:
        sess.run(enq, {v: [1, 2, 3]})
        result = []
        t = threading.Thread(target=lambda: result.append(int(sess.run(deq))))
        t.start()
        time.sleep(0.4)
        log["blocked"] = t.is_alive() and not result
        sess.run(enq, {v: [4]})
        t.join(5)
        log["released"] = not t.is_alive()
        log["size_after"] = int(sess.run(size))
        sess.run(close)
        drained = sorted(int(x) for x in sess.run(rest))
        log["all"] = sorted(result + drained)
        try:
            sess.run(deq)
            log["end"] = "no error"
        except tf.errors.OutOfRangeError:
            log["end"] = "OutOfRangeError"
    return log


def test_min_after_dequeue_respected(tf1):
    want, got = tf1_and_core(tf1, _min_after_dequeue_program)
    assert got == want
    assert got == dict(blocked=True, released=True, size_after=3, all=[1, 2, 3, 4], end="OutOfRangeError")


def test_random_shuffle_queue_seeded_and_graph():
    def order(seed):
        with core.Graph().as_default():
            q = core.train.RandomShuffleQueue(20, 2, core.int32, shapes=[[]], seed=seed)
            enq, close, rest = q.enqueue_many([list(range(15))]), q.close(), q.dequeue_many(15)
            assert q.queue_ref.op.type == "RandomShuffleQueueV2"
            assert q.queue_ref.op.attrs["min_after_dequeue"] == 2
            with core.Session() as sess:
                sess.run(enq)
                sess.run(close)
                return sess.run(rest).tolist()
    a, b, c = order(11), order(11), order(12)
    assert a == b and sorted(a) == list(range(15)) and a != c


def test_bad_arguments():
    with core.Graph().as_default():
        with pytest.raises(ValueError, match="capacity 5 must be bigger than min_after_dequeue 5"):
            core.train.shuffle_batch([core.constant(1)], 2, capacity=5, min_after_dequeue=5)
        with pytest.raises(ValueError, match="non-null input tensor"):
            core.train.string_input_producer([])
        with pytest.raises(ValueError, match="num_epochs must be > 0"):
            core.train.limit_epochs(core.constant(1), 0)
        with pytest.raises(ValueError, match="at least one tensor"):
            core.train.slice_input_producer([])
        with pytest.raises(ValueError, match="must be fully defined"):
            core.train.batch([core.placeholder(core.float32, [None])], 2)
        with pytest.raises(TypeError, match="consistent"):
            core.train.batch_join([[core.constant(1)], [core.constant(1.0)]], 2)
