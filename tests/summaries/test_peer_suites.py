"""tensorboardX 2.6.5's and torch's own SummaryWriter tests, run with their SummaryWriter replaced by ours.

The suites are vendored under ``tests/peer_suites/`` (sources, versions and licences in its README). Each runs in one
pytest subprocess, in a copy of its folder under this test's temporary directory (the tensorboardX tests write
``runs/`` into the working directory, torch's into ``tempfile``'s, which points there too), through the plugin
``tests/peer_suites/swap_writer.py``; the two run at the same time. Every test of the suites passes with the peer's
own writer (``TFEVENTS_PEER_SUITE_WRITER=peer`` runs them so) except torch's ``test_writer``, whose one-channel
``add_video`` fails inside moviepy with torch's writer and passes with ours. The tests left out are below, each with
why: they read the peer's private internals, or need what this machine lacks.
"""
from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

from conftest import REPO

pytest.importorskip("torch")
pytest.importorskip("tensorboardX")
pytest.importorskip("expecttest")   # torch.testing._internal imports it
pytest.importorskip("moto")

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


@pytest.fixture(scope="module")
def suite_reports(tmp_path_factory):
    """{suite: (its pytest output, {test id: outcome})}: both suites run at once, one process each."""
    tmp = str(tmp_path_factory.mktemp("peer_suites"))
    procs = {"tensorboardX": _start("tensorboardX", "tests", tmp),
             "torch": _start("torch", "test_tensorboard.py", tmp)}
    reports = {}
    for name, proc in procs.items():
        output, _ = proc.communicate(timeout=600)
        reports[name] = (output, _outcomes(os.path.join(tmp, name + ".xml")))
    return reports


def _outcomes(junit_xml: str) -> dict:
    outcomes = {}
    for case in ElementTree.parse(junit_xml).getroot().iter("testcase"):
        path = case.get("classname").replace(".", "/")
        module, _, cls = path.rpartition("/")
        test_id = "%s.py::%s::%s" % (module, cls, case.get("name"))
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[test_id] = kinds[0] if kinds else "passed"
    return outcomes


def _is_left_out(test_id: str, name: str) -> bool:
    return any(test_id == left or (left.endswith("::") and test_id.startswith(left)) for left in LEFT_OUT[name])


@pytest.mark.parametrize("name", ["tensorboardX", "torch"])
def test_the_peers_own_tests_pass_with_our_writer(suite_reports, name):
    output, outcomes = suite_reports[name]
    assert outcomes, output[-3000:]
    not_passed = {test: outcome for test, outcome in outcomes.items()
                  if outcome != "passed" and test not in SKIPPED and not _is_left_out(test, name)}
    assert not_passed == {}, output[-6000:]
    assert not [test for test in outcomes if _is_left_out(test, name)]     # deselected, so never run


def test_the_suites_exercise_the_writer(suite_reports):
    """The writer's tests are among those run: a suite that collected nothing would pass the test above."""
    passed = {test for _, outcomes in suite_reports.values() for test, outcome in outcomes.items()
              if outcome == "passed"}
    for test in ("tests/test_writer.py::WriterTest::test_writer", "tests/test_writer.py::WriterTest::test_reuse_writer_after_closed",
                 "tests/test_writer.py::WriterTest::test_write_to_disk_false",
                 "tests/test_summary_writer.py::SummaryWriterTest::test_summary_writer_ctx",
                 "tests/test_embedding.py::EmbeddingTest::test_embedding_fail", "tests/test_hparams.py::HparamsTest::test_smoke",
                 "tests/test_openvino_graph.py::OPENVINOGraphTest::test_openvino_graph",
                 "tests/test_pr_curve.py::PRCurveTest::test_smoke",
                 "test_tensorboard.py::TestTensorBoardWriter::test_writer",
                 "test_tensorboard.py::TestTensorBoardSummaryWriter::test_summary_writer_ctx",
                 "test_tensorboard.py::TestTensorBoardEmbedding::test_embedding",
                 "test_tensorboard.py::TestTensorBoardPytorchGraph::test_pytorch_graph_dict_input",
                 "test_tensorboard.py::TestTensorBoardFigure::test_figure_list"):
        assert test in passed
