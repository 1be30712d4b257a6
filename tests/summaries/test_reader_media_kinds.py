"""The reader's videos, meshes, embeddings and generic tensors, on files written by tensorboardX, torch's
SummaryWriter and ours, checked against the inputs and against TensorBoard's own readers (its
EventAccumulator, the projector plugin's TSV reader and path rule, ``tensor_util.make_ndarray``)."""
import os
import shutil
import warnings

import numpy as np
import pytest

from tfevents.summaries import SummaryWriter
from tfevents.summaries.reader import scan as _reader_scan
from tfevents.summaries.reader import KINDS, ReadWarning, load_logdir

tensorboardX = pytest.importorskip("tensorboardX")
torch = pytest.importorskip("torch")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.plugins.projector import projector_plugin  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

PALETTE = np.array([[0, 0, 0], [255, 0, 0], [0, 200, 0], [20, 40, 250], [255, 255, 255], [90, 90, 90]], np.uint8)


@pytest.fixture(params=["fast", "pure"])
def path_kind(request, monkeypatch):
    """Both scanners: the C fast path hands one-element tensors to the scalar columns, the pure one too."""
    if request.param == "pure":
        monkeypatch.setattr(_reader_scan, "native", None)
    elif not _reader_scan.have_fast_path():
        pytest.skip("the _fastscan extension is not built")
    return request.param


def quiet_load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)
        return load_logdir(path, **kw)


# ------------------------------------------------------------------------------------------- videos

def palette_video(rng, n, t, c, h=6, w=5):
    """[N, T, C, H, W] uint8 from a few colours (a GIF palette holds them exactly)."""
    if c == 1:
        return rng.integers(0, 256, (n, t, 1, h, w)).astype(np.uint8)
    pixels = PALETTE[rng.integers(0, len(PALETTE), (n, t, h, w))]  # N T H W 3
    return np.ascontiguousarray(pixels.transpose(0, 1, 4, 2, 3))


def tbx_frames(vid):
    """The uint8 [T, H', W', C] frames tensorboardX.summary.video hands to make_video (its first lines)."""
    from tensorboardX.utils import _prepare_video
    frames = _prepare_video(vid.copy())
    return frames if frames.dtype == np.uint8 else (frames * 255.0).astype(np.uint8)


def rgb(frames):
    return np.repeat(frames, 3, axis=3) if frames.shape[3] == 1 else frames


@pytest.mark.parametrize("n,t,c", [(1, 5, 3), (3, 4, 3), (2, 3, 1), (1, 1, 3)])
def test_videos_come_back_as_the_frames_tensorboardx_prepares(tmp_path, n, t, c):
    from tensorboardX.summary import Summary as TbxSummary

    from tfevents.summaries.builders.videos import encode_gif

    rng = np.random.default_rng(n * 10 + t)
    vid = palette_video(rng, n, t, c)
    expected = tbx_frames(vid)  # [T, H', W', C]: the grid tensorboardX and torch tile
    with SummaryWriter(str(tmp_path / "ours")) as w:
        w.add_video("clip", vid, 3, fps=4)
        w.add_image("still", vid[0, 0], 3)  # a PNG: stays an image
    # tensorboardX's add_video needs moviepy (not installed: it pins Pillow < 12); its writer stores the
    # GIF of its own prepared frames as make_video would, through tensorboardX's own file writer
    tw = tensorboardX.SummaryWriter(str(tmp_path / "tbx"))
    image = TbxSummary.Image(height=expected.shape[1], width=expected.shape[2], colorspace=c,
                             encoded_image_string=encode_gif(expected, 4))
    tw._get_file_writer().add_summary(TbxSummary(value=[TbxSummary.Value(tag="clip", image=image)]), 3)
    tw.close()
    for run in ("ours", "tbx"):
        ld = load_logdir(str(tmp_path / run))
        assert ("clip" not in dict(ld.images)) and ((".", "clip") not in ld.images)
        (rec,) = ld.videos[(".", "clip")]
        assert (rec.step, rec.width, rec.height) == (3, expected.shape[2], expected.shape[1])
        np.testing.assert_array_equal(rec.frames(), rgb(expected))
        assert rec.num_frames == t and rec.fps == pytest.approx(4.0)
        ea = EventAccumulator(str(tmp_path / run))
        ea.Reload()
        assert ea.Images("clip")[0].encoded_image_string == rec.data  # TensorBoard sees the same GIF
    ld = load_logdir(str(tmp_path / "ours"))
    assert [r.decode().shape for r in ld.images[(".", "still")]] == [(6, 5, c)]
    assert set(quiet_load(str(tmp_path / "ours"), kinds=["videos"]).videos) == {(".", "clip")}
    only_images = quiet_load(str(tmp_path / "ours"), kinds=["images"])
    assert not only_images.videos and set(only_images.images) == {(".", "still")}


