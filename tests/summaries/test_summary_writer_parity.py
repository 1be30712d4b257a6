"""SummaryWriter's tensorboardX / torch parity methods end to end: the same calls through our writer and through
torch's (or tensorboardX's) writer give the same Summary values in the event files, field by field."""
import glob
import json
import os

import numpy as np
import pytest

from tfevents.summaries import SummaryWriter, summary_iterator


def _values(logdir):
    """{tag: (step, Summary.Value)} of every summary value in the one event file under ``logdir``."""
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    out = {}
    for event in summary_iterator(path):
        for value in event.summary.value:
            out[value.tag] = (event.step, value)
    return out


def _same(ours, theirs):
    """Same tags, steps and metadata bytes; tensors equal once decoded (float_val or tensor_content alike)."""
    from tensorboard.compat.proto import tensor_pb2
    from tensorboard.util import tensor_util
    assert sorted(ours) == sorted(theirs)
    for tag in ours:
        (s1, v1), (s2, v2) = ours[tag], theirs[tag]
        assert s1 == s2, tag
        assert v1.metadata.SerializeToString() == v2.metadata.SerializeToString(), tag
        assert v1.WhichOneof("value") == v2.WhichOneof("value"), tag
        if v1.HasField("tensor"):
            a, b = (tensor_util.make_ndarray(tensor_pb2.TensorProto.FromString(v.tensor.SerializeToString()))
                    for v in (v1, v2))
            assert a.dtype == b.dtype and a.shape == b.shape, tag
            np.testing.assert_array_equal(a, b, err_msg=tag)
        else:
            assert v1.SerializeToString() == v2.SerializeToString(), tag


@pytest.fixture
def torch_writer(tmp_path):
    torch_tb = pytest.importorskip("torch.utils.tensorboard")
    return lambda: torch_tb.SummaryWriter(str(tmp_path / "torch"))


def test_mesh_custom_scalar_charts_and_tensor_equal_torchs(tmp_path, torch_writer):
    import torch
    rng = np.random.RandomState(0)
    vertices = rng.rand(1, 6, 3).astype(np.float32)
    colors = rng.randint(0, 255, (1, 6, 3)).astype(np.float32)
    faces = np.array([[[0, 1, 2], [3, 4, 5]]], np.float32)
    tensor = rng.rand(2, 3).astype(np.float32)
    calls = [("add_mesh", ("cloud",), dict(vertices=vertices, colors=colors, faces=faces,
                                          config_dict={"camera": {"fov": 75}}, global_step=3)),
             ("add_custom_scalars_multilinechart", (["loss/train", "loss/test"],),
              dict(category="losses", title="both")),
             ("add_custom_scalars_marginchart", (["acc", "acc_lo", "acc_hi"],), dict(title="band")),
             ("add_tensor", ("weights", tensor), dict(global_step=4))]
    ours_dir = str(tmp_path / "ours")
    with SummaryWriter(ours_dir) as w:
        for name, args, kwargs in calls:
            getattr(w, name)(*args, **kwargs)
    theirs = torch_writer()
    for name, args, kwargs in calls:
        args = tuple(torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args)
        kwargs = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        getattr(theirs, name)(*args, **kwargs)
    theirs.close()
    ours, torch_values = _values(ours_dir), _values(str(tmp_path / "torch"))
    # torch writes the two custom-scalar layouts under one tag; the last one is what TensorBoard shows
    assert set(ours) == set(torch_values)
    _same({t: v for t, v in ours.items() if t != "custom_scalars__config__"},
          {t: v for t, v in torch_values.items() if t != "custom_scalars__config__"})


