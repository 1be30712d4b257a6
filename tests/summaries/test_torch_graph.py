"""``torch_graph`` / ``onnx_graph`` (summaries/_torch_graph.py) against the real tools.

torch: each model is written by ``torch.utils.tensorboard.SummaryWriter.add_graph`` and by
tensorboardX's; their event files are read back with our ``summary_iterator`` and the GraphDef and
RunMetadata there are compared with ours node by node and field by field (name, op, inputs,
``attr``, ``_output_shapes``), then as whole messages. ONNX: ours against tensorboardX's
``load_onnx_graph``. TensorBoard's EventAccumulator and graph preprocessing read what we build.
"""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

from tfevents.proto import config_pb2, graph_pb2
from tfevents.summaries import SummaryWriter, summary_iterator
from tfevents.summaries.builders.torch_graph import TORCH_RUN_METADATA_TAG, onnx_graph, torch_graph

torch = pytest.importorskip("torch")
nn = torch.nn


# ---------------------------------------------------------------------------------------- models

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(4 * 6 * 6, 10)

    def forward(self, x):
        return self.fc(self.drop(self.block(x).flatten(1)))


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 4)
        self.b = nn.Linear(5, 4)

    def forward(self, x, y):
        return self.a(x) + self.b(y), x.sum()


class Recurrent(nn.Module):
    """Embedding + LSTM (multi-output JIT nodes), a reused submodule and a split output."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 3)
        self.lstm = nn.LSTM(3, 4, batch_first=True)
        self.head = nn.Linear(4, 4)

    def forward(self, idx):
        out, (h, _) = self.lstm(self.emb(idx))
        return self.head(self.head(out[:, -1])).chunk(2, dim=1), h


class NoInput(nn.Module):
    def forward(self):
        return torch.ones(2) * 3


class DictOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return {"y": self.fc(x)}


def mlp():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


CASES = {
    "mlp": (mlp, lambda: torch.rand(2, 4)),
    "cnn": (SmallCNN, lambda: torch.rand(1, 3, 8, 8)),
    "two_inputs": (TwoInputs, lambda: (torch.rand(2, 3), torch.rand(2, 5))),
    "recurrent": (Recurrent, lambda: torch.randint(0, 10, (2, 5))),
}


def build(case):
    torch.manual_seed(0)
    make_model, make_input = CASES[case]
    return make_model(), make_input()


# --------------------------------------------------------------------------------------- helpers

def peer_events(kind, model, inputs, tmp_path):
    """(GraphDef, [(tag, RunMetadata)]) from the event file the peer's add_graph writes."""
    if kind == "torch":
        from torch.utils.tensorboard import SummaryWriter as PeerWriter
    else:
        from tensorboardX import SummaryWriter as PeerWriter
    logdir = str(tmp_path / kind)
    writer = PeerWriter(logdir)
    writer.add_graph(model, inputs)
    writer.close()
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    graphs, run_metadata = [], []
    for event in summary_iterator(path):
        if event.HasField("graph_def"):
            graphs.append(graph_pb2.GraphDef.FromString(event.graph_def))
        if event.HasField("tagged_run_metadata"):
            trm = event.tagged_run_metadata
            run_metadata.append((trm.tag, config_pb2.RunMetadata.FromString(trm.run_metadata)))
    assert len(graphs) == 1
    return graphs[0], run_metadata


def shapes(node):
    if "_output_shapes" not in node.attr:
        return None
    return [[d.size for d in s.dim] for s in node.attr["_output_shapes"].list.shape]


def assert_same_graph(ours, theirs):
    """Node by node, field by field, then the whole messages (nothing else differs)."""
    theirs = graph_pb2.GraphDef.FromString(theirs.SerializeToString())  # torch's builder gives TensorBoard's proto
    assert [n.name for n in ours.node] == [n.name for n in theirs.node]
    for a, b in zip(ours.node, theirs.node):
        assert a.op == b.op, a.name
        assert list(a.input) == list(b.input), a.name
        assert sorted(a.attr) == sorted(b.attr), a.name
        assert a.attr["attr"].s == b.attr["attr"].s, a.name
        assert shapes(a) == shapes(b), a.name
        assert a == b, a.name
    assert ours.versions.producer == theirs.versions.producer == 22
    assert ours == theirs
    assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)


def by_name(graph_def):
    return {n.name: n for n in graph_def.node}


# ------------------------------------------------------------------------------------ torch side

