"""One training step of two models, tfevents.core ``Session.run`` against its peers, side by side in one run:

- ``mlp``: the example MLP (784-300-100-10, relu, softmax cross-entropy, Momentum 0.9, lr 0.01) against a
  hand-written numpy step, TF1 ``Session.run`` and PyTorch eager. Targets: core <= 1.25x numpy; core faster than
  TF1 at batch 50.
- ``cnn``: the Deep MNIST tutorial step (two 5x5 convs of 32 and 64 filters, SAME, 2x2 max pools, dense 1024,
  dropout, Adam; ``benchmarks/_deep_mnist.py``) against TF1 ``Session.run`` and PyTorch eager, batch 50.
  Target: core <= 1.5x TF1, and no slower than PyTorch.
- ``ptb``: the PTB "small" word language model step of examples/ptb_word_lm.py (batch 20, 20 steps, 2 x 200
  BasicLSTMCell under dynamic_rnn, vocabulary 10,000, SGD on global-norm-clipped gradients, the final state fed
  back; ``benchmarks/_ptb.py``) against TF1's ``dynamic_rnn`` ``Session.run`` and PyTorch's ``nn.LSTM``.
  Target: core no slower than TF1.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/core_step.py [--models mlp,cnn,ptb]
        [--batches 50,512] [--seconds 1.5]

Prints the BLAS library and kernel numpy uses (threadpoolctl), the median wall and CPU time per step of each peer
(rounds interleaved across peers) and the ratios. Every peer gets the same number of BLAS / intra-op threads
(``--threads``, default 1: stable on a shared machine).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time


def _threads_from_argv(argv):
    for i, a in enumerate(argv):
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
    return "1"


THREADS = int(_threads_from_argv(sys.argv))
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, str(THREADS))      # before numpy is imported

import numpy as np  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")     # tf.compat.v1.nn.rnn_cell (ptb) from tf_keras

SIZES = (784, 300, 100, 10)
LR, MOMENTUM = 0.01, 0.9


def data(batch, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.rand(batch, SIZES[0]).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.randint(0, SIZES[-1], batch)]
    return x, y


def init_params(seed=1):
    rng = np.random.RandomState(seed)
    params = []
    for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
        params.append((rng.randn(n_in, n_out) * np.sqrt(2.0 / n_in)).astype(np.float32))
        params.append(np.zeros(n_out, np.float32))
    return params


def time_interleaved(steps, seconds):
    """(wall, CPU) median seconds per call of each step over rounds of ~20 ms; the peers take turns round by
    round, so that load from other processes hits all of them alike. On a busy machine the process CPU time
    is the better estimate of each peer's own cost (wall time includes waiting for a core); both are printed."""
    per_round = {}
    for name, step in steps.items():
        for _ in range(5):
            step()
        t0 = time.perf_counter()
        n = 0
        while time.perf_counter() - t0 < 0.05:
            step()
            n += 1
        per_round[name] = max(1, int(0.02 / ((time.perf_counter() - t0) / n)))
    samples = {name: [] for name in steps}
    cpu = {name: [] for name in steps}
    end = time.perf_counter() + seconds * len(steps)
    while time.perf_counter() < end or min(len(v) for v in samples.values()) < 5:
        for name, step in steps.items():
            k = per_round[name]
            t, c = time.perf_counter(), time.process_time()
            for _ in range(k):
                step()
            cpu[name].append((time.process_time() - c) / k)
            samples[name].append((time.perf_counter() - t) / k)
    return {name: (statistics.median(samples[name]), statistics.median(cpu[name])) for name in steps}


# ---- hand-written numpy

def numpy_step_fn(x, y):
    w1, b1, w2, b2, w3, b3 = params = init_params()
    accums = [np.zeros_like(p) for p in params]
    n = x.shape[0]

    def step():
        z1 = x @ w1 + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ w2 + b2
        h2 = np.maximum(z2, 0)
        logits = h2 @ w3 + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(s[:, 0]) - (shifted * y).sum(axis=1))
        dlogits = (e / s - y) / n
        dw3 = h2.T @ dlogits
        db3 = dlogits.sum(axis=0)
        dh2 = dlogits @ w3.T
        dh2 *= z2 > 0
        dw2 = h1.T @ dh2
        db2 = dh2.sum(axis=0)
        dh1 = dh2 @ w2.T
        dh1 *= z1 > 0
        dw1 = x.T @ dh1
        db1 = dh1.sum(axis=0)
        for p, a, g in zip(params, accums, (dw1, db1, dw2, db2, dw3, db3)):
            a *= MOMENTUM
            a += g
            p -= LR * a
        return loss
    return step