def test_video_fps_and_tags_filter(tmp_path):
    vid = palette_video(np.random.default_rng(0), 1, 6, 3)
    with SummaryWriter(str(tmp_path)) as w:
        for step in range(3):
            w.add_video("v/a", vid, step, fps=20)
        w.add_video("v/b", vid, 0, fps=2)
    ld = load_logdir(str(tmp_path), tags="^v/a$")
    recs = ld.videos[(".", "v/a")]
    assert [r.step for r in recs] == [0, 1, 2] and set(ld.videos) == {(".", "v/a")}
    assert recs[0].fps == pytest.approx(20.0) and recs[0].durations == [50] * 6
    assert load_logdir(str(tmp_path)).videos[(".", "v/b")][0].fps == pytest.approx(2.0)


def test_image_with_boxes_stays_an_image(tmp_path):
    img = np.zeros((3, 20, 30), np.uint8)
    boxes = np.array([[2, 3, 12, 15]])
    with SummaryWriter(str(tmp_path)) as w:
        w.add_image_with_boxes("boxed", img, boxes, 1)
    tw = tensorboardX.SummaryWriter(str(tmp_path / "tbx"))
    tw.add_image_with_boxes("boxed", img, boxes, 1)
    tw.close()
    ld = load_logdir(str(tmp_path))
    for run in (".", "tbx"):
        (rec,) = ld.images[(run, "boxed")]
        pixels = rec.decode()
        assert pixels[3, 5, 0] > 200 and pixels[10, 20].max() == 0  # the red outline is drawn, inside is black
    assert not ld.videos


# ------------------------------------------------------------------------------------------- meshes

def mesh_inputs(rng, b=1, n=7, f=4):
    vertices = rng.normal(size=(b, n, 3)).astype(np.float32)
    faces = rng.integers(0, n, (b, f, 3)).astype(np.int32)
    colors = rng.integers(0, 256, (b, n, 3)).astype(np.uint8)
    return vertices, faces, colors


@pytest.mark.parametrize("writer", ["ours", "tbx", "torch"])
def test_meshes_regrouped_by_name_equal_the_inputs(tmp_path, writer, path_kind):
    rng = np.random.default_rng(3)
    config = {"camera": {"cls": "PerspectiveCamera", "fov": 75}}
    logged = {}
    if writer == "tbx":
        w = tensorboardX.SummaryWriter(str(tmp_path))
    elif writer == "torch":
        w = TorchWriter(str(tmp_path))
    else:
        w = SummaryWriter(str(tmp_path))
    for step in (0, 5):
        v, f, c = mesh_inputs(rng, b=2)
        as_t = (lambda a: torch.from_numpy(a)) if writer == "torch" else (lambda a: a)
        w.add_mesh("shape", as_t(v), colors=as_t(c), faces=as_t(f), config_dict=config, global_step=step)
        logged[("shape", step)] = (v, f, c)
        cloud = mesh_inputs(rng, n=5)[0]
        w.add_mesh("cloud", as_t(cloud), global_step=step)
        logged[("cloud", step)] = (cloud, None, None)
    w.close()
    ld = load_logdir(str(tmp_path))
    assert set(ld.meshes) == {(".", "shape"), (".", "cloud")}
    assert not ld.tensors  # the component tensors no longer land in tensors
    for (name, step), (v, f, c) in logged.items():
        rec = next(r for r in ld.meshes[(".", name)] if r.step == step)
        np.testing.assert_array_equal(rec.vertices, v)
        assert rec.vertices.dtype == np.float32
        if f is None:
            assert rec.faces is None and rec.colors is None and rec.config == {}
        else:
            np.testing.assert_array_equal(rec.faces, f)
            np.testing.assert_array_equal(rec.colors, c)
            assert rec.faces.dtype == np.int32 and rec.colors.dtype == np.uint8
            assert rec.config == config
    # TensorBoard's accumulator holds the same component values under the instance tags
    ea = EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    ea.Reload()
    vertex_tag = next(t for t in ea.Tags()["tensors"] if t.startswith("shape_") and t.endswith(("VERTEX", "_1")))
    assert [e.step for e in ea.Tensors(vertex_tag)] == [r.step for r in ld.meshes[(".", "shape")]]
    np.testing.assert_array_equal(tensor_util.make_ndarray(ea.Tensors(vertex_tag)[-1].tensor_proto),
                                  ld.meshes[(".", "shape")][-1].vertices)
    assert set(quiet_load(str(tmp_path), kinds=["meshes"]).meshes) == set(ld.meshes)
    assert not quiet_load(str(tmp_path), kinds=["tensors"]).tensors


