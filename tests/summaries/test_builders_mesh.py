"""The mesh builder (``_mesh.mesh``) against torch.utils.tensorboard's and tensorboardX's ``mesh``, TensorBoard's
own ``mesh_pb``, and TensorBoard's reading side (the plugin's metadata parser, EventAccumulator, and the mesh
plugin's HTTP handlers called in-process on a data provider). Also: our ``plugin_mesh.proto`` against
TensorBoard's ``plugin_data.proto``, and bad inputs."""
import json
import warnings

import numpy as np
import pytest

from tensorboard.compat.proto import summary_pb2 as tb_summary_pb2
from tensorboard.plugins.mesh import metadata as tb_mesh_metadata
from tensorboard.plugins.mesh import plugin_data_pb2 as tb_mesh_pb2
from tensorboard.util import tensor_util

from tfevents.proto import plugin_mesh_pb2
from tfevents.summaries.builders.meshes import mesh

torch = pytest.importorskip("torch")
TB = tb_mesh_pb2.MeshPluginData
NAMES = {TB.VERTEX: "VERTEX", TB.FACE: "FACE", TB.COLOR: "COLOR"}
CONFIG = {"camera": {"cls": "PerspectiveCamera", "fov": 75},
          "lights": [{"cls": "AmbientLight", "color": "#ffffff", "intensity": 0.75}],
          "material": {"cls": "MeshStandardMaterial", "roughness": 1, "metalness": 0}}


def as_tb(summary):
    return tb_summary_pb2.Summary.FromString(summary.SerializeToString())


