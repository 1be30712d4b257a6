"""Shared fixtures: paths, and the real tools (TensorFlow, TensorBoard) imported the same way everywhere."""
import os
import subprocess
import sys

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(REPO), "shared")
sys.path.insert(0, os.path.join(REPO, "tests"))
# The peers' vendored suites run in pytest processes of their own (summaries/test_peer_suites.py), never in ours; no
# conftest.py of theirs here, which would shadow this one as the module `conftest`.
collect_ignore = ["peer_suites"]


@pytest.fixture(scope="session")
def tf():
    """tensorflow (2.x API); import is slow, so tests share one."""
    return pytest.importorskip("tensorflow")


@pytest.fixture(scope="session")
def tf1(tf):
    """tensorflow.compat.v1, the oracle for tfevents.core.

    Eager execution stays on for the process (other tests need it): build TF1 graphs inside
    ``with tf1.Graph().as_default(), tf1.Session() as sess:``.
    """
    return tf.compat.v1


@pytest.fixture(scope="session")
def peer_logdir(tmp_path_factory):
    """Runs written by TF1, TF2, tensorboardX and torch (tests/peer_runs.py, two subprocesses): ``<root>/<kind>``.
    Shared by every test module that reads them; do not write into it."""
    import peer_runs
    return peer_runs.write_in_subprocesses(str(tmp_path_factory.mktemp("peers")))


@pytest.fixture(scope="session")
def example_runs(tmp_path_factory):
    """The TF1 example programs of ../shared/examples, started at once (tests/_examples.py); ``.wait()`` for them."""
    import _examples
    runs = _examples.ExampleRuns(str(tmp_path_factory.mktemp("examples")))
    yield runs
    runs.stop()


@pytest.fixture(scope="session")
def project_example_runs(tmp_path_factory):
    """``{(program, backend): CompletedProcess}``: every TF1 program of the project's examples/ under real TF1 and
    under tfevents.core, once per session, two at a time (tests/_examples.py)."""
    import _examples
    return _examples.run_example_programs(str(tmp_path_factory.mktemp("project_examples")), _examples.PROJECT_PROGRAMS,
                                          _examples.BACKENDS, drop_env=("PTB_CONFIG",))


@pytest.fixture(scope="session")
def demo_cli_run(tmp_path_factory):
    """``tfevents demo --logdir LOGDIR -q`` run once, as a user runs it: ``(LOGDIR, LOGDIR/report.html)``, the
    interactive report it writes. Shared by the modules that read the demo's runs; do not write into it."""
    logdir = str(tmp_path_factory.mktemp("demo_cli") / "runs")
    proc = subprocess.run([sys.executable, "-m", "tfevents.viewer.cli", "demo", "--logdir", logdir, "-q"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return logdir, os.path.join(logdir, "report.html")


@pytest.fixture
def logdir(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    return str(d)


@pytest.fixture(scope="session")
def s3_endpoint():
    """moto's S3 server on 127.0.0.1 (the real S3 protocol), shared by the tests that read object storage: its URL.
    Each test uses buckets of its own."""
    pytest.importorskip("s3fs")
    server_mod = pytest.importorskip("moto.server")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield "http://%s:%d" % (host, port)
    server.stop()


@pytest.fixture(scope="session")
def ranks_job(tmp_path_factory):
    """One real 2-process torch.distributed job (gloo on 127.0.0.1, tests/_distributed.py), shared by the tests that
    read its runs: ``<root>/default`` (rank 0 only), ``<root>/all/rank_<N>``, torch's reductions ``reduced.npy``."""
    pytest.importorskip("torch.distributed", reason="the ranks tests run a real torch.distributed job")
    import _distributed
    logdir = str(tmp_path_factory.mktemp("ranks_job"))
    _distributed.run_job(logdir)
    return logdir