# ---- tfevents.core

def build_mlp(tf, momentum_update):
    x = tf.placeholder(tf.float32, (None, SIZES[0]), name="X")
    y = tf.placeholder(tf.float32, (None, SIZES[-1]), name="y")
    h = x
    params = init_params()
    for i in range(3):
        w = tf.Variable(params[2 * i], name="w%d" % i)
        b = tf.Variable(params[2 * i + 1], name="b%d" % i)
        h = tf.nn.bias_add(tf.matmul(h, w), b)
        if i < 2:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=h))
    train_op = momentum_update(tf, loss)
    return x, y, loss, train_op


def core_momentum(tf, loss):
    if importlib.util.find_spec("tfevents.core.train") is not None and hasattr(tf.train, "MomentumOptimizer"):
        return tf.train.MomentumOptimizer(LR, MOMENTUM).minimize(loss)
    tvars = tf.trainable_variables()
    grads = tf.gradients(loss, tvars)
    updates = []
    for v, g in zip(tvars, grads):
        accum = tf.Variable(np.zeros(v.shape.as_list(), np.float32), trainable=False, name=v.op.name + "/Momentum")
        new_accum = tf.assign(accum, accum * MOMENTUM + g)
        updates.append(tf.assign_sub(v, LR * new_accum))
    return tf.group(*updates)


def core_step_fn(x_val, y_val):
    from tfevents import core as tf
    graph = tf.Graph()
    with graph.as_default():
        x, y, loss, train_op = build_mlp(tf, core_momentum)
        sess = tf.Session(graph=graph)
        sess.run(tf.global_variables_initializer())
    feed = {x: x_val, y: y_val}
    fetches = [loss, train_op]
    return lambda: sess.run(fetches, feed)


def tf1_step_fn(x_val, y_val):
    import tensorflow as tf2
    tf = tf2.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x, y, loss, train_op = build_mlp(tf, lambda tf_, l: tf.train.MomentumOptimizer(LR, MOMENTUM).minimize(l))
        config = tf.ConfigProto(intra_op_parallelism_threads=THREADS, inter_op_parallelism_threads=THREADS)
        sess = tf.Session(graph=graph, config=config)
        sess.run(tf.global_variables_initializer())
    feed = {x: x_val, y: y_val}
    fetches = [loss, train_op]
    return lambda: sess.run(fetches, feed)


