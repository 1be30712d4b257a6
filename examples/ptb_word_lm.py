import os
import sys
import numpy as np
if os.environ.get("EXAMPLE_BACKEND") == "tensorflow":
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    tf.disable_control_flow_v2()      # TF1's while loops (Enter/Exit/NextIteration), as TF1 builds dynamic_rnn
else:
    from tfevents import core as tf

# The word language model of TF1's PTB tutorial (ptb_word_lm.py, Zaremba et al. 2014) as a graph-mode program:
# embedding_lookup -> a 2-layer MultiRNNCell of BasicLSTMCell(forget_bias=0.0) run by dynamic_rnn from
# cell.zero_state -> softmax over the vocabulary; the cost is the per-step cross-entropy averaged over the batch and
# summed over the time steps (the tutorial's sequence_loss); SGD on clip_by_global_norm(tf.gradients(cost, tvars)),
# apply_gradients with the global step; the learning rate lives in a non-trainable Variable changed with tf.assign
# (decayed per epoch); each batch's final state is fed back as the next batch's initial state, in the tutorial's
# form (feed[c], feed[h] per layer); a validation model shares the weights (reuse=True).
# PTB is replaced by a seeded synthetic corpus (Zipf-distributed words, each word with a few favoured successors,
# so the loss falls). The initial weights come from a seeded numpy generator (Variable.load), so TensorFlow and
# tfevents.core start from the same point: the printed losses ("step N loss X") are compared across backends by
# tests/e2e/test_rnn_examples.py. PTB_CONFIG=test (default: vocabulary 200, 2 x 32 LSTM, 8 steps, batch 4) or
# PTB_CONFIG=small (the tutorial's "small": vocabulary 10,000, 2 x 200, 20 steps, batch 20), or --config NAME;
# benchmarks/_ptb.py times this program's model with the small config.

import tempfile

NAME = "ptb_word_lm"


class TestConfig(object):
    """Small sizes for the cross-backend test."""
    init_scale = 0.1
    learning_rate = 1.0
    max_grad_norm = 5
    num_layers = 2
    num_steps = 8
    hidden_size = 32
    max_epoch = 1
    max_max_epoch = 3
    keep_prob = 1.0
    lr_decay = 0.5
    batch_size = 4
    vocab_size = 200
    train_steps, valid_steps = 16, 3       # batches per epoch of the synthetic corpus


class SmallConfig(object):
    """The tutorial's "small" config (the benchmark's)."""
    init_scale = 0.1
    learning_rate = 1.0
    max_grad_norm = 5
    num_layers = 2
    num_steps = 20
    hidden_size = 200
    max_epoch = 4
    max_max_epoch = 13
    keep_prob = 1.0
    lr_decay = 0.5
    batch_size = 20
    vocab_size = 10000
    train_steps, valid_steps = 50, 10


CONFIGS = {"test": TestConfig, "small": SmallConfig}


def get_config(name=None):
    """The config named by ``name``, else by ``--config NAME`` on the command line, else by $PTB_CONFIG."""
    if name is None:
        name = os.environ.get("PTB_CONFIG", "test")
        for i, arg in enumerate(sys.argv):
            if arg == "--config" and i + 1 < len(sys.argv):
                name = sys.argv[i + 1]
            elif arg.startswith("--config="):
                name = arg.split("=", 1)[1]
    if name not in CONFIGS:
        raise ValueError("unknown PTB config %r (expected one of %s)" % (name, ", ".join(sorted(CONFIGS))))
    return CONFIGS[name]()


def synthetic_corpus(n_words, vocab_size, seed):
    """n_words word ids: each word follows one of its 3 favoured successors with probability 0.6, else a fresh
    Zipf-distributed word (rank r drawn with probability ~ 1/r), so the corpus is learnable and Zipf-ish. The
    successors are the language's (the same for every seed); ``seed`` draws the text."""
    zipf = 1.0 / np.arange(1, vocab_size + 1)
    zipf /= zipf.sum()
    successors = np.random.RandomState(vocab_size).choice(vocab_size, size=(vocab_size, 3), p=zipf)
    rng = np.random.RandomState(seed)
    fresh = rng.choice(vocab_size, size=n_words, p=zipf)
    follow = rng.rand(n_words) < 0.6
    which = rng.randint(0, 3, n_words)
    words = np.empty(n_words, np.int32)
    w = 0
    for i in range(n_words):
        w = successors[w, which[i]] if follow[i] else fresh[i]
        words[i] = w
    return words


def corpus_for(config, steps, seed):
    """A corpus that gives exactly ``steps`` batches of [batch_size, num_steps] per epoch."""
    return synthetic_corpus(config.batch_size * (steps * config.num_steps + 1), config.vocab_size, seed)


