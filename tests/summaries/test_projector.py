"""write_embedding (the Embedding Projector's files) against tensorboardX's and torch's ``add_embedding``,
read back by TensorBoard's own ProjectorPlugin through its HTTP route handlers (in-process, no server).
"""
import json
import os
import threading

import numpy as np
import pytest
from google.protobuf import text_format

from tfevents.proto import plugin_projector_pb2
from tfevents.summaries.builders import projector as _projector
from tfevents.summaries.builders.projector import write_embedding

torch = pytest.importorskip("torch")
tensorboardX = pytest.importorskip("tensorboardX")
Image = pytest.importorskip("PIL.Image")
tb_projector_pb2 = pytest.importorskip("tensorboard.plugins.projector.projector_config_pb2")

KEYWORDS = ["False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue"]


def _calls():
    """add_embedding keyword arguments covering the layout's cases, as torch tensors and numpy arrays."""
    g = torch.Generator().manual_seed(3)
    label_img = torch.rand(20, 3, 8, 8, generator=g)
    for i in range(20):
        label_img[i] *= i / 20.0
    label_img[0, 0, 0, 0] = 1.5  # saturates
    gray = torch.rand(10, 1, 6, 6, generator=g, dtype=torch.float64)
    # just below k / 255: 255 x truncates to k - 1 in float64 (tensorboardX, torch), to k in float32
    gray[0, 0, 0] = torch.tensor([k / 255 - 1e-12 for k in (1, 77, 128, 200, 254, 255)], dtype=torch.float64)
    rng = np.random.default_rng(5)
    return [
        # float32 torch matrix, str labels, RGB sprite of 20 (5 a row, 4 rows, one empty row below)
        dict(mat=torch.randn(20, 5, generator=g), metadata=[(KEYWORDS * 2)[i] + str(i) for i in range(20)],
             label_img=label_img),
        # float64 numpy, several metadata columns with a header, gray sprite of 10 (4 a row), tag to escape
        dict(mat=rng.standard_normal((10, 4)), metadata=[[i, "c%d" % (i % 3), i / 4] for i in range(10)],
             metadata_header=["index", "class", "quarter"], label_img=gray,
             global_step=1, tag="feat/a%b\\c"),
        # int matrix, numpy float32 labels, a large step
        dict(mat=np.arange(21).reshape(7, 3), metadata=np.linspace(0, 1, 7, dtype=np.float32),
             global_step=123456, tag="ints"),
        # float16, no metadata, one image
        dict(mat=np.array([[0.1, -2.5, 1e-5]], dtype=np.float16), label_img=torch.ones(1, 3, 4, 4), global_step=2,
             tag="half"),
        # same tag as the first, another step
        dict(mat=torch.randn(3, 2, generator=g), metadata=["x", "y", "z"], global_step=2),
    ]


def _tensorboardx(logdir, calls):
    writer = tensorboardX.SummaryWriter(logdir)
    for kwargs in calls:
        writer.add_embedding(**kwargs)
    writer.close()


def _torch(logdir, calls):
    from torch.utils.tensorboard import SummaryWriter
    writer = SummaryWriter(logdir)
    for kwargs in calls:
        writer.add_embedding(**kwargs)
    writer.close()


def _ours(logdir, calls):
    return [write_embedding(logdir, **kwargs) for kwargs in calls]


def _read(path, mode="rb"):
    with open(path, mode) as f:
        return f.read()


def _tb_config(path):
    """projector_config.pbtxt parsed by TensorBoard's own ProjectorConfig."""
    return text_format.Parse(_read(path, "r"), tb_projector_pb2.ProjectorConfig())


def _pixels(path):
    with Image.open(path) as im:
        assert im.mode == "RGB"
        return np.asarray(im)


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """The same calls written by tensorboardX, torch and us: {kind: logdir}, and our returned dirs."""
    root = tmp_path_factory.mktemp("embeddings")
    dirs = {kind: str(root / kind) for kind in ("tbx", "torch", "ours")}
    _tensorboardx(dirs["tbx"], _calls())
    _torch(dirs["torch"], _calls())
    returned = _ours(dirs["ours"], _calls())
    return dirs, returned


