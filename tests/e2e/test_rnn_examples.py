"""The RNN example programs of examples/ (the PTB word language model: a 2-layer BasicLSTMCell MultiRNNCell under
dynamic_rnn with its final state fed back, clip_by_global_norm, SGD with a learning rate Variable; a GRUCell sequence
classifier under dynamic_rnn with sequence_length) run unchanged under real TF1 (``EXAMPLE_BACKEND=tensorflow``,
control flow v1, one thread) and under tfevents.core, and print the same losses step for step from the same
initial weights (loaded with ``Variable.load``)."""
import re

import numpy as np
import pytest

from _examples import BACKENDS

PROGRAMS = ("ptb_word_lm", "sequence_classifier")
STEPS = {"ptb_word_lm": 48, "sequence_classifier": 30}
# Not a rounding bound (tests/_tolerance.py): one PTB step's longest path (the LSTMs' dots over 8 time steps and 2
# layers, forward and back, and clip_by_global_norm's sum of ~3·10⁴ squares) gives 2·γ(n) ≈ 4e-3 a step, 48 steps
# in a row, which could not tell a wrong formula from rounding. No max pool (whose near-ties route gradients by
# the last bit, tests/e2e/test_cnn_examples.py): the differences stay rounding-sized, in PTB's SGD and the
# classifier's Adam alike, measured within 3e-7 (losses and validation perplexities) with OpenBLAS's Haswell,
# Prescott and SkylakeX kernels, one thread and TF's oneDNN kernels; 1e-4 holds them with a margin of 300.
RTOL = 1e-4


@pytest.fixture(scope="module")
def runs(project_example_runs):
    """conftest's runs of the project's example programs under both backends (each program runs in
    tests/e2e/test_project_examples.py)."""
    return project_example_runs


def _numbers(proc, pattern: str) -> np.ndarray:
    return np.array([float(v) for v in re.findall(pattern, proc.stdout, re.M)])


def _losses(proc) -> np.ndarray:
    return _numbers(proc, r"^step \d+ loss (\S+)$")


@pytest.mark.parametrize("program", PROGRAMS)
def test_same_losses_as_tensorflow(runs, program):
    theirs, ours = _losses(runs[(program, "tensorflow")]), _losses(runs[(program, "core")])
    assert len(theirs) == len(ours) == STEPS[program], (runs[(program, "core")].stdout[-2000:],
                                                        runs[(program, "core")].stderr[-3000:])
    np.testing.assert_allclose(ours, theirs, rtol=RTOL)


def test_same_variables_as_tensorflow(runs):
    for program in PROGRAMS:
        theirs, ours = (re.search(r"^variables: (.*)$", runs[(program, b)].stdout, re.M) for b in BACKENDS)
        assert theirs and ours and theirs.group(1) == ours.group(1), program


def test_ptb_validation_and_learning_rate_as_tensorflow(runs):
    """The validation model (reuse=True, no train op, its own state fed back) and the assigned learning rates."""
    theirs, ours = runs[("ptb_word_lm", "tensorflow")], runs[("ptb_word_lm", "core")]
    valid = r"^Epoch: \d+ Valid Perplexity: (\S+)$"
    assert len(_numbers(theirs, valid)) == 3
    np.testing.assert_allclose(_numbers(ours, valid), _numbers(theirs, valid), rtol=RTOL)
    lr = r"^Epoch: \d+ Learning rate: (\S+)$"
    np.testing.assert_array_equal(_numbers(ours, lr), [1.0, 0.5, 0.25])
    np.testing.assert_array_equal(_numbers(theirs, lr), [1.0, 0.5, 0.25])


def test_classifier_accuracy_as_tensorflow(runs):
    pattern = r"^test accuracy (\S+) \(from (\S+)\)$"
    theirs = re.findall(pattern, runs[("sequence_classifier", "tensorflow")].stdout, re.M)
    ours = re.findall(pattern, runs[("sequence_classifier", "core")].stdout, re.M)
    assert len(theirs) == 1 and ours == theirs
