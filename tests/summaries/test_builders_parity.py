"""Writer parity with tensorboardX / torch.utils.tensorboard for custom-scalar charts, ``add_tensor``,
``export_scalars_to_json`` and the pr_curve ``num_thresholds`` limits: the same inputs go through our builders
and through theirs (their writers' event files where the builder is private to the writer), the results are
compared field by field, and TensorBoard's / TensorFlow's own Python side reads ours back."""
import glob
import json
import math
import os

import numpy as np
import pytest

from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
from tensorboard.compat.proto import summary_pb2 as tb_summary_pb2
from tensorboard.compat.proto import types_pb2 as tb_types_pb2
from tensorboard.plugins.custom_scalar import layout_pb2 as tb_layout_pb2
from tensorboard.plugins.custom_scalar import metadata as cs_metadata
from tensorboard.util import tensor_util

from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.summaries.builders import plugins as plugins
from tfevents.summaries.builders import tensors as tensors
from tfevents.summaries.builders.common import as_array

tbx = pytest.importorskip("tensorboardX")
torch = pytest.importorskip("torch")
from tensorboardX import summary as tbx_summary  # noqa: E402
from torch.utils.tensorboard import summary as torch_summary  # noqa: E402


def as_tb(summary):
    """Our Summary re-read as TensorBoard's message (wire compatibility is part of every comparison)."""
    return tb_summary_pb2.Summary.FromString(summary.SerializeToString())


def tf_tensor(proto):
    """Our (or TensorBoard's) TensorProto as TensorFlow's own message, for ``tf.make_ndarray``."""
    from tensorflow.core.framework import tensor_pb2
    return tensor_pb2.TensorProto.FromString(proto.SerializeToString())


def summaries_in(logdir):
    """Every Summary value of the event files directly in ``logdir``, read with TensorBoard's loader."""
    values = []
    for path in sorted(glob.glob(os.path.join(logdir, "*tfevents*"))):
        for event in LegacyEventFileLoader(path).Load():  # as written: no data_class migration
            if event.HasField("summary"):
                values.extend(event.summary.value)
    return values


# ----------------------------------------------------------------------------------- custom-scalar charts

CHARTS = [
    ("multiline", "add_custom_scalars_multilinechart", (["twse/0050", "twse/2330", "loss/.*"],), {}),
    ("multiline", "add_custom_scalars_multilinechart", (["loss"],), {"category": "Taiwan", "title": "stocks"}),
    ("margin", "add_custom_scalars_marginchart", (["dow/aaa", "dow/bbb", "dow/ccc"],), {}),
    ("margin", "add_custom_scalars_marginchart", (("v", "lo", "hi"),), {"category": "USA", "title": "band"}),
]


@pytest.mark.parametrize("kind,method,args,kwargs", CHARTS)
def test_custom_scalar_charts_equal_what_tensorboardx_and_torch_write(tmp_path, kind, method, args, kwargs):
    ours = as_tb(getattr(plugins, "custom_scalars_" + kind + "chart")(*args, **kwargs))
    for name, writer_class in (("tbx", tbx.SummaryWriter), ("torch", pytest.importorskip(
            "torch.utils.tensorboard").SummaryWriter)):
        logdir = str(tmp_path / name)
        writer = writer_class(logdir)
        getattr(writer, method)(list(args[0]), **kwargs)
        writer.close()
        (theirs,) = summaries_in(logdir)
        assert ours.value[0].tag == theirs.tag == cs_metadata.CONFIG_SUMMARY_TAG
        assert ours.value[0].metadata == theirs.metadata
        assert ours.value[0].metadata.plugin_data.plugin_name == cs_metadata.PLUGIN_NAME
        assert ours.value[0].tensor.dtype == theirs.tensor.dtype == tb_types_pb2.DT_STRING
        assert ours.value[0].tensor.tensor_shape == theirs.tensor.tensor_shape
        assert ours.value[0].tensor.string_val == theirs.tensor.string_val  # the serialized Layout, byte for byte
        assert ours.value[0] == theirs
    layout = tb_layout_pb2.Layout.FromString(ours.value[0].tensor.string_val[0])
    (category,) = layout.category
    assert category.title == kwargs.get("category", "default")
    (chart,) = category.chart
    assert chart.title == kwargs.get("title", "untitled")
    if kind == "margin":
        (series,) = chart.margin.series
        assert [series.value, series.lower, series.upper] == list(args[0])
    else:
        assert list(chart.multiline.tag) == args[0]


