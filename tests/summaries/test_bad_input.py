"""Bad input to every public SummaryWriter method and summary builder: a clear error naming the
problem, or a documented behaviour -- and never a file left half-written by the failed call.

Covered: wrong types and dtypes, wrong shapes, empty arrays, NaN/Inf (scalars keep them; histograms,
images, audio and PR curves refuse them), huge images, non-string and empty tags, tags with
characters TensorFlow does not allow in summary names (cleaned as tensorboardX / TF's summary ops
clean them, with a warning -- compared with tensorboardX's own ``_clean_tag``), negative and
out-of-range steps, bad wall times, sub-run names that would leave the logdir.

Each case is one parametrized test; ``INPUTS_TRIED`` counts them (about 150 in a default run).
"""
import math
import os
import warnings

import numpy as np
import pytest

from _events import read_events
from tfevents.proto import event_pb2, summary_pb2
from tfevents.summaries import SummaryWriter, builders, record

INPUTS_TRIED = []


@pytest.fixture(scope="module", autouse=True)
def _count_inputs():
    yield
    print("\nbad input: %d inputs tried" % len(INPUTS_TRIED))   # the figure for the report (pytest -s)


@pytest.fixture
def writer(logdir):
    w = SummaryWriter(logdir, max_queue=1000)
    yield w
    w.close()


