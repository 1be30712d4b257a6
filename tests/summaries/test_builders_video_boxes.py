"""Video (animated GIF) and image-with-boxes builders against tensorboardX and torch.utils.tensorboard.

Video: frames are compared with tensorboardX's and torch's ``_prepare_video``, and the GIF decodes back to exactly
those frames at 1/fps each (tensorboardX needs moviepy to write a GIF at all, which pins Pillow < 12, so it is not
a test dependency; with moviepy 2.2 its GIF bytes equal ours for RGB(A), checked by hand). Boxes: tensorboardX's and torch's
``image_boxes`` draw with the same Pillow calls, so PNG bytes and decoded pixels must be identical.
TensorBoard's EventAccumulator, its data_compat migration and its image plugin's MIME sniffing read both.
"""
import io
import subprocess
import sys

import numpy as np
import pytest

from tensorboard.compat.proto import summary_pb2 as tb_summary_pb2

from tfevents.summaries.builders.boxes import draw_boxes, image_with_boxes
from tfevents.summaries.builders.media import image
from tfevents.summaries.builders.videos import encode_gif, video, video_frames, video_grid_shape

tbx_summary = pytest.importorskip("tensorboardX.summary")
tbx_utils = pytest.importorskip("tensorboardX.utils")
Image = pytest.importorskip("PIL.Image")


def as_tb(summary):
    """Our Summary re-read as TensorBoard's message (wire compatibility is part of every comparison)."""
    return tb_summary_pb2.Summary.FromString(summary.SerializeToString())


def decode_gif(encoded):
    """(RGB frames, per-frame durations in ms, loop) of an animated GIF, each frame fully composited."""
    from PIL import ImageSequence
    gif = Image.open(io.BytesIO(encoded))
    assert gif.format == "GIF"
    frames, durations = [], []
    for frame in ImageSequence.Iterator(gif):
        frames.append(np.asarray(frame.convert("RGB")))
        durations.append(frame.info.get("duration"))
    return np.stack(frames), durations, gif.info.get("loop")


def decode_png(encoded, mode=None):
    png = Image.open(io.BytesIO(encoded))
    assert png.format == "PNG"
    return np.asarray(png if mode is None else png.convert(mode))


def rgb(frames):
    """uint8 [T, H, W, C] -> RGB as a GIF decodes it (gray copied, alpha dropped)."""
    return np.repeat(frames, 3, axis=3) if frames.shape[3] == 1 else frames[..., :3]


@pytest.fixture(scope="module")
def torch_utils():
    return pytest.importorskip("torch.utils.tensorboard._utils")


@pytest.fixture(scope="module")
def torch_summary():
    return pytest.importorskip("torch.utils.tensorboard.summary")


def few_colour_video(n, t, c, h=5, w=6, seed=0, dtype=np.uint8):
    """A video whose every tiled frame has < 256 colours, so GIF's palette holds it exactly."""
    rs = np.random.RandomState(seed)
    levels = np.array([0, 51, 102, 153, 204, 255], np.uint8)
    vid = levels[rs.randint(0, 6, (n, t, c, h, w))]
    return vid if dtype == np.uint8 else (vid / np.float32(255)).astype(dtype)


# ------------------------------------------------------------------------------------ video: frames

@pytest.mark.parametrize("n,expected", [(1, (1, 1)), (2, (1, 2)), (3, (1, 4)), (4, (2, 2)), (5, (2, 4)),
                                        (8, (2, 4)), (9, (2, 8)), (16, (4, 4))])
