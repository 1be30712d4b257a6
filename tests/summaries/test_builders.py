"""The pure summary builders against the real tools: tensorboardX, torch.utils.tensorboard, TensorBoard's own
``pb`` builders and TensorFlow's summary ops. Ours are serialized and parsed back with TensorBoard's protos,
then compared field by field (PNGs and WAVs decoded and compared sample by sample)."""
import io
import subprocess
import sys
import tempfile
import wave

import numpy as np
import pytest

from tensorboard.compat.proto import summary_pb2 as tb_summary_pb2
from tensorboard.compat.proto import tensor_pb2 as tb_tensor_pb2
from tensorboard.util import tensor_util

from tfevents.summaries import builders as b

tbx_summary = pytest.importorskip("tensorboardX.summary")


def as_tb(summary):
    """Our Summary re-read as TensorBoard's message (wire compatibility is part of every comparison)."""
    return tb_summary_pb2.Summary.FromString(summary.SerializeToString())


@pytest.fixture(scope="module")
def tbx_default_bins():
    from tensorboardX import SummaryWriter
    with tempfile.TemporaryDirectory() as d:
        writer = SummaryWriter(d)
        bins = writer.default_bins
        writer.close()
    return bins


@pytest.fixture(scope="module")
def torch_summary():
    return pytest.importorskip("torch.utils.tensorboard.summary")


def decode_png(encoded, mode="RGBA"):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(encoded)).convert(mode))


def decode_wav(encoded):
    with wave.open(io.BytesIO(encoded), "rb") as w:
        frames = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        return w.getnchannels(), w.getsampwidth(), w.getframerate(), frames.reshape(-1, w.getnchannels())


def run_tf1(tf1, build):
    """Run a TF1 summary op built by ``build()`` in graph mode; return the parsed Summary."""
    with tf1.Graph().as_default():
        op = build()
        with tf1.Session() as sess:
            return tb_summary_pb2.Summary.FromString(sess.run(op))


# ------------------------------------------------------------------------------------------- public names

def test_every_builder_is_importable_from_builders_and_the_package():
    import tfevents.summaries as pkg
    for name in ("scalar", "histogram", "histogram_raw", "image", "images", "figure", "audio", "text",
                 "pr_curve", "pr_curve_raw", "hparams", "custom_scalars", "custom_scalars_multilinechart",
                 "custom_scalars_marginchart", "tensor", "mesh", "video", "image_with_boxes"):
        assert callable(getattr(b, name))
    for name in pkg._BUILDERS:
        assert getattr(pkg, name) is getattr(b, name)


