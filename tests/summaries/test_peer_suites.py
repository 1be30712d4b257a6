"""tensorboardX 2.6.5's and torch's own SummaryWriter tests, run with their SummaryWriter replaced by ours.

The suites are vendored under ``tests/peer_suites/`` (sources, versions and licences in its README). Each runs in one
pytest subprocess, in a copy of its folder under this test's temporary directory (the tensorboardX tests write
``runs/`` into the working directory, torch's into ``tempfile``'s, which points there too), through the plugin
``tests/peer_suites/swap_writer.py`` (``tests/_peer_suites.py``; conftest runs them one after the other on the session's
background thread, beside the tests before these). Every test of the suites passes with the peer's
own writer (``TFEVENTS_PEER_SUITE_WRITER=peer`` runs them so) except torch's ``test_writer``, whose one-channel
``add_video`` fails inside moviepy with torch's writer and passes with ours. The tests left out are in ``_peer_suites.LEFT_OUT``,
each with why: they read the peer's private internals, or need what this machine lacks.
"""
from __future__ import annotations

import pytest

from _peer_suites import LEFT_OUT, SKIPPED

pytest.importorskip("torch")
pytest.importorskip("tensorboardX")
pytest.importorskip("expecttest")   # torch.testing._internal imports it
pytest.importorskip("moto")


@pytest.fixture(scope="module")
def suite_reports(peer_suite_reports):
    """{suite: (its pytest output, {test id: outcome})}: conftest's ``peer_suite_reports`` (run in the session's
    background, ``tests/_peer_suites.py``)."""
    return peer_suite_reports


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