def test_layout_and_returned_dirs(three):
    dirs, returned = three
    subdirs = ["00000/default", "00001/feat%2fa%25b%5cc", "123456/ints", "00002/half", "00002/default"]
    assert returned == [os.path.join(dirs["ours"], *s.split("/")) for s in subdirs]
    found = {kind: sorted(os.path.relpath(os.path.join(d, f), dirs[kind]) for d, _, fs in os.walk(dirs[kind])
                          for f in fs if "tfevents" not in f) for kind in dirs}
    assert found["ours"] == found["tbx"] == found["torch"]
    assert len(found["ours"]) == 1 + 5 + 4 + 3  # the config, tensors.tsv x5, metadata.tsv x4, sprite.png x3


def test_tensor_and_metadata_files_are_byte_identical(three):
    dirs, returned = three
    for directory in returned:
        rel = os.path.relpath(directory, dirs["ours"])
        for name in ("tensors.tsv", "metadata.tsv"):
            ours = os.path.join(directory, name)
            if not os.path.exists(ours):
                assert not os.path.exists(os.path.join(dirs["tbx"], rel, name))
                continue
            for kind in ("tbx", "torch"):
                assert _read(ours) == _read(os.path.join(dirs[kind], rel, name)), (kind, rel, name)
    assert _read(os.path.join(returned[0], "tensors.tsv")).count(b"\n") == 20
    assert _read(os.path.join(returned[1], "metadata.tsv")).startswith(b"index\tclass\tquarter\n0\tc0\t0.0\n")
    assert _read(os.path.join(returned[2], "metadata.tsv")).splitlines()[1] == b"0.16666667"  # str(np.float32)
    assert _read(os.path.join(returned[3], "tensors.tsv")) == b"0.0999755859375\t-2.5\t1.0013580322265625e-05\n"