def test_importing_builders_loads_neither_pillow_nor_matplotlib():
    code = ("import sys, tfevents.summaries.builders; "
            "bad = [m for m in ('PIL', 'matplotlib') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------------------------------- scalar

@pytest.mark.parametrize("display_name,description", [(None, None), ("Loss", "lower is better")])
def test_scalar_equals_tensorboardx(display_name, description):
    ours = as_tb(b.scalar("train/loss", 0.1, display_name=display_name, description=description))
    theirs = tbx_summary.scalar("train/loss", 0.1, display_name=display_name or "",
                                summary_description=description or "")
    assert ours == tb_summary_pb2.Summary.FromString(theirs.SerializeToString())
    assert ours.value[0].WhichOneof("value") == "simple_value"
    assert ours.value[0].simple_value == np.float32(0.1)


def test_scalar_migrates_to_what_tensorboards_scalar_pb_writes(tf):
    from tensorboard import data_compat
    from tensorboard.summary.v1 import scalar_pb
    migrated = data_compat.migrate_value(as_tb(b.scalar("acc", 0.75, display_name="Accuracy")).value[0])
    expected = as_tb(scalar_pb("acc", 0.75, display_name="Accuracy")).value[0]
    assert migrated.metadata == expected.metadata
    assert tensor_util.make_ndarray(migrated.tensor) == tensor_util.make_ndarray(expected.tensor)


def test_scalar_accepts_numpy_torch_and_one_element_arrays():
    import torch
    for value in (np.float64(2.5), np.array(2.5), np.array([2.5]), torch.tensor(2.5), torch.tensor([[2.5]]),
                  torch.tensor(2.5, requires_grad=True) * 1, 2.5):
        assert b.scalar("x", value).value[0].simple_value == 2.5
    assert b.scalar("x", True).value[0].simple_value == 1.0
    assert b.scalar("x", np.int64(7)).value[0].simple_value == 7.0
    assert np.isnan(b.scalar("x", float("nan")).value[0].simple_value)  # NaN losses are logged as they are


@pytest.mark.parametrize("tag,value,error,match", [
    (3, 1.0, TypeError, "tag must be a str"),
    (b"loss", 1.0, TypeError, "tag must be a str"),
    ("", 1.0, ValueError, "non-empty"),
    ("x", "1.0", TypeError, "value must be a number"),
    ("x", [1.0, 2.0], ValueError, r"exactly one number, got shape \(2,\)"),
    ("x", np.zeros((0,)), ValueError, "exactly one number"),
    ("x", 1 + 2j, TypeError, "real number"),
    ("x", None, TypeError, "real number"),
])
def test_scalar_rejects_bad_input(tag, value, error, match):
    with pytest.raises(error, match=match):
        b.scalar(tag, value)


# -------------------------------------------------------------------------------------------- histogram

HISTOGRAM_INPUTS = {
    "normal": np.random.default_rng(0).normal(size=2000),
    "tiny": np.random.default_rng(1).normal(size=50) * 1e-13,
    "zeros": np.zeros(7),
    "constant": np.full(5, 3.25),
    "ints": np.random.default_rng(2).integers(-50, 50, size=(10, 10)),
    "float32": np.random.default_rng(3).random(300).astype(np.float32) * 100,
    "single": np.array([-0.5]),
}


@pytest.mark.parametrize("name", sorted(HISTOGRAM_INPUTS))
@pytest.mark.parametrize("bins", ["tensorflow", 1, 30, [-100.0, -1.0, 0.0, 0.5, 1.0, 4.0, 100.0]])
def test_histogram_equals_tensorboardx(name, bins, tbx_default_bins):
    values = HISTOGRAM_INPUTS[name]
    their_bins = tbx_default_bins if bins == "tensorflow" else bins
    ours = as_tb(b.histogram("w", values, bins=bins))
    theirs = tb_summary_pb2.Summary.FromString(tbx_summary.histogram("w", values, their_bins).SerializeToString())
    assert ours == theirs


def test_histogram_torch_tensor_equals_tensorboardx(tbx_default_bins):
    import torch
    values = torch.randn(40, 5, generator=torch.Generator().manual_seed(0))
    assert as_tb(b.histogram("w", values)) == as_tb(tbx_summary.histogram("w", values, tbx_default_bins))


@pytest.mark.parametrize("max_bins", [10, 5])  # 30 bins: both divide evenly, so tensorboardX groups alike
def test_histogram_max_bins_equals_tensorboardx_when_it_divides(max_bins):
    values = HISTOGRAM_INPUTS["normal"]
    ours = as_tb(b.histogram("w", values, bins=30, max_bins=max_bins))
    theirs = tbx_summary.histogram("w", values, 30, max_bins=max_bins)
    assert ours == tb_summary_pb2.Summary.FromString(theirs.SerializeToString())


def test_histogram_max_bins_caps_the_bucket_count():
    values = HISTOGRAM_INPUTS["normal"]
    full = b.histogram("w", values, bins=100).value[0].histo
    capped = b.histogram("w", values, bins=100, max_bins=7).value[0].histo
    assert len(capped.bucket) <= 7 + 1  # plus the empty leading bucket
    assert sum(capped.bucket) == sum(full.bucket) == values.size
    assert capped.bucket_limit[-1] == full.bucket_limit[-1]


def test_histogram_tensorflow_buckets_equal_tf1_histogram_op(tf1):
    """TF's histogram.cc keeps one bucket per run of empty ones; the non-empty buckets and their right
    limits are the same as ours, and so are the statistics."""
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.normal(size=500) * 3, rng.normal(size=20) * 1e-9, [0.0, 0.0, 1e25, -4e22]])
    theirs = run_tf1(tf1, lambda: tf1.summary.histogram("w", tf1.constant(values))).value[0].histo
    ours = as_tb(b.histogram("w", values)).value[0].histo

    def nonempty(h):
        return [(lim, c) for lim, c in zip(h.bucket_limit, h.bucket) if c > 0]

    assert nonempty(ours) == nonempty(theirs)
    assert (ours.min, ours.max, ours.num) == (theirs.min, theirs.max, theirs.num)
    assert ours.sum == pytest.approx(theirs.sum, rel=1e-12, abs=1e-6)
    assert ours.sum_squares == pytest.approx(theirs.sum_squares, rel=1e-12)
    assert ours.bucket_limit[-1] == sys.float_info.max  # values beyond 1e20 land in TF's DBL_MAX bucket


def test_histogram_migrates_for_tensorboards_histogram_plugin():
    from tensorboard import data_compat
    values = HISTOGRAM_INPUTS["normal"]
    migrated = data_compat.migrate_value(as_tb(b.histogram("w", values)).value[0])
    buckets = tensor_util.make_ndarray(migrated.tensor)
    assert migrated.metadata.plugin_data.plugin_name == "histograms"
    assert buckets[:, 2].sum() == values.size
    assert buckets[0, 0] == np.float32(values.min()) and buckets[-1, 1] == np.float32(values.max())


