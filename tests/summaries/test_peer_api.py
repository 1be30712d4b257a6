"""The tensorboardX / torch API points of SummaryWriter, each against what the peer's own writer writes for the same
calls (README, "A drop-in for tensorboardX and torch"): the peers' FileWriter (``file_writer``,
``_get_file_writer()``), reopening after ``close()``, their keywords and attributes, ``use_metadata``, the list form
of ``add_images``, short PR-curve rows, ``add_openvino_graph``, and argument errors raised in the call."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

from _events import event_files, read_events
from tfevents.proto import event_pb2, summary_pb2
from tfevents.summaries import SummaryWriter
from tfevents.summaries.builders.common import ShapeError

torch = pytest.importorskip("torch")
torch_tb = pytest.importorskip("torch.utils.tensorboard")
tbx = pytest.importorskip("tensorboardX")

OPENVINO_XML = os.path.join(os.path.dirname(__file__), "..", "peer_suites", "tensorboardX", "examples",
                            "mobilenetv2.xml.gz")


def _values(logdir):
    """(step, tag, the Value without its tag-independent bytes) of every summary value, in file order, across the
    run's event files (a reopened writer has several)."""
    out = []
    for path in event_files(logdir):
        for event in read_events(path):
            for value in event.summary.value:
                out.append((event.step, value))
    return out


def _write_both(tmp_path, calls, peer=torch_tb.SummaryWriter, **ours):
    logdirs = str(tmp_path / "ours"), str(tmp_path / "peer")
    with SummaryWriter(logdirs[0], **ours) as w:
        calls(w)
    with peer(logdirs[1]) as w:
        calls(w)
    return [_values(logdir) for logdir in logdirs]


# --------------------------------------------------------------------- the peers' FileWriter, reopening

def test_file_writer_takes_the_peers_protos_as_lightning_and_ray_tune_write_them(tmp_path):
    from tensorboard.compat.proto.summary_pb2 import Summary as TensorBoardSummary
    from torch.utils.tensorboard.summary import hparams

    w = SummaryWriter(str(tmp_path))
    assert w.file_writer.get_logdir() == w.log_dir == w.logdir == str(tmp_path)
    experiment, start, end = hparams({"lr": 0.1}, {"hp_metric": -1})
    for summary in (experiment, start, end):               # Lightning's log_hyperparams
        w._get_file_writer().add_summary(summary, 3)
    w.file_writer.add_summary(TensorBoardSummary(value=[TensorBoardSummary.Value(tag="ray", simple_value=2.0)]), 4)
    w.file_writer.add_event(event_pb2.Event(step=9, wall_time=1.0, summary=summary_pb2.Summary(
        value=[summary_pb2.Summary.Value(tag="e", simple_value=1.0)])), walltime=5.0)
    w.close()
    events = read_events(str(tmp_path))
    assert [(e.step, e.summary.value[0].tag) for e in events] == [
        (3, "_hparams_/experiment"), (3, "_hparams_/session_start_info"), (3, "_hparams_/session_end_info"),
        (4, "ray"), (9, "e")]
    assert events[-1].wall_time == 5.0           # the peers set the wall time, keep the event's step when none given


def test_file_writer_is_none_when_closed_and_get_file_writer_reopens(tmp_path):
    w = SummaryWriter(str(tmp_path))
    w.add_scalar("a", 1.0, 1)
    w.close()
    assert w.file_writer is None                   # tensorboardX and torch
    w._get_file_writer().add_summary(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="b", simple_value=2.0)]),
                                     2)
    w.add_text("t", "after", 3)                    # a plain write reopens too; both go to the second file
    w.close()
    first, second = event_files(str(tmp_path))
    assert [v.tag for e in read_events(first) for v in e.summary.value] == ["a"]
    assert [v.tag for e in read_events(second) for v in e.summary.value] == ["b", "t/text_summary"]