def test_custom_scalar_charts_equal_tensorboardx(tmp_path):
    from tensorboardX import SummaryWriter as TbxWriter
    for name, tags in (("add_custom_scalars_multilinechart", ["a", "b"]),
                       ("add_custom_scalars_marginchart", ["v", "lo", "hi"])):
        ours_dir, theirs_dir = str(tmp_path / ("o" + name)), str(tmp_path / ("t" + name))
        with SummaryWriter(ours_dir) as w:
            getattr(w, name)(tags, category="c", title="t")
        theirs = TbxWriter(theirs_dir)
        getattr(theirs, name)(tags, category="c", title="t")
        theirs.close()
        _same(_values(ours_dir), _values(theirs_dir))


def test_export_scalars_to_json_holds_what_add_scalars_wrote(tmp_path):
    from tensorboardX import SummaryWriter as TbxWriter
    ours_dir, theirs_dir = str(tmp_path / "ours"), str(tmp_path / "theirs")
    w, t = SummaryWriter(ours_dir), TbxWriter(theirs_dir)
    for step in range(3):
        for writer in (w, t):
            writer.add_scalars("loss", {"train": 1.0 / (step + 1), "test": 2.0 + step}, global_step=step,
                               walltime=100 + step)
    w.export_scalars_to_json(str(tmp_path / "ours.json"))
    t.export_scalars_to_json(str(tmp_path / "theirs.json"))
    w.close()
    t.close()
    ours = json.load(open(tmp_path / "ours.json"))
    theirs = json.load(open(tmp_path / "theirs.json"))
    # keys: the sub-run each series was written to (ours), tensorboardX's writer id (theirs)
    assert sorted(ours) == [os.path.join(ours_dir, "loss_test"), os.path.join(ours_dir, "loss_train")]
    assert sorted(theirs) == [os.path.join(theirs_dir, "loss", "test"), os.path.join(theirs_dir, "loss", "train")]
    for key in ("test", "train"):
        assert ours[os.path.join(ours_dir, "loss_" + key)] == theirs[os.path.join(theirs_dir, "loss", key)]
    w.export_scalars_to_json(str(tmp_path / "empty.json"))      # forgotten once exported, as tensorboardX
    assert json.load(open(tmp_path / "empty.json")) == {}


