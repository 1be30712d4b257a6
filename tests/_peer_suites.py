"""Running tensorboardX's and torch's own SummaryWriter tests with their writer replaced by ours (the suites vendored
under ``tests/peer_suites/``; tests/summaries/test_peer_suites.py reads the outcomes). One pytest subprocess per
suite, in a copy of its folder, through the plugin ``tests/peer_suites/swap_writer.py``."""
from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

from conftest import REPO

SUITES = os.path.join(REPO, "tests", "peer_suites")

LEFT_OUT = {
    "tensorboardX": {
        "tests/test_writer.py::WriterTest::test_flush":
            "reads tensorboardX's private file_writer.event_writer._ev_writer._file_name (and sleeps 10 s)",
        "tests/test_writer.py::WriterTest::test_flush_after_close":
            "reads tensorboardX's private file_writer.event_writer._ev_writer._file_name (and sleeps 10 s)",
        "tests/test_writer.py::WriterTest::test_flush_timer_is_long_so_data_is_not_there":
            "reads tensorboardX's private file_writer.event_writer._ev_writer._file_name (and sleeps 10 s)",
        "tests/test_writer.py::WriterTest::test_writer_with_default_metadata":
            "patches tensorboardX's private event_file_writer.EventFileWriter.add_event to see the events; "
            "use_metadata on ours: test_peer_api.py",
        "tests/test_embedding.py::EmbeddingTest::test_embedding_s3_mock":
            "moto's in-process mock_aws serves botocore's client; our s3:// logdirs go through s3fs (aiobotocore), "
            "which it does not serve (ours on S3: test_writer_object_store.py, against moto's server)",
    },
    "torch": {
        "test_tensorboard.py::TestTensorBoardSummary::":     # the class (--deselect takes node id prefixes)
            "tests torch.utils.tensorboard.summary's functions, not the writer (its expect files are not vendored)",
    },
}
# tests of the suites that do not run here, and why
SKIPPED = {"test_tensorboard.py::TestTensorBoardPytorchGraph::test_torchvision_smoke": "torchvision not installed"}


def _copy_suite(name: str, where: str) -> str:
    copy = os.path.join(where, name)
    shutil.copytree(os.path.join(SUITES, name), copy, ignore=shutil.ignore_patterns("__pycache__"))
    for directory, _, files in os.walk(copy):
        for file in files:
            if file.endswith(".gz"):
                path = os.path.join(directory, file)
                with gzip.open(path) as packed, open(path[:-3], "wb") as unpacked:
                    shutil.copyfileobj(packed, unpacked)
    return copy


def _start(name: str, target: str, tmp: str) -> subprocess.Popen:
    cwd = _copy_suite(name, tmp)
    scratch = os.path.join(tmp, name + "_tmp")
    os.makedirs(scratch)
    deselect = [arg for test in LEFT_OUT[name] for arg in ("--deselect", test)]
    env = dict(os.environ, PYTHONPATH=SUITES, TMPDIR=scratch, TFEVENTS_PEER_SUITE_WRITER="tfevents",
               TF_CPP_MIN_LOG_LEVEL="3", PYTORCH_PRINT_REPRO_ON_FAILURE="0", MPLBACKEND="Agg")
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "swap_writer", "-p", "no:cacheprovider",
         "--junitxml", os.path.join(tmp, name + ".xml"), target, *deselect],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def run_suites(tmp: str, at_once: bool = True) -> dict:
    """{suite: (its pytest output, {test id: outcome})}: both suites at once (one process each), or one after the
    other (the session's background thread: one core)."""
    targets = {"tensorboardX": "tests", "torch": "test_tensorboard.py"}
    reports, procs = {}, {}
    for name, target in targets.items():
        procs[name] = _start(name, target, tmp)
        if not at_once:
            reports[name] = _finish(procs.pop(name), name, tmp)
    for name, proc in procs.items():
        reports[name] = _finish(proc, name, tmp)
    return reports


def _finish(proc: subprocess.Popen, name: str, tmp: str) -> tuple:
    output, _ = proc.communicate(timeout=600)
    return output, _outcomes(os.path.join(tmp, name + ".xml"))


def _outcomes(junit_xml: str) -> dict:
    outcomes = {}
    for case in ElementTree.parse(junit_xml).getroot().iter("testcase"):
        path = case.get("classname").replace(".", "/")
        module, _, cls = path.rpartition("/")
        test_id = "%s.py::%s::%s" % (module, cls, case.get("name"))
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[test_id] = kinds[0] if kinds else "passed"
    return outcomes
