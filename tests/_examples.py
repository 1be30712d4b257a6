"""The TF1 example programs of ../shared/examples, run unchanged against tfevents.core: all of them at once, in
subprocesses, once per test session (the ``example_runs`` fixture of conftest.py), for test_examples (they run)
and test_demo_e2e (TensorBoard serves the runs they log)."""
from __future__ import annotations

import glob
import os
import subprocess
import sys

from _tensorboard import stop_process_group
from conftest import REPO as REPO_ROOT, SHARED

# the project's own TF1 programs (examples/), each run under both backends by conftest's project_example_runs
PROJECT_PROGRAMS = ("deep_mnist", "layers_cnn", "ptb_word_lm", "sequence_classifier")
BACKENDS = ("tensorflow", "core")
SHARED_EXAMPLES = os.path.join(SHARED, "examples")
PROGRAMS = sorted(glob.glob(os.path.join(SHARED_EXAMPLES, "*.py")))
# Why the shared programs' tests skip in a user's clone: only the project's CI lays ../shared beside the checkout.
SHARED_ABSENT = None if os.path.isdir(SHARED_EXAMPLES) else (
    "%s is absent: the shared TF1 example programs sit beside the checkout only in the project's CI; a user's "
    "clone has no ../shared" % os.path.normpath(SHARED_EXAMPLES))


def program_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


class ExampleRuns:
    """Starts every program at once with ``EXAMPLE_OUT=root/out`` (each logs into ``root/out/<name>.<random>/``,
    its output goes to ``root/<name>.stdout`` and ``.stderr``); :meth:`wait` collects exit codes and output."""

    def __init__(self, root: str, programs=PROGRAMS, timeout: float = 300):
        self.root, self.out_dir, self.timeout, self._results = root, os.path.join(root, "out"), timeout, None
        os.makedirs(self.out_dir, exist_ok=True)
        # side by side, so one BLAS thread each (more only contend for the cores)
        env = dict(os.environ, EXAMPLE_OUT=self.out_dir, OPENBLAS_NUM_THREADS="1")
        env.pop("EXAMPLE_BACKEND", None)
        self._procs = {}
        for path in programs:
            name = program_name(path)
            with open(self._log(name, "stdout"), "w") as out, open(self._log(name, "stderr"), "w") as err:
                self._procs[name] = subprocess.Popen([sys.executable, path], env=env, cwd=self.out_dir, stdout=out,
                                                     stderr=err, text=True, start_new_session=True)

    def _log(self, name: str, stream: str) -> str:
        return os.path.join(self.root, "%s.%s" % (name, stream))

    def wait(self) -> dict[str, subprocess.CompletedProcess]:
        """{name: CompletedProcess with returncode, stdout, stderr}, once every program has finished."""
        if self._results is None:
            results = {}
            try:
                for name, proc in self._procs.items():
                    proc.wait(timeout=self.timeout)
                    with open(self._log(name, "stdout")) as out, open(self._log(name, "stderr")) as err:
                        results[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), err.read())
            finally:
                self.stop()
            self._results = results
        return self._results

    def stop(self) -> None:
        for proc in self._procs.values():
            stop_process_group(proc)

    def event_dir(self, name: str) -> str:
        """The one directory holding the event file the program ``name`` wrote."""
        (events,) = glob.glob(os.path.join(self.out_dir, name + ".*", "**", "events.out.tfevents.*"), recursive=True)
        return os.path.dirname(events)


def run_example_programs(out_dir: str, programs, backends=("tensorflow", "core"), extra_env=None,
                         drop_env=(), at_once: int = 2) -> dict:
    """``{(program, backend): CompletedProcess}`` of examples/<program>.py under each backend, ``at_once`` at a time,
    each on one BLAS thread (TF on one intra/inter-op thread: the same sums in every run, whatever the machine's
    load)."""
    results, pending = {}, [(p, b) for p in programs for b in backends]
    while pending:
        batch, pending = pending[:at_once], pending[at_once:]
        procs = {}
        for program, backend in batch:
            env = dict(os.environ, EXAMPLE_OUT=str(out_dir), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                       **(extra_env or {}))
            for var in ("EXAMPLE_BACKEND",) + tuple(drop_env):
                env.pop(var, None)
            if backend == "tensorflow":
                env.update(EXAMPLE_BACKEND="tensorflow", TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1")
            procs[(program, backend)] = subprocess.Popen(
                [sys.executable, os.path.join(REPO_ROOT, "examples", program + ".py")], env=env, cwd=str(out_dir),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for key, proc in procs.items():
            stdout, stderr = proc.communicate(timeout=600)
            results[key] = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    return results


def example_graphs(out_dir: str, programs=PROGRAMS, backends=("tensorflow", "core")) -> dict:
    """``{(program path, backend): serialized GraphDef}``: the graph each program trains under each backend
    (tests/_example_graph.py, one subprocess at a time, one BLAS / TF thread each)."""
    graphs = {}
    for path in programs:
        for backend in backends:
            out = os.path.join(out_dir, "%s.%s.pb" % (program_name(path), backend))
            env = dict(os.environ, EXAMPLE_OUT=out_dir, OPENBLAS_NUM_THREADS="1", TF_NUM_INTRAOP_THREADS="1")
            proc = subprocess.run([sys.executable, os.path.join(REPO_ROOT, "tests", "_example_graph.py"), path, out,
                                   backend], env=env, cwd=out_dir, capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
            with open(out, "rb") as f:
                graphs[(path, backend)] = f.read()
    return graphs