def tetrahedra(batch=2, seed=0):
    """``batch`` noisy tetrahedra: float32 vertices [B, 4, 3], int faces [B, 4, 3], int colors [B, 4, 3]."""
    rng = np.random.default_rng(seed)
    base = np.array([[1, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]], dtype=np.float32)
    vertices = (base + rng.normal(0, 0.1, (batch, 4, 3))).astype(np.float32)
    faces = np.tile(np.array([[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]), (batch, 1, 1))
    colors = rng.integers(0, 256, (batch, 4, 3))
    return vertices, faces, colors


# (colors?, faces?) combinations: point cloud, colored cloud, mesh, colored mesh
COMBOS = [(False, False), (True, False), (False, True), (True, True)]


def pick(combo, data):
    vertices, faces, colors = data
    with_colors, with_faces = combo
    return vertices, (colors if with_colors else None), (faces if with_faces else None)


def expected_parts(combo):
    with_colors, with_faces = combo
    return [TB.VERTEX] + ([TB.FACE] if with_faces else []) + ([TB.COLOR] if with_colors else [])


# ------------------------------------------------------------------------------------------- the proto

def message_descriptor_proto(module, package):
    """The MeshPluginData DescriptorProto as protoc compiled it, with the package taken out of type names
    (ours is ``tfevents``, TensorBoard's ``tensorboard.mesh``) and comments/json names ignored."""
    from google.protobuf import descriptor_pb2
    fdp = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
    assert fdp.package == package and fdp.syntax == "proto3"
    assert [m.name for m in fdp.message_type] == ["MeshPluginData"] and not fdp.enum_type
    message = fdp.message_type[0]
    for field in message.field:
        field.ClearField("json_name")
        field.type_name = field.type_name.replace("." + package + ".", ".")
    return message


def test_proto_is_tensorboards_plugin_data():
    ours = message_descriptor_proto(plugin_mesh_pb2, "tfevents")
    theirs = message_descriptor_proto(tb_mesh_pb2, "tensorboard.mesh")
    assert ours == theirs
    assert [(f.number, f.name) for f in ours.field] == [(1, "version"), (2, "name"), (3, "content_type"),
                                                        (5, "json_config"), (6, "shape"), (7, "components")]
    assert [(v.number, v.name) for v in ours.enum_type[0].value] == \
        [(0, "UNDEFINED"), (1, "VERTEX"), (2, "FACE"), (3, "COLOR")]


def test_proto_round_trips_with_tensorboards():
    full = dict(version=3, name="a/b\u00e9", content_type=TB.COLOR, json_config='{"x": 1}',
                shape=[2, -1, 3], components=13)
    ours = plugin_mesh_pb2.MeshPluginData(**full)
    wire = ours.SerializeToString()
    theirs = TB.FromString(wire)
    assert {f.name: v for f, v in theirs.ListFields()} == {f.name: v for f, v in ours.ListFields()}
    assert theirs.SerializeToString() == wire
    assert plugin_mesh_pb2.MeshPluginData.FromString(TB(**full).SerializeToString()) == ours


# --------------------------------------------------------------------------------- against the writers

def assert_same_values(ours, theirs, parts):
    """Tags, plugin name and content (byte for byte), tensor dtype, shape and values."""
    assert [v.tag for v in ours.value] == [v.tag for v in theirs.value]
    assert [v.tag for v in ours.value] == ["m/x_" + NAMES[p] for p in parts]
    for a, b in zip(ours.value, theirs.value):
        assert a.metadata == b.metadata
        assert a.tensor.dtype == b.tensor.dtype
        assert a.tensor.tensor_shape == b.tensor.tensor_shape
        np.testing.assert_array_equal(tensor_util.make_ndarray(a.tensor), tensor_util.make_ndarray(b.tensor))


@pytest.mark.parametrize("combo", COMBOS)
@pytest.mark.parametrize("config", [None, CONFIG])
def test_matches_torch(combo, config):
    torch_summary = pytest.importorskip("torch.utils.tensorboard.summary")
    vertices, colors, faces = pick(combo, tetrahedra())
    t = lambda a: None if a is None else torch.as_tensor(a)
    theirs = torch_summary.mesh("m/x", t(vertices), t(colors), t(faces), config)
    ours = as_tb(mesh("m/x", vertices, colors, faces, config))
    assert_same_values(ours, theirs, expected_parts(combo))
    # torch tensors in give the same bytes as numpy in
    assert mesh("m/x", t(vertices), t(colors), t(faces), config) == mesh("m/x", vertices, colors, faces, config)
    first = TB.FromString(ours.value[0].metadata.plugin_data.content)
    assert first.json_config == (json.dumps(config, sort_keys=True) if config else "{}")
    assert first.components == sum(1 << p for p in expected_parts(combo))


@pytest.mark.parametrize("combo", COMBOS)
def test_matches_tensorboard_mesh_pb(combo):
    """TensorBoard's own numpy builder: same tags and metadata; its tensors are float32/int32/uint8, ours
    float32 (as torch and tensorboardX write them) with the same values."""
    pytest.importorskip("tensorflow")
    from tensorboard.plugins.mesh import summary_v2
    vertices, colors, faces = pick(combo, tetrahedra())
    theirs = summary_v2.mesh_pb("m/x", vertices, faces=faces, colors=colors, config_dict=CONFIG)
    ours = as_tb(mesh("m/x", vertices, colors, faces, CONFIG))
    assert [v.tag for v in ours.value] == [v.tag for v in theirs.value]
    for a, b in zip(ours.value, theirs.value):
        assert a.metadata == b.metadata
        assert a.tensor.tensor_shape == b.tensor.tensor_shape
        np.testing.assert_array_equal(tensor_util.make_ndarray(a.tensor),
                                      tensor_util.make_ndarray(b.tensor).astype(np.float32))


@pytest.mark.parametrize("combo", COMBOS)
@pytest.mark.parametrize("config", [None, CONFIG])
def test_matches_tensorboardx(combo, config):
    """tensorboardX's ``mesh``: same values in the same order; its differences are known and checked:
    tags ``<tag>_1/_2/_3`` (the enum number, not its name), no ``components`` (its proto lacks the field;
    TensorBoard's parser then assumes all three), ``json_config`` ``'null'`` for no config."""
    tbx_summary = pytest.importorskip("tensorboardX.summary")
    vertices, colors, faces = pick(combo, tetrahedra())
    theirs = as_tb(tbx_summary.mesh("m/x", vertices, colors, faces, config))
    ours = as_tb(mesh("m/x", vertices, colors, faces, config))
    parts = expected_parts(combo)
    assert [v.tag for v in theirs.value] == ["m/x_%d" % p for p in parts]
    assert [v.tag for v in ours.value] == ["m/x_%s" % NAMES[p] for p in parts]
    for a, b in zip(ours.value, theirs.value):
        assert a.metadata.plugin_data.plugin_name == b.metadata.plugin_data.plugin_name == "mesh"
        assert (a.metadata.display_name, a.metadata.summary_description) == \
               (b.metadata.display_name, b.metadata.summary_description) == ("", "")
        ours_md, theirs_md = (TB.FromString(x.metadata.plugin_data.content) for x in (a, b))
        assert theirs_md.components == 0 and ours_md.components == sum(1 << p for p in parts)
        assert theirs_md.json_config == json.dumps(config, sort_keys=True)
        assert ours_md.json_config == (theirs_md.json_config if config else "{}")
        for field in ("version", "name", "content_type", "shape"):
            assert getattr(ours_md, field) == getattr(theirs_md, field), field
        assert a.tensor.dtype == b.tensor.dtype
        assert a.tensor.tensor_shape == b.tensor.tensor_shape
        np.testing.assert_array_equal(tensor_util.make_ndarray(a.tensor), tensor_util.make_ndarray(b.tensor))


def test_inputs_lists_dtypes_and_float_faces():
    vertices, faces, colors = tetrahedra(batch=1)
    reference = mesh("m", vertices, colors.astype(np.uint8), faces)
    assert mesh("m", vertices.tolist(), colors.tolist(), faces.tolist()) == reference
    assert mesh("m", torch.as_tensor(vertices), torch.as_tensor(colors),
                torch.as_tensor(faces, dtype=torch.int32)) == reference
    bf16 = torch.as_tensor(vertices, dtype=torch.bfloat16)  # numpy has no bfloat16: read as float32
    assert mesh("m", bf16) == mesh("m", bf16.float().numpy())
    assert mesh("m", vertices, colors.astype(np.float64), faces.astype(np.float32)) == reference
    float64 = mesh("m", vertices.astype(np.float64), None, None).value[0].tensor
    np.testing.assert_array_equal(tensor_util.make_ndarray(as_tb(mesh("m", vertices)).value[0].tensor), vertices)
    assert float64 == mesh("m", vertices).value[0].tensor


def test_tag_is_cleaned_like_the_other_builders():
    vertices, _, _ = tetrahedra(batch=1)
    with pytest.warns(UserWarning, match="illegal"):
        summary = mesh("a b", vertices)
    assert summary.value[0].tag == "a_b_VERTEX"
    assert TB.FromString(summary.value[0].metadata.plugin_data.content).name == "a_b"


# ----------------------------------------------------------------------------- TensorBoard reads it

@pytest.fixture(scope="module")
def written_run(tmp_path_factory):
    """A run with a colored mesh at steps 0 and 5 and a point cloud at step 2, written by our writer."""
    from tfevents.summaries.writer import SummaryWriter
    logdir = str(tmp_path_factory.mktemp("mesh_run"))
    data = {step: tetrahedra(batch=2, seed=step) for step in (0, 5)}
    with SummaryWriter(logdir) as writer:
        for step, (vertices, faces, colors) in data.items():
            writer.add_summary(mesh("shape", vertices, colors, faces, CONFIG), global_step=step)
        writer.add_summary(mesh("cloud", data[0][0]), global_step=2)
    return logdir, data


def test_metadata_parser_and_event_accumulator_read_it(written_run):
    from tensorboard.backend.event_processing import event_accumulator as ea
    logdir, data = written_run
    acc = ea.EventAccumulator(logdir, size_guidance={ea.TENSORS: 0})
    acc.Reload()
    assert sorted(acc.Tags()[ea.TENSORS]) == ["cloud_VERTEX", "shape_COLOR", "shape_FACE", "shape_VERTEX"]
    for tag, index in (("shape_VERTEX", 0), ("shape_FACE", 1), ("shape_COLOR", 2)):
        md = acc.SummaryMetadata(tag)
        assert md.plugin_data.plugin_name == tb_mesh_metadata.PLUGIN_NAME
        parsed = tb_mesh_metadata.parse_plugin_metadata(md.plugin_data.content)
        assert NAMES[parsed.content_type] == tag.split("_")[1]
        assert (parsed.name, parsed.version, parsed.components) == ("shape", 0, 0b1110)
        assert json.loads(parsed.json_config) == CONFIG
        events = acc.Tensors(tag)
        assert [e.step for e in events] == [0, 5]
        for event in events:
            expected = data[event.step][index]  # tetrahedra() order: vertices, faces, colors
            assert list(parsed.shape) == list(expected.shape)
            np.testing.assert_array_equal(tensor_util.make_ndarray(event.tensor_proto), expected.astype(np.float32))
    cloud = tb_mesh_metadata.parse_plugin_metadata(acc.SummaryMetadata("cloud_VERTEX").plugin_data.content)
    assert (cloud.name, cloud.content_type, cloud.components, cloud.json_config) == ("cloud", TB.VERTEX, 2, "{}")


def test_mesh_plugin_serves_it(written_run):
    """TensorBoard's MeshPlugin handlers (``/tags``, ``/meshes``, ``/data``) on a data provider over our run."""
    from werkzeug import test as wtest
    from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer
    from tensorboard.plugins import base_plugin
    from tensorboard.plugins.mesh import mesh_plugin
    logdir, data = written_run
    multiplexer = plugin_event_multiplexer.EventMultiplexer()
    multiplexer.AddRunsFromDirectory(logdir)
    multiplexer.Reload()
    provider = data_provider.MultiplexerDataProvider(multiplexer, logdir)
    plugin = mesh_plugin.MeshPlugin(base_plugin.TBContext(data_provider=provider, logdir=logdir))
    apps = plugin.get_plugin_apps()

    def get(route, **args):
        response = wtest.Client(apps[route]).get(route, query_string=args)
        assert response.status_code == 200, response.get_data()
        return response.get_data()

    assert json.loads(get("/tags")) == {".": {"shape": {"samples": 2}, "cloud": {"samples": 2}}}
    meshes = json.loads(get("/meshes", run=".", tag="shape"))
    assert sorted((m["step"], m["content_type"]) for m in meshes) == \
        [(s, c) for s in (0, 5) for c in (TB.VERTEX, TB.FACE, TB.COLOR)]
    for m in meshes:
        assert m["components"] == 0b1110 and json.loads(m["config"]) == CONFIG
        assert m["data_shape"] == [2, 4, 3]
    for step in (0, 5):
        vertices, faces, colors = data[step]
        for name, array, dtype in (("VERTEX", vertices, np.float32), ("FACE", faces, np.int32),
                                   ("COLOR", colors, np.uint8)):
            for sample in (0, 1):
                served = get("/data", run=".", tag="shape", content_type=name, sample=sample, step=step)
                assert served == array[sample].astype(dtype).tobytes(), (step, name, sample)


# ------------------------------------------------------------------------------------------ bad input

V, F, C = tetrahedra(batch=2)
BAD = [
    (dict(tag=3), TypeError, "tag must be a str"),
    (dict(tag=""), ValueError, "tag must be a non-empty"),
    (dict(vertices="abc"), TypeError, "vertices must hold real numbers"),
    (dict(vertices=V[0]), ValueError, r"vertices must have shape \[batch, count, 3\]"),
    (dict(vertices=V[..., :2]), ValueError, "vertices must have shape"),
    (dict(vertices=np.zeros((1, 0, 3))), ValueError, "vertices is empty"),
    (dict(vertices=np.where(V > 1, np.nan, V)), ValueError, "vertices contains .* non-finite"),
    (dict(vertices=[[[0, 0, 0], [1, 1]]]), ValueError, "vertices could not be converted"),
    (dict(colors=C[:, :3]), ValueError, "one RGB triple per vertex"),
    (dict(colors=C + 1000), ValueError, r"colors must lie in \[0, 255\]"),
    (dict(colors=-C.astype(float) - 1), ValueError, r"colors must lie in \[0, 255\]"),
    (dict(colors=np.full(V.shape, np.inf)), ValueError, "colors contains"),
    (dict(faces=F[:1]), ValueError, "faces has batch size 1 but vertices has 2"),
    (dict(faces=F[..., :2]), ValueError, "faces must have shape"),
    (dict(faces=F + 4), ValueError, r"faces must index vertices in \[0, 4\)"),
    (dict(faces=F - 1), ValueError, r"faces must index vertices in \[0, 4\)"),
    (dict(faces=F + 0.5), ValueError, "integer vertex indices"),
    (dict(faces=F.astype(bool)), TypeError, "integer vertex indices"),
    (dict(faces=np.zeros((2, 0, 3), dtype=int)), ValueError, "faces is empty"),
    (dict(config_dict=[("camera", 1)]), TypeError, "config_dict must be a dict"),
    (dict(config_dict={"camera": {"fov": np.float32(75)}}), TypeError, "config_dict must be JSON-serializable"),
    (dict(config_dict={"camera": {"fov": float("nan")}}), ValueError, "config_dict must be JSON-serializable"),
]


@pytest.mark.parametrize("override,error,match", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_input(override, error, match):
    kwargs = dict(tag="m", vertices=V, colors=C, faces=F, config_dict=CONFIG)
    kwargs.update(override)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(error, match=match):
            mesh(**kwargs)


def test_face_indices_beyond_float32_precision_are_refused(monkeypatch):
    """The tensors are float32 (as torch/tensorboardX write them): an index above 2**24 would be rounded.
    The limit is lowered here so the test needs no 16M-vertex array."""
    from tfevents.summaries.builders import meshes as _mesh
    assert _mesh._FLOAT32_EXACT_INT == 1 << 24 and np.float32(1 << 24) + np.float32(1) == np.float32(1 << 24)
    monkeypatch.setattr(_mesh, "_FLOAT32_EXACT_INT", 3)
    mesh("m", V, faces=np.minimum(F, 2))
    with pytest.raises(ValueError, match=r"faces index vertex 3; indices above 2\*\*24"):
        mesh("m", V, faces=F)