def test_video_grid_shape_is_prepare_videos(n, expected):
    assert video_grid_shape(n) == expected
    rows, cols = expected
    out = tbx_utils._prepare_video(np.zeros((n, 1, 1, 3, 2), np.float32))
    assert out.shape == (1, rows * 3, cols * 2, 1)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("c", [1, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_video_frames_equal_tensorboardx_and_torch_prepare_video(torch_utils, n, c, dtype):
    rs = np.random.RandomState(n * 10 + c)
    vid = rs.randint(0, 256, (n, 3, c, 4, 5)).astype(np.uint8) if dtype == np.uint8 else \
        rs.rand(n, 3, c, 4, 5).astype(np.float32)
    ours = video_frames(vid)
    assert ours.dtype == np.uint8
    tbx = (tbx_utils._prepare_video(vid) * 255.0).astype(np.uint8)       # tensorboardX summary.video
    tor = torch_utils._prepare_video(vid)                                  # torch summary.video
    tor = (tor.astype(np.float32) * 255).clip(0, 255).astype(np.uint8)
    np.testing.assert_array_equal(ours, tbx)
    np.testing.assert_array_equal(ours, tor)


def test_video_frames_place_clip_n_in_row_major_cells():
    vid = np.zeros((3, 2, 1, 2, 3), np.uint8)
    for n in range(3):
        vid[n, :, 0] = 10 * (n + 1)
    vid[1, 1, 0, 1, 2] = 99
    frames = video_frames(vid)
    assert frames.shape == (2, 2, 12, 1)        # 3 clips -> padded to 4 -> 1 x 4
    assert frames[0, 0, ::3, 0].tolist() == [10, 20, 30, 0]
    assert frames[1, 1, 5, 0] == 99 and frames[0, 1, 5, 0] == 20


def test_video_dataformats_and_torch_tensors():
    import torch
    vid = few_colour_video(3, 4, 3)
    ref = video("v", vid)
    np.testing.assert_array_equal(video_frames(vid.transpose(0, 1, 3, 4, 2), "NTHWC"), video_frames(vid))
    assert video("v", vid.transpose(1, 0, 3, 4, 2), dataformats="tnhwc") == ref
    assert video("v", torch.from_numpy(vid)) == ref
    assert video("v", torch.from_numpy(vid / np.float32(255))) == ref


def test_video_floats_are_clipped_like_torch():
    vid = np.array([-0.5, 0.0, 0.5, 1.0, 2.0], np.float32).reshape(1, 1, 1, 1, 5)
    assert video_frames(vid)[0, 0, :, 0].tolist() == [0, 0, 127, 255, 255]


# --------------------------------------------------------------------------------------- video: GIF

@pytest.mark.parametrize("c", [1, 3, 4])
def test_video_gif_decodes_to_the_frames(c):
    vid = few_colour_video(3, 5, c, seed=c)
    summary = video("v", vid, fps=4)
    img = summary.value[0].image
    frames = video_frames(vid)
    assert (img.height, img.width, img.colorspace) == (5, 24, c)
    decoded, durations, loop = decode_gif(img.encoded_image_string)
    np.testing.assert_array_equal(decoded, rgb(frames))
    assert durations == [250] * 5 and loop == 0


@pytest.mark.parametrize("fps,ms", [(1, 1000), (3, 330), (7, 140), (2.5, 400), (30, 30), (np.float32(10), 100)])
def test_video_keeps_every_frame_at_1_over_fps(fps, ms):
    # (moviepy's sampling at t = i / fps drops or repeats a frame for fps such as 3, 7, 2.5 or 30; ours doesn't.)
    vid = few_colour_video(1, 7, 3, seed=7)
    decoded, durations, _ = decode_gif(video("v", vid, fps=fps).value[0].image.encoded_image_string)
    np.testing.assert_array_equal(decoded, video_frames(vid))
    assert durations == [ms] * 7


def test_video_identical_frames_merge_keeping_total_time():
    vid = np.zeros((1, 4, 1, 3, 3), np.uint8)
    vid[0, 2] = 200
    decoded, durations, _ = decode_gif(video("v", vid, fps=4).value[0].image.encoded_image_string)
    assert [f[0, 0, 0] for f in decoded] == [0, 200, 0] and durations == [500, 250, 250]


def test_encode_gif_single_frame():
    frame = np.full((1, 2, 3, 3), 7, np.uint8)
    decoded, _, _ = decode_gif(encode_gif(frame, 4))
    np.testing.assert_array_equal(decoded, frame)


@pytest.mark.parametrize("vid,kwargs,err,match", [
    (np.zeros((2, 3, 3, 4), np.uint8), {}, ValueError, "5 dimensions"),
    (np.zeros((1, 2, 2, 4, 4), np.uint8), {}, ValueError, "1, 3 or 4 channels"),
    (np.zeros((1, 0, 3, 4, 4), np.uint8), {}, ValueError, "empty"),
    (np.zeros((1, 2, 3, 4, 4), np.int32), {}, TypeError, "uint8"),
    (np.zeros((1, 2, 3, 4, 4), bool), {}, TypeError, "uint8"),
    (np.full((1, 2, 3, 4, 4), np.nan, np.float32), {}, ValueError, "non-finite"),
    (np.zeros((1, 2, 3, 4, 4), np.uint8), {"dataformats": "NTCHWX"}, ValueError, "layout of NTCHW"),
    (np.zeros((1, 2, 3, 4, 4), np.uint8), {"dataformats": "NTCCW"}, ValueError, "layout of NTCHW"),
    (np.zeros((1, 2, 3, 4, 4), np.uint8), {"dataformats": 5}, TypeError, "dataformats"),
    (np.zeros((1, 2, 3, 4, 4), np.uint8), {"fps": 0}, ValueError, "fps"),
    (np.zeros((1, 2, 3, 4, 4), np.uint8), {"fps": -2.0}, ValueError, "fps"),
    (np.zeros((1, 2, 3, 4, 4), np.uint8), {"fps": float("nan")}, ValueError, "fps"),
    (np.zeros((1, 2, 3, 4, 4), np.uint8), {"fps": float("inf")}, ValueError, "fps"),
    (np.zeros((1, 2, 3, 4, 4), np.uint8), {"fps": True}, TypeError, "fps"),
    (np.zeros((1, 2, 3, 4, 4), np.uint8), {"fps": "4"}, TypeError, "fps"),
])
def test_video_bad_inputs(vid, kwargs, err, match):
    with pytest.raises(err, match=match):
        video("v", vid, **kwargs)


def test_video_bad_tag():
    with pytest.raises(TypeError):
        video(None, np.zeros((1, 1, 3, 2, 2), np.uint8))
    with pytest.warns(UserWarning, match="illegal"):
        assert video("a b", np.zeros((1, 1, 3, 2, 2), np.uint8)).value[0].tag == "a_b"


# ---------------------------------------------------------------------------------- image with boxes

BOXES = np.array([[5, 6, 40, 50], [30.5, 10.25, 70, 55], [60, 2, 78, 20]], np.float32)


def box_image(c, fmt, dtype, seed=0):
    rs = np.random.RandomState(seed)
    chw = rs.rand(c, 60, 80).astype(np.float32)
    if dtype == np.uint8:
        chw = (chw * 255).astype(np.uint8)
    if fmt == "HW":
        return chw[0]
    return chw if fmt == "CHW" else chw.transpose(1, 2, 0)


@pytest.mark.parametrize("c,fmt", [(3, "CHW"), (3, "HWC"), (1, "CHW"), (1, "HW"), (4, "HWC")])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("labels", [None, ["cat", "dog", "a longer label"]])
def test_image_with_boxes_equals_tensorboardx_and_torch(torch_summary, c, fmt, dtype, labels):
    img = box_image(c, fmt, dtype, seed=c)
    ours = as_tb(image_with_boxes("det", img, BOXES, labels=labels, dataformats=fmt)).value[0]
    tbx = tbx_summary.image_boxes("det", img, BOXES, dataformats=fmt, labels=labels).value[0]
    tor = torch_summary.image_boxes("det", img, BOXES, dataformats=fmt, labels=labels).value[0]
    for theirs in (tbx, tor):
        assert ours.tag == theirs.tag
        for field in ("height", "width", "colorspace"):
            assert getattr(ours.image, field) == getattr(theirs.image, field), field
        np.testing.assert_array_equal(decode_png(ours.image.encoded_image_string),
                                      decode_png(theirs.image.encoded_image_string))
        assert ours.image.encoded_image_string == theirs.image.encoded_image_string
    assert (ours.image.height, ours.image.width, ours.image.colorspace) == (60, 80, 4 if c == 4 else 3)


@pytest.mark.parametrize("rescale", [0.5, 2, 1.3])
def test_image_with_boxes_rescale(torch_summary, rescale):
    img = box_image(3, "CHW", np.uint8, seed=3)
    ours = image_with_boxes("det", img, BOXES, labels=["x", "y", "z"], rescale=rescale).value[0].image
    tbx = tbx_summary.image_boxes("det", img, BOXES, rescale=rescale, labels=["x", "y", "z"]).value[0].image
    tor = torch_summary.image_boxes("det", img, BOXES, rescale=rescale, labels=["x", "y", "z"]).value[0].image
    assert ours.encoded_image_string == tbx.encoded_image_string == tor.encoded_image_string
    size = (int(60 * rescale), int(80 * rescale))
    assert decode_png(ours.encoded_image_string).shape[:2] == size
    assert (ours.height, ours.width) == size        # the PNG's size ...
    assert (tbx.height, tbx.width) == (60, 80)       # ... where tensorboardX writes the size before rescaling


def test_image_with_boxes_batch_grid_and_torch_tensors():
    import torch
    rs = np.random.RandomState(5)
    batch = rs.rand(3, 3, 20, 30).astype(np.float32)
    boxes = np.array([[2, 2, 25, 15], [32, 1, 58, 19], [61, 3, 89, 18]])
    ours = image_with_boxes("b", torch.from_numpy(batch), torch.from_numpy(boxes), labels=["a", "b", "c"],
                            dataformats="NCHW").value[0].image
    tbx = tbx_summary.image_boxes("b", batch, boxes, dataformats="NCHW", labels=["a", "b", "c"]).value[0].image
    assert (ours.width, ours.height) == (90, 20)
    assert ours.encoded_image_string == tbx.encoded_image_string


def test_image_with_boxes_draws_red_outlines_and_labels():
    img = np.zeros((3, 60, 80), np.uint8)
    boxes = np.array([[10, 10, 50, 40]])
    plain = decode_png(image_with_boxes("b", img, boxes).value[0].image.encoded_image_string)
    assert plain[25, 10].tolist() == [255, 0, 0]           # left edge
    assert plain[10, 30].tolist() == [255, 0, 0]           # top edge
    assert plain[40, 30].tolist() == [255, 0, 0]           # bottom edge
    assert plain[25, 50].tolist() == [255, 0, 0]           # right edge
    assert plain[25, 30].tolist() == [0, 0, 0]             # inside untouched
    assert plain[5, 5].tolist() == [0, 0, 0]               # outside untouched
    labelled = decode_png(image_with_boxes("b", img, boxes, labels="person").value[0].image.encoded_image_string)
    strip = labelled[28:41, 10:45]                          # inside the box, along its bottom edge
    assert (strip == [255, 0, 0]).all(axis=2).mean() > 0.5  # red background ...
    assert ((strip[..., 0] < 128) & (strip[..., 1] == 0)).any()  # ... with dark text on it
    assert not np.array_equal(plain, labelled)


def test_image_with_boxes_no_boxes_is_the_image():
    img = box_image(3, "CHW", np.uint8)
    ours = image_with_boxes("b", img, np.zeros((0, 4))).value[0].image
    np.testing.assert_array_equal(decode_png(ours.encoded_image_string),
                                  decode_png(image("b", img).value[0].image.encoded_image_string))
    assert ours.encoded_image_string == tbx_summary.image_boxes("b", img, np.zeros((0, 4))).value[0] \
        .image.encoded_image_string


def test_draw_boxes_returns_a_pillow_image():
    out = draw_boxes(np.zeros((8, 8, 3), np.uint8), np.array([[1, 1, 6, 6]]))
    assert out.size == (8, 8) and np.asarray(out)[1, 3].tolist() == [255, 0, 0]


@pytest.mark.parametrize("boxes,kwargs,err,match", [
    (np.array([1, 2, 3, 4]), {}, ValueError, r"\[N, 4\]"),
    (np.zeros((2, 5)), {}, ValueError, r"\[N, 4\]"),
    (np.array([["a", "b", "c", "d"]]), {}, TypeError, "box_tensor"),
    (np.array([[True, False, True, False]]), {}, TypeError, "box_tensor"),
    (np.array([[1, 2, np.nan, 4]]), {}, ValueError, "non-finite"),
    (BOXES, {"labels": ["a", "b"]}, ValueError, "3 boxes"),
    (BOXES[:1], {"labels": "a"}, None, None),
    (BOXES, {"labels": "a"}, ValueError, "labels"),
    (BOXES, {"labels": ["a", 2, "c"]}, TypeError, "labels"),
    (BOXES, {"labels": 7}, TypeError, "labels"),
    (BOXES, {"rescale": 0}, ValueError, "rescale"),
    (BOXES, {"rescale": -1.0}, ValueError, "rescale"),
    (BOXES, {"rescale": 0.001}, ValueError, "rescale"),
    (BOXES, {"rescale": float("inf")}, ValueError, "rescale"),
    (BOXES, {"rescale": float("nan")}, ValueError, "rescale"),
    (BOXES, {"rescale": "2"}, TypeError, "rescale"),
    (BOXES, {"rescale": True}, TypeError, "rescale"),
    (BOXES, {"dataformats": "CHWX"}, ValueError, "dataformats"),
])
def test_image_with_boxes_bad_inputs(boxes, kwargs, err, match):
    img = box_image(3, "CHW", np.uint8)
    if err is None:
        assert image_with_boxes("b", img, boxes, **kwargs).value[0].image.width == 80
        return
    with pytest.raises(err, match=match):
        image_with_boxes("b", img, boxes, **kwargs)


def test_image_with_boxes_bad_image():
    with pytest.raises(ValueError, match="channels"):
        image_with_boxes("b", np.zeros((2, 8, 8), np.uint8), BOXES)
    with pytest.raises(TypeError, match="uint8"):
        image_with_boxes("b", np.zeros((3, 8, 8), np.int64), BOXES)
    with pytest.raises(ValueError, match="dimensions"):
        image_with_boxes("b", np.zeros((8, 8), np.uint8), BOXES)   # default CHW


# ------------------------------------------------------------------------------ read by TensorBoard

def test_tensorboard_reads_video_and_boxes(tmp_path):
    from tensorboard import data_compat
    from tensorboard.backend.event_processing import event_accumulator as ea
    from tensorboard.plugins.image import metadata as image_metadata
    from tensorboard.util import img_mime_type_detector

    from tfevents.proto import event_pb2
    from tfevents.summaries.writer.event_file_writer import EventFileWriter

    vid = video("clip", few_colour_video(2, 3, 3), fps=2)
    boxed = image_with_boxes("det", box_image(3, "CHW", np.uint8), BOXES, labels=["a", "b", "c"])
    with EventFileWriter(str(tmp_path)) as writer:
        for step, summary in enumerate((vid, boxed)):
            writer.add_event(event_pb2.Event(wall_time=1.0 + step, step=step, summary=summary))
    acc = ea.EventAccumulator(str(tmp_path), size_guidance={ea.IMAGES: 0}).Reload()
    assert sorted(acc.Tags()[ea.IMAGES]) == ["clip", "det"]
    for tag, summary, mime in (("clip", vid, "image/gif"), ("det", boxed, "image/png")):
        [event] = acc.Images(tag)
        img = summary.value[0].image
        assert (event.width, event.height, event.encoded_image_string) == \
            (img.width, img.height, img.encoded_image_string)
        assert img_mime_type_detector.from_bytes(event.encoded_image_string) == mime
        migrated = data_compat.migrate_value(as_tb(summary).value[0])
        assert migrated.metadata.plugin_data.plugin_name == image_metadata.PLUGIN_NAME
        assert list(migrated.tensor.string_val) == [str(img.width).encode(), str(img.height).encode(),
                                                    img.encoded_image_string]


def test_importing_the_modules_does_not_load_pillow():
    code = ("import sys, tfevents.summaries.builders.videos, tfevents.summaries.builders.boxes; "
            "assert 'PIL' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