# --------------------------------------------------------------------- errors: (call, exception, message)
R = np.random.default_rng(0)
ERRORS = {
    # add_scalar
    "scalar str value": (lambda w: w.add_scalar("a", "1.0", 0), TypeError, "value must be a number"),
    "scalar None value": (lambda w: w.add_scalar("a", None, 0), TypeError, "value must be a number"),
    "scalar two values": (lambda w: w.add_scalar("a", np.array([1.0, 2.0]), 0), TypeError, r"shape \(2,\)"),
    "scalar empty array": (lambda w: w.add_scalar("a", np.array([]), 0), TypeError, r"shape \(0,\)"),
    "scalar complex": (lambda w: w.add_scalar("a", 1 + 2j, 0), TypeError, "real number"),
    "scalar dict": (lambda w: w.add_scalar("a", {"x": 1}, 0), TypeError, "real number"),
    "scalar int tag": (lambda w: w.add_scalar(5, 1.0, 0), TypeError, "tag must be a str, got int"),
    "scalar None tag": (lambda w: w.add_scalar(None, 1.0, 0), TypeError, "tag must be a str, got NoneType"),
    "scalar bytes tag": (lambda w: w.add_scalar(b"a", 1.0, 0), TypeError, "tag must be a str, got bytes"),
    "scalar list tag": (lambda w: w.add_scalar(["a"], 1.0, 0), TypeError, "tag must be a str, got list"),
    "scalar empty tag": (lambda w: w.add_scalar("", 1.0, 0), ValueError, "non-empty"),
    "step above int64": (lambda w: w.add_scalar("a", 1.0, 2**63), ValueError, "int64 range"),
    "step below int64": (lambda w: w.add_scalar("a", 1.0, -2**63 - 1), ValueError, "int64 range"),
    "step fraction": (lambda w: w.add_scalar("a", 1.0, 1.5), ValueError, "whole number"),
    "step nan": (lambda w: w.add_scalar("a", 1.0, float("nan")), ValueError, "finite"),
    "step inf": (lambda w: w.add_scalar("a", 1.0, float("inf")), ValueError, "finite"),
    "step str": (lambda w: w.add_scalar("a", 1.0, "3"), TypeError, "global_step must be an integer"),
    "step list": (lambda w: w.add_scalar("a", 1.0, [3]), TypeError, "global_step must be an integer"),
    "walltime str": (lambda w: w.add_scalar("a", 1.0, 0, walltime="now"), TypeError, "walltime"),
    "walltime list": (lambda w: w.add_scalar("a", 1.0, 0, walltime=[1.0]), TypeError, "walltime"),
    "histogram walltime str": (lambda w: w.add_histogram("h", [1.0], 0, walltime="x"), TypeError, "walltime"),
    # add_scalars
    "scalars not a dict": (lambda w: w.add_scalars("m", [1.0], 0), TypeError, "must be a dict"),
    "scalars str value": (lambda w: w.add_scalars("m", {"a": "x"}, 0), TypeError, "value must be a number"),
    "scalars key climbs out": (lambda w: w.add_scalars("m", {"/../../evil": 1.0}, 0), ValueError, "outside the logdir"),
    "scalars key climbs to the parent": (lambda w: w.add_scalars("m", {"/../..": 1.0}, 0), ValueError, "outside"),
    # add_histogram / histogram_raw
    "histogram nan": (lambda w: w.add_histogram("h", [1.0, math.nan], 0), ValueError, "1 non-finite"),
    "histogram inf": (lambda w: w.add_histogram("h", [1.0, math.inf, -math.inf], 0), ValueError, "2 non-finite"),
    "histogram empty": (lambda w: w.add_histogram("h", [], 0), ValueError, "empty"),
    "histogram strings": (lambda w: w.add_histogram("h", ["a"], 0), TypeError, "real numbers"),
    "histogram complex": (lambda w: w.add_histogram("h", np.array([1j]), 0), TypeError, "real numbers"),
    "histogram objects": (lambda w: w.add_histogram("h", np.array([None, 1], dtype=object), 0), TypeError, "dtype"),
    "histogram ragged": (lambda w: w.add_histogram("h", [[1, 2], [3]], 0), ValueError, "converted"),
    "histogram bins 0": (lambda w: w.add_histogram("h", [1.0], 0, bins=0), ValueError, "bins must be >= 1"),
    "histogram bins -3": (lambda w: w.add_histogram("h", [1.0], 0, bins=-3), ValueError, "bins must be >= 1"),
    "histogram bins name": (lambda w: w.add_histogram("h", [1.0], 0, bins="xyz"), ValueError, "xyz"),
    "histogram bins decreasing": (lambda w: w.add_histogram("h", [1.0], 0, bins=[3, 2, 1]), ValueError, "increasing"),
    "histogram bins nan": (lambda w: w.add_histogram("h", [1.0], 0, bins=[0, math.nan, 2]), ValueError, "bins"),
    "histogram outside edges": (lambda w: w.add_histogram("h", [5.0], 0, bins=[0, 1]), ValueError, "no value"),
    "histogram max_bins 0": (lambda w: w.add_histogram("h", [1.0], 0, max_bins=0), ValueError, "max_bins"),
    "histogram_raw lengths": (lambda w: w.add_histogram_raw("h", 0, 1, 2, 1, 1, [1, 2], [1]), ValueError,
                              "equal length"),
    "histogram_raw negative count": (lambda w: w.add_histogram_raw("h", 0, 1, 2, 1, 1, [1, 2], [1, -1]),
                                     ValueError, ">= 0"),
    "histogram_raw min > max": (lambda w: w.add_histogram_raw("h", 2, 1, 2, 1, 1, [1, 2], [1, 1]), ValueError,
                                "min"),
    "histogram_raw limits down": (lambda w: w.add_histogram_raw("h", 0, 1, 2, 1, 1, [2, 1], [1, 1]), ValueError,
                                  "increasing"),
    "histogram_raw 2-D": (lambda w: w.add_histogram_raw("h", 0, 1, 2, 1, 1, [[1, 2]], [[1, 1]]), ValueError, "1-D"),
    # images
    "image 5 channels": (lambda w: w.add_image("i", np.zeros((5, 4, 4)), 0), ValueError, "1, 3 or 4 channels"),
    "image empty": (lambda w: w.add_image("i", np.zeros((3, 0, 4)), 0), ValueError, "empty"),
    "image nan": (lambda w: w.add_image("i", np.full((3, 4, 4), np.nan), 0), ValueError, "non-finite"),
    "image string": (lambda w: w.add_image("i", "abc", 0), ValueError, "dimensions"),
    "image 1-D": (lambda w: w.add_image("i", np.zeros(10), 0), ValueError, "1 dimensions"),
    "image bad dataformats": (lambda w: w.add_image("i", np.zeros((3, 4, 4)), 0, dataformats="XYZ"), ValueError,
                              "dataformats"),
    "image dataformats int": (lambda w: w.add_image("i", np.zeros((3, 4, 4)), 0, dataformats=3), TypeError,
                              "dataformats"),
    "image int64": (lambda w: w.add_image("i", np.zeros((3, 4, 4), np.int64), 0), TypeError, "uint8"),
    "image bool": (lambda w: w.add_image("i", np.zeros((3, 4, 4), bool), 0), TypeError, "uint8"),
    "images 3-D": (lambda w: w.add_images("i", np.zeros((3, 4, 4)), 0), ValueError, "dimensions"),
    "images no images": (lambda w: w.add_images("i", np.zeros((0, 3, 4, 4)), 0), ValueError, "empty"),
    "figure not a figure": (lambda w: w.add_figure("f", 5, 0), TypeError, "Figure"),
    # audio
    "audio transposed": (lambda w: w.add_audio("s", np.zeros((2, 1000)), 0), ValueError, "channels"),
    "audio empty": (lambda w: w.add_audio("s", np.zeros(0), 0), ValueError, "empty"),
    "audio nan": (lambda w: w.add_audio("s", np.array([np.nan, 0.1]), 0), ValueError, "non-finite"),
    "audio ints": (lambda w: w.add_audio("s", np.zeros(4, np.int16), 0), TypeError, "floats"),
    "audio rate 0": (lambda w: w.add_audio("s", np.zeros(10), 0, sample_rate=0), ValueError, "sample_rate"),
    "audio rate -1": (lambda w: w.add_audio("s", np.zeros(10), 0, sample_rate=-1), ValueError, "sample_rate"),
    "audio rank 3": (lambda w: w.add_audio("s", np.zeros((2, 2, 2)), 0), ValueError, ""),
    # text
    "text None": (lambda w: w.add_text("t", None, 0), TypeError, "text must be a str"),
    "text int": (lambda w: w.add_text("t", 5, 0), TypeError, "text must be a str"),
    "text lone surrogate": (lambda w: w.add_text("t", "a\ud800b", 0), UnicodeError, "surrogate"),
    # PR curves
    "pr shapes": (lambda w: w.add_pr_curve("p", [1, 0], [0.5], 0), ValueError, "same shape"),
    "pr out of [0, 1]": (lambda w: w.add_pr_curve("p", [1, 0], [1.5, -0.5], 0), ValueError, r"\[0, 1\]"),
    "pr nan": (lambda w: w.add_pr_curve("p", [1, 0], [np.nan, 0.5], 0), ValueError, "non-finite"),
    "pr 1 threshold": (lambda w: w.add_pr_curve("p", [1, 0], [0.5, 0.5], 0, num_thresholds=1), ValueError,
                       "num_thresholds"),
    "pr empty": (lambda w: w.add_pr_curve("p", [], [], 0), ValueError, "empty"),
    "pr_raw lengths": (lambda w: w.add_pr_curve_raw("p", [1, 1], [1], [1, 1], [1, 1], [1, 1], [1, 1], 0,
                                                    num_thresholds=2), ValueError, ""),
    # hparams, custom scalars
    "hparams list value": (lambda w: w.add_hparams({"a": [1, 2]}, {"m": 1.0}), TypeError, "hparam_dict"),
    "hparams None": (lambda w: w.add_hparams(None, {"m": 1.0}), TypeError, "hparam_dict must be a dict"),
    "hparams metric str": (lambda w: w.add_hparams({"a": 1}, {"m": "x"}), TypeError, "value must be a number"),
    "hparams int key": (lambda w: w.add_hparams({1: 1}, {"m": 1.0}), TypeError, "must be a str"),
    "hparams run_name climbs out": (lambda w: w.add_hparams({"a": 1}, {"m": 1.0}, run_name="../../evil"), ValueError,
                                    "outside the logdir"),
    "hparams run_name absolute": (lambda w: w.add_hparams({"a": 1}, {"m": 1.0},
                                                          run_name=os.path.abspath(w.get_logdir()) + "_evil"),
                                  ValueError, "outside the logdir"),
    "custom scalars bad chart": (lambda w: w.add_custom_scalars({"c": {"x": ["Bogus", ["a"]]}}), ValueError,
                                 "Multiline"),
    "custom scalars str": (lambda w: w.add_custom_scalars("x"), TypeError, "layout"),
    # protos
    "graph str": (lambda w: w.add_graph("x"), TypeError, "GraphDef"),
    "graph None": (lambda w: w.add_graph(None), ValueError, "graph"),
    "graph torch-like module": (lambda w: w.add_graph(type("Net", (), {"forward": lambda s: 0})()), TypeError,
                                "torch"),
    "summary str": (lambda w: w.add_summary("x"), TypeError, "Summary proto"),
    "summary wrong proto": (lambda w: w.add_summary(summary_pb2.Summary.Value(tag="a")), TypeError, "Summary"),
    "event int": (lambda w: w.add_event(5), TypeError, "Event proto"),
    "event wrong proto": (lambda w: w.add_event(summary_pb2.Summary()), TypeError, "Event"),
    "session_log int": (lambda w: w.add_session_log(5), TypeError, "SessionLog"),
    "run_metadata int": (lambda w: w.add_run_metadata(5, "t"), TypeError, "RunMetadata"),
    "run_metadata tag twice": (lambda w: [w.add_run_metadata(b"", "t"), w.add_run_metadata(b"", "t")], ValueError,
                               "already used"),
    "meta_graph int": (lambda w: w.add_meta_graph(5), TypeError, "MetaGraphDef"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_bad_input_raises_a_clear_error_and_writes_nothing(writer, logdir, name):
    call, error, message = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=message):
            call(writer)
            writer.flush()      # an encoding error (NaN pixels, ...) is found on the writer's thread: raised here
    writer.flush()
    events = read_events(logdir)
    if name != "run_metadata tag twice":          # (its first call was fine)
        assert events == [], "%s: a failed call wrote %d event(s)" % (name, len(events))
    assert os.listdir(os.path.dirname(logdir)) == [os.path.basename(logdir)]   # nothing written beside it
    assert os.listdir(logdir) == [os.path.basename(writer.file_writer.get_filename())]   # nor in a sub-run
    INPUTS_TRIED.append(name)


BUILDER_ERRORS = {
    "scalar str": (lambda: builders.scalar("a", "x"), TypeError),
    "scalar two": (lambda: builders.scalar("a", [1, 2]), ValueError),
    "scalar empty": (lambda: builders.scalar("a", []), ValueError),
    "scalar object": (lambda: builders.scalar("a", object()), TypeError),
    "scalar display_name int": (lambda: builders.scalar("a", 1.0, display_name=3), TypeError),
    "scalar tag None": (lambda: builders.scalar(None, 1.0), TypeError),
    "histogram tag int": (lambda: builders.histogram(1, [1.0]), TypeError),
    "histogram_raw nan limits": (lambda: builders.histogram_raw("h", 0, 1, 1, 1, 1, [np.nan, 1], [0, 1]),
                                 ValueError),
    "image tag empty": (lambda: builders.image("", np.zeros((3, 2, 2))), ValueError),
    "audio tag bytes": (lambda: builders.audio(b"a", np.zeros(3)), TypeError),
    "text tag list": (lambda: builders.text(["a"], "x"), TypeError),
    "pr_curve labels 2-D mismatch": (lambda: builders.pr_curve("p", np.zeros((2, 2)), np.zeros(4)), ValueError),
    "hparams empty key": (lambda: builders.hparams({"": 1}, {"m": 1.0}), ValueError),
    "custom_scalars margin shape": (lambda: builders.custom_scalars({"c": {"x": ["Margin", ["a", "b"]]}}), ValueError),
}


@pytest.mark.parametrize("name", sorted(BUILDER_ERRORS))
def test_builders_raise_typed_errors(name):
    call, error = BUILDER_ERRORS[name]
    with pytest.raises(error) as info:
        call()
    assert str(info.value)          # a message, not a bare exception
    INPUTS_TRIED.append(name)


# --------------------------------------------------------------------- documented behaviours

def test_scalars_keep_nan_and_inf_and_saturate_out_of_float32_range(writer, logdir):
    values = [math.nan, math.inf, -math.inf, 1e39, -1e39, 5e-324, -0.0]
    for step, v in enumerate(values):
        writer.add_scalar("x", v, step)
    writer.flush()
    stored = [e.summary.value[0].simple_value for e in read_events(logdir)]
    assert math.isnan(stored[0]) and stored[1:5] == [math.inf, -math.inf, math.inf, -math.inf]
    assert stored[5] == 0.0 and math.copysign(1, stored[6]) == -1
    INPUTS_TRIED.extend(values)


@pytest.mark.parametrize("step", [-1, -2**63, 2**63 - 1, 0, None, np.int64(-5), np.uint32(7), 3.0, True])
def test_negative_huge_and_unusual_steps_are_written_as_int64(writer, logdir, step):
    writer.add_scalar("x", 1.0, step)
    writer.flush()
    (event,) = read_events(logdir)
    assert event.step == (0 if step is None else int(step))
    INPUTS_TRIED.append(step)


def test_nan_walltime_is_kept_and_histogram_statistics_may_overflow(writer, logdir):
    writer.add_scalar("x", 1.0, 0, walltime=math.nan)          # stored as given; the reader shows NaN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        writer.add_histogram("h", [1e308, -1e308], 1)           # finite values whose sum of squares overflows
    writer.flush()
    scalar, histo = read_events(logdir)
    assert math.isnan(scalar.wall_time)
    h = histo.summary.value[0].histo
    assert (h.min, h.max, h.num, h.sum_squares) == (-1e308, 1e308, 2, math.inf) and sum(h.bucket) == 2
    INPUTS_TRIED.extend(["nan walltime", "overflowing histogram"])


def test_audio_outside_unit_range_is_clipped_and_image_floats_saturate(writer, logdir):
    writer.add_audio("s", np.array([5.0, -3.0, 0.5]), 0, sample_rate=8000)
    writer.add_image("i", np.array([[[-1.0, 2.0]]]), 0)        # CHW 1x1x2 floats outside [0, 1]
    writer.flush()
    audio, image = read_events(logdir)
    import io
    import wave
    with wave.open(io.BytesIO(audio.summary.value[0].audio.encoded_audio_string)) as wav:
        pcm = np.frombuffer(wav.readframes(3), "<i2")
    assert pcm.tolist() == [32767, -32768, 16384]
    from PIL import Image
    pixels = np.asarray(Image.open(io.BytesIO(image.summary.value[0].image.encoded_image_string)))
    assert pixels.reshape(-1).tolist() == [0, 255]
    INPUTS_TRIED.extend(["loud audio", "image out of [0,1]"])


def test_huge_image_is_encoded_whole(writer, logdir):
    """A large image (3 x 2048 x 2048 random floats, ~12 MB of PNG) is written whole: TensorBoard
    shows it as it is (no downscaling)."""
    img = np.random.default_rng(0).random((3, 2048, 2048), dtype=np.float32)
    writer.add_image("big", img, 0)
    writer.flush()
    (event,) = read_events(logdir)
    im = event.summary.value[0].image
    assert (im.height, im.width, im.colorspace) == (2048, 2048, 3) and len(im.encoded_image_string) > 10 << 20
    INPUTS_TRIED.append("3x2048x2048 image")


def test_image_of_zero_size_in_one_axis_and_single_pixel(writer, logdir):
    writer.add_image("one", np.full((1, 1, 1), 0.5), 0)
    writer.flush()
    (event,) = read_events(logdir)
    assert (event.summary.value[0].image.height, event.summary.value[0].image.width) == (1, 1)
    with pytest.raises(ValueError, match="empty"):
        writer.add_image("none", np.zeros((1, 1, 0)), 0)
        writer.flush()
    INPUTS_TRIED.extend(["1x1 image", "1x0 image"])


# --------------------------------------------------------------------- tags

TAGS = ["loss", "loss (train)", "a b/c:d", "/leading/slash", "//x", "///", "ünï/損失", "emoji 🚀", "semi;colon",
        "tab\tnew\nline", "dots.and-dashes_ok", "quote'\"", "<script>", "../../evil", "a\x00b"]


def _log_each_kind(w, tag):
    w.add_scalar(tag, 1.0, 0)
    w.add_histogram(tag, np.array([1.0]), 0)
    w.add_image(tag, np.zeros((1, 2, 2)), 0)
    w.add_text(tag, "x", 0)
    w.add_audio(tag, np.zeros(4), 0)
    w.add_pr_curve(tag, np.array([1, 0]), np.array([0.5, 0.5]), 0, num_thresholds=3)


@pytest.mark.parametrize("tag", TAGS)
def test_tags_are_kept_as_given_as_torch_keeps_them(tmp_path, tag):
    """The writer's rule (README, "Tags"): every kind keeps its tag as given, as torch.utils.tensorboard does;
    tensorboardX cleans the tags of scalars, histograms, images (and videos) and keeps the others."""
    torch_tb = pytest.importorskip("torch.utils.tensorboard")
    tbx = pytest.importorskip("tensorboardX")
    logdirs = {name: str(tmp_path / name) for name in ("ours", "torch", "tensorboardX")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with SummaryWriter(logdirs["ours"]) as w:
            _log_each_kind(w, tag)
    assert not [w for w in caught if issubclass(w.category, UserWarning)]
    for name, peer in (("torch", torch_tb.SummaryWriter), ("tensorboardX", tbx.SummaryWriter)):
        with peer(logdirs[name]) as w:
            _log_each_kind(w, tag)
    tags = {name: [e.summary.value[0].tag for e in read_events(logdir) if e.summary.value]
            for name, logdir in logdirs.items()}
    assert tags["ours"] == tags["torch"] == [tag, tag, tag, tag + "/text_summary", tag, tag]
    cleaned = tbx.summary._clean_tag(tag)
    assert tags["tensorboardX"] == [cleaned, cleaned, cleaned, tag + "/text_summary", tag, tag]
    INPUTS_TRIED.append(tag)


def test_add_scalars_keeps_the_main_tag_and_names_the_sub_run_as_torch(writer, logdir):
    writer.add_scalars("loss (train)/x", {"k": 1.0}, 0)
    writer.flush()
    sub_runs = [d for d in os.listdir(logdir) if os.path.isdir(os.path.join(logdir, d))]
    assert sub_runs == ["loss (train)_x_k"]
    assert [e.summary.value[0].tag for e in read_events(os.path.join(logdir, sub_runs[0]))] == ["loss (train)/x"]


def test_builders_clean_tags_and_matches_tensorboardx_protos():
    tbx_summary = pytest.importorskip("tensorboardX.summary")
    with pytest.warns(UserWarning, match="illegal"):
        ours = builders.scalar("my loss", 0.5)
    assert ours.SerializeToString() == tbx_summary.scalar("my loss", 0.5).SerializeToString()
    with pytest.warns(UserWarning, match="illegal"):
        ours = builders.histogram("w (layer 1)", np.arange(10.0), bins=10)
    theirs = tbx_summary.histogram("w (layer 1)", np.arange(10.0), bins=10)
    assert ours.value[0].tag == theirs.value[0].tag == "w__layer_1_"
    INPUTS_TRIED.extend(["builder 'my loss'", "builder 'w (layer 1)'"])
