"""Logdirs for the viewer tests, written at test time by the real tools (tensorboardX, torch, TF2) and by
tfevents' own SummaryWriter. Every run logs the same curve shifted by its own offset, so a plot can be
checked for each run's line in the right place."""
import os

import numpy as np
import pytest

STEPS = np.arange(0, 150)
OFFSETS = {"tbx": 0.0, "torch": 10.0, "tf2": 20.0, "ours": 30.0}
NAN_STEP = 60           # the tbx run logs NaN here
SCRIPT_TEXT = "<script>window.__pwned = 1</script> **bold words**"

_CACHE = {}


def loss_curve(offset):
    s = STEPS.astype(np.float64)
    return offset + 5.0 * np.exp(-s / 40.0) + 0.8 * np.sin(s / 3.0)


def hist_values(step, rng):
    return rng.normal(loc=step / 50.0, scale=1.0 + step / 100.0, size=400)


def _image(step):
    img = np.zeros((3, 16, 24), dtype=np.uint8)
    img[0] = (step * 40) % 256
    img[1, :, :12] = 200
    img[2, 8:, :] = 90
    return img


def write_tbx(path):
    from tensorboardX import SummaryWriter
    rng = np.random.default_rng(1)
    y = loss_curve(OFFSETS["tbx"])
    y[NAN_STEP] = np.nan
    with SummaryWriter(path) as w:
        for s, v in zip(STEPS, y):
            w.add_scalar("loss", float(v), int(s))
            if s % 10 == 0:
                w.add_histogram("weights", hist_values(s, rng), int(s))
            if s % 50 == 0:
                w.add_image("sample", _image(s), int(s))
        w.add_text("notes", SCRIPT_TEXT, 1)
        labels = rng.integers(0, 2, 200)
        w.add_pr_curve("pr", labels, np.clip(labels * 0.6 + rng.random(200) * 0.5, 0, 1), 1, num_thresholds=21)


def write_torch(path):
    from torch.utils.tensorboard import SummaryWriter
    rng = np.random.default_rng(2)
    w = SummaryWriter(path)
    for s, v in zip(STEPS, loss_curve(OFFSETS["torch"])):
        w.add_scalar("loss", float(v), int(s))
        if s % 10 == 0:
            w.add_histogram("weights", hist_values(s, rng), int(s))
    t = np.linspace(0, 0.25, 4000, dtype=np.float32)
    w.add_audio("tone", np.sin(2 * np.pi * 440 * t) * 0.5, 1, sample_rate=16000)
    w.add_hparams({"lr": 0.01, "optimizer": "adam", "layers": 3}, {"hp/accuracy": 0.875}, run_name="hp")
    w.close()


def write_tf2(tf, path):
    """TF2's own tf.summary API (eager, in this process: the session's `tf` fixture is imported once).

    Returns the logged graph's facts ``{"nodes": n, "ops": {op: count}}`` as TensorFlow sees them."""
    y = loss_curve(OFFSETS["tf2"])
    rng = np.random.default_rng(3)

    @tf.function
    def model(x):
        with tf.name_scope("dense"):
            h = tf.nn.relu(tf.matmul(x, tf.ones([3, 4])) + 1.0)
        return tf.reduce_sum(h)

    writer = tf.summary.create_file_writer(path)
    with writer.as_default():
        for s, v in zip(STEPS, y):
            tf.summary.scalar("loss", float(v), step=int(s))
            if s % 10 == 0:
                tf.summary.histogram("weights", rng.normal(loc=s / 50.0, size=400), step=int(s))
        tf.summary.text("notes", "tf2 *text*", step=1)
        graph = model.get_concrete_function(tf.TensorSpec([2, 3], tf.float32)).graph
        tf.summary.graph(graph)
    writer.close()
    ops = {}
    for node in graph.as_graph_def().node:
        ops[node.op] = ops.get(node.op, 0) + 1
    return {"nodes": sum(ops.values()), "ops": ops}


def write_ours(path):
    from tfevents.summaries import SummaryWriter
    rng = np.random.default_rng(4)
    with SummaryWriter(path) as w:
        for s, v in zip(STEPS, loss_curve(OFFSETS["ours"])):
            w.add_scalar("loss", float(v), int(s))
            if s % 10 == 0:
                w.add_histogram("weights", hist_values(s, rng), int(s))


def ours_available():
    try:
        from tfevents.summaries import SummaryWriter  # noqa: F401
        return True
    except Exception:
        return False


def mixed_logdir(tmp_path_factory, tf):
    """A logdir with runs tbx/, torch/ (and torch/hp), tf2/ and ours/; returns (path, tf2 graph facts)."""
    if "mixed" not in _CACHE:
        root = str(tmp_path_factory.mktemp("viewer_logs"))
        graph = write_tf2(tf, os.path.join(root, "tf2"))
        write_tbx(os.path.join(root, "tbx"))
        write_torch(os.path.join(root, "torch"))
        if ours_available():
            write_ours(os.path.join(root, "ours"))
        _CACHE["mixed"] = (root, graph)
    return _CACHE["mixed"]


@pytest.fixture(scope="session")
def mixed(tmp_path_factory, tf):
    return mixed_logdir(tmp_path_factory, tf)