def ptb_iterator(raw_data, batch_size, num_steps):
    """(x, y) batches of the tutorial's reader: the corpus cut into batch_size rows read num_steps at a time; y is
    x shifted by one word."""
    data = np.asarray(raw_data, dtype=np.int32)
    batch_len = len(data) // batch_size
    data = data[:batch_size * batch_len].reshape(batch_size, batch_len)
    epoch_size = (batch_len - 1) // num_steps
    if epoch_size <= 0:
        raise ValueError("epoch_size == 0, decrease batch_size or num_steps")
    for i in range(epoch_size):
        yield (data[:, i * num_steps:(i + 1) * num_steps], data[:, i * num_steps + 1:(i + 1) * num_steps + 1])


class PTBModel(object):
    """The PTB model (the tutorial's, with dynamic_rnn); placeholders for the words instead of the input queue."""

    def __init__(self, is_training, config):
        self.batch_size = batch_size = config.batch_size
        self.num_steps = num_steps = config.num_steps
        size = config.hidden_size
        vocab_size = config.vocab_size
        self.input_data = tf.placeholder(tf.int32, [batch_size, num_steps], name="input_data")
        self.targets = tf.placeholder(tf.int32, [batch_size, num_steps], name="targets")

        with tf.device("/cpu:0"):
            embedding = tf.get_variable("embedding", [vocab_size, size], dtype=tf.float32)
            inputs = tf.nn.embedding_lookup(embedding, self.input_data)
        if is_training and config.keep_prob < 1:
            inputs = tf.nn.dropout(inputs, config.keep_prob)

        def make_cell():
            cell = tf.nn.rnn_cell.BasicLSTMCell(size, forget_bias=0.0, state_is_tuple=True, reuse=not is_training)
            if is_training and config.keep_prob < 1:
                cell = tf.nn.rnn_cell.DropoutWrapper(cell, output_keep_prob=config.keep_prob)
            return cell

        cell = tf.nn.rnn_cell.MultiRNNCell([make_cell() for _ in range(config.num_layers)], state_is_tuple=True)
        self.initial_state = cell.zero_state(batch_size, tf.float32)
        outputs, state = tf.nn.dynamic_rnn(cell, inputs, initial_state=self.initial_state)
        output = tf.reshape(outputs, [-1, size])
        softmax_w = tf.get_variable("softmax_w", [size, vocab_size], dtype=tf.float32)
        softmax_b = tf.get_variable("softmax_b", [vocab_size], dtype=tf.float32)
        logits = tf.nn.xw_plus_b(output, softmax_w, softmax_b)
        logits = tf.reshape(logits, [batch_size, num_steps, vocab_size])
        # the tutorial's sequence_loss(average_across_timesteps=False, average_across_batch=True), summed
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=self.targets, logits=logits)
        self.cost = tf.reduce_sum(tf.reduce_mean(loss, axis=0))
        self.final_state = state
        self.train_op = None
        if not is_training:
            return

        self.lr = tf.Variable(0.0, trainable=False)
        tvars = tf.trainable_variables()
        grads, self.global_norm = tf.clip_by_global_norm(tf.gradients(self.cost, tvars), config.max_grad_norm)
        optimizer = tf.train.GradientDescentOptimizer(self.lr)
        self.train_op = optimizer.apply_gradients(zip(grads, tvars),
                                                  global_step=tf.train.get_or_create_global_step())
        self.new_lr = tf.placeholder(tf.float32, shape=[], name="new_learning_rate")
        self.lr_update = tf.assign(self.lr, self.new_lr)

    def assign_lr(self, session, lr_value):
        session.run(self.lr_update, feed_dict={self.new_lr: lr_value})


def build(config):
    """The training model and a validation model sharing its weights, in the tutorial's "Model" scope."""
    initializer = tf.random_uniform_initializer(-config.init_scale, config.init_scale)
    with tf.name_scope("Train"):
        with tf.variable_scope("Model", reuse=None, initializer=initializer):
            m = PTBModel(is_training=True, config=config)
    with tf.name_scope("Valid"):
        with tf.variable_scope("Model", reuse=True, initializer=initializer):
            mvalid = PTBModel(is_training=False, config=config)
    return m, mvalid


def initial_weights(config, shapes, seed=1):
    """{variable name: value} for {variable name: shape}: the same start on both backends, drawn per variable in
    name order (uniform in +-init_scale, as the tutorial's initializer; LSTM biases zero, as BasicLSTMCell's)."""
    rng = np.random.RandomState(seed)
    values = {}
    for name in sorted(shapes):
        if name.endswith("basic_lstm_cell/bias"):
            values[name] = np.zeros(shapes[name], np.float32)
        else:
            values[name] = rng.uniform(-config.init_scale, config.init_scale, shapes[name]).astype(np.float32)
    return values


