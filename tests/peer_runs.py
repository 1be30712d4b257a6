"""Write small runs with the real tools, for the interop tests to read with tfevents.

    python tests/peer_runs.py OUT_DIR KIND [KIND ...]     KIND: tf1, tf2, tbx, torch

Each KIND writes into OUT_DIR/KIND. tf1 must run in a process of its own (TF1 graph mode needs
``disable_eager_execution()``, which is global to a process); the interop fixture runs
``tf1`` and ``tf2 tbx torch`` as two processes side by side.
- tf1: ``tf.compat.v1.summary.FileWriter`` with the graph, merged scalar/histogram/image summaries,
  a traced RunMetadata and SessionLog START/STOP.
- tf2: ``tf.summary`` scalar, histogram, image, text and audio.
- tbx / torch: tensorboardX's and torch.utils.tensorboard's SummaryWriter, every ``add_*`` kind
  that needs nothing beyond what is installed (no video: moviepy; no tensorboardX audio: soundfile).
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402

STEPS = 4


def write_tf1(out):
    import tensorflow.compat.v1 as tf1
    tf1.disable_eager_execution()
    rng = np.random.default_rng(1)
    x = tf1.placeholder(tf1.float32, [None, 4], name="x")
    w = tf1.Variable(rng.normal(size=(4, 2)).astype(np.float32), name="w")
    y = tf1.matmul(x, w, name="y")
    loss = tf1.reduce_mean(tf1.square(y), name="loss")
    train = tf1.train.GradientDescentOptimizer(0.1).minimize(loss)
    tf1.summary.scalar("loss", loss)
    tf1.summary.histogram("weights", w)
    tf1.summary.image("input", tf1.reshape(x, [-1, 2, 2, 1]), max_outputs=2)
    merged = tf1.summary.merge_all()
    with tf1.Session() as sess:
        writer = tf1.summary.FileWriter(out, sess.graph)
        sess.run(tf1.global_variables_initializer())
        writer.add_session_log(tf1.SessionLog(status=tf1.SessionLog.START), 0)
        for step in range(STEPS):
            feed = {x: rng.random((3, 4)).astype(np.float32)}
            if step == 2:
                options = tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE)
                metadata = tf1.RunMetadata()
                summary, _ = sess.run([merged, train], feed, options=options, run_metadata=metadata)
                writer.add_run_metadata(metadata, "step2", step)
            else:
                summary, _ = sess.run([merged, train], feed)
            writer.add_summary(summary, step)
        writer.add_session_log(tf1.SessionLog(status=tf1.SessionLog.STOP), STEPS)
        writer.close()


def write_tf2(out):
    import tensorflow as tf
    rng = np.random.default_rng(2)
    writer = tf.summary.create_file_writer(out)
    with writer.as_default():
        for step in range(STEPS):
            tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
            tf.summary.histogram("weights", rng.normal(size=100) + step, step=step)
            tf.summary.image("images", rng.random((2, 4, 5, 3)).astype(np.float32), step=step, max_outputs=2)
            tf.summary.text("notes", "step **%d**" % step, step=step)
            tf.summary.audio("sound", np.sin(np.linspace(0, 30, 400, dtype=np.float32))[None, :, None] * 0.5,
                             sample_rate=8000, step=step)
    writer.close()


def figure(color):
    from matplotlib.figure import Figure
    fig = Figure(figsize=(1.5, 1), dpi=40)
    fig.add_subplot().plot([0, 1, 2], [2, 0, 1], color=color)
    return fig


def write_writer_kinds(writer, rng, with_audio):
    """Every add_* kind tensorboardX and torch share (plus the ones one of them has)."""
    for step in range(STEPS):
        writer.add_scalar("loss", 1.0 / (step + 1), step)
        writer.add_scalars("lr", {"a": 0.1 * step, "b": 0.2 * step}, step)
        writer.add_histogram("weights", rng.normal(size=200) + step, step)
        writer.add_histogram_raw("raw", min=0.0, max=3.0, num=6, sum=9.0, sum_squares=19.0,
                                 bucket_limits=[1.0, 2.0, 3.0], bucket_counts=[1, 2, 3], global_step=step)
    writer.add_image("image", rng.random((3, 6, 5)), 0)
    writer.add_images("images", rng.random((3, 3, 4, 4)), 0)
    writer.add_figure("figure", figure("r"), 0)
    writer.add_text("notes", "hello *world*", 0)
    if with_audio:
        writer.add_audio("sound", np.sin(np.linspace(0, 30, 400)) * 0.5, 0, sample_rate=8000)
    labels = rng.random(100) < 0.5
    writer.add_pr_curve("pr", labels, np.clip(labels * 0.4 + rng.random(100) * 0.6, 0, 1), 0)
    writer.add_pr_curve_raw("pr_raw", [5, 3, 0], [5, 1, 0], [0, 4, 5], [0, 2, 5], [0.5, 0.75, 0.0],
                            [1.0, 0.6, 0.0], 0, num_thresholds=3)
    writer.add_custom_scalars({"cat": {"losses": ["Multiline", ["loss"]], "m": ["Margin", ["a", "b", "c"]]}})
    writer.add_mesh("mesh", vertices=rng.random((1, 3, 3)).astype(np.float32),
                    faces=np.array([[[0, 1, 2]]], dtype=np.int32))
    writer.add_hparams({"lr": 0.1, "opt": "sgd"}, {"hparam/acc": 0.5})


def write_tbx(out):
    from tensorboardX import SummaryWriter
    writer = SummaryWriter(out)
    write_writer_kinds(writer, np.random.default_rng(3), with_audio=False)
    writer.close()


def write_torch(out):
    import torch
    from torch.utils.tensorboard import SummaryWriter
    writer = SummaryWriter(out)
    write_writer_kinds(writer, np.random.default_rng(4), with_audio=True)
    writer.add_tensor("tensor", torch.arange(6, dtype=torch.float32).reshape(2, 3), 0)
    writer.add_graph(torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()), torch.zeros(1, 3))
    writer.close()


KINDS = {"tf1": write_tf1, "tf2": write_tf2, "tbx": write_tbx, "torch": write_torch}


def main(argv):
    out, kinds = argv[0], argv[1:]
    for kind in kinds:
        KINDS[kind](os.path.join(out, kind))


if __name__ == "__main__":
    main(sys.argv[1:])