def test_tensorboards_custom_scalars_plugin_reads_our_chart_layouts(tmp_path):
    """The plugin's /layout handler, in process, over runs our writer wrote: one layout per run, merged."""
    from tensorboard import context
    from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer
    from tensorboard.plugins import base_plugin
    from tensorboard.plugins.custom_scalar import custom_scalars_plugin
    with SummaryWriter(str(tmp_path / "a")) as writer:
        writer.add_summary(plugins.custom_scalars_multilinechart(["loss", "acc/.*"], category="C", title="T"))
        writer.add_scalar("loss", 1.0, 0)
    with SummaryWriter(str(tmp_path / "b")) as writer:
        writer.add_summary(plugins.custom_scalars_marginchart(["v", "lo", "hi"]))
    multiplexer = plugin_event_multiplexer.EventMultiplexer()
    multiplexer.AddRunsFromDirectory(str(tmp_path))
    multiplexer.Reload()
    provider = data_provider.MultiplexerDataProvider(multiplexer, str(tmp_path))
    plugin = custom_scalars_plugin.CustomScalarsPlugin(
        base_plugin.TBContext(data_provider=provider, multiplexer=multiplexer, logdir=str(tmp_path)))
    layout = json.loads(plugin.layout_impl(context.RequestContext(), ""))
    categories = {c["title"]: c["chart"] for c in layout["category"]}
    assert categories == {
        "C": [{"title": "T", "multiline": {"tag": ["loss", "acc/.*"]}}],
        "default": [{"title": "untitled", "margin": {"series": [{"value": "v", "lower": "lo", "upper": "hi"}]}}]}


@pytest.mark.parametrize("build,tags,kwargs,error,match", [
    ("marginchart", ["a", "b"], {}, ValueError, "exactly 3 tags"),
    ("marginchart", ["a", "b", "c", "d"], {}, ValueError, "exactly 3 tags"),
    ("multilinechart", [], {}, ValueError, "at least one"),
    ("multilinechart", "loss", {}, TypeError, "list of str"),
    ("multilinechart", ["loss", 3], {}, TypeError, "list of str"),
    ("marginchart", None, {}, TypeError, "list of str"),
    ("multilinechart", ["loss"], {"category": ""}, ValueError, "category"),
    ("multilinechart", ["loss"], {"title": 5}, TypeError, "title"),
])
def test_custom_scalar_charts_reject_bad_input(build, tags, kwargs, error, match):
    with pytest.raises(error, match=match):
        getattr(plugins, "custom_scalars_" + build)(tags, **kwargs)


# ------------------------------------------------------------------------------------------ add_tensor

def _torch_sample(dtype):
    if dtype == torch.bool:
        return torch.tensor([[True, False, True], [False, False, True]])
    x = torch.tensor([[-2.5, -1.0, 0.0], [1.0, 2.25, 3.0]])
    if dtype.is_complex:
        return (x + 0.5j * x.flip(1)).to(dtype)
    if dtype in (torch.uint8,):
        return torch.tensor([[0, 1, 2], [127, 200, 255]], dtype=dtype)
    return x.to(dtype) if dtype.is_floating_point else (x * 4).to(dtype)


TORCH_DTYPES = [torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool,
                torch.complex64, torch.complex128]


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_tensor_equals_torchs_add_tensor(dtype):
    x = _torch_sample(dtype)
    ours = as_tb(tensors.tensor("weights/t", x))
    theirs = as_tb(torch_summary.tensor_proto("weights/t", x))
    mine, their = ours.value[0], theirs.value[0]
    assert mine.tag == their.tag == "weights/t"
    assert mine.metadata == their.metadata
    assert mine.metadata.plugin_data.plugin_name == "tensor"
    assert mine.tensor.dtype == their.tensor.dtype
    assert mine.tensor.tensor_shape == their.tensor.tensor_shape
    assert [d.size for d in mine.tensor.tensor_shape.dim] == [2, 3]
    assert mine.tensor.ListFields() == their.tensor.ListFields()  # same typed field, same values
    assert ours == theirs
    np.testing.assert_array_equal(tensor_util.make_ndarray(mine.tensor), x.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "uint8"])