@pytest.mark.parametrize("values,kwargs,error,match", [
    (np.array([1.0, np.nan, 2.0]), {}, ValueError, r"1 non-finite value\(s\)"),
    (np.array([1.0, np.inf]), {"bins": 10}, ValueError, "non-finite"),
    (np.array([]), {}, ValueError, "empty"),
    (np.zeros((3, 0)), {}, ValueError, "empty"),
    (["a", "b"], {}, TypeError, "real numbers"),
    (np.array([1 + 1j]), {}, TypeError, "real numbers"),
    (np.ones(3), {"bins": 0}, ValueError, "bins must be >= 1"),
    (np.ones(3), {"bins": [1.0]}, ValueError, "at least 2 edges"),
    (np.ones(3), {"bins": [2.0, 1.0]}, ValueError, "strictly increasing"),
    (np.ones(3), {"bins": [[0.0, 1.0], [2.0, 3.0]]}, ValueError, "1-D"),
    (np.ones(3), {"bins": "nonsense"}, ValueError, "nonsense"),
    (np.ones(3), {"bins": [5.0, 6.0]}, ValueError, "no value falls inside"),
    (np.ones(3), {"max_bins": 0}, ValueError, "max_bins must be >= 1"),
    (np.ones(3), {"max_bins": 2.5}, TypeError, "max_bins must be an int"),
])
def test_histogram_rejects_bad_input(values, kwargs, error, match):
    with pytest.raises(error, match=match):
        b.histogram("w", values, **kwargs)


def test_histogram_rejects_non_string_tag():
    with pytest.raises(TypeError, match="tag"):
        b.histogram(None, [1.0])


def test_histogram_raw_equals_tensorboardx():
    args = dict(min=-1.0, max=2.0, num=6, sum=3.0, sum_squares=9.0,
                bucket_limits=[-1.0, 0.0, 1.0, 2.0], bucket_counts=[0, 1, 3, 2])
    ours = as_tb(b.histogram_raw("h", **args))
    theirs = tbx_summary.histogram_raw("h", **args)
    assert ours == tb_summary_pb2.Summary.FromString(theirs.SerializeToString())


@pytest.mark.parametrize("change,match", [
    ({"bucket_counts": [1, 2]}, "equal length"),
    ({"bucket_limits": [], "bucket_counts": []}, "non-empty"),
    ({"bucket_limits": [0.0, 0.0, 1.0]}, "strictly increasing"),
    ({"bucket_counts": [1, -1, 1]}, ">= 0"),
    ({"min": 5.0}, "min"),
    ({"num": [1, 2]}, "num must be a single number"),
])
def test_histogram_raw_rejects_bad_input(change, match):
    args = dict(min=0.0, max=2.0, num=3, sum=3.0, sum_squares=5.0, bucket_limits=[0.0, 1.0, 2.0],
                bucket_counts=[0, 1, 2])
    args.update(change)
    with pytest.raises(ValueError, match=match):
        b.histogram_raw("h", **args)


# ------------------------------------------------------------------------------------------------ image

IMAGE_CASES = [
    ("CHW", (3, 9, 7), np.float32), ("HWC", (9, 7, 3), np.uint8), ("HWC", (9, 7, 4), np.uint8),
    ("HW", (9, 7), np.float64), ("CHW", (1, 9, 7), np.float32), ("WHC", (7, 9, 3), np.float32),
    ("NCHW", (11, 3, 4, 5), np.float32), ("NHWC", (3, 4, 5, 1), np.uint8), ("NCHW", (2, 4, 3, 3), np.uint8),
]
TORCH_REFUSES = {("NCHW", (2, 4, 3, 3))}  # torch's make_grid takes no RGBA batch; tensorboardX's does