@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch_add_graph_event_file(case, tmp_path):
    model, inputs = build(case)
    theirs, their_rm = peer_events("torch", model, inputs, tmp_path)
    ours, our_rm = torch_graph(model, inputs)
    assert isinstance(ours, graph_pb2.GraphDef) and isinstance(our_rm, config_pb2.RunMetadata)
    assert len(ours.node) > 5
    assert_same_graph(ours, theirs)
    assert their_rm == [(TORCH_RUN_METADATA_TAG, our_rm)]
    assert [d.device for d in our_rm.step_stats.dev_stats] == ["/device:CPU:0"]


@pytest.mark.parametrize("case", ["cnn", "two_inputs"])
def test_matches_tensorboardx_add_graph_event_file(case, tmp_path):
    pytest.importorskip("tensorboardX")
    model, inputs = build(case)
    theirs, their_rm = peer_events("tensorboardX", model, inputs, tmp_path)
    ours, our_rm = torch_graph(model, inputs)
    assert_same_graph(ours, theirs)
    assert their_rm == [("profiler", our_rm)]


def test_mlp_layout():
    """The layout itself, independent of the peers: scoped names, IO nodes, kinds, attrs, shapes."""
    model, x = build("mlp")
    nodes = by_name(torch_graph(model, x)[0])
    (inp,) = [n for n in nodes.values() if n.name.startswith("input/")]
    assert inp.op == "IO Node" and list(inp.input) == [] and inp.attr["attr"].s == b"" and shapes(inp) == [[2, 4]]
    out = nodes["output/output.1"]
    assert out.op == "IO Node" and shapes(out) == [[2, 2]]
    (last,) = out.input
    assert last.startswith("Sequential/Linear[2]/") and nodes[last].op == "aten::linear"
    assert shapes(nodes[last]) == [[2, 2]]
    linears = [n for n in nodes.values() if n.op == "aten::linear"]
    assert [n.name.rsplit("/", 1)[0] for n in linears] == ["Sequential/Linear[0]", "Sequential/Linear[2]"]
    assert linears[0].input[0] == inp.name
    assert linears[0].input[1].startswith("Sequential/Linear[0]/weight/")
    weight = nodes[linears[0].input[1]]
    assert weight.op == "prim::GetAttr" and weight.attr["attr"].s == b"{ name :  weight }"
    assert "_output_shapes" not in weight.attr  # the trace does not know a parameter read's shape
    (relu,) = [n for n in nodes.values() if n.op == "aten::relu"]
    assert relu.name.startswith("Sequential/ReLU[1]/") and list(relu.input) == [linears[0].name]
    assert shapes(relu) == [[2, 8]] and relu.attr["attr"].s == b"{}"


def test_cnn_and_two_input_layout():
    nodes = by_name(torch_graph(*build("cnn"))[0])
    (conv,) = [n for n in nodes.values() if n.op == "aten::_convolution"]
    assert conv.name.startswith("SmallCNN/Block[block]/Conv2d[conv]/") and shapes(conv) == [[1, 4, 6, 6]]
    (bn,) = [n for n in nodes.values() if n.op == "aten::batch_norm"]
    assert bn.name.startswith("SmallCNN/Block[block]/BatchNorm2d[bn]/") and bn.input[0] == conv.name
    consts = [n.attr["attr"].s for n in nodes.values() if n.op == "prim::Constant"]
    assert b"{ value : 1e-05}" in consts  # batch norm's eps
    nodes = by_name(torch_graph(*build("two_inputs"))[0])
    assert shapes(nodes["input/x"]) == [[2, 3]] and shapes(nodes["input/y"]) == [[2, 5]]
    assert shapes(nodes["output/output.1"]) == [[1]]  # a tuple output has no tensor shape


def test_other_model_kinds_match_torch():
    """Scripted model, strict=False with a dict output, a forward without inputs, list and numpy inputs."""
    from torch.utils.tensorboard._pytorch_graph import graph as torch_builder

    scripted = torch.jit.script(mlp())
    x = torch.rand(1, 4)
    with pytest.warns(UserWarning, match="already a ScriptModule"):
        theirs = torch_builder(scripted, x)
    with pytest.warns(UserWarning, match="already a ScriptModule"):
        ours = torch_graph(scripted, x)
    assert_same_graph(ours[0], theirs[0])
    assert ours[1] == config_pb2.RunMetadata.FromString(theirs[1].SerializeToString())

    model = DictOutput()
    assert_same_graph(torch_graph(model, torch.ones(1, 2), use_strict_trace=False)[0],
                      torch_builder(model, torch.ones(1, 2), use_strict_trace=False)[0])
    assert_same_graph(torch_graph(NoInput())[0], torch_builder(NoInput(), ())[0])
    assert not [n for n in torch_graph(NoInput())[0].node if n.name.startswith("input/")]

    model, (a, b) = build("two_inputs")
    expected = torch_graph(model, (a, b))[0]
    assert_same_graph(torch_graph(model, [a, b])[0], expected)
    assert_same_graph(torch_graph(model, (a.numpy(), b.numpy()))[0], expected)
    model, x = build("cnn")
    assert_same_graph(torch_graph(model, x.numpy())[0], torch_graph(model, x)[0])