def test_tensor_fixes_the_fields_torch_writes_unreadably(tf, dtype):
    """float16/bfloat16: TF stores the 16-bit patterns in half_val (torch writes float32 patterns there);
    uint8: TF reads int_val (torch fills uint32_val, which tf.make_ndarray ignores for DT_UINT8)."""
    x = _torch_sample(getattr(torch, dtype))
    mine = as_tb(tensors.tensor("t", x)).value[0]
    their = as_tb(torch_summary.tensor_proto("t", x)).value[0]
    assert mine.metadata == their.metadata and mine.tensor.dtype == their.tensor.dtype
    assert mine.tensor.tensor_shape == their.tensor.tensor_shape
    tf_proto = tf.make_tensor_proto(x.float().numpy().astype(tf.as_dtype(getattr(tf, dtype)).as_numpy_dtype))
    # tf.make_tensor_proto packs arrays into tensor_content; the decoded arrays must agree
    back = tf.make_ndarray(tf_tensor(mine.tensor))
    np.testing.assert_array_equal(back, tf.make_ndarray(tf_proto))
    np.testing.assert_array_equal(np.asarray(back, dtype=np.float32), x.float().numpy())
    if dtype == "uint8":
        assert list(mine.tensor.int_val) == x.reshape(-1).tolist() and not mine.tensor.uint32_val
        assert list(their.tensor.uint32_val) == x.reshape(-1).tolist()
    else:
        bits = x.reshape(-1).view(torch.int16).numpy().view(np.uint16).tolist()
        assert list(mine.tensor.half_val) == bits
        assert list(their.tensor.half_val) != bits  # torch's float32 patterns


NUMPY_VALUES = {
    "float16": np.array([[-2.5, 0.0, 65504.0]], dtype=np.float16),
    "float32-scalar": np.float32(1.25),
    "float64-big-endian": np.arange(6, dtype=">f8").reshape(3, 2) / 3,
    "int8": np.array([-128, 0, 127], dtype=np.int8),
    "uint16": np.array([0, 65535], dtype=np.uint16),
    "uint32": np.array([[0, 4294967295]], dtype=np.uint32),
    "uint64": np.array([0, 2 ** 64 - 1], dtype=np.uint64),
    "int64": np.array([-(2 ** 63), 2 ** 63 - 1]),
    "bool": np.array([True, False]),
    "complex64": np.array([1 + 2j, -3.5j], dtype=np.complex64),
    "str": np.array([["a", "é"], ["日本", ""]]),
    "bytes": np.array([b"x\x00y", b"\xff"], dtype=object),
    "python-str": "hello",
    "python-float": 3.5,
    "python-nested-list": [[1, 2, 3], [4, 5, 6]],
    "empty": np.zeros((0, 3), dtype=np.float32),
    "nan-inf": np.array([np.nan, np.inf, -np.inf], dtype=np.float32),
}


@pytest.mark.parametrize("name", sorted(NUMPY_VALUES))
def test_tensor_of_any_dtype_reads_back_with_tf_make_ndarray(tf, name):
    value = NUMPY_VALUES[name]
    mine = as_tb(tensors.tensor("t", value)).value[0]
    if isinstance(value, (float, list)):   # TF narrows Python floats/ints to float32/int32; we keep numpy's 64 bits
        value = np.asarray(value)
    expected = tf.make_tensor_proto(value)
    assert mine.tensor.dtype == expected.dtype
    assert [d.size for d in mine.tensor.tensor_shape.dim] == [d.size for d in expected.tensor_shape.dim]
    ours_back = tf.make_ndarray(tf_tensor(mine.tensor))
    theirs_back = tf.make_ndarray(expected)
    assert ours_back.dtype == theirs_back.dtype and ours_back.shape == theirs_back.shape
    np.testing.assert_array_equal(ours_back, theirs_back)
    if mine.tensor.dtype not in (tb_types_pb2.DT_UINT32, tb_types_pb2.DT_UINT64):  # TensorBoard's decoder lacks these
        np.testing.assert_array_equal(tensor_util.make_ndarray(mine.tensor), theirs_back)


def test_tensor_of_ml_dtypes_bfloat16(tf):
    value = np.array([1.5, -2.0, 3.0e38], dtype=tf.bfloat16.as_numpy_dtype)
    mine = as_tb(tensors.tensor("t", value)).value[0]
    assert mine.tensor.dtype == tb_types_pb2.DT_BFLOAT16
    back = tf.make_ndarray(tf_tensor(mine.tensor))
    assert back.dtype == value.dtype
    np.testing.assert_array_equal(back, value)
    scalar = as_tb(tensors.tensor("t", value[0])).value[0].tensor  # a numpy bfloat16 scalar
    assert scalar.dtype == tb_types_pb2.DT_BFLOAT16 and not scalar.tensor_shape.dim
    assert tf.make_ndarray(tf_tensor(scalar)) == value[0]