def test_sprites_match_torch_bytes_and_tensorboardx_pixels(three):
    dirs, returned = three
    for directory, kwargs in zip(returned, _calls()):
        if kwargs.get("label_img") is None:
            assert not os.path.exists(os.path.join(directory, "sprite.png"))
            continue
        rel = os.path.relpath(directory, dirs["ours"])
        ours = os.path.join(directory, "sprite.png")
        assert _read(ours) == _read(os.path.join(dirs["torch"], rel, "sprite.png"))
        got = _pixels(ours)
        n, _, h, w = kwargs["label_img"].shape
        per_row = int(np.ceil(np.sqrt(n)))
        assert got.shape == (per_row * w, per_row * w, 3)
        filled = -(-n // per_row) * h  # tensorboardX leaves the rows below the grid uninitialized
        assert np.array_equal(got[:filled], _pixels(os.path.join(dirs["tbx"], rel, "sprite.png"))[:filled])
        assert not got[filled:].any()
    # independent check of the tiling: image i at row i // per_row, column i % per_row
    label_img = _calls()[0]["label_img"].numpy()
    got = _pixels(os.path.join(returned[0], "sprite.png"))
    want = (label_img.astype(np.float64) * 255).clip(0, 255).astype(np.uint8).transpose(0, 2, 3, 1)
    for i in range(20):
        r, c = divmod(i, 5)
        assert np.array_equal(got[r * 8:(r + 1) * 8, c * 8:(c + 1) * 8], want[i])
    gray = _pixels(os.path.join(returned[1], "sprite.png"))
    assert np.array_equal(gray[..., 0], gray[..., 2])


@pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning")  # tensorboardX's unescaped "\\"
def test_config_parses_as_tensorboardx_and_torch_write_it(three):
    dirs, _ = three
    ours_path = os.path.join(dirs["ours"], _projector.PROJECTOR_FILENAME)
    ours = _tb_config(ours_path)
    assert ours == _tb_config(os.path.join(dirs["tbx"], _projector.PROJECTOR_FILENAME))
    assert _read(ours_path) == _read(os.path.join(dirs["torch"], _projector.PROJECTOR_FILENAME))
    assert [e.tensor_name for e in ours.embeddings] == [
        "default:00000", "feat/a%b\\c:00001", "ints:123456", "half:00002", "default:00002"]
    first = ours.embeddings[0]
    assert (first.tensor_path, first.metadata_path, first.sprite.image_path, list(first.sprite.single_image_dim)) \
        == ("00000/default/tensors.tsv", "00000/default/metadata.tsv", "00000/default/sprite.png", [8, 8])
    assert not ours.embeddings[2].HasField("sprite") and not ours.embeddings[3].metadata_path
    assert list(ours.embeddings[1].sprite.single_image_dim) == [6, 6]


def _plugin_get(plugin, route, **args):
    from werkzeug.test import Client
    response = Client(plugin.get_plugin_apps()[route]).get("/", query_string=args)
    return response.status_code, response.headers.get("Content-Type", ""), response.get_data()


def _projector_plugin(logdir):
    from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer
    from tensorboard.plugins import base_plugin
    from tensorboard.plugins.projector.projector_plugin import ProjectorPlugin
    multiplexer = plugin_event_multiplexer.EventMultiplexer()
    multiplexer.AddRunsFromDirectory(logdir)
    multiplexer.Reload()
    provider = data_provider.MultiplexerDataProvider(multiplexer, logdir)
    return ProjectorPlugin(base_plugin.TBContext(logdir=logdir, data_provider=provider, multiplexer=multiplexer))


def test_tensorboard_projector_plugin_serves_the_files(tmp_path):
    run = tmp_path / "run_a"
    tensorboardX.SummaryWriter(str(run)).close()  # an event file makes run_a a run TensorBoard lists
    calls = _calls()
    dirs = _ours(str(run), calls[:2])
    plugin = _projector_plugin(str(tmp_path))
    status, _, body = _plugin_get(plugin, "/runs")
    assert status == 200 and json.loads(body) == ["run_a"]
    status, _, body = _plugin_get(plugin, "/info", run="run_a")
    info = json.loads(body)
    assert status == 200 and [e["tensorName"] for e in info["embeddings"]] == ["default:00000", "feat/a%b\\c:00001"]
    assert [e["tensorShape"] for e in info["embeddings"]] == [[20, 5], [10, 4]]
    for directory, kwargs, entry in zip(dirs, calls, info["embeddings"]):
        name = entry["tensorName"]
        status, _, body = _plugin_get(plugin, "/tensor", run="run_a", name=name)
        mat = np.asarray(kwargs["mat"], dtype=np.float32)
        assert status == 200 and np.array_equal(np.frombuffer(body, dtype=np.float32).reshape(mat.shape), mat)
        status, _, body = _plugin_get(plugin, "/metadata", run="run_a", name=name)
        assert status == 200 and body == _read(os.path.join(directory, "metadata.tsv"))
        status, mime, body = _plugin_get(plugin, "/sprite_image", run="run_a", name=name)
        assert status == 200 and mime.startswith("image/png") and body == _read(os.path.join(directory, "sprite.png"))
    # a metadata file with a header row: TensorBoard counts it as such (num_rows excludes it)
    status, _, body = _plugin_get(plugin, "/metadata", run="run_a", name="feat/a%b\\c:00001", num_rows=2)
    assert body.decode().splitlines() == ["index\tclass\tquarter", "0\tc0\t0.0", "1\tc1\t0.25"]


def test_same_directory_is_replaced_not_duplicated(tmp_path):
    logdir = str(tmp_path)
    write_embedding(logdir, np.ones((2, 2)), metadata=["a", "b"], label_img=np.zeros((2, 3, 2, 2)))
    write_embedding(logdir, np.ones((3, 2)), global_step=1, tag="other")
    with pytest.warns(UserWarning, match="exists"):
        directory = write_embedding(logdir, np.full((3, 2), 2.0), metadata=["c", "d", "e"])
    config = _tb_config(os.path.join(logdir, _projector.PROJECTOR_FILENAME))
    assert [e.tensor_path for e in config.embeddings] == ["00000/default/tensors.tsv", "00001/other/tensors.tsv"]
    assert not config.embeddings[0].HasField("sprite")  # the entry describes the latest call
    assert _read(os.path.join(directory, "tensors.tsv")) == b"2.0\t2.0\n" * 3
    assert _read(os.path.join(directory, "metadata.tsv")) == b"c\nd\ne\n"


def test_appends_to_a_config_written_by_tensorboardx(tmp_path):
    logdir = str(tmp_path)
    writer = tensorboardX.SummaryWriter(logdir)
    writer.add_embedding(np.eye(3), metadata=["p", "q", "r"])
    writer.add_embedding(np.eye(3), metadata=["p", "q", "r"])  # tensorboardX duplicates the entry
    writer.close()
    path = os.path.join(logdir, _projector.PROJECTOR_FILENAME)
    with open(path, "a") as f:
        f.write('model_checkpoint_dir: "ckpt"\n')
    before = _tb_config(path)
    write_embedding(logdir, np.eye(2), global_step=4)
    after = _tb_config(path)
    assert after.model_checkpoint_dir == "ckpt"
    assert list(after.embeddings) == list(before.embeddings) + [tb_projector_pb2.EmbeddingInfo(
        tensor_name="default:00004", tensor_path="00004/default/tensors.tsv")]
    with pytest.warns(UserWarning):
        write_embedding(logdir, np.eye(3), metadata=["p", "q", "r"])
    assert len(_tb_config(path).embeddings) == 2  # the duplicate pair collapsed into one


def test_unparsable_config_is_an_error_and_left_alone(tmp_path):
    path = tmp_path / _projector.PROJECTOR_FILENAME
    path.write_text("embeddings { tensor_nam: 1 }\n")
    with pytest.raises(ValueError, match="not a ProjectorConfig"):
        write_embedding(str(tmp_path), np.eye(2))
    assert path.read_text() == "embeddings { tensor_nam: 1 }\n"


def test_concurrent_writers_keep_every_entry(tmp_path):
    errors = []

    def work(i):
        try:
            write_embedding(str(tmp_path), np.eye(2) * i, tag="t%d" % i)
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    config = _tb_config(str(tmp_path / _projector.PROJECTOR_FILENAME))
    assert sorted(e.tensor_name for e in config.embeddings) == ["t%d:00000" % i for i in range(8)]
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]


