"""TF1 as the oracle: one program built and run by TensorFlow's ``tf.compat.v1`` and by ``tfevents.core``."""
from tfevents import core


def tf1_and_core(tf1, program, *args):
    """``(program(tf1, *args), program(core, *args))``, each in a fresh default graph of its own library."""
    with tf1.Graph().as_default():
        want = program(tf1, *args)
    with core.Graph().as_default():
        got = program(core, *args)
    return want, got