def test_our_reader_and_event_accumulator_read_tensors_back(tf, tmp_path):
    from tensorboard.backend.event_processing import event_accumulator
    cases = {"f32": _torch_sample(torch.float32), "i64": np.arange(12).reshape(3, 4), "u16": NUMPY_VALUES["uint16"],
             "bool": NUMPY_VALUES["bool"], "f16": NUMPY_VALUES["float16"], "str": NUMPY_VALUES["str"],
             "bf16": _torch_sample(torch.bfloat16)}
    with SummaryWriter(str(tmp_path)) as writer:
        for step in (1, 2):
            for tag, value in cases.items():
                writer.add_summary(tensors.tensor(tag, value), step)
    logdir = load_logdir(str(tmp_path), workers=1, on_error="raise")
    assert not logdir.problems
    accumulator = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    accumulator.Reload()
    for tag, value in cases.items():
        expected = value.float().numpy() if tag == "bf16" else as_array(value, "v")
        if expected.dtype.kind == "U":
            expected = np.vectorize(lambda s: s.encode("utf-8"), otypes=[object])(expected)
        records = logdir.tensors[(".", tag)]
        assert [r.step for r in records] == [1, 2]
        np.testing.assert_array_equal(records[-1].value, expected)
        assert records[-1].value.shape == expected.shape
        events = accumulator.Tensors(tag)
        assert [e.step for e in events] == [1, 2]
        # TensorFlow's decoder: TensorBoard's own tensor_util has no bfloat16
        np.testing.assert_array_equal(np.asarray(tf.make_ndarray(tf_tensor(events[-1].tensor_proto)),
                                                 dtype=expected.dtype), expected)


@pytest.mark.parametrize("value,error,match", [
    (np.array(["2024-01-01"], dtype="datetime64[D]"), TypeError, "got dtype datetime64"),
    (np.array([1.0], dtype=np.longdouble) if np.dtype(np.longdouble).itemsize > 8 else np.array([np.timedelta64(1)]),
     TypeError, "got dtype"),
    (np.array([{"a": 1}], dtype=object), TypeError, "only str or bytes"),
    (np.array([1, "a", None], dtype=object), TypeError, "only str or bytes"),
    ([[1, 2], [3]], ValueError, "tensor could not be converted"),
    ("complex32", TypeError, "complex32"),
])
def test_tensor_rejects_bad_input(value, error, match):
    if isinstance(value, str):   # made here: torch warns that complex32 is experimental
        with pytest.warns(UserWarning, match="ComplexHalf"):
            value = torch.zeros(2, dtype=getattr(torch, value))
    with pytest.raises(error, match=match):
        tensors.tensor("t", value)


def test_tensor_rejects_bad_tag_and_too_big_tensors():
    with pytest.raises(TypeError, match="tag must be a str"):
        tensors.tensor(3, [1.0])
    with pytest.raises(ValueError, match="tag must be a non-empty"):
        tensors.tensor("", [1.0])
    huge = np.broadcast_to(np.float64(0), (1 << 28,))  # 2 GB of float64, no memory behind it
    with pytest.raises(ValueError, match="2 GB"):
        tensors.tensor("t", huge)


# ------------------------------------------------------------------------------- export_scalars_to_json

def test_scalars_to_json_equals_tensorboardxs_export(tmp_path):
    """tensorboardX records every add_scalars point as [walltime, step, float(value)] under the sub-writer's
    logdir, and export_scalars_to_json json.dumps that dict; our records and JSON must match byte for byte."""
    writer = tbx.SummaryWriter(str(tmp_path / "tbx"))
    # steps are ints: tensorboardX keeps an np.int64 step as it is and its json.dump then fails
    points = [("run", {"a": 1.5, "b": np.float32(0.25)}, 0, 1000.5),
              ("run", {"a": torch.tensor([2.0]), "b": np.array(-1)}, 7, 1001),
              ("loss/x", {"nan": float("nan"), "inf": np.inf}, None, 1002.25)]
    ours = {}
    for main_tag, values, step, wall in points:
        writer.add_scalars(main_tag, values, step, wall)
        for key, value in values.items():
            writer_id = os.path.join(writer._get_file_writer().get_logdir(), main_tag, key)
            ours.setdefault(writer_id, []).append(tensors.scalar_record(wall, step, value))
    path = str(tmp_path / "scalars.json")
    writer.export_scalars_to_json(path)
    writer.close()
    with open(path) as f:
        theirs = f.read()
    text = tensors.scalars_to_json(ours)
    assert text == theirs
    loaded = json.loads(text)
    run_a = loaded[os.path.join(str(tmp_path / "tbx"), "run", "a")]
    assert run_a == [[1000.5, 0, 1.5], [1001, 7, 2.0]]
    nan_record = loaded[os.path.join(str(tmp_path / "tbx"), "loss/x", "nan")][0]
    assert nan_record[:2] == [1002.25, None] and math.isnan(nan_record[2])


