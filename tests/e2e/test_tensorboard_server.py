"""A real ``tensorboard`` server reads what we write: the Python loader (``--load_fast=false``) and the
Rust data server (``--load_fast=true``), both started at once on free ports and asked over HTTP."""
import contextlib
import os
import time

import numpy as np
import pytest

from _tensorboard import TensorBoardServer

TIMEOUT = 60.0
LOSS = [(0, 2.5), (1, 1.25), (3, 0.3), (10, -0.125)]
ACCURACY = [(0, 0.1), (5, 0.9)]
VERTICES = np.random.default_rng(3).random((1, 5, 3))
FACES = np.array([[[0, 1, 2], [2, 3, 4]]])
SPRITES = np.random.default_rng(2).integers(0, 256, (4, 3, 8, 8), dtype=np.uint8)   # 4 thumbnails, 8 x 8 pixels


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    from tfevents.summaries import SummaryWriter
    d = str(tmp_path_factory.mktemp("tb_server"))
    with SummaryWriter(d) as w:
        for step, value in LOSS:
            w.add_scalar("loss", value, step)
        for step, value in ACCURACY:
            w.add_scalar("eval/accuracy", value, step)
        w.add_histogram("weights", np.random.default_rng(0).normal(size=100), 0)
        w.add_text("notes", "hello", 0)
        rng = np.random.default_rng(1)     # the tensorboardX-parity kinds, each served by its dashboard's plugin
        w.add_video("clip", rng.integers(0, 255, (1, 3, 3, 8, 8), dtype=np.uint8), 2)
        w.add_image_with_boxes("boxes", rng.random((3, 16, 16)), np.array([[1, 1, 9, 9]]), 2, labels=["x"])
        w.add_mesh("cloud", VERTICES, faces=FACES, global_step=2)
        w.add_custom_scalars_multilinechart(["loss", "eval/accuracy"], category="training", title="both")
        w.add_embedding(rng.random((4, 3)), metadata=["a", "b", "c", "d"], global_step=2, tag="feat",
                        label_img=SPRITES)
    from tfevents import core as tf          # a core graph with a while loop and its gradient, run "loop"
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [3], name="x")
        _, a = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.tanh(a * x)), [0, x])
        tf.gradients(tf.reduce_sum(a), x)
        with SummaryWriter(os.path.join(d, "loop"), graph=graph):
            pass
    return d


@pytest.fixture(scope="module")
def servers(logdir, tmp_path_factory):
    """Both servers, started together; each stopped by its PID (its process group) afterwards."""
    pytest.importorskip("tensorboard")
    logs = tmp_path_factory.mktemp("tb_logs")
    with contextlib.ExitStack() as stack:
        servers = {load_fast: stack.enter_context(TensorBoardServer(
                       logdir, load_fast=load_fast == "true", timeout=TIMEOUT, request_timeout=5,
                       log_path=os.path.join(logs, "load_fast_%s.log" % load_fast)))
                   for load_fast in ("false", "true")}
        yield servers
        for server in servers.values():   # both asked to stop at once; the stack then waits for each
            server.terminate()


def poll_scalars(server, tag, expected_steps):
    """GET /data/plugin/scalars/scalars until every expected step is there, or fail after TIMEOUT."""
    return server.wait_for(repr(tag), lambda: server.json("/data/plugin/scalars/scalars", run=".", tag=tag),
                           done=lambda rows: [row[1] for row in rows] == expected_steps)


@pytest.mark.parametrize("load_fast", ["false", "true"])
def test_tensorboard_serves_our_scalars(servers, load_fast):
    server = servers[load_fast]
    for tag, points in (("loss", LOSS), ("eval/accuracy", ACCURACY)):
        rows = poll_scalars(server, tag, [step for step, _ in points])
        assert [(step, value) for _, step, value in rows] == [(s, float(np.float32(v))) for s, v in points]
        assert all(abs(wall - time.time()) < 3600 for wall, _, _ in rows)
    tags = server.json("/data/plugin/scalars/tags")
    assert set(tags["."]) == {"loss", "eval/accuracy"}
    assert "weights" in server.json("/data/plugin/histograms/tags")["."]
    assert "notes/text_summary" in server.json("/data/plugin/text/tags")["."]