def test_file_writer_add_graph_is_torchs(tmp_path):
    model = torch.nn.Linear(3, 2)
    from torch.utils.tensorboard._pytorch_graph import graph

    graph_def, step_stats = graph(model, torch.zeros(1, 3))
    logdirs = str(tmp_path / "ours"), str(tmp_path / "torch")
    with SummaryWriter(logdirs[0]) as w:
        w.file_writer.add_graph((graph_def, step_stats))
    with torch_tb.SummaryWriter(logdirs[1]) as w:
        w.file_writer.add_graph((graph_def, step_stats))
    ours, theirs = (read_events(logdir) for logdir in logdirs)
    strip = [(e.WhichOneof("what"), e.graph_def, e.tagged_run_metadata.SerializeToString()) for e in ours]
    assert strip == [(e.WhichOneof("what"), e.graph_def, e.tagged_run_metadata.SerializeToString()) for e in theirs]


# --------------------------------------------------------------------- keywords and attributes

def test_torch_and_tensorboardx_constructor_arguments(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(None, "_lr0.1")               # the peers' (log_dir, comment)
    assert w.log_dir.startswith("runs" + os.sep) and w.log_dir.endswith("_lr0.1")
    w.close()
    with SummaryWriter(log_dir=str(tmp_path / "torch"), purge_step=5, max_queue=3, flush_secs=1,
                       filename_suffix=".x") as w:
        assert w.get_logdir() == str(tmp_path / "torch")
        assert (w.purge_step, w.max_queue, w.flush_secs, w.filename_suffix) == (5, 3, 1, ".x")
    with SummaryWriter(logdir=str(tmp_path / "tbx"), comet_config={"disabled": True}) as w:
        assert w.logdir == str(tmp_path / "tbx")
    with pytest.raises(ValueError, match="Comet"):
        SummaryWriter(str(tmp_path / "comet"), comet_config={"disabled": False})


def test_write_to_disk_false_writes_nothing(tmp_path):
    with SummaryWriter(str(tmp_path / "nothing"), write_to_disk=False) as w:
        w.add_scalar("a", 1.0, 0)
        w.add_scalars("b", {"x": 1.0}, 0)
        w.add_hparams({"lr": 0.1}, {"m": 1.0})
        w._get_file_writer().add_summary(summary_pb2.Summary(), 0)     # as Lightning's log_hyperparams does
        assert w.log_dir == w.logdir == w._get_file_writer().get_logdir() == str(tmp_path / "nothing")
        w.flush()
    assert not os.path.exists(tmp_path / "nothing")


def test_add_scalar_new_style_and_double_precision_are_torchs(tmp_path):
    def calls(w):
        w.add_scalar("plain", 0.5, 1)
        w.add_scalar("new", 0.1, 2, new_style=True)
        w.add_scalar("double", 0.1, 3, new_style=True, double_precision=True)
        w.add_scalar("double ignored", 0.1, 4, double_precision=True)
    ours, theirs = _write_both(tmp_path, calls)
    assert [(s, v.SerializeToString()) for s, v in ours] == [(s, v.SerializeToString()) for s, v in theirs]
    assert ours[2][1].tensor.double_val == [0.1]


def test_add_scalar_display_name_and_description_are_tensorboardxs(tmp_path):
    def calls(w):
        w.add_scalar("a", 1.0, 1, display_name="Title", summary_description="what it is")
    ours, theirs = _write_both(tmp_path, calls, peer=tbx.SummaryWriter)
    assert ours[0][1].metadata.display_name == theirs[0][1].metadata.display_name == "Title"
    assert ours[0][1].metadata.summary_description == theirs[0][1].metadata.summary_description == "what it is"
    logdir = str(tmp_path / "positional")
    with SummaryWriter(logdir) as w:
        w.add_scalar("b", 2.0, 1, None, "Title", "tooltip")      # tensorboardX's positional order
    (_, value), = _values(logdir)
    assert (value.metadata.display_name, value.metadata.summary_description, value.simple_value) == (
        "Title", "tooltip", 2.0)


def test_add_hparams_name_and_tensorboardx_order(tmp_path):
    logdir = str(tmp_path)
    with SummaryWriter(logdir) as w:
        w.add_hparams({"lr": 0.1}, {"acc": 0.5}, name="trial1")
        w.add_hparams({"lr": 0.2}, {"acc": 0.6}, "trial2", 7)        # tensorboardX: (hparams, metrics, name, step)
        with pytest.raises(ValueError, match="two runs"):
            w.add_hparams({"lr": 0.3}, {"acc": 0.7}, run_name="a", name="b")
    assert sorted(os.listdir(logdir))[-2:] == ["trial1", "trial2"]
    steps = [(s, v.tag) for s, v in _values(os.path.join(logdir, "trial2")) if v.tag == "acc"]
    assert steps == [(7, "acc")]


def test_use_metadata_fills_step_and_walltime_as_tensorboardx(tmp_path):
    logdir = str(tmp_path)
    with SummaryWriter(logdir) as w:
        with w.use_metadata(global_step=17, walltime=13.0):
            w.add_scalar("defaults", 0.1)
            w.add_scalar("step given", 0.2, global_step=7)
            w.add_scalar("walltime given", 0.3, walltime=18.0)
            w.add_histogram("h", np.arange(4.0))
            w.add_text("t", "x")
            with pytest.raises(AssertionError, match="already set"):
                with w.use_metadata(global_step=1):
                    pass
        w.add_scalar("outside", 0.4)
    got = {e.summary.value[0].tag: (e.step, e.wall_time) for e in read_events(logdir)}
    assert got["defaults"] == (17, 13.0) and got["step given"] == (7, 13.0) and got["walltime given"] == (17, 18.0)
    assert got["h"] == (17, 13.0) and got["t/text_summary"] == (17, 13.0)
    assert got["outside"][0] == 0 and abs(got["outside"][1] - time.time()) < 60
    with pytest.raises(AssertionError, match="At least one"):
        with SummaryWriter(str(tmp_path / "x")).use_metadata():
            pass


def test_add_image_with_boxes_in_tensorboardxs_argument_order(tmp_path):
    image, boxes = np.zeros((8, 8, 3)), np.array([[1, 1, 5, 5]])

    def calls(w):
        w.add_image_with_boxes("b", image, boxes, 0, None, "HWC", ["cat"])    # tensorboardX: dataformats, labels
    ours, theirs = _write_both(tmp_path, calls, peer=tbx.SummaryWriter)
    assert ours[0][1].image.encoded_image_string == theirs[0][1].image.encoded_image_string


def test_add_images_of_a_list_is_the_peers_batch(tmp_path):
    images = [np.full((3, 4, 5), i / 5, np.float32) for i in range(5)]

    def calls(w):
        w.add_images("chw", images, 0, dataformats="CHW")
        w.add_images("hwc", [i.transpose(1, 2, 0) for i in images], 0, dataformats="HWC")
    ours, theirs = _write_both(tmp_path, calls, peer=tbx.SummaryWriter)
    assert [v.image.encoded_image_string for _, v in ours] == [v.image.encoded_image_string for _, v in theirs]
    logdir = str(tmp_path / "default layout")        # NCHW: each CHW (tensorboardX writes nothing, torch raises)
    with SummaryWriter(logdir) as w:
        w.add_images("nchw", [torch.from_numpy(i) for i in images], 0)
    assert _values(logdir)[0][1].image.encoded_image_string == ours[0][1].image.encoded_image_string


def test_add_pr_curve_raw_takes_rows_shorter_than_num_thresholds(tmp_path):
    rows = ([75, 64, 21, 5, 0], [150, 105, 18, 0, 0], [0, 45, 132, 150, 150], [0, 11, 54, 70, 75],
            [0.33, 0.37, 0.53, 1.0, 0.0], [1.0, 0.85, 0.28, 0.06, 0.0])
    ours, theirs = _write_both(tmp_path, lambda w: w.add_pr_curve_raw("pr", *rows, 1))
    ours_rows = np.frombuffer(ours[0][1].tensor.tensor_content, np.float32).reshape(6, 5)
    assert np.array_equal(ours_rows, np.array(theirs[0][1].tensor.float_val, np.float32).reshape(6, 5))
    assert ours_rows.tolist() == np.array(rows, np.float32).tolist()   # the [6, 5] float32 rows torch writes


def test_add_openvino_graph_is_tensorboardxs(tmp_path):
    import gzip

    xml = str(tmp_path / "model.xml")
    with gzip.open(OPENVINO_XML) as packed, open(xml, "wb") as unpacked:
        unpacked.write(packed.read())
    logdirs = str(tmp_path / "ours"), str(tmp_path / "tbx")
    with SummaryWriter(logdirs[0]) as w:
        w.add_openvino_graph(xml)
    with tbx.SummaryWriter(logdirs[1]) as w:
        w.add_openvino_graph(xml)
    (ours,), (theirs,) = (read_events(logdir) for logdir in logdirs)
    assert ours.graph_def == theirs.graph_def and len(ours.graph_def) > 1000


# --------------------------------------------------------------------- argument errors in the call

ERRORS_IN_THE_CALL = {
    "num_thresholds too large": (lambda w: w.add_pr_curve("p", np.array([0, 1]), np.array([0.1, 0.9]), 0,
                                                          num_thresholds=20001), ValueError, "num_thresholds"),
    "labels and predictions shapes": (lambda w: w.add_pr_curve("p", np.array([0, 1]), np.array([0.1]), 0),
                                      ValueError, "same shape"),
    "image rank vs dataformats": (lambda w: w.add_image("i", np.zeros((4, 4)), 0, dataformats="CHW"),
                                  AssertionError, "dimensions"),
    "image two channels": (lambda w: w.add_image("i", np.zeros((2, 4, 4)), 0), ValueError, "channels"),
    "image int64 dtype": (lambda w: w.add_image("i", np.zeros((3, 4, 4), np.int64), 0), TypeError, "uint8"),
    "images without N": (lambda w: w.add_images("i", np.zeros((3, 4, 4)), 0, dataformats="CHW"), ValueError, "N axis"),
    "video rank": (lambda w: w.add_video("v", np.zeros((2, 3, 4, 4)), 0), AssertionError, "5 dimensions"),
    "video fps": (lambda w: w.add_video("v", np.zeros((1, 2, 3, 4, 4)), 0, fps=0), ValueError, "fps"),
    "audio dtype": (lambda w: w.add_audio("a", np.zeros(4, np.int16), 0), TypeError, "floats"),
    "histogram empty": (lambda w: w.add_histogram("h", np.array([]), 0), ValueError, "empty"),
    "histogram bins": (lambda w: w.add_histogram("h", np.arange(3.0), 0, bins=[1.0]), ValueError, "bins"),
    "boxes shape": (lambda w: w.add_image_with_boxes("b", np.zeros((3, 4, 4)), np.zeros((2, 3)), 0), ValueError,
                    r"\[N, 4\]"),
    "mesh shape": (lambda w: w.add_mesh("m", np.zeros((4, 3))), ValueError, "batch, count, 3"),
    "sprite not square": (lambda w: w.add_embedding(np.zeros((2, 3)), label_img=np.zeros((2, 3, 4, 5))),
                          AssertionError, "square"),
}


@pytest.mark.parametrize("case", sorted(ERRORS_IN_THE_CALL))
def test_argument_errors_are_raised_in_the_call_and_the_writer_goes_on(tmp_path, case):
    call, error, match = ERRORS_IN_THE_CALL[case]
    logdir = str(tmp_path)
    w = SummaryWriter(logdir)
    with pytest.raises(error, match=match) as info:
        call(w)
    assert isinstance(info.value, (ValueError, TypeError))      # ours: a ShapeError is a ValueError too
    w.add_scalar("after", 1.0, 1)                                # nothing left to raise later
    w.close()
    assert [e.summary.value[0].tag for e in read_events(logdir)] == ["after"]


def test_a_layout_error_is_the_peers_assertion_error_and_a_value_error():
    assert issubclass(ShapeError, AssertionError) and issubclass(ShapeError, ValueError)
    with pytest.raises(AssertionError):
        torch_tb.summary.image("i", np.zeros((4, 4)), dataformats="CHW")     # torch asserts the same thing