def test_scalars_to_json_normalizes_numpy_records():
    text = tensors.scalars_to_json({"w": [(np.float64(1.0), np.int32(3), np.float32(0.5))], "empty": []})
    assert text == '{"w": [[1.0, 3, 0.5]], "empty": []}'
    assert tensors.scalars_to_json({}) == "{}"


@pytest.mark.parametrize("scalar_dict,error,match", [
    ([("w", [])], TypeError, "scalar_dict must be a dict"),
    ({1: []}, TypeError, "keys must be str"),
    ({"w": 3.0}, TypeError, r"scalar_dict\['w'\] must be a list"),
    ({"w": [[1.0, 2]]}, ValueError, "not a \\[walltime, step, value\\] record"),
    ({"w": [[1.0, 2, "x"]]}, TypeError, "value must be a number"),
    ({"w": [[1.0, 2, [1.0, 2.0]]]}, ValueError, "exactly one number"),
    ({"w": [[1.0, 2.5, 1.0]]}, TypeError, "global_step must be an int"),
    ({"w": [["now", 2, 1.0]]}, TypeError, "walltime must be a number"),
])
def test_scalars_to_json_rejects_bad_records(scalar_dict, error, match):
    with pytest.raises(error, match=match):
        tensors.scalars_to_json(scalar_dict)


# ------------------------------------------------------------------------------ pr_curve num_thresholds

class _Exploding:
    """An array-like whose conversion fails: proves num_thresholds is checked before the data are touched."""

    def __array__(self, *args, **kwargs):
        raise AssertionError("labels were converted before num_thresholds was checked")


@pytest.mark.parametrize("num_thresholds,match", [(10_001, "<= 10000, got 10001"), (1 << 40, "<= 10000"),
                                                  (1, ">= 2"), (-5, ">= 2")])
def test_pr_curve_num_thresholds_limits_are_checked_first(num_thresholds, match):
    with pytest.raises(ValueError, match="num_thresholds must be " + match):
        plugins.pr_curve("pr", _Exploding(), _Exploding(), num_thresholds=num_thresholds)
    rows = [np.zeros(3)] * 6
    with pytest.raises(ValueError, match="num_thresholds must be " + match):
        plugins.pr_curve_raw("pr", *rows, num_thresholds=num_thresholds)


def test_pr_curve_raw_rows_longer_than_the_limit_are_refused():
    rows = [np.zeros(10_001)] * 6
    with pytest.raises(ValueError, match="num_thresholds must be <= 10000, got 10001"):
        plugins.pr_curve_raw("pr", *rows)


def test_pr_curve_at_the_limit_equals_tensorboardxs_curve():
    rng = np.random.default_rng(4)
    labels, predictions = rng.random(500) > 0.5, rng.random(500)
    mine = as_tb(plugins.pr_curve("pr", labels, predictions, num_thresholds=10_000)).value[0]
    assert [d.size for d in mine.tensor.tensor_shape.dim] == [6, 10_000]
    data = tensor_util.make_ndarray(mine.tensor)
    expected = tbx_summary.compute_curve(labels, predictions, num_thresholds=10_000)
    np.testing.assert_allclose(data, expected.astype(np.float32), rtol=1e-6)
    from tensorboard.plugins.pr_curve import metadata as pr_metadata
    assert pr_metadata.parse_plugin_metadata(mine.metadata.plugin_data.content).num_thresholds == 10_000


def test_pr_curve_equals_tensorboardxs_below_its_cap():
    rng = np.random.default_rng(5)
    labels, predictions = rng.random(64) > 0.3, rng.random(64)
    mine = as_tb(plugins.pr_curve("pr", labels, predictions, num_thresholds=127)).value[0]
    theirs = as_tb(tbx_summary.pr_curve("pr", labels, predictions, num_thresholds=127)).value[0]
    assert mine.tag == theirs.tag and mine.metadata == theirs.metadata
    assert mine.tensor.dtype == theirs.tensor.dtype and mine.tensor.tensor_shape == theirs.tensor.tensor_shape
    np.testing.assert_allclose(tensor_util.make_ndarray(mine.tensor), tensor_util.make_ndarray(theirs.tensor),
                               rtol=1e-6)