def torch_step_fn(x_val, y_val):
    import torch
    torch.set_num_threads(THREADS)
    params = init_params()
    layers = [torch.nn.Linear(a, b) for a, b in zip(SIZES[:-1], SIZES[1:])]
    with torch.no_grad():
        for i, layer in enumerate(layers):
            layer.weight.copy_(torch.from_numpy(params[2 * i].T))
            layer.bias.copy_(torch.from_numpy(params[2 * i + 1]))
    model = torch.nn.Sequential(layers[0], torch.nn.ReLU(), layers[1], torch.nn.ReLU(), layers[2])
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    x = torch.from_numpy(x_val)
    y = torch.from_numpy(y_val)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def blas_report() -> str:
    """Which BLAS numpy runs (library, version, kernel, threads), from threadpoolctl when installed."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "BLAS: unknown (pip install threadpoolctl)"
    infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return "; ".join("BLAS: %s %s, kernel %s, %s thread(s)" % (i.get("internal_api"), i.get("version"),
                                                               i.get("architecture"), i.get("num_threads"))
                     for i in infos) or "BLAS: none found"


def print_ratios(times: dict, others) -> None:
    if "core" in times:
        for other in others:
            if other in times:
                print("    core / %-5s = %.2fx wall, %.2fx cpu" % (
                    other, times["core"][0] / times[other][0], times["core"][1] / times[other][1]))


def run_cnn(args) -> None:
    import _deep_mnist
    peers = [p for p in args.peers.split(",") if p != "numpy"]
    factories = {"core": _deep_mnist.core_step_fn, "tf1": _deep_mnist.tf1_step_fn,
                 "torch": _deep_mnist.torch_step_fn}
    print("Deep MNIST CNN (conv 5x5x32, pool, conv 5x5x64, pool, dense 1024, dropout, Adam 1e-4); %d thread(s)"
          % THREADS)
    x, y = _deep_mnist.data(50)
    steps = {}
    for name in peers:
        try:
            steps[name] = factories[name](x, y, THREADS)
        except ImportError as e:
            print("  %s skipped: %s" % (name, e))
    times = time_interleaved(steps, args.seconds)
    print("batch   50: median " + "  ".join("%s %.0f us" % (k, v[0] * 1e6) for k, v in times.items()))
    print("            cpu    " + "  ".join("%s %.0f us" % (k, v[1] * 1e6) for k, v in times.items()))
    print_ratios(times, ("tf1", "torch"))


def run_ptb(args) -> None:
    import _ptb
    peers = [p for p in args.peers.split(",") if p != "numpy"]
    factories = {"core": _ptb.core_step_fn, "tf1": _ptb.tf1_step_fn, "torch": _ptb.torch_step_fn}
    cfg = _ptb.config()
    print("PTB small LM (batch %d, %d steps, %d x %d BasicLSTMCell, vocabulary %d, SGD %g, clip_by_global_norm %g, "
          "state fed back); %d thread(s)" % (cfg.batch_size, cfg.num_steps, cfg.num_layers, cfg.hidden_size,
                                             cfg.vocab_size, cfg.learning_rate, cfg.max_grad_norm, THREADS))
    batches = _ptb.data()
    steps, first = {}, {}
    for name in peers:
        try:
            steps[name] = factories[name](batches, THREADS)
        except ImportError as e:
            print("  %s skipped: %s" % (name, e))
            continue
        first[name] = [steps[name]() for _ in range(3)]
    print("first three costs: " + "  ".join("%s %s" % (k, " ".join("%.5f" % c for c in v)) for k, v in first.items()))
    costs = np.array(list(first.values()))      # the same model, weights and batches: the same costs
    if not np.allclose(costs, costs[0], rtol=1e-4):
        print("  WARNING: the peers' costs differ: they do not run the same model")
    times = time_interleaved(steps, args.seconds)
    print("step:   median " + "  ".join("%s %.1f ms" % (k, v[0] * 1e3) for k, v in times.items()))
    print("        cpu    " + "  ".join("%s %.1f ms" % (k, v[1] * 1e3) for k, v in times.items()))
    print_ratios(times, ("tf1", "torch"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mlp,cnn,ptb")
    parser.add_argument("--batches", default="50,512", help="MLP batch sizes (the CNN runs the tutorial's 50)")
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--peers", default="numpy,core,tf1,torch")
    parser.add_argument("--threads", type=int, default=1, help="BLAS/intra-op threads for every peer")
    args = parser.parse_args(argv)
    models = args.models.split(",")
    unknown = sorted(set(models) - {"mlp", "cnn", "ptb"})
    if unknown:
        parser.error("unknown model(s) %s: --models takes mlp, cnn, ptb" % ", ".join(unknown))
    peers = args.peers.split(",")
    print(blas_report() + "; load average %.1f" % os.getloadavg()[0])
    if "core" in peers:
        from tfevents.core.runtime import session as core_session
        print("core: C kernels %s; denormals flushed to zero during a step: %s (TF1 flushes them; the numpy and "
              "torch steps do not and slow down once the gradients get tiny)" % (
                  "on" if core_session._kernels is not None else "off (TFEVENTS_CORE_KERNELS=0 or not built)",
                  "yes" if core_session._flush_denormals is not None else "no"))
    if "mlp" in models:
        run_mlp(args, peers)
    if "cnn" in models:
        run_cnn(args)
    if "ptb" in models:
        run_ptb(args)
    return 0


def run_mlp(args, peers) -> None:
    factories = {"numpy": numpy_step_fn, "core": core_step_fn, "tf1": tf1_step_fn, "torch": torch_step_fn}
    print("MLP %s, relu, softmax cross-entropy, Momentum(%g, %g); median time per training step; %d thread(s); "
          "load average %.1f" % ("-".join(map(str, SIZES)), LR, MOMENTUM, THREADS, os.getloadavg()[0]))
    for batch in (int(b) for b in args.batches.split(",")):
        x, y = data(batch)
        steps = {}
        for name in peers:
            try:
                steps[name] = factories[name](x, y)
            except ImportError as e:
                print("  %s skipped: %s" % (name, e))
        times = time_interleaved(steps, args.seconds)
        print("batch %4d: median " % batch + "  ".join("%s %.0f us" % (k, v[0] * 1e6) for k, v in times.items()))
        print("            cpu    " + "  ".join("%s %.0f us" % (k, v[1] * 1e6) for k, v in times.items()))
        print_ratios(times, ("numpy", "tf1", "torch"))


if __name__ == "__main__":
    sys.exit(main())