def test_traced_in_eval_mode_and_mode_restored():
    model, x = build("cnn")
    model.train()
    train_before = torch_graph(model, x)[0]
    assert model.training and model.block.bn.training
    model.eval()
    assert_same_graph(torch_graph(model, x)[0], train_before)  # traced in eval mode either way
    assert not model.training and not model.block.bn.training
    (drop,) = [n for n in train_before.node if n.op == "aten::dropout"]
    train_flag = by_name(train_before)[drop.input[2]]
    assert train_flag.attr["attr"].s == b"{ value : 0}"  # dropout(train=False)


def test_verbose_prints_the_graph(capsys):
    model, x = build("mlp")
    torch_graph(model, x)
    assert capsys.readouterr().out == ""
    torch_graph(model, x, verbose=True)
    printed = capsys.readouterr().out
    assert printed.startswith("graph(") and "aten::linear" in printed


def test_tensorboard_reads_it(tmp_path):
    """Written with our writer's GraphDef/RunMetadata methods, as the wired add_graph will."""
    from tensorboard.backend import process_graph
    from tensorboard.backend.event_processing import event_accumulator
    from tensorboard.compat.proto import graph_pb2 as tb_graph_pb2

    graph_def, run_metadata = torch_graph(*build("cnn"))
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_graph(graph_def)
        writer.add_run_metadata(run_metadata, TORCH_RUN_METADATA_TAG)
    acc = event_accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert acc.Tags()["graph"] and acc.Tags()["run_metadata"] == [TORCH_RUN_METADATA_TAG]
    read = acc.Graph()
    assert [n.name for n in read.node] == [n.name for n in graph_def.node]
    assert read.SerializeToString(deterministic=True) == graph_def.SerializeToString(deterministic=True)
    assert acc.RunMetadata(TORCH_RUN_METADATA_TAG).step_stats.dev_stats[0].device == "/device:CPU:0"
    ui_graph = tb_graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
    process_graph.prepare_graph_for_ui(ui_graph)  # what the Graphs plugin serves
    assert len(ui_graph.node) == len(graph_def.node)


def test_bad_arguments():
    model, x = build("mlp")
    for bad in (lambda t: t, "model", None):
        with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
            torch_graph(bad, x)
    with pytest.raises(TypeError, match="verbose must be a bool"):
        torch_graph(model, x, verbose="yes")
    with pytest.raises(TypeError, match="use_strict_trace must be a bool"):
        torch_graph(model, x, use_strict_trace=1)
    with pytest.raises(TypeError, match="input_to_model does not fit TwoInputs.forward"):
        torch_graph(TwoInputs(), torch.rand(2, 3))
    with pytest.raises(RuntimeError, match="could not trace Sequential"):
        torch_graph(model, torch.rand(2, 5))  # 5 features into Linear(4, 8)
    with pytest.raises(RuntimeError, match="could not trace DictOutput"):
        torch_graph(DictOutput(), torch.ones(1, 2))  # a dict output needs use_strict_trace=False
    model.train()
    with pytest.raises(RuntimeError):
        torch_graph(model, torch.rand(2, 5))
    assert model.training  # restored after a failed trace too


def test_torch_not_imported_for_other_objects():
    code = ("import sys\n"
            "from tfevents.summaries.builders.torch_graph import torch_graph\n"
            "try:\n    torch_graph(object())\nexcept TypeError as e:\n    print(e)\n"
            "print('torch' in sys.modules, 'onnx' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["model must be a torch.nn.Module (a traced or scripted one too), got object",
                                "False False"]


# ------------------------------------------------------------------------------------------ ONNX