# ------------------------------------------------------------------------------------------- tensors

TORCH_TENSORS = {
    "f16": lambda: torch.tensor([[1.5, -2.25], [0.0, 65504.0]], dtype=torch.float16),
    "bf16": lambda: torch.tensor([1.5, -3.0, 1e10], dtype=torch.bfloat16),
    "bf16_scalar": lambda: torch.tensor(2.5, dtype=torch.bfloat16),
    "f32": lambda: torch.arange(6, dtype=torch.float32).reshape(2, 3) / 7,
    "i32_one": lambda: torch.tensor([7], dtype=torch.int32),
    "i64_scalar": lambda: torch.tensor(-3, dtype=torch.int64),
    "bool": lambda: torch.tensor([True, False, True]),
    "c64": lambda: torch.tensor([1 + 2j, -3.5j], dtype=torch.complex64),
}
OUR_TENSORS = {
    "strings": np.array([["a", "bé"], ["", "z"]]),
    "bool_one": np.array([True]),
    "c128": np.array([[1 - 1j]], np.complex128),
    "f16": np.array([0.5, -1.0, 3.0], np.float16),
    "i32_scalar": np.int32(42),
    "u8": np.arange(4, dtype=np.uint8).reshape(2, 2),
    "f64_11": np.array([[2.75]]),
}


def test_generic_tensors_keep_dtype_and_shape(tmp_path, path_kind):
    tw = TorchWriter(str(tmp_path / "torch"))
    for tag, make in TORCH_TENSORS.items():
        tw.add_tensor(tag, make(), 1)
    tw.close()
    with SummaryWriter(str(tmp_path / "ours")) as w:
        for tag, value in OUR_TENSORS.items():
            w.add_tensor(tag, value, 2)
        w.add_tensor("bf16", torch.tensor([[1.5, -2.0]], dtype=torch.bfloat16), 2)
    ld = load_logdir(str(tmp_path))
    for tag, make in TORCH_TENSORS.items():
        t = make()
        (rec,) = ld.tensors[("torch", tag)]
        want = t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
        assert rec.value.shape == tuple(t.shape), tag
        assert rec.value.dtype == (np.float32 if t.dtype == torch.bfloat16 else want.dtype), tag
        np.testing.assert_array_equal(rec.value, want)
    ea = EventAccumulator(str(tmp_path / "ours"), size_guidance={"tensors": 0})
    ea.Reload()
    for tag, value in list(OUR_TENSORS.items()) + [("bf16", None)]:
        (rec,) = ld.tensors[("ours", tag)]
        if tag == "bf16":  # TensorBoard's make_ndarray has no numpy bfloat16 without ml_dtypes
            assert ea.Tensors(tag)[0].tensor_proto.half_val == [0x3FC0, 0xC000]
            np.testing.assert_array_equal(rec.value, np.array([[1.5, -2.0]], np.float32))
            continue
        tf_value = tensor_util.make_ndarray(ea.Tensors(tag)[0].tensor_proto)  # TensorBoard's make_ndarray
        assert rec.value.shape == tf_value.shape, tag
        if tag == "strings":
            assert rec.value.tolist() == tf_value.tolist() == [[b"a", "bé".encode()], [b"", b"z"]]
        else:
            assert rec.value.dtype == tf_value.dtype == np.asarray(value).dtype, tag
            np.testing.assert_array_equal(rec.value, tf_value)


# ------------------------------------------------------------------------------------------- embeddings

