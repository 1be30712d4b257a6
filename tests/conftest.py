"""Shared fixtures: paths, and the real tools (TensorFlow, TensorBoard) imported the same way everywhere."""
import os
import subprocess
import sys

import pytest

from _background import Background

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


# ---------------------------------------------------------------- the session's slow jobs, in the background
# Each is a subprocess job whose result a session fixture hands out. The autouse fixture below submits those the
# collected tests need, in the order the tests first ask for them, to one background thread (tests/_background.py):
# they run on the core the test run leaves idle, while the tests before them run.

BACKGROUND = Background()


def _peer_runs_job(tmp_path_factory):
    import peer_runs
    out = str(tmp_path_factory.mktemp("peers"))
    return lambda: peer_runs.write_in_subprocesses(out)


def _example_runs_job(tmp_path_factory):
    import _examples
    root = str(tmp_path_factory.mktemp("examples"))

    def job():
        runs = _examples.ExampleRuns(root)
        runs.wait()
        return runs
    return job


def _example_graphs_job(tmp_path_factory):
    import _examples
    out = str(tmp_path_factory.mktemp("example_graphs"))
    return lambda: _examples.example_graphs(out)


def _project_example_runs_job(tmp_path_factory):
    import _examples
    out = str(tmp_path_factory.mktemp("project_examples"))
    return lambda: _examples.run_example_programs(out, _examples.PROJECT_PROGRAMS, _examples.BACKENDS,
                                                  drop_env=("PTB_CONFIG",), at_once=1)


def _peer_suites_job(tmp_path_factory):
    import _peer_suites
    tmp = str(tmp_path_factory.mktemp("peer_suites"))
    return lambda: _peer_suites.run_suites(tmp, at_once=False)


def _demo_cli_job(tmp_path_factory):
    logdir = str(tmp_path_factory.mktemp("demo_cli") / "runs")

    def job():
        proc = subprocess.run([sys.executable, "-m", "tfevents.viewer.cli", "demo", "--logdir", logdir, "-q"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return logdir, os.path.join(logdir, "report.html")
    return job


def _run_list_logdir_job(tmp_path_factory):
    import _run_list_logdir
    root = str(tmp_path_factory.mktemp("runlist"))
    return lambda: _run_list_logdir.write_in_subprocess(root)


def _ranks_job(tmp_path_factory):
    import _distributed
    logdir = str(tmp_path_factory.mktemp("ranks_job"))
    return lambda: _distributed.run_job_in_subprocess(logdir)


def _fresh_imports_job(tmp_path_factory):
    import _fresh_imports
    modules = _fresh_imports.source_modules()     # the modules in the source as the session starts
    return lambda: {group: _fresh_imports.import_group(group, modules) for group in _fresh_imports.GROUPS}


SLOW_JOBS = {"peer_logdir": _peer_runs_job, "example_runs": _example_runs_job, "example_graphs": _example_graphs_job,
             "project_example_runs": _project_example_runs_job, "peer_suite_reports": _peer_suites_job,
             "demo_cli_run": _demo_cli_job, "run_list_logdir": _run_list_logdir_job,
             "fresh_imports": _fresh_imports_job, "ranks_job": _ranks_job}


@pytest.fixture(scope="session", autouse=True)
def _slow_jobs_in_the_background(request, tmp_path_factory):
    """Submits the slow jobs the collected tests use, in the order they first ask for them."""
    for item in request.session.items:
        for name in item.fixturenames:
            if name in SLOW_JOBS:
                BACKGROUND.submit(name, SLOW_JOBS[name](tmp_path_factory))
    yield
    BACKGROUND.shutdown()


def _slow(name: str, tmp_path_factory):
    return BACKGROUND.result(name, lambda: SLOW_JOBS[name](tmp_path_factory)())


@pytest.fixture(scope="session")
def peer_logdir(tmp_path_factory):
    """Runs written by TF1, TF2, tensorboardX and torch (tests/peer_runs.py, two subprocesses): ``<root>/<kind>``.
    Shared by every test module that reads them; do not write into it."""
    return _slow("peer_logdir", tmp_path_factory)


@pytest.fixture(scope="session")
def example_runs(tmp_path_factory):
    """The TF1 example programs of ../shared/examples, run at once (tests/_examples.py); ``.wait()`` gives their
    results."""
    runs = _slow("example_runs", tmp_path_factory)
    yield runs
    runs.stop()


@pytest.fixture(scope="session")
def example_graphs(tmp_path_factory):
    """``{(program path, backend): serialized GraphDef}`` of the shared example programs under real TF1 and under
    tfevents.core (tests/_examples.py)."""
    return _slow("example_graphs", tmp_path_factory)


@pytest.fixture(scope="session")
def project_example_runs(tmp_path_factory):
    """``{(program, backend): CompletedProcess}``: every TF1 program of the project's examples/ under real TF1 and
    under tfevents.core, once per session, one at a time (tests/_examples.py)."""
    return _slow("project_example_runs", tmp_path_factory)


@pytest.fixture(scope="session")
def peer_suite_reports(tmp_path_factory):
    """{suite: (its pytest output, {test id: outcome})}: tensorboardX's and torch's own writer tests run with our
    writer, one after the other (tests/_peer_suites.py)."""
    return _slow("peer_suite_reports", tmp_path_factory)


@pytest.fixture(scope="session")
def demo_cli_run(tmp_path_factory):
    """``tfevents demo --logdir LOGDIR -q`` run once, as a user runs it: ``(LOGDIR, LOGDIR/report.html)``, the
    interactive report it writes. Shared by the modules that read the demo's runs; do not write into it."""
    return _slow("demo_cli_run", tmp_path_factory)


@pytest.fixture(scope="session")
def run_list_logdir(tmp_path_factory):
    """10,000 tiny runs and their interactive report (tests/_run_list_logdir.py): ``(report path, run names sorted,
    {name: lr}, {name: loss min})``."""
    return _slow("run_list_logdir", tmp_path_factory)


@pytest.fixture(scope="session")
def fresh_imports(tmp_path_factory):
    """``{group: (its modules, failures, {module: our modules its import loaded})}``: every module of the package
    imported alone, each in a fresh interpreter (tests/_fresh_imports.py; e2e/test_imports.py checks them)."""
    return _slow("fresh_imports", tmp_path_factory)


@pytest.fixture
def logdir(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    return str(d)


@pytest.fixture(scope="session")
def s3_endpoint():
    """moto's S3 server on 127.0.0.1 (the real S3 protocol), shared by the tests that read object storage: its URL.
    Each test uses buckets of its own. The server runs in a process of its own (tests/_moto_server.py), so it does
    not share the test process's GIL with the clients it answers."""
    pytest.importorskip("s3fs")
    pytest.importorskip("moto.server")
    from _moto_server import MotoProcess
    server = MotoProcess().start()
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def ranks_job(tmp_path_factory):
    """One real 2-process torch.distributed job (gloo on 127.0.0.1, tests/_distributed.py, run in the session's
    background), shared by the tests that read its runs: ``<root>/default`` (rank 0 only), ``<root>/all/rank_<N>``,
    torch's reductions ``reduced.npy``."""
    pytest.importorskip("torch.distributed", reason="the ranks tests run a real torch.distributed job")
    return _slow("ranks_job", tmp_path_factory)