def test_add_graph_of_a_torch_module_equals_torchs(tmp_path, torch_writer):
    import torch
    from tfevents.summaries import load_logdir
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8, 3))
    x = torch.zeros(1, 1, 4, 4)
    ours_dir = str(tmp_path / "ours")
    with SummaryWriter(ours_dir) as w:
        w.add_graph(model, x)
    theirs = torch_writer()
    theirs.add_graph(model, x)
    theirs.close()

    def graph_and_metadata(logdir):
        (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
        events = list(summary_iterator(path))
        graph = [e.graph_def for e in events if e.HasField("graph_def")]
        tagged = [(e.tagged_run_metadata.tag, e.tagged_run_metadata.run_metadata) for e in events
                  if e.HasField("tagged_run_metadata")]
        return graph, tagged
    assert graph_and_metadata(ours_dir) == graph_and_metadata(str(tmp_path / "torch"))
    logdir = load_logdir(ours_dir)
    assert list(logdir.graphs) == ["."] and list(logdir.run_metadata) == [(".", "step1")]


def test_add_onnx_graph_equals_tensorboardx(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    from tensorboardX import SummaryWriter as TbxWriter
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])])
    path = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(graph), path)
    with SummaryWriter(str(tmp_path / "ours")) as w:
        w.add_onnx_graph(path)
    theirs = TbxWriter(str(tmp_path / "theirs"))
    theirs.add_onnx_graph(path)
    theirs.close()

    def graph_of(logdir):
        (p,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
        return [e.graph_def for e in summary_iterator(p) if e.HasField("graph_def")]
    assert graph_of(str(tmp_path / "ours")) == graph_of(str(tmp_path / "theirs"))


def test_add_image_with_boxes_and_video_through_the_writer(tmp_path, torch_writer):
    rng = np.random.RandomState(1)
    image = rng.rand(3, 16, 20).astype(np.float32)
    boxes = np.array([[1, 2, 10, 12], [5, 5, 18, 14]], np.float32)
    ours_dir = str(tmp_path / "ours")
    with SummaryWriter(ours_dir) as w:
        w.add_image_with_boxes("boxes", image, boxes, global_step=2, labels=["a", "b"])
        with pytest.warns(UserWarning, match="labels dropped"):
            w.add_image_with_boxes("boxes_nolabels", image, boxes, global_step=2, labels=["only one"])
        w.add_video("clip", rng.randint(0, 255, (2, 3, 3, 6, 5)).astype(np.uint8), global_step=5, fps=2)
    theirs = torch_writer()
    theirs.add_image_with_boxes("boxes", image, boxes, global_step=2, labels=["a", "b"])
    theirs.add_image_with_boxes("boxes_nolabels", image, boxes, global_step=2, labels=["only one"])
    theirs.close()
    ours, torch_values = _values(ours_dir), _values(str(tmp_path / "torch"))
    _same({t: ours[t] for t in ("boxes", "boxes_nolabels")}, torch_values)
    step, clip = ours["clip"]
    from PIL import Image
    import io
    gif = Image.open(io.BytesIO(clip.image.encoded_image_string))
    assert step == 5 and gif.format == "GIF" and gif.n_frames == 3 and gif.info["duration"] == 500
    assert (clip.image.height, clip.image.width) == (6, 10)      # two clips side by side


def test_add_embedding_writes_tensorboardxs_files(tmp_path):
    from tensorboardX import SummaryWriter as TbxWriter
    rng = np.random.RandomState(2)
    mat = rng.rand(6, 4).astype(np.float32)
    labels = ["a", "b", "c", "a", "b", "c"]
    sprites = rng.rand(6, 3, 8, 8).astype(np.float32)
    with SummaryWriter(str(tmp_path / "ours")) as w:
        where = w.add_embedding(mat, metadata=labels, label_img=sprites, global_step=7, tag="feat")
    theirs = TbxWriter(str(tmp_path / "theirs"))
    theirs.add_embedding(mat, metadata=labels, label_img=sprites, global_step=7, tag="feat")
    theirs.close()
    assert where == os.path.join(str(tmp_path / "ours"), "00007", "feat")
    for name in ("tensors.tsv", "metadata.tsv"):
        assert open(os.path.join(where, name), "rb").read() == \
            open(os.path.join(str(tmp_path / "theirs"), "00007", "feat", name), "rb").read()
    config = open(os.path.join(str(tmp_path / "ours"), "projector_config.pbtxt")).read()
    assert 'tensor_path: "00007/feat/tensors.tsv"' in config and 'image_path: "00007/feat/sprite.png"' in config


def test_add_tensor_values_read_back_by_our_reader_and_tensorflow(tmp_path, tf):
    from tfevents.summaries import load_logdir
    values = {"f": np.arange(6, dtype=np.float32).reshape(2, 3), "c64": np.array([1 + 2j, 3 - 4j], np.complex64),
              "c128": np.array([[1 + 2j], [-3.5j]], np.complex128), "i": np.array([7, -8], np.int64),
              "b": np.array([True, False]), "s": np.array([b"x", b"yz"], dtype=object)}
    with SummaryWriter(str(tmp_path)) as w:
        for tag, value in values.items():
            w.add_tensor(tag, value, global_step=1)
    logdir = load_logdir(str(tmp_path))
    assert not logdir.problems
    for tag, value in values.items():
        got = logdir.tensors[(".", tag)][0].value
        np.testing.assert_array_equal(got, value, err_msg=tag)
        assert got.dtype == value.dtype, tag
    (path,) = glob.glob(os.path.join(str(tmp_path), "events.out.tfevents.*"))
    for event in tf.compat.v1.train.summary_iterator(path):
        for v in event.summary.value:
            np.testing.assert_array_equal(tf.make_ndarray(v.tensor), values[v.tag], err_msg=v.tag)