def sprite_cells(sprite, n, size):
    per_row = int(np.ceil(np.sqrt(n)))
    return np.stack([sprite[(i // per_row) * size:(i // per_row + 1) * size,
                            (i % per_row) * size:(i % per_row + 1) * size] for i in range(n)])


@pytest.mark.parametrize("writer", ["ours", "tbx", "torch"])
def test_embeddings_equal_the_inputs(tmp_path, writer):
    rng = np.random.default_rng(5)
    mat = rng.normal(size=(10, 4)).astype(np.float32)
    labels = ["c%d" % (i % 3) for i in range(10)]
    rows = [[i, "x%d" % i] for i in range(10)]
    imgs = (rng.random((10, 3, 6, 6)) > 0.5).astype(np.float32)  # 0 and 1: exact through *255
    run = tmp_path / "run1"
    if writer == "tbx":
        w = tensorboardX.SummaryWriter(str(run))
    elif writer == "torch":
        w = TorchWriter(str(run))
    else:
        w = SummaryWriter(str(run))
    w.add_embedding(mat, metadata=labels, label_img=torch.from_numpy(imgs) if writer != "ours" else imgs,
                    global_step=7, tag="words")
    w.add_embedding(mat * 2, metadata=rows, metadata_header=["n", "name"], global_step=8, tag="multi")
    w.close()
    ld = load_logdir(str(tmp_path))
    assert set(ld.embeddings) == {("run1", "words:00007"), ("run1", "multi:00008")}
    rec = ld.embeddings[("run1", "words:00007")]
    config = str(run / "projector_config.pbtxt")
    assert rec.config_path == config
    assert rec.tensor_path == projector_plugin._rel_to_abs_asset_path("00007/words/tensors.tsv", config)
    np.testing.assert_array_equal(rec.matrix(), projector_plugin._read_tensor_tsv_file(rec.tensor_path))
    np.testing.assert_allclose(rec.matrix(), mat, rtol=1e-6)
    assert rec.matrix().dtype == np.float32 and rec.shape == (10, 4)
    assert rec.metadata() == (["label"], [[s] for s in labels])
    assert rec.single_image_dim == (6, 6)
    cells = sprite_cells(rec.sprite(), 10, 6)
    np.testing.assert_array_equal(cells, (imgs * 255).astype(np.uint8).transpose(0, 2, 3, 1))
    multi = ld.embeddings[("run1", "multi:00008")]
    assert multi.metadata() == (["n", "name"], [[str(i), "x%d" % i] for i in range(10)])
    assert multi.sprite() is None and multi.single_image_dim is None
    np.testing.assert_allclose(multi.matrix(), mat * 2, rtol=1e-6)
    assert not ld.problems
    assert set(load_logdir(str(tmp_path), tags="multi").embeddings) == {("run1", "multi:00008")}
    assert not load_logdir(str(tmp_path), kinds=["scalars"]).embeddings
    assert set(load_logdir(str(tmp_path), kinds=["embeddings"]).embeddings) == set(ld.embeddings)


def test_tensorboard_plugin_assets_binary_tensor_and_checkpoint_entries(tmp_path):
    from tensorboard.plugins import projector
    mat = np.arange(12, dtype=np.float32).reshape(3, 4) / 3
    assets = tmp_path / "plugins" / "org_tensorflow_tensorboard_projector"
    assets.mkdir(parents=True)
    (assets / "emb.bin").write_bytes(mat.astype("<f4").tobytes())  # not UTF-8: TensorBoard's binary form
    (assets / "labels.tsv").write_text("a\n\nb\nc\n")
    config = projector.ProjectorConfig()
    e = config.embeddings.add(tensor_name="bin:0", tensor_path="emb.bin", metadata_path="labels.tsv")
    e.tensor_shape.extend([3, 4])
    config.embeddings.add(tensor_name="layer/embeddings", metadata_path="labels.tsv")
    config.model_checkpoint_path = "model.ckpt-5"
    (tmp_path / "projector_config.pbtxt").write_text("embeddings { tensor_name: 'ignored' }")
    projector.visualize_embeddings(str(assets), config)  # the plugin-assets config replaces the run's own
    ld = load_logdir(str(tmp_path))
    assert set(ld.embeddings) == {(".", "bin"), (".", "layer/embeddings")}
    rec = ld.embeddings[(".", "bin")]
    np.testing.assert_array_equal(rec.matrix(), mat)
    assert rec.metadata() == (["label"], [["a"], ["b"], ["c"]])  # a blank line is skipped, as the projector does
    ckpt = ld.embeddings[(".", "layer/embeddings")]
    assert ckpt.tensor_path is None and ckpt.model_checkpoint_path == "model.ckpt-5"
    with pytest.raises(ValueError, match="checkpoint 'model.ckpt-5'.*does not load"):
        ckpt.matrix()
    assert ckpt.metadata()[1] == [["a"], ["b"], ["c"]]


def test_bad_projector_files_are_problems_not_crashes(tmp_path):
    good = tmp_path / "good"
    with SummaryWriter(str(good)) as w:
        w.add_scalar("x", 1.0, 0)
        w.add_embedding(np.eye(3), metadata=["a", "b", "c"], tag="e")
    bad = tmp_path / "bad"
    shutil.copytree(good, bad)
    (bad / "projector_config.pbtxt").write_text("embeddings { tensor_name: ")
    missing = tmp_path / "missing"
    shutil.copytree(good, missing)
    os.remove(missing / "00000" / "e" / "tensors.tsv")
    corrupt = tmp_path / "corrupt"
    shutil.copytree(good, corrupt)
    (corrupt / "00000" / "e" / "tensors.tsv").write_text("1\t2\t3\nnot\tnumbers\n")
    escape = tmp_path / "escape"
    shutil.copytree(good, escape)
    (escape / "projector_config.pbtxt").write_text('embeddings { tensor_name: "e" tensor_path: "../good/x.tsv" }')
    ld = quiet_load(str(tmp_path))
    by_file = {p.path: p for p in ld.problems}
    assert set(k for k in ld.embeddings) == {("good", "e:00000"), ("missing", "e:00000"), ("corrupt", "e:00000")}
    p = by_file[str(bad / "projector_config.pbtxt")]
    assert p.kind == "unparseable" and "ProjectorConfig" in p.detail
    p = by_file[str(missing / "00000" / "e" / "tensors.tsv")]
    assert p.kind == "unreadable" and "does not exist" in p.detail
    with pytest.raises(FileNotFoundError, match="tensors.tsv does not exist"):
        ld.embeddings[("missing", "e:00000")].matrix()
    with pytest.raises(ValueError, match="tensors.tsv line 2 is not tab-separated numbers"):
        ld.embeddings[("corrupt", "e:00000")].matrix()
    assert by_file[str(escape / "projector_config.pbtxt")].detail.endswith(
        "resolves outside the config directory; not read")
    with pytest.warns(ReadWarning, match="not a ProjectorConfig"):
        load_logdir(str(bad))
    assert ld.scalars[("good", "x")].value.tolist() == [1.0]  # the rest of the logdir is read


def test_embeddings_through_fsspec_memory(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    with SummaryWriter(str(tmp_path / "r")) as w:
        w.add_scalar("x", 1.0, 0)
        w.add_embedding(np.arange(6.0).reshape(3, 2), metadata=["p", "q", "r"], label_img=np.ones((3, 1, 2, 2)))
    fs = fsspec.filesystem("memory")
    for root, _, names in os.walk(tmp_path):
        for name in names:
            local = os.path.join(root, name)
            fs.pipe("/emb_logs/" + os.path.relpath(local, tmp_path).replace(os.sep, "/"), open(local, "rb").read())
    try:
        ld = load_logdir("memory://emb_logs")
        rec = ld.embeddings[("r", "default:00000")]
        assert rec.tensor_path == "/emb_logs/r/00000/default/tensors.tsv"
        np.testing.assert_array_equal(rec.matrix(), np.arange(6.0, dtype=np.float32).reshape(3, 2))
        assert rec.metadata()[1] == [["p"], ["q"], ["r"]] and rec.sprite().shape == (4, 4, 3)
        expected = np.full((4, 4, 3), 255, np.uint8)
        expected[2:, 2:] = 0  # three white 2x2 images in a 2x2 grid; the fourth cell is black
        np.testing.assert_array_equal(rec.sprite(), expected)
    finally:
        fs.rm("/emb_logs", recursive=True)


def test_kinds_list_the_new_record_kinds():
    assert {"videos", "meshes", "embeddings", "tensors"} <= KINDS
    with pytest.raises(ValueError, match="unknown kind"):
        load_logdir(".", kinds=["video"])