def load_initial_weights(session, config):
    """Loads initial_weights into the graph's trainable variables."""
    variables = tf.trainable_variables()
    values = initial_weights(config, {v.op.name: v.get_shape().as_list() for v in variables})
    for v in variables:
        v.load(values[v.op.name], session)


def state_feed(model, feed_dict, state):
    """The tutorial's feed of the previous batch's final state as this batch's initial state."""
    for i, (c, h) in enumerate(model.initial_state):
        feed_dict[c] = state[i].c
        feed_dict[h] = state[i].h
    return feed_dict


def run_epoch(session, model, data, eval_op=None, step0=0, verbose=False):
    """Runs the model over ``data``; returns (perplexity, [cost of each batch])."""
    costs, iters, batch_costs = 0.0, 0, []
    state = session.run(model.initial_state)
    fetches = {"cost": model.cost, "final_state": model.final_state}
    if eval_op is not None:
        fetches["eval_op"] = eval_op
    for step, (x, y) in enumerate(ptb_iterator(data, model.batch_size, model.num_steps)):
        feed_dict = state_feed(model, {model.input_data: x, model.targets: y}, state)
        vals = session.run(fetches, feed_dict)
        cost, state = vals["cost"], vals["final_state"]
        costs += cost
        iters += model.num_steps
        batch_costs.append(cost)
        if verbose:
            print("step %d loss %.9g" % (step0 + step, cost))
    return np.exp(costs / iters), batch_costs


def make_out_dir(name):
    base = os.environ.get("EXAMPLE_OUT")
    if base:
        if not os.path.isdir(base):
            os.makedirs(base)
        return tempfile.mkdtemp(prefix=name + ".", dir=base)
    return tempfile.mkdtemp(prefix=name + ".")


def main():
    config = get_config()
    out = make_out_dir(NAME)
    print("output dir:", out)
    train_data = corpus_for(config, config.train_steps, seed=1)
    valid_data = corpus_for(config, config.valid_steps, seed=2)

    m, mvalid = build(config)
    names = sorted(v.op.name for v in tf.trainable_variables())
    print("variables:", " ".join(names))
    cells = ["Model/rnn/multi_rnn_cell/cell_%d/basic_lstm_cell/%s" % (i, part)
             for i in range(config.num_layers) for part in ("bias", "kernel")]
    assert names == ["Model/embedding"] + cells + ["Model/softmax_b", "Model/softmax_w"], names
    assert len(tf.global_variables()) == len(names) + 2        # + the learning rate and the global step
    assert mvalid.final_state[0].c.get_shape().as_list() == [config.batch_size, config.hidden_size]
    assert any(op.type == "Enter" for op in tf.get_default_graph().get_operations())   # TF1's while loop

    global_step = tf.train.get_or_create_global_step()
    all_losses, valid_perplexities = [], []
    with tf.Session() as session:
        writer = tf.summary.FileWriter(os.path.join(out, "train"), session.graph)
        session.run(tf.global_variables_initializer())
        load_initial_weights(session, config)
        for i in range(config.max_max_epoch):
            lr_decay = config.lr_decay ** max(i + 1 - config.max_epoch, 0.0)
            m.assign_lr(session, config.learning_rate * lr_decay)
            print("Epoch: %d Learning rate: %.3f" % (i + 1, session.run(m.lr)))
            train_perplexity, losses = run_epoch(session, m, train_data, eval_op=m.train_op,
                                                 step0=len(all_losses), verbose=True)
            all_losses += losses
            print("Epoch: %d Train Perplexity: %.3f" % (i + 1, train_perplexity))
            valid_perplexity, _ = run_epoch(session, mvalid, valid_data)
            valid_perplexities.append(valid_perplexity)
            print("Epoch: %d Valid Perplexity: %.9g" % (i + 1, valid_perplexity))
        assert session.run(global_step) == len(all_losses)
        assert abs(session.run(m.lr) - config.learning_rate * config.lr_decay ** (config.max_max_epoch -
                                                                                    config.max_epoch)) < 1e-7
        writer.close()

    first, last = np.mean(all_losses[:3]), np.mean(all_losses[-3:])
    print("loss %.4f -> %.4f; uniform guess %.4f" % (first, last, config.num_steps * np.log(config.vocab_size)))
    assert last < 0.9 * first, (first, last)
    assert valid_perplexities[-1] < valid_perplexities[0], valid_perplexities
    print("EXAMPLE OK " + NAME)


if __name__ == "__main__":
    main()
