"""Every TF1 program of the project's examples/ (CNNs: Deep MNIST, a tf.layers CNN; RNNs: the PTB word language
model, a GRU sequence classifier) runs unchanged under real TF1 (``EXAMPLE_BACKEND=tensorflow``) and under
tfevents.core: exit code 0 and ``EXAMPLE OK <name>`` as its last line. test_cnn_examples.py and
test_rnn_examples.py compare what the two backends print."""
import pytest

from _examples import BACKENDS, PROJECT_PROGRAMS


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("program", PROJECT_PROGRAMS)
def test_example_runs(project_example_runs, program, backend):
    proc = project_example_runs[(program, backend)]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert proc.stdout.strip().splitlines()[-1] == "EXAMPLE OK " + program
