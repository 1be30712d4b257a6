"""Runs written by the real tools, for the tests that read them (the ``peer_logdir`` fixture in conftest.py):

    python tests/peer_runs.py OUT_DIR KIND [KIND ...]     KIND: tf1, tf2, tbx, torch

Each KIND writes into OUT_DIR/KIND. tf1 must run in a process of its own (TF1 graph mode needs
``disable_eager_execution()``, which is global to a process): :func:`write_in_subprocesses` runs
``tf1`` and ``tf2 tbx torch`` as two processes side by side.
- tf1: ``tf.compat.v1.summary.FileWriter`` with the graph (a small training step and every summary op),
  merged scalar/histogram/image/audio/text/PR-curve summaries, a traced RunMetadata and a
  SessionLog CHECKPOINT.
- tf2: ``tf.summary`` hparams, scalars (float32 and float64), histogram, image, audio, text and a text table.
- tbx / torch: tensorboardX's and torch.utils.tensorboard's SummaryWriter, every ``add_*`` kind that needs
  nothing beyond what is installed (no video: moviepy; no tensorboardX audio: soundfile), and add_scalars /
  add_hparams sub-runs; torch also a new-style scalar, a tensor and a graph.
"""
import os
import subprocess
import sys

import numpy as np

PROCESS_GROUPS = (["tf1"], ["tf2", "tbx", "torch"])
TF1_STEPS, TF2_STEPS, WRITER_STEPS = 12, 15, 20


def write_tf1(out):
    import tensorflow as tf
    from tensorboard.plugins.pr_curve import summary as pr_summary
    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    rng = np.random.RandomState(0)
    x = tf1.placeholder(tf.float32, [None], name="x")
    img = tf1.placeholder(tf.float32, [2, 6, 5, 3], name="img")
    snd = tf1.placeholder(tf.float32, [1, 400, 2], name="snd")
    w = tf1.Variable(rng.randn(4, 2).astype(np.float32), name="w")
    fit = tf1.reduce_mean(tf1.square(tf1.matmul(tf1.reshape(x[:8], [2, 4]), w)), name="fit")
    train = tf1.train.GradientDescentOptimizer(0.1).minimize(fit)
    tf1.summary.scalar("loss", tf.reduce_mean(x))
    tf1.summary.scalar("max", tf.reduce_max(x))
    tf1.summary.histogram("weights", x)
    tf1.summary.image("img", img, max_outputs=2)
    tf1.summary.audio("snd", snd, 8000)
    tf1.summary.text("note", tf.constant("hello *tf1*"))
    pr_summary.op(name="pr", labels=tf.cast(x > 0, tf.bool), predictions=tf.sigmoid(x), num_thresholds=11)
    merged = tf1.summary.merge_all()
    writer = tf1.summary.FileWriter(out, graph=tf1.get_default_graph())
    with tf1.Session() as sess:
        sess.run(tf1.global_variables_initializer())
        for step in range(TF1_STEPS):
            feed = {x: rng.randn(50), img: rng.rand(2, 6, 5, 3), snd: rng.rand(1, 400, 2) * 2 - 1}
            if step == 3:
                options = tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE)
                metadata = tf1.RunMetadata()
                summary, _ = sess.run([merged, train], feed, options=options, run_metadata=metadata)
                writer.add_run_metadata(metadata, "step3", step)
            else:
                summary, _ = sess.run([merged, train], feed)
            writer.add_summary(summary, step)
        writer.add_session_log(tf1.SessionLog(status=tf1.SessionLog.CHECKPOINT, checkpoint_path="/ck/1"),
                               TF1_STEPS)
    writer.close()


def write_tf2(out):
    import tensorflow as tf
    from tensorboard.plugins.hparams import api as hp
    rng = np.random.RandomState(1)
    writer = tf.summary.create_file_writer(out)
    with writer.as_default():
        hp.hparams({"lr": 0.01, "opt": "adam", "deep": True})
        for step in range(TF2_STEPS):
            tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
            tf.summary.scalar("lr", tf.constant(0.5, tf.float64), step=step)
            if step % 3 == 0:
                tf.summary.histogram("w", rng.randn(100), step=step, buckets=7)
                tf.summary.image("img", rng.rand(2, 4, 3, 3), step=step, max_outputs=2)
                tf.summary.audio("snd", (rng.rand(1, 300, 1) * 2 - 1).astype("float32"), 16000, step=step)
                tf.summary.text("note", "step **%d**" % step, step=step)
                tf.summary.text("table", [["a", "b"], ["c", "d"]], step=step)
    writer.close()