def random_image(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.uint8:
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    return rng.random(shape).astype(dtype)


@pytest.mark.parametrize("fmt,shape,dtype", IMAGE_CASES)
def test_image_pixels_equal_torch_and_tensorboardx(fmt, shape, dtype, torch_summary):
    array = random_image(shape, dtype)
    ours = as_tb(b.image("img", array, dataformats=fmt)).value[0]
    assert ours.tag == "img"
    peers = [tbx_summary.image("img", array, dataformats=fmt).value[0]]
    if (fmt, shape) not in TORCH_REFUSES:
        peers.append(torch_summary.image("img", array, dataformats=fmt).value[0])
    for theirs in peers:
        assert (ours.image.height, ours.image.width) == (theirs.image.height, theirs.image.width)
        # they widen gray to RGB; we keep a gray PNG (TF's convention): the RGBA pixels agree
        np.testing.assert_array_equal(decode_png(ours.image.encoded_image_string),
                                      decode_png(theirs.image.encoded_image_string))
    channels = 1 if "C" not in fmt else shape[fmt.index("C")]
    assert ours.image.colorspace == channels


def test_image_saturates_out_of_range_floats_like_torch(torch_summary):
    array = np.linspace(-0.5, 1.5, 3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    ours = b.image("img", array).value[0].image
    theirs = torch_summary.image("img", array, dataformats="CHW").value[0].image
    np.testing.assert_array_equal(decode_png(ours.encoded_image_string), decode_png(theirs.encoded_image_string))


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_image_uint8_matches_tf1_image_summary(tf1, channels):
    array = random_image((6, 5, channels), np.uint8, seed=channels)
    theirs = run_tf1(tf1, lambda: tf1.summary.image("img", tf1.constant(array[None]))).value[0].image
    ours = as_tb(b.image("img", array, dataformats="HWC")).value[0].image
    assert (ours.height, ours.width, ours.colorspace) == (theirs.height, theirs.width, theirs.colorspace)
    mode = {1: "L", 3: "RGB", 4: "RGBA"}[channels]
    np.testing.assert_array_equal(decode_png(ours.encoded_image_string, mode),
                                  decode_png(theirs.encoded_image_string, mode))


def test_image_accepts_torch_tensors(torch_summary):
    import torch
    tensor = torch.rand(3, 6, 4, generator=torch.Generator().manual_seed(1))
    ours = b.image("img", tensor).value[0].image
    theirs = torch_summary.image("img", tensor, dataformats="CHW").value[0].image
    np.testing.assert_array_equal(decode_png(ours.encoded_image_string), decode_png(theirs.encoded_image_string))


@pytest.mark.parametrize("array,fmt,error,match", [
    (np.zeros((3, 4, 5), np.int64), "CHW", TypeError, "uint8.*or float"),
    (np.zeros((3, 4, 5), bool), "CHW", TypeError, "dtype bool"),
    (np.zeros((4, 5), np.float32), "CHW", ValueError, "2 dimensions but dataformats 'CHW' has 3"),
    (np.zeros((2, 4, 5), np.float32), "CHW", ValueError, r"1, 3 or 4 channels \(gray, RGB, RGBA\), got 2"),
    (np.zeros((3, 0, 5), np.float32), "CHW", ValueError, "empty"),
    (np.full((3, 4, 5), np.nan, np.float32), "CHW", ValueError, "non-finite"),
    (np.zeros((3, 4, 5), np.float32), "CHX", ValueError, "not a layout"),
    (np.zeros((3, 4, 5), np.float32), "CCW", ValueError, "not a layout"),
    (np.zeros((3, 4, 5), np.float32), 3, TypeError, "dataformats must be a str"),
    (np.zeros((0, 3, 4, 5), np.float32), "NCHW", ValueError, "empty"),
])
def test_image_rejects_bad_input(array, fmt, error, match):
    with pytest.raises(error, match=match):
        b.image("img", array, dataformats=fmt)


# ----------------------------------------------------------------------------------------------- images

def test_images_grid_equals_torch_add_images(torch_summary):
    import torch
    from torch.utils.tensorboard._utils import convert_to_HWC
    batch = random_image((10, 3, 6, 5), np.float32, seed=4)
    ours = b.images("batch", batch).value[0].image
    theirs = torch_summary.image("batch", batch, dataformats="NCHW").value[0].image
    assert (ours.height, ours.width) == (12, 40) == (theirs.height, theirs.width)
    np.testing.assert_array_equal(decode_png(ours.encoded_image_string), decode_png(theirs.encoded_image_string))
    gray = random_image((3, 6, 5, 1), np.uint8, seed=5)
    ours = b.images("gray", torch.from_numpy(gray), dataformats="NHWC").value[0].image
    expected = convert_to_HWC(gray, "NHWC")  # torch's grid (gray widened to RGB)
    np.testing.assert_array_equal(decode_png(ours.encoded_image_string, "RGB"), expected)


def test_images_requires_a_batch_axis():
    with pytest.raises(ValueError, match="N axis"):
        b.images("batch", np.zeros((3, 4, 5), np.float32), dataformats="CHW")


# ----------------------------------------------------------------------------------------------- figure

def make_figure(color, size=(2, 1.5)):
    from matplotlib.figure import Figure
    fig = Figure(figsize=size, dpi=50)
    ax = fig.add_subplot()
    ax.plot([0, 1, 2], [1, 0, 2], color=color)
    return fig


def test_figure_equals_tensorboardx_figure_to_image():
    from tensorboardX.utils import figure_to_image
    ours = as_tb(b.figure("fig", make_figure("r"), close=False)).value[0].image
    theirs = tbx_summary.image("fig", figure_to_image(make_figure("r"), close=False)).value[0].image
    assert (ours.height, ours.width, ours.colorspace) == (75, 100, 3) == \
        (theirs.height, theirs.width, theirs.colorspace)
    np.testing.assert_array_equal(decode_png(ours.encoded_image_string), decode_png(theirs.encoded_image_string))
    pixels = decode_png(ours.encoded_image_string, "RGB")
    assert (pixels != 255).any()  # something was drawn


def test_figure_list_is_a_grid_like_tensorboardx_add_figure():
    from tensorboardX.utils import figure_to_image
    ours = b.figure("figs", [make_figure("r"), make_figure("b")], close=False).value[0].image
    theirs = tbx_summary.image("figs", figure_to_image([make_figure("r"), make_figure("b")], close=False),
                               dataformats="NCHW").value[0].image
    assert (ours.height, ours.width) == (75, 200)
    np.testing.assert_array_equal(decode_png(ours.encoded_image_string), decode_png(theirs.encoded_image_string))


def test_figure_closes_pyplot_figures():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(1, 1), dpi=20)
    b.figure("fig", fig, close=False)
    assert plt.fignum_exists(fig.number)
    b.figure("fig", fig)
    assert not plt.fignum_exists(fig.number)


@pytest.mark.parametrize("figure,error,match", [
    (np.zeros((3, 4, 4)), TypeError, "matplotlib.figure.Figure"),
    ([], ValueError, "empty"),
])
def test_figure_rejects_bad_input(figure, error, match):
    with pytest.raises(error, match=match):
        b.figure("fig", figure)


def test_figure_list_of_different_sizes_is_refused():
    with pytest.raises(ValueError, match="same size"):
        b.figure("fig", [make_figure("r"), make_figure("r", size=(1, 1))], close=False)


# ------------------------------------------------------------------------------------------------ audio

def tf_wav(tf, samples, rate):
    return tf.audio.encode_wav(tf.constant(samples, tf.float32), rate).numpy()


@pytest.mark.parametrize("shape", [(400,), (300, 2), (50, 1)])
def test_audio_pcm_equals_tf_encode_wav(tf, shape):
    rng = np.random.default_rng(len(shape))
    samples = (rng.random(shape) * 2.4 - 1.2).astype(np.float32)  # some beyond [-1, 1]: clipped
    samples.reshape(-1)[:6] = [1.0, -1.0, 0.5 / 32768, -0.5 / 32768, 2.5 / 32768, -1.5 / 32768]  # rounding ties
    ours = as_tb(b.audio("snd", samples, sample_rate=16000)).value[0].audio
    frames = samples.shape[0]
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    assert (ours.sample_rate, ours.num_channels, ours.length_frames, ours.content_type) == \
        (16000.0, channels, frames, "audio/wav")
    expected = decode_wav(tf_wav(tf, samples.reshape(frames, channels), 16000))
    got = decode_wav(ours.encoded_audio_string)
    assert got[:3] == expected[:3] == (channels, 2, 16000)
    np.testing.assert_array_equal(got[3], expected[3])


def test_audio_mono_agrees_with_torch_within_two_steps(torch_summary):
    import torch
    samples = torch.linspace(-1, 1, 1000).reshape(1, -1)  # torch's documented (1, L) layout
    ours = as_tb(b.audio("snd", samples, sample_rate=8000)).value[0].audio
    theirs = torch_summary.audio("snd", samples, sample_rate=8000).value[0].audio
    assert (ours.sample_rate, ours.num_channels, ours.length_frames, ours.content_type) == \
        (theirs.sample_rate, theirs.num_channels, theirs.length_frames, theirs.content_type)
    got, expected = decode_wav(ours.encoded_audio_string), decode_wav(theirs.encoded_audio_string)
    assert got[:3] == expected[:3]
    # torch truncates x * 32767; TF (and we) round x * 32768: |32768 x - 32767 x| + rounding <= 2
    assert np.abs(got[3].astype(int) - expected[3].astype(int)).max() <= 2


def test_audio_is_read_back_by_tf_decode_wav(tf):
    samples = np.sin(np.linspace(0, 20, 256)).astype(np.float32)[:, None] * [0.5, -0.25]
    encoded = b.audio("snd", samples.astype(np.float32), sample_rate=22050).value[0].audio.encoded_audio_string
    decoded, rate = tf.audio.decode_wav(encoded)
    assert int(rate) == 22050
    np.testing.assert_allclose(decoded.numpy(), samples, atol=1 / 32768)


@pytest.mark.parametrize("samples,rate,error,match", [
    (np.zeros(10, np.int16), 44100, TypeError, "floats"),
    (np.zeros((4, 5, 2), np.float32), 44100, ValueError, "shape"),
    (np.zeros((0,), np.float32), 44100, ValueError, "empty"),
    (np.array([0.0, np.nan], np.float32), 44100, ValueError, "non-finite"),
    (np.zeros((2, 1000), np.float32), 44100, ValueError, "samples.T"),
    (np.zeros(10, np.float32), 0, ValueError, "positive"),
    (np.zeros(10, np.float32), 44100.5, ValueError, "whole number"),
    (np.zeros(10, np.float32), "44100", TypeError, "sample_rate must be a number"),
])
def test_audio_rejects_bad_input(samples, rate, error, match):
    with pytest.raises(error, match=match):
        b.audio("snd", samples, sample_rate=rate)


# ------------------------------------------------------------------------------------------------- text

@pytest.mark.parametrize("data", ["**hello** world", ["a", "b", "ü"], np.array([["x", "y"], ["z", "w"]])])
def test_text_equals_tensorboards_text_pb(tf, data):
    from tensorboard.plugins.text import summary as text_summary
    ours = as_tb(b.text("notes", data)).value[0]
    theirs = tb_summary_pb2.Summary.FromString(text_summary.pb("notes", data).SerializeToString()).value[0]
    assert ours.tag == theirs.tag == "notes/text_summary"
    assert ours.metadata.plugin_data == theirs.metadata.plugin_data
    assert ours.tensor == theirs.tensor


def test_text_strings_equal_tensorboardx():
    ours = as_tb(b.text("notes", "line *one*")).value[0]
    theirs = tbx_summary.text("notes", "line *one*").value[0]
    assert ours.tag == theirs.tag
    assert ours.metadata.SerializeToString() == theirs.metadata.SerializeToString()
    assert list(ours.tensor.string_val) == list(theirs.tensor.string_val) == [b"line *one*"]


@pytest.mark.parametrize("data,error,match", [
    (42, TypeError, "str"),
    ([1, 2], TypeError, "element of type int"),
    ([], ValueError, "empty"),
    (np.zeros(3), TypeError, "dtype float64"),
])
def test_text_rejects_bad_input(data, error, match):
    with pytest.raises(error, match=match):
        b.text("notes", data)


# -------------------------------------------------------------------------------------------- pr curves

def pr_inputs(n=200, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.random(n) < 0.4
    predictions = np.clip(labels * 0.3 + rng.random(n) * 0.7, 0, 1).astype(np.float32)
    predictions[:3] = [0.0, 1.0, 0.5]
    return labels, predictions


@pytest.mark.parametrize("num_thresholds,weighted", [(127, False), (11, True), (201, False)])
def test_pr_curve_equals_tensorboards_pb(tf, num_thresholds, weighted):
    from tensorboard.plugins.pr_curve import summary as pr_summary
    labels, predictions = pr_inputs()
    weights = np.linspace(0.5, 2.0, labels.size) if weighted else None
    ours = as_tb(b.pr_curve("pr", labels, predictions, num_thresholds, weights=weights)).value[0]
    theirs = pr_summary.pb("pr", labels, predictions, num_thresholds=num_thresholds, weights=weights).value[0]
    theirs = tb_summary_pb2.Summary.Value.FromString(theirs.SerializeToString())
    assert ours.tag == "pr" and theirs.tag == "pr/pr_curves"  # we keep the tag, as tensorboardX/torch do
    assert ours.metadata.plugin_data == theirs.metadata.plugin_data
    assert ours.tensor == theirs.tensor  # dtype, shape [6, n] and the float32 bytes


def test_pr_curve_equals_tensorboardx():
    labels, predictions = pr_inputs(seed=3)
    ours = as_tb(b.pr_curve("pr", labels, predictions, 50)).value[0]
    theirs = tbx_summary.pr_curve("pr", labels, predictions, 50).value[0]
    assert ours.tag == theirs.tag
    assert ours.metadata.SerializeToString() == theirs.metadata.SerializeToString()
    np.testing.assert_array_equal(tensor_util.make_ndarray(ours.tensor), tensor_util.make_ndarray(theirs.tensor))


def test_pr_curve_raw_equals_tensorboards_raw_data_pb(tf):
    from tensorboard.plugins.pr_curve import summary as pr_summary
    rows = dict(true_positive_counts=[75, 64, 21, 5, 0], false_positive_counts=[150, 105, 18, 0, 0],
                true_negative_counts=[0, 45, 132, 150, 150], false_negative_counts=[0, 11, 54, 70, 75],
                precision=[0.3333, 0.3786, 0.5384, 1.0, 0.0], recall=[1.0, 0.8533, 0.28, 0.0666, 0.0])
    ours = as_tb(b.pr_curve_raw("pr", num_thresholds=5, **rows)).value[0]
    theirs = pr_summary.raw_data_pb("pr", num_thresholds=5, **{k: np.array(v) for k, v in rows.items()}).value[0]
    theirs = tb_summary_pb2.Summary.Value.FromString(theirs.SerializeToString())
    assert ours.metadata.plugin_data == theirs.metadata.plugin_data
    assert ours.tensor == theirs.tensor
    assert b.pr_curve_raw("pr", *rows.values()).SerializeToString() == \
        b.pr_curve_raw("pr", *rows.values(), 5).SerializeToString()


@pytest.mark.parametrize("labels,predictions,kwargs,error,match", [
    ([1, 0], [0.5], {}, ValueError, "same shape"),
    ([1, 0], [0.5, 1.5], {}, ValueError, r"in \[0, 1\]"),
    ([1, 0], [0.5, np.nan], {}, ValueError, "non-finite"),
    ([1, 2], [0.5, 0.2], {}, ValueError, "0/1"),
    ([], [], {}, ValueError, "empty"),
    ([1, 0], [0.5, 0.2], {"num_thresholds": 1}, ValueError, "num_thresholds must be >= 2"),
    ([1, 0], [0.5, 0.2], {"weights": [1.0, 2.0, 3.0]}, ValueError, "broadcast"),
    ([1, 0], [0.5, 0.2], {"weights": -1.0}, ValueError, "weights must be >= 0"),
    (["a", "b"], [0.5, 0.2], {}, TypeError, "labels must hold real numbers"),
])
def test_pr_curve_rejects_bad_input(labels, predictions, kwargs, error, match):
    with pytest.raises(error, match=match):
        b.pr_curve("pr", labels, predictions, **kwargs)


def test_pr_curve_raw_rejects_mismatched_rows():
    with pytest.raises(ValueError, match="precision has 2 entries, expected num_thresholds=3"):
        b.pr_curve_raw("pr", [1, 2, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3], [1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="recall must be 1-D"):
        b.pr_curve_raw("pr", [1, 2], [1, 2], [1, 2], [1, 2], [1, 2], [[1, 2]])


# ---------------------------------------------------------------------------------------------- hparams

def parse_hparams(summary):
    from tensorboard.plugins.hparams import plugin_data_pb2
    value = as_tb(summary).value[0] if not isinstance(summary, tb_summary_pb2.Summary) else summary.value[0]
    assert value.metadata.plugin_data.plugin_name == "hparams"
    return value.tag, plugin_data_pb2.HParamsPluginData.FromString(value.metadata.plugin_data.content)


def test_hparams_equal_tensorboardx():
    def activation():
        pass

    hparam_dict = {"lr": 0.01, "layers": 3, "optimizer": "adam", "dropout": True, "skip": None,
                   "act": activation}
    metric_dict = {"hparam/accuracy": 0.9, "hparam/loss": 0.1}
    ours = b.hparams(hparam_dict, metric_dict)
    theirs = tbx_summary.hparams(hparam_dict, metric_dict)
    assert len(ours) == 3
    for mine, other in zip(ours, theirs):
        other = tb_summary_pb2.Summary.FromString(other.SerializeToString())
        assert parse_hparams(mine) == parse_hparams(other)
    assert [parse_hparams(s)[0] for s in ours] == [
        "_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"]


def test_hparams_store_numpy_and_torch_numbers_as_float64():
    import torch
    _, start, _ = b.hparams({"a": np.float32(0.5), "b": torch.tensor(3), "c": np.array([2.0]), "d": np.bool_(1)}, {})
    hparams = parse_hparams(start)[1].session_start_info.hparams
    assert (hparams["a"].number_value, hparams["b"].number_value, hparams["c"].number_value) == (0.5, 3.0, 2.0)
    assert hparams["d"].bool_value is True


def test_hparams_with_discrete_domains_equal_torch(torch_summary):
    hparam_dict = {"lr": 0.1, "batch": 32, "optimizer": "sgd"}
    domains = {"lr": [0.1, 0.01], "batch": [16, 32, 64], "optimizer": ["sgd", "adam"]}
    ours = b.hparams(hparam_dict, {"acc": 1.0}, hparam_domain_discrete=domains)
    theirs = torch_summary.hparams(hparam_dict, {"acc": 1.0}, hparam_domain_discrete=domains)
    for mine, other in zip(ours, theirs):
        assert parse_hparams(mine) == parse_hparams(other)


def test_hparams_are_read_by_tensorboards_hparams_metadata():
    from tensorboard.plugins.hparams import metadata
    exp, start, end = (as_tb(s).value[0].metadata.plugin_data.content for s in
                       b.hparams({"lr": 0.1, "flag": False}, {"acc": 0}, {"flag": [True, False]}))
    experiment = metadata.parse_experiment_plugin_data(exp)
    assert [(h.name, h.type) for h in experiment.hparam_infos] == [("lr", 3), ("flag", 2)]
    assert [v.bool_value for v in experiment.hparam_infos[1].domain_discrete.values] == [True, False]
    assert [m.name.tag for m in experiment.metric_infos] == ["acc"]
    assert metadata.parse_session_start_info_plugin_data(start).hparams["lr"].number_value == 0.1
    assert metadata.parse_session_end_info_plugin_data(end).status == 1


@pytest.mark.parametrize("args,error,match", [
    (([("lr", 0.1)], {}), TypeError, "hparam_dict must be a dict"),
    (({"lr": 0.1}, ["acc"]), TypeError, "metric_dict must be a dict"),
    (({"layers": [64, 64]}, {}), TypeError, r"hparam_dict\['layers'\]"),
    (({"lr": 0.1}, {}, {"momentum": [0.9]}), ValueError, "not in hparam_dict"),
    (({"lr": 0.1}, {}, {"lr": ["fast"]}), TypeError, "not of the type"),
    (({"lr": 0.1}, {}, {"lr": 0.1}), TypeError, "non-empty list"),
    (({1: 0.1}, {}), TypeError, "must be a str"),
])
def test_hparams_rejects_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        b.hparams(*args)


# --------------------------------------------------------------------------------------- custom scalars

LAYOUT = {"Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
          "USA": {"dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]],
                  "nasdaq": ["Multiline", ["nasdaq/.*"]]}}


def test_custom_scalars_equals_tensorboards_pb(tf):
    from tensorboard.plugins.custom_scalar import layout_pb2
    from tensorboard.plugins.custom_scalar import summary as cs_summary
    layout = layout_pb2.Layout(category=[
        layout_pb2.Category(title="Taiwan", chart=[layout_pb2.Chart(
            title="twse", multiline=layout_pb2.MultilineChartContent(tag=["twse/0050", "twse/2330"]))]),
        layout_pb2.Category(title="USA", chart=[
            layout_pb2.Chart(title="dow", margin=layout_pb2.MarginChartContent(series=[
                layout_pb2.MarginChartContent.Series(value="dow/aaa", lower="dow/bbb", upper="dow/ccc")])),
            layout_pb2.Chart(title="nasdaq", multiline=layout_pb2.MultilineChartContent(tag=["nasdaq/.*"]))]),
    ])
    theirs = tb_summary_pb2.Summary.FromString(cs_summary.pb(layout).SerializeToString())
    assert as_tb(b.custom_scalars(LAYOUT)) == theirs
    assert as_tb(b.custom_scalars(layout)) == theirs  # a TensorBoard Layout message is accepted as is


def test_custom_scalars_layout_equals_tensorboardx():
    from tensorboard.plugins.custom_scalar import layout_pb2
    ours = as_tb(b.custom_scalars(LAYOUT)).value[0]
    theirs = tbx_summary.custom_scalars(LAYOUT).value[0]
    assert ours.tag == theirs.tag == "custom_scalars__config__"
    assert layout_pb2.Layout.FromString(ours.tensor.string_val[0]) == \
        layout_pb2.Layout.FromString(theirs.tensor.string_val[0])


@pytest.mark.parametrize("layout,error,match", [
    ({"c": {"m": ["Margin", ["a", "b"]]}}, ValueError, "3 tags"),
    ({"c": {"m": ["Pie", ["a"]]}}, ValueError, "Multiline"),
    ({"c": {"m": ["Multiline", "loss"]}}, TypeError, "list of str"),
    ({"c": ["Multiline", ["a"]]}, TypeError, r"layout\['c'\] must be a dict"),
    ([("c", {})], TypeError, "layout must be a dict"),
    (tb_tensor_pb2.TensorProto(), TypeError, "must be a Layout"),
])
def test_custom_scalars_rejects_bad_input(layout, error, match):
    with pytest.raises(error, match=match):
        b.custom_scalars(layout)


def test_counts_in_edges_equals_numpy_histogram():
    """The unsorted bucketing of histograms (counts_in_edges) against np.histogram, edges included."""
    from tfevents.summaries.builders.histograms import counts_in_edges, default_bucket_edges

    rng = np.random.default_rng(3)
    edges = default_bucket_edges()
    for values in (rng.standard_normal(100_000) * 10.0 ** rng.integers(-14, 22, 100_000),
                   np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf), [0.0, -0.0]])):
        np.testing.assert_array_equal(counts_in_edges(values, edges), np.histogram(values, bins=edges)[0])
    few = np.array([-1.0, 0.0, 0.5, 2.0])
    values = np.array([-2, -1, -0.5, 0, 0.5, 1.99, 2.0, 2.5])
    np.testing.assert_array_equal(counts_in_edges(values, few), np.histogram(values, bins=few)[0])