@pytest.fixture(scope="module")
def onnx():
    return pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def handmade_onnx(onnx, tmp_path_factory):
    """A model with every common attribute kind (int, ints, float, string, tensor), a symbolic
    dim, an int64 input, an initializer and a node with two outputs."""
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "W")
    nodes = [
        helper.make_node("Conv", ["x", "W"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         group=1),
        helper.make_node("LeakyRelu", ["c"], ["r"], alpha=0.25),
        helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.array([2], np.int64), "kv")),
        helper.make_node("Pad", ["r", "k"], ["p"], mode="reflect"),
        helper.make_node("Split", ["p"], ["s0", "s1"], axis=1, num_outputs=2),
        helper.make_node("Add", ["s0", "s1"], ["y"]),
        helper.make_node("Cast", ["n"], ["n_float"], to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes, "handmade",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1, 5, 5]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1, 5, 5]),
         helper.make_tensor_value_info("n_float", TensorProto.FLOAT, [3])],
        initializer=[weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    path = tmp_path_factory.mktemp("onnx") / "handmade.onnx"
    onnx.save(model, str(path))
    return str(path)


def tbx_onnx(path, capsys):
    tbx = pytest.importorskip("tensorboardX.onnx_graph")
    graph = graph_pb2.GraphDef.FromString(tbx.load_onnx_graph(path).SerializeToString())
    capsys.readouterr()  # tensorboardX prints every node name
    return graph


def assert_same_onnx_graph(ours, theirs):
    assert [n.name for n in ours.node] == [n.name for n in theirs.node]
    for a, b in zip(ours.node, theirs.node):
        assert (a.op, list(a.input), sorted(a.attr)) == (b.op, list(b.input), sorted(b.attr)), a.name
        for key in a.attr:
            assert a.attr[key] == b.attr[key], (a.name, key)
    assert ours == theirs and ours.versions.producer == 22


def test_onnx_matches_tensorboardx_handmade(handmade_onnx, capsys):
    ours = onnx_graph(handmade_onnx)
    assert capsys.readouterr().out == ""  # tensorboardX prints; we do not
    assert_same_onnx_graph(ours, tbx_onnx(handmade_onnx, capsys))
    nodes = by_name(ours)
    assert [n.op for n in ours.node] == ["Variable"] * 4 + ["Conv", "LeakyRelu", "Constant", "Pad", "Split",
                                                            "Add", "Cast"]
    assert [d.size for d in nodes["x"].attr["shape"].shape.dim] == [0, 1, 5, 5]  # "batch" has no dim_value
    assert nodes["n"].attr["dtype"].type == 7  # ONNX INT64, stored as is
    assert list(nodes["c"].input) == ["x", "W"] and "W" not in nodes  # no node for an initializer
    assert nodes["c"].attr["parameters"].s == (b"group = 1 = 2, kernel_shape = [3, 3] = 7, "
                                               b"pads = [1, 1, 1, 1] = 7")
    assert nodes["r"].attr["parameters"].s == b"alpha = 0.25 = 1"
    assert nodes["p"].attr["parameters"].s == b"mode = b'reflect' = 3"
    assert nodes["s0"].op == "Split" and "s1" not in nodes  # named by the first output
    assert nodes["k"].attr["parameters"].s.startswith(b"value = dims: 1")


def test_onnx_matches_tensorboardx_torch_export(onnx, tmp_path, capsys):
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
    path = str(tmp_path / "cnn.onnx")
    try:
        with pytest.warns(DeprecationWarning):
            torch.onnx.export(model, (torch.zeros(1, 1, 6, 6),), path, dynamo=False, input_names=["x"],
                              output_names=["y"])
    except Exception as err:  # the legacy exporter may go away
        pytest.skip("torch.onnx.export(dynamo=False) failed: %s" % err)
    ours = onnx_graph(path)
    assert_same_onnx_graph(ours, tbx_onnx(path, capsys))
    assert [n.op for n in ours.node] == ["Variable", "Variable", "Conv", "Relu", "Flatten", "Gemm"]
    assert_same_onnx_graph(onnx_graph(onnx.load(path)), ours)  # a loaded ModelProto too


def test_onnx_graph_read_by_tensorboard(handmade_onnx, tmp_path):
    from tensorboard.backend import process_graph
    from tensorboard.backend.event_processing import event_accumulator

    graph_def = onnx_graph(handmade_onnx)
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_graph(graph_def)
    acc = event_accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    read = acc.Graph()
    assert [(n.name, n.op) for n in read.node] == [(n.name, n.op) for n in graph_def.node]
    process_graph.prepare_graph_for_ui(read)


def test_onnx_bad_arguments(handmade_onnx, tmp_path, monkeypatch):
    with pytest.raises(TypeError, match="path of an .onnx file"):
        onnx_graph(42)
    with pytest.raises(FileNotFoundError, match="missing.onnx"):
        onnx_graph(str(tmp_path / "missing.onnx"))
    monkeypatch.setitem(sys.modules, "onnx", None)  # as if it were not installed
    with pytest.raises(ImportError, match="needs the 'onnx' package.*pip install onnx"):
        onnx_graph(handmade_onnx)


def test_onnx_node_without_outputs(onnx, tmp_path):
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Identity", ["x"], [], name="sink")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])], [])
    with pytest.raises(ValueError, match="ONNX node 0 .Identity 'sink'. has no outputs"):
        onnx_graph(helper.make_model(graph))