def figure(color):
    from matplotlib.figure import Figure
    fig = Figure(figsize=(1.5, 1), dpi=40)
    fig.add_subplot().plot([0, 1, 2], [2, 0, 1], color=color)
    return fig


def write_writer_kinds(writer, rng, scale, hparams, metrics, array=np.asarray):
    """Every add_* kind tensorboardX and torch share; ``array`` turns inputs into the writer's own tensors."""
    for step in range(WRITER_STEPS):
        writer.add_scalar("loss", scale / (step + 1), step)
        writer.add_scalars("group", {"a": step, "b": -step}, step)
        if step % 5 == 0:
            writer.add_histogram("h", array(rng.randn(200)), step)
            writer.add_histogram_raw("raw", min=0.0, max=3.0, num=6, sum=9.0, sum_squares=19.0,
                                     bucket_limits=[1.0, 2.0, 3.0], bucket_counts=[1, 2, 3], global_step=step)
            writer.add_image("img", array(rng.rand(3, 8, 9)), step)
            writer.add_text("t", "hello %d" % step, step)
            writer.add_pr_curve("pr", rng.randint(0, 2, 40), rng.rand(40), step)
    writer.add_images("images", array(rng.rand(3, 3, 4, 4)), 0)
    writer.add_figure("figure", figure("r"), 0)
    writer.add_pr_curve_raw("pr_raw", [5, 3, 0], [5, 1, 0], [0, 4, 5], [0, 2, 5], [0.5, 0.75, 0.0],
                            [1.0, 0.6, 0.0], 0, num_thresholds=3)
    writer.add_custom_scalars({"cat": {"losses": ["Multiline", ["loss"]], "m": ["Margin", ["a", "b", "c"]]}})
    writer.add_mesh("mesh", vertices=rng.rand(1, 3, 3).astype(np.float32),
                    faces=np.array([[[0, 1, 2]]], dtype=np.int32))
    writer.add_hparams(hparams, metrics)


def write_tbx(out):
    from tensorboardX import SummaryWriter
    writer = SummaryWriter(out)
    write_writer_kinds(writer, np.random.RandomState(2), 2.0, {"lr": 0.1, "bs": 16}, {"hparam/acc": 0.75})
    writer.close()


def write_torch(out):
    import torch
    from torch.utils.tensorboard import SummaryWriter
    rng = np.random.RandomState(3)
    writer = SummaryWriter(out)
    write_writer_kinds(writer, rng, 3.0, {"lr": 0.2, "act": "relu"}, {"hparam/loss": 0.5}, array=torch.tensor)
    for step in range(WRITER_STEPS):
        writer.add_scalar("newstyle", step * 0.25, step, new_style=True)
        if step % 5 == 0:
            writer.add_audio("snd", torch.tensor(rng.rand(500) * 2 - 1), step, sample_rate=8000)
    writer.add_tensor("tensor", torch.arange(6, dtype=torch.float32).reshape(2, 3), 0)
    writer.add_graph(torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()), torch.zeros(1, 3))
    writer.close()


KINDS = {"tf1": write_tf1, "tf2": write_tf2, "tbx": write_tbx, "torch": write_torch}


def write_in_subprocesses(out, groups=PROCESS_GROUPS, timeout=300):
    """Run this script once per group of kinds, the groups side by side; fail with a process's output if it fails."""
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), out] + kinds,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for kinds in groups]
    for kinds, proc in zip(groups, procs):
        output, _ = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, "peer_runs.py %s failed:\n%s" % (kinds, output.decode(errors="replace")[-3000:])
    return out


def main(argv):
    out, kinds = argv[0], argv[1:]
    for kind in kinds:
        KINDS[kind](os.path.join(out, kind))


if __name__ == "__main__":
    main(sys.argv[1:])