def test_our_choices_where_tensorboardx_writes_something_unreadable(tmp_path):
    logdir = str(tmp_path)
    # uint8 images are pixel values (tensorboardX multiplies them by 255 and saturates)
    img = np.arange(4 * 3 * 3 * 3, dtype=np.uint8).reshape(4, 3, 3, 3) * 2
    d = write_embedding(logdir, np.ones((4, 1)), label_img=img, tag="u8")
    got = _pixels(os.path.join(d, "sprite.png"))
    assert np.array_equal(got[:3, :3], img[0].transpose(1, 2, 0))
    assert np.array_equal(got[3:, 3:], img[3].transpose(1, 2, 0))
    # one metadata column: no header row, which TensorBoard would read as a first label
    d = write_embedding(logdir, np.ones((2, 1)), metadata=[["a"], ["b"]], metadata_header=["name"], tag="one")
    assert _read(os.path.join(d, "metadata.tsv")) == b"a\nb\n"
    # torch scalars and tensors print as their values, not "tensor(1)"; bytes are decoded
    d = write_embedding(logdir, np.ones((3, 1)), metadata=torch.tensor([1, 2, 3]), tag="t")
    assert _read(os.path.join(d, "metadata.tsv")) == b"1\n2\n3\n"
    d = write_embedding(logdir, np.ones((2, 1)), metadata=[torch.tensor(7), "h\u00e9".encode()], tag="b")
    assert _read(os.path.join(d, "metadata.tsv")) == "7\nh\u00e9\n".encode()
    # a tag that needs escaping in text format is still parsed back intact
    write_embedding(logdir, np.ones((1, 1)), tag='q"uote')
    names = [e.tensor_name for e in _tb_config(os.path.join(logdir, _projector.PROJECTOR_FILENAME)).embeddings]
    assert names[-1] == 'q"uote:00000'