@pytest.mark.parametrize("load_fast", ["false", "true"])
def test_tensorboard_serves_video_boxes_mesh_custom_scalars_and_projector(servers, load_fast):
    server = servers[load_fast]
    server.wait_for("images", lambda: server.json("/data/plugin/images/tags")["."],
                    done=lambda tags: {"clip", "boxes"} <= set(tags))
    for tag, mime in (("clip", b"GIF8"), ("boxes", b"\x89PNG")):
        (entry,) = server.json("/data/plugin/images/images", run=".", tag=tag, sample=0)
        assert entry["step"] == 2
        blob = server.get("/data/plugin/images/individualImage?" + entry["query"])
        assert blob.startswith(mime), tag
    meshes = server.wait_for("mesh tags", lambda: server.json("/data/plugin/mesh/tags")["."],
                             done=lambda tags: "cloud" in tags)
    assert meshes["cloud"] == {"samples": 1}
    parts = server.json("/data/plugin/mesh/meshes", run=".", tag="cloud", sample=0)
    # vertices [1, 5, 3] and faces [1, 2, 3]; components is the bitmask 1 << VERTEX | 1 << FACE
    assert sorted((m["step"], m["content_type"], m["components"], m["data_shape"]) for m in parts) == [
        (2, 1, 6, [1, 5, 3]), (2, 2, 6, [1, 2, 3])]
    # the arrays the viewer draws: vertices as float32, faces as int32
    vertices = server.get("/data/plugin/mesh/data", run=".", tag="cloud", sample=0, step=2, content_type="VERTEX")
    np.testing.assert_array_equal(np.frombuffer(vertices, np.float32), VERTICES.astype(np.float32).ravel())
    faces = server.get("/data/plugin/mesh/data", run=".", tag="cloud", sample=0, step=2, content_type="FACE")
    np.testing.assert_array_equal(np.frombuffer(faces, np.int32), FACES.ravel())
    layout = server.wait_for("custom scalars layout", lambda: server.json("/data/plugin/custom_scalars/layout"),
                             done=lambda lay: bool(lay))
    (category,) = layout["category"]
    assert category["title"] == "training" and category["chart"][0]["multiline"]["tag"] == ["loss", "eval/accuracy"]
    runs = server.wait_for("projector runs", lambda: server.json("/data/plugin/projector/runs"),
                           done=lambda r: "." in r)
    info = server.json("/data/plugin/projector/info", run=runs[0])
    (embedding,) = info["embeddings"]
    assert (embedding["tensorName"], embedding["tensorPath"], embedding["tensorShape"]) == (
        "feat:00002", "00002/feat/tensors.tsv", [4, 3])
    tensor = server.get("/data/plugin/projector/tensor", run=runs[0], name=embedding["tensorName"])
    assert np.frombuffer(tensor, np.float32).shape == (12,)
    assert server.get("/data/plugin/projector/metadata", run=runs[0], name=embedding["tensorName"]) \
        .decode().split() == ["a", "b", "c", "d"]
    # the sprite: the thumbnails in a 2 x 2 grid, each one as given, served as the PNG written
    assert embedding["sprite"]["singleImageDim"] == [8, 8]
    from PIL import Image
    import io
    sprite = np.asarray(Image.open(io.BytesIO(server.get("/data/plugin/projector/sprite_image", run=runs[0],
                                                           name=embedding["tensorName"]))).convert("RGB"))
    assert sprite.shape == (16, 16, 3)
    for i in range(4):
        r, c = divmod(i, 2)
        np.testing.assert_array_equal(sprite[8 * r:8 * r + 8, 8 * c:8 * c + 8], SPRITES[i].transpose(1, 2, 0))


@pytest.mark.parametrize("load_fast", ["false", "true"])
def test_tensorboard_serves_our_loop_graph_with_its_frames(servers, load_fast):
    """The graph dashboard gets our while loop and its gradient as TF writes them: Enter nodes naming the forward
    frame and the backprop frame, LoopCond, NextIteration, Exit, the stacks of forward values."""
    from google.protobuf import text_format
    from tensorboard.compat.proto import graph_pb2
    server = servers[load_fast]
    text = server.wait_for("the loop graph", lambda: server.get("/data/plugin/graphs/graph", run="loop").decode())
    graph = text_format.Parse(text, graph_pb2.GraphDef())
    frames = {n.attr["frame_name"].s.decode() for n in graph.node if n.op == "Enter"}
    assert frames == {"while/while_context", "gradients/while/while_context"}
    kinds = {n.op for n in graph.node}
    assert {"LoopCond", "NextIteration", "Exit", "Merge", "Switch", "StackV2", "StackPushV2", "StackPopV2"} <= kinds
