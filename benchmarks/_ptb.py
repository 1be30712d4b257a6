"""The PTB "small" training step (batch 20, 20 steps, 2 x 200 BasicLSTMCell(forget_bias=0.0), vocabulary 10,000,
SGD lr 1.0 on clip_by_global_norm(grads, 5), the final state fed back as the next batch's initial state) for
benchmarks/core_step.py. tfevents.core and TF1 run the model of examples/ptb_word_lm.py itself (the module is
loaded once per backend, its ``tf`` bound to tfevents.core or to ``tensorflow.compat.v1`` with control flow v1, as
TF1 builds dynamic_rnn); PyTorch runs the same model eagerly (nn.Embedding + 2-layer nn.LSTM + nn.Linear,
clip_grad_norm_, SGD; one trained bias per gate, as TF's) from the same initial weights, so the three peers'
costs agree step by step."""
from __future__ import annotations

import importlib.util
import os
import sys
import types
from typing import Callable

import numpy as np

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "ptb_word_lm.py")
BATCHES = 8          # distinct batches cycled through (the state is fed back across them)


def example(backend: str) -> types.ModuleType:
    """examples/ptb_word_lm.py as a module whose ``tf`` is ``backend``'s ("core" or "tensorflow")."""
    if backend not in ("core", "tensorflow"):
        raise ValueError("backend must be 'core' or 'tensorflow', not %r" % (backend,))
    name = "_ptb_word_lm_" + backend
    if name not in sys.modules:
        saved = os.environ.get("EXAMPLE_BACKEND")
        os.environ["EXAMPLE_BACKEND"] = backend
        try:
            spec = importlib.util.spec_from_file_location(name, EXAMPLE)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        finally:
            if saved is None:
                del os.environ["EXAMPLE_BACKEND"]
            else:
                os.environ["EXAMPLE_BACKEND"] = saved
        sys.modules[name] = module
    return sys.modules[name]


def config() -> object:
    """The tutorial's small config."""
    return example("core").get_config("small")


def data() -> list:
    """[(x, y)] int32 batches of [20, 20] from the example's synthetic corpus (vocabulary 10,000)."""
    ex, cfg = example("core"), config()
    return list(ex.ptb_iterator(ex.corpus_for(cfg, BATCHES, seed=1), cfg.batch_size, cfg.num_steps))


def _session_step(ex: types.ModuleType, sess_kwargs: dict, batches: list) -> Callable[[], float]:
    tf, cfg = ex.tf, ex.get_config("small")
    graph = tf.Graph()
    with graph.as_default():
        initializer = tf.random_uniform_initializer(-cfg.init_scale, cfg.init_scale)
        with tf.variable_scope("Model", initializer=initializer):
            model = ex.PTBModel(is_training=True, config=cfg)
        sess = tf.Session(graph=graph, **sess_kwargs)
        sess.run(tf.global_variables_initializer())
        ex.load_initial_weights(sess, cfg)
        model.assign_lr(sess, cfg.learning_rate)
        state = [sess.run(model.initial_state), 0]
    fetches = {"cost": model.cost, "final_state": model.final_state, "eval_op": model.train_op}

    def step():
        x, y = batches[state[1] % len(batches)]
        vals = sess.run(fetches, ex.state_feed(model, {model.input_data: x, model.targets: y}, state[0]))
        state[0] = vals["final_state"]
        state[1] += 1
        return float(vals["cost"])
    return step


def core_step_fn(batches: list, threads: int) -> Callable[[], float]:
    return _session_step(example("core"), {}, batches)


def tf1_step_fn(batches: list, threads: int) -> Callable[[], float]:
    ex = example("tensorflow")
    config_proto = ex.tf.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads)
    return _session_step(ex, {"config": config_proto}, batches)


def torch_step_fn(batches: list, threads: int) -> Callable[[], float]:
    import torch
    torch.set_num_threads(threads)
    nn = torch.nn
    cfg = config()
    h, v, layers = cfg.hidden_size, cfg.vocab_size, cfg.num_layers
    shapes = {"Model/embedding": [v, h], "Model/softmax_w": [h, v], "Model/softmax_b": [v]}
    for i in range(layers):
        shapes["Model/rnn/multi_rnn_cell/cell_%d/basic_lstm_cell/kernel" % i] = [2 * h, 4 * h]
        shapes["Model/rnn/multi_rnn_cell/cell_%d/basic_lstm_cell/bias" % i] = [4 * h]
    init = example("core").initial_weights(cfg, shapes)
    embedding, lstm, linear = nn.Embedding(v, h), nn.LSTM(h, h, num_layers=layers, batch_first=True), nn.Linear(h, v)
    with torch.no_grad():
        embedding.weight.copy_(torch.from_numpy(init["Model/embedding"]))
        linear.weight.copy_(torch.from_numpy(np.ascontiguousarray(init["Model/softmax_w"].T)))
        linear.bias.copy_(torch.from_numpy(init["Model/softmax_b"]))
        for i in range(layers):
            # TF's kernel is [input; hidden] x [i, j, f, o]; torch's weights are [i, f, g(=j), o] x input
            kernel = init["Model/rnn/multi_rnn_cell/cell_%d/basic_lstm_cell/kernel" % i]
            bias = init["Model/rnn/multi_rnn_cell/cell_%d/basic_lstm_cell/bias" % i]
            gi, gj, gf, go = np.split(kernel, 4, axis=1)
            kernel = np.concatenate([gi, gf, gj, go], axis=1)
            bi, bj, bf, bo = np.split(bias, 4)
            getattr(lstm, "weight_ih_l%d" % i).copy_(torch.from_numpy(np.ascontiguousarray(kernel[:h].T)))
            getattr(lstm, "weight_hh_l%d" % i).copy_(torch.from_numpy(np.ascontiguousarray(kernel[h:].T)))
            getattr(lstm, "bias_ih_l%d" % i).copy_(torch.from_numpy(np.concatenate([bi, bf, bj, bo])))  # forget 0
            getattr(lstm, "bias_hh_l%d" % i).zero_()
            # torch adds two bias vectors; trained both, the effective bias would move twice as far per step
            getattr(lstm, "bias_hh_l%d" % i).requires_grad_(False)
    params = [p for m in (embedding, lstm, linear) for p in m.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=cfg.learning_rate)
    data = [(torch.from_numpy(x.astype(np.int64)), torch.from_numpy(y.astype(np.int64)).reshape(-1))
            for x, y in batches]
    zeros = torch.zeros(layers, cfg.batch_size, h)
    state = [(zeros, zeros), 0]

    def step():
        x, y = data[state[1] % len(data)]
        opt.zero_grad(set_to_none=True)
        outputs, (hn, cn) = lstm(embedding(x), state[0])
        logits = linear(outputs.reshape(-1, h))
        # cross-entropy averaged over the batch, summed over the steps (the example's cost)
        cost = nn.functional.cross_entropy(logits, y) * cfg.num_steps
        cost.backward()
        nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
        opt.step()
        state[0] = (hn.detach(), cn.detach())
        state[1] += 1
        return cost.item()
    return step