BAD = [
    (dict(mat=np.ones((3, 2)), metadata=["a", "b"]), ValueError, "metadata has 2 rows but mat has 3"),
    (dict(mat=np.ones((3, 2)), label_img=np.zeros((2, 3, 4, 4))), ValueError, "label_img has 2 images but mat has 3"),
    (dict(mat=np.ones((2, 2)), label_img=np.zeros((2, 3, 4, 5))), ValueError, "square"),
    (dict(mat=np.ones((2, 2)), label_img=np.zeros((2, 4, 4, 4))), ValueError, "1 or 3 channels"),
    (dict(mat=np.ones((2, 2)), label_img=np.zeros((2, 4, 4, 3))), ValueError, "transpose"),
    (dict(mat=np.ones((2, 2)), label_img=np.zeros((2, 4, 4))), ValueError, "4-D"),
    (dict(mat=np.ones((2, 2)), label_img=np.zeros((2, 3, 4, 4), dtype=np.int32)), TypeError, "uint8"),
    (dict(mat=np.ones((2, 2)), label_img=np.full((2, 3, 4, 4), np.nan)), ValueError, "non-finite"),
    (dict(mat=np.ones((10, 2)), label_img=np.broadcast_to(np.uint8(0), (10, 1, 2049, 2049))), ValueError, "8192"),
    (dict(mat=np.ones(3)), ValueError, "2-D"),
    (dict(mat=np.ones((0, 3))), ValueError, "empty"),
    (dict(mat=np.ones((2, 2), dtype=bool)), TypeError, "bool"),
    (dict(mat=[["a", "b"]]), TypeError, "mat"),
    (dict(mat=np.array([[1.0, np.inf]])), ValueError, "non-finite"),
    (dict(mat=np.ones((2, 2)), metadata=[[1, 2], [3, 4]]), ValueError, "metadata_header"),
    (dict(mat=np.ones((2, 2)), metadata=[[1, 2], [3, 4]], metadata_header=["a"]), ValueError, "1 names"),
    (dict(mat=np.ones((2, 2)), metadata=[[1, 2], [3]], metadata_header=["a", "b"]), ValueError, r"metadata\[1\]"),
    (dict(mat=np.ones((2, 2)), metadata=["a\tb", "c"]), ValueError, "tab or line break"),
    (dict(mat=np.ones((2, 2)), metadata=["a", None]), TypeError, r"metadata\[1\]"),
    (dict(mat=np.ones((2, 2)), metadata=[[], []]), ValueError, "empty row"),
    (dict(mat=np.ones((2, 2)), metadata=["a", " "]), ValueError, r"metadata\[1\] is blank"),
    (dict(mat=np.ones((2, 2)), metadata=[["a", "b"], ["", ""]], metadata_header=["x", "y"]), ValueError, "blank"),
    (dict(mat=np.ones((2, 2)), metadata=[["a", "b"], ["c", ""]], metadata_header=["", ""]), ValueError, "blank"),
    (dict(mat=np.ones((2, 2)), metadata="ab"), TypeError, "metadata must be a list"),
    (dict(mat=np.ones((2, 2)), metadata_header=["a"]), ValueError, "without metadata"),
    (dict(mat=np.ones((2, 2)), tag=3), TypeError, "tag must be a str"),
    (dict(mat=np.ones((2, 2)), tag=""), ValueError, "tag"),
    (dict(mat=np.ones((2, 2)), tag=".."), ValueError, "embedding directory"),
    (dict(mat=np.ones((2, 2)), global_step=1.5), TypeError, "global_step"),
]


@pytest.mark.parametrize("kwargs,error,match", BAD)
def test_bad_inputs_raise_and_write_nothing(tmp_path, kwargs, error, match):
    logdir = tmp_path / "logs"
    with pytest.raises(error, match=match):
        write_embedding(str(logdir), **kwargs)
    assert not logdir.exists()


def test_bad_logdir():
    with pytest.raises(TypeError, match="logdir"):
        write_embedding(3, np.ones((1, 1)))


def _is_repeated(field):
    """FieldDescriptor.label is gone in protobuf 7; is_repeated is missing before 5."""
    if hasattr(field, "is_repeated"):
        return field.is_repeated
    return field.label == field.LABEL_REPEATED


def test_proto_matches_tensorboards_projector_config():
    ours = {m.name: m for m in plugin_projector_pb2.DESCRIPTOR.message_types_by_name.values()}
    theirs = {m.name: m for m in tb_projector_pb2.DESCRIPTOR.message_types_by_name.values()}
    assert ours.keys() == theirs.keys() == {"SpriteMetadata", "EmbeddingInfo", "ProjectorConfig"}
    for name, message in ours.items():
        def fields(d):
            return [(f.number, f.name, f.type, _is_repeated(f), f.message_type.name if f.message_type else None)
                    for f in d.fields]
        assert fields(message) == fields(theirs[name]), name
    config = plugin_projector_pb2.ProjectorConfig(model_checkpoint_path="m", model_checkpoint_dir="d")
    config.embeddings.add(tensor_name="t", metadata_path="p", bookmarks_path="b", tensor_shape=[3, 4],
                          tensor_path="x", sprite=plugin_projector_pb2.SpriteMetadata(image_path="s",
                                                                                      single_image_dim=[2, 2]))
    wire = config.SerializeToString()
    assert tb_projector_pb2.ProjectorConfig.FromString(wire).SerializeToString() == wire
    assert text_format.MessageToString(tb_projector_pb2.ProjectorConfig.FromString(wire)) == \
        text_format.MessageToString(config)
