"""End to end: the demo's logdir (plus the runs two of the project's TF1 example programs write) served by real TensorBoard,
the Python loader (``--load_fast=false``) and the Rust data server (``--load_fast=true``), checked through its HTTP
API against what the demo logged; then TensorBoard's scalars and graphs dashboards rendered in headless Chromium."""
import contextlib
import io
import os
import shutil
import time

import numpy as np
import pytest
from google.protobuf import text_format

from _browser import browser, browser_session, load, required_browser  # noqa: F401 (fixtures)
from _examples import ExampleRuns
from _tensorboard import TensorBoardServer
from conftest import REPO
from tfevents.core.demo import DemoConfig, run_demo

CONFIG = dict(epochs=2, n_train=256, n_test=128, batch_size=64, log_every=2)    # 4 steps per epoch
SWEEP_CONFIG = dict(epochs=1, n_train=128, n_test=64, batch_size=64, log_every=2)
SWEEP_RATES = (0.01, 0.1)
EXAMPLES_WITH_GRAPHS = ("layers_cnn", "sequence_classifier")    # examples/ programs that log a graph, ~1 s each
TIMEOUT = 120.0


# ------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    """``demo/{train,test}`` from one short demo run, and ``examples/<program>.*/...`` from the project's TF1 example
    programs (``EXAMPLES_WITH_GRAPHS``, running against tfevents.core in subprocesses meanwhile)."""
    example_runs = ExampleRuns(str(tmp_path_factory.mktemp("examples")),
                               [os.path.join(REPO, "examples", name + ".py") for name in EXAMPLES_WITH_GRAPHS])
    root = tmp_path_factory.mktemp("e2e")
    try:
        result = run_demo(DemoConfig(logdir=str(root / "demo"), **CONFIG), progress=None)
    finally:
        finished = example_runs.wait()
    example_runs_dirs = {}
    for name in EXAMPLES_WITH_GRAPHS:
        out = finished[name].stdout
        assert finished[name].returncode == 0 and out.strip().endswith("EXAMPLE OK " + name), out[-3000:]
        run = os.path.join("examples", os.path.relpath(example_runs.event_dir(name), example_runs.out_dir))
        shutil.copytree(example_runs.event_dir(name), str(root / run))
        example_runs_dirs[name] = run
    return str(root), result, example_runs_dirs


@pytest.fixture(scope="module")
def sweep(logdir):
    """``sweep/lr_<rate>/{train,test}``: ``tfevents demo --sweep`` with two learning rates, beside the demo."""
    from tfevents.core.demo import run_sweep
    return run_sweep(DemoConfig(logdir=os.path.join(logdir[0], "sweep"), **SWEEP_CONFIG), SWEEP_RATES, progress=None)


@pytest.fixture(scope="module")
def servers(logdir, sweep, tmp_path_factory):
    """Both TensorBoard servers on the logdir, started together; stopped by PID afterwards."""
    logs = tmp_path_factory.mktemp("tb_logs")
    with contextlib.ExitStack() as stack:
        servers = {load_fast: stack.enter_context(TensorBoardServer(
                       logdir[0], load_fast=load_fast == "true", timeout=TIMEOUT,
                       log_path=os.path.join(str(logs), "load_fast_%s.log" % load_fast)))
                   for load_fast in ("false", "true")}
        yield servers
        for server in servers.values():   # both asked to stop at once; the stack then waits for each
            server.terminate()


def _loaded(server, result, example_runs):
    """Wait until the server has every demo scalar point and every example run's graph."""
    def done():
        tags = server.json("/data/plugin/scalars/tags")
        for (run, tag), points in result.scalars.items():
            if tag not in tags.get("demo/" + run, {}):
                return False
            rows = server.json("/data/plugin/scalars/scalars", run="demo/" + run, tag=tag)
            if len(rows) != len(points):
                return False
        graph_runs = server.json("/data/plugin/graphs/info")
        return all(run in graph_runs for run in ["demo/train"] + list(example_runs.values()))
    server.wait_for("the demo's scalars and the graphs", done)


# ------------------------------------------------------------------ HTTP API

@pytest.mark.parametrize("load_fast", ["false", "true"])
def test_tensorboard_serves_what_the_demo_logged(logdir, servers, load_fast):
    from tfevents.summaries import load_logdir
    root, result, example_runs = logdir
    server = servers[load_fast]
    _loaded(server, result, example_runs)
    ours = load_logdir(os.path.join(root, "demo"))

    # scalars: every (run, tag) the demo logged, with its steps and float32 values
    tags = server.json("/data/plugin/scalars/tags")
    assert set(tags["demo/train"]) == {tag for run, tag in result.scalars if run == "train"}
    assert set(tags["demo/test"]) == {tag for run, tag in result.scalars if run == "test"}
    for (run, tag), points in result.scalars.items():
        rows = server.json("/data/plugin/scalars/scalars", run="demo/" + run, tag=tag)
        assert [(step, value) for _, step, value in rows] == [(s, float(np.float32(v))) for s, v in points]
        series = ours.scalars[(run, tag)]
        assert [step for _, step, _ in rows] == series.step.tolist()

    # histograms: the kernels and their gradients, once per epoch
    histogram_tags = server.json("/data/plugin/histograms/tags")["demo/train"]
    assert set(histogram_tags) == set(result.histogram_tags)
    steps_per_epoch = CONFIG["n_train"] // CONFIG["batch_size"]
    for tag in result.histogram_tags:
        rows = server.json("/data/plugin/histograms/histograms", run="demo/train", tag=tag)
        assert [row[1] for row in rows] == [steps_per_epoch * (e + 1) for e in range(CONFIG["epochs"])]
        buckets = rows[-1][2]
        assert sum(count for _, _, count in buckets) == pytest.approx(
            ours.histograms[("train", tag)].num[-1])

    # images: the confusion matrices (one per evaluation) and the input samples, bytes as written
    image_tags = server.json("/data/plugin/images/tags")["demo/train"]
    assert set(image_tags) == set(result.image_tags)
    rows = server.json("/data/plugin/images/images", run="demo/train", tag="confusion_matrix", sample=0)
    assert [row["step"] for row in rows] == [0] + [steps_per_epoch * (e + 1) for e in range(CONFIG["epochs"])]
    served = server.get("/data/plugin/images/individualImage?" + rows[-1]["query"])   # the query names the blob
    assert served == ours.images[("train", "confusion_matrix")][-1].data
    assert served[:8] == b"\x89PNG\r\n\x1a\n"

    # the configuration as text
    text = server.json("/data/plugin/text/text", run="demo/train", tag="config/text_summary")
    assert "momentum" in text[0]["text"]

    # the graph with gradients and the optimizer's slots, and the traced step's run metadata
    from tensorboard.compat.proto import config_pb2, graph_pb2
    graph = text_format.Parse(server.get("/data/plugin/graphs/graph", run="demo/train").decode(),
                              graph_pb2.GraphDef())
    nodes = {n.name: n.op for n in graph.node}
    assert {name for name in nodes if name.startswith("train/gradients/")}
    assert nodes["train/gradients/dnn/hidden1/MatMul_grad/MatMul_1"] == "MatMul"
    assert all(nodes[slot] == "VariableV2" for slot in result.slot_names) and len(result.slot_names) == 6
    assert nodes["hidden1/kernel/ExponentialMovingAverage"] == "VariableV2"
    info = server.json("/data/plugin/graphs/info")
    assert result.run_metadata_tag in info["demo/train"]["tags"]
    metadata = text_format.Parse(
        server.get("/data/plugin/graphs/run_metadata", run="demo/train", tag=result.run_metadata_tag).decode(),
        config_pb2.RunMetadata())
    executed = {s.node_name for s in metadata.step_stats.dev_stats[0].node_stats}
    assert "dnn/hidden1/MatMul" in executed and "train/Momentum/update_hidden1/kernel/ApplyMomentum" in executed
    assert executed <= set(nodes)

    # the example programs' graphs
    for name, run in example_runs.items():
        graph = text_format.Parse(server.get("/data/plugin/graphs/graph", run=run).decode(), graph_pb2.GraphDef())
        names = {n.name for n in graph.node}
        assert any(n.startswith("gradients/") or "/gradients/" in n for n in names), (name, sorted(names)[:20])


@pytest.mark.parametrize("load_fast", ["false", "true"])
def test_tensorboard_serves_the_demo_hparams_pr_curves_custom_scalars_and_projector(logdir, sweep, servers,
                                                                                     load_fast):
    from tfevents.core import demo as demo_module
    from tfevents.summaries import load_logdir
    root, result, example_runs = logdir
    server = servers[load_fast]
    _loaded(server, result, example_runs)
    ours = load_logdir(os.path.join(root, "demo"))
    evaluations = [0] + [CONFIG["n_train"] // CONFIG["batch_size"] * (e + 1) for e in range(CONFIG["epochs"])]

    # HParams: the demo's directory is one session, and each trial of the sweep one more, with their
    # hyperparameters and final metrics
    experiment = server.wait_for("the hparams experiment", lambda: server.post_json(
        "/data/plugin/hparams/experiment", {"experimentName": ""}), done=lambda e: e.get("hparamInfos"))
    assert {h["name"] for h in experiment["hparamInfos"]} == set(demo_module.hparams_of(result.config))
    assert {m["name"]["tag"] for m in experiment["metricInfos"]} == set(demo_module.METRICS)
    groups = server.post_json("/data/plugin/hparams/session_groups", {
        "experimentName": "", "allowedStatuses": ["STATUS_SUCCESS"], "colParams": [], "startIndex": 0,
        "sliceSize": 10})["sessionGroups"]
    assert sorted(g["name"] for g in groups) == ["demo", "sweep/lr_0.01", "sweep/lr_0.1"]
    for trial in [result] + sweep:
        (group,) = [g for g in groups if os.path.join(root, g["name"]) == trial.logdir]
        assert group["hparams"]["optimizer"] == "momentum"
        assert group["hparams"]["learning_rate"] == pytest.approx(trial.config.initial_learning_rate())
        assert {m["name"]["tag"]: m["value"] for m in group["metricValues"]} == {
            tag: pytest.approx(value, rel=1e-6) for tag, value in trial.metrics.items()}
    assert [t.config.initial_learning_rate() for t in sweep] == list(SWEEP_RATES)
    assert result.metrics["hparam/test_accuracy"] == pytest.approx(result.scalars[("test", "accuracy")][-1][1])

    # PR Curves: one per class at every evaluation, the points the reader reads from the same files
    pr_tags = server.json("/data/plugin/pr_curves/tags")["demo/test"]
    assert set(pr_tags) == {demo_module.PR_CURVE_TAG % k for k in range(10)}
    for k in (0, 9):
        tag = demo_module.PR_CURVE_TAG % k
        entries = server.json("/data/plugin/pr_curves/pr_curves", run="demo/test", tag=tag)["demo/test"]
        assert [e["step"] for e in entries] == evaluations
        record = ours.pr_curves[("test", tag)][-1]     # TensorBoard trims the thresholds no example reaches
        kept = len(entries[-1]["precision"])
        assert 1 < kept <= 127 and (record.data[0, kept:] + record.data[1, kept:] == 0).all()
        np.testing.assert_allclose(entries[-1]["precision"], record.precision[:kept], rtol=1e-6)
        np.testing.assert_allclose(entries[-1]["recall"], record.recall[:kept], rtol=1e-6)

    # Custom Scalars: the layout, and the margin chart's bounds around the test accuracy
    layout = server.json("/data/plugin/custom_scalars/layout")
    charts = {c["title"]: c for c in layout["category"][0]["chart"]}
    assert charts["loss"]["multiline"]["tag"] == ["^loss$"]
    series = charts["test accuracy, 95% interval"]["margin"]["series"][0]
    assert (series["lower"], series["upper"]) == demo_module.INTERVAL_TAGS
    accuracy = server.json("/data/plugin/scalars/scalars", run="demo/test", tag="accuracy")
    lower = server.json("/data/plugin/scalars/scalars", run="demo/test", tag=series["lower"])
    upper = server.json("/data/plugin/scalars/scalars", run="demo/test", tag=series["upper"])
    assert [r[1] for r in lower] == [r[1] for r in accuracy] == evaluations
    assert all(lo[2] < acc[2] < up[2] or acc[2] in (0.0, 1.0) for lo, acc, up in zip(lower, accuracy, upper))

    # Projector: the test set's last hidden layer, its labels and predictions, its images as sprites
    # the test runs hold the embeddings; the train runs are listed too because they hold TF-format checkpoints,
    # whose variables the Projector offers
    runs = server.json("/data/plugin/projector/runs")
    assert sorted(runs) == ["demo/test", "demo/train", "sweep/lr_0.01/test", "sweep/lr_0.01/train",
                            "sweep/lr_0.1/test", "sweep/lr_0.1/train"]
    (embedding,) = server.json("/data/plugin/projector/info", run="demo/test")["embeddings"]
    n, units = CONFIG["n_test"], demo_module.LAYERS[-1]
    assert embedding["tensorShape"] == [n, units]
    name = embedding["tensorName"]
    tensor = np.frombuffer(server.get("/data/plugin/projector/tensor", run="demo/test", name=name), np.float32)
    assert tensor.shape == (n * units,) and (tensor >= 0).all() and tensor.any()     # relu activations
    metadata = server.get("/data/plugin/projector/metadata", run="demo/test", name=name).decode().splitlines()
    labels = demo_module.synthetic_mnist(CONFIG["n_test"], result.config.seed + 1)[1]
    assert metadata[0] == "label\tprediction"
    assert [row.split("\t")[0] for row in metadata[1:]] == [str(label) for label in labels]
    from PIL import Image
    sprite = Image.open(io.BytesIO(server.get("/data/plugin/projector/sprite_image", run="demo/test", name=name)))
    side = int(np.ceil(np.sqrt(n))) * 28
    assert sprite.size == (side, side) and embedding["sprite"]["singleImageDim"] == [28, 28]


# ------------------------------------------------------------------ the dashboards in headless Chromium

DEEP_TEXT = """
// all text in the page, including inside shadow roots (the graph dashboard is made of Polymer elements)
function walk(node, out) {
  if (node.nodeType === Node.TEXT_NODE) { out.push(node.textContent); return; }
  if (node.shadowRoot) walk(node.shadowRoot, out);
  for (const child of node.childNodes) walk(child, out);
}
const out = []; walk(document, out); return out.join(' ');
"""

def _deep(body):
    """A script that walks every element, including inside shadow roots (the graph dashboard is Polymer)."""
    return ("function walk(node, visit) { visit(node); if (node.shadowRoot) walk(node.shadowRoot, visit);"
            " for (const child of node.children || []) walk(child, visit); }\n" + body)


# the names of the drawn graph nodes: <g class="node" data-name="..."> in the graph's SVG
DEEP_NODE_NAMES = _deep("""
const names = [];
walk(document.documentElement, n => { if (n.tagName && n.tagName.toLowerCase() === 'g' && n.classList.contains('node')
                                          && n.getAttribute('data-name')) names.push(n.getAttribute('data-name')); });
return names;""")

# choose a run in the graph dashboard's run menu (tf-graph-controls: datasets[i].name, _selectedRunIndex)
SELECT_GRAPH_RUN = _deep("""
let controls = null;
walk(document.documentElement, n => { if (n.tagName === 'TF-GRAPH-CONTROLS') controls = n; });
if (!controls || !controls.datasets) return false;
const i = controls.datasets.findIndex(d => d.name === arguments[0]);
if (i < 0) return false;
controls.set('_selectedRunIndex', i);
return true;""")


@pytest.fixture
def driver(request):
    """The session's headless Chromium (tests/_browser.py) with the window these checks were written for (the
    projector's canvas size follows it); a missing chromium skips, except under CI where it fails."""
    driver = (required_browser(request, "chromium and chromedriver are required under CI") if os.environ.get("CI")
              else request.getfixturevalue("browser"))
    driver.set_window_size(1280, 1600)
    return driver


def _not_blank(png: bytes) -> float:
    from PIL import Image
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.float64)
    return pixels.std()


def _wait(what, check, timeout=TIMEOUT):
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.5)
    pytest.fail("page never showed %s (last: %r)" % (what, last))


def test_dashboards_in_headless_chromium(logdir, servers, tmp_path, driver):
    from tfevents.summaries import load_logdir
    from tensorboard.compat.proto import graph_pb2
    root, result, example_runs = logdir
    server = servers["false"]
    _loaded(server, result, example_runs)
    ours_graphs = {run: graph_pb2.GraphDef.FromString(data) for run, data in load_logdir(root).graphs.items()}
    base = server.url
    # the scalars dashboard lists the demo's runs and its scalar cards
    load(driver, base + "#scalars")
    wanted = ("demo/train", "demo/test", "loss", "accuracy_ema", "gradient_norm", "learning_rate")
    _wait("the demo's runs and tags %s" % (wanted,),
          lambda: (lambda text: all(w in text for w in wanted) or text[-500:])(driver.execute_script(DEEP_TEXT)))
    time.sleep(2)     # let the charts draw
    shot = driver.get_screenshot_as_png()
    (tmp_path / "scalars.png").write_bytes(shot)
    assert _not_blank(shot) > 10

    # the graphs dashboard: the demo's graph, then each example program's (chosen in the run menu), with
    # their top-level name scopes drawn as nodes of the SVG
    driver.get(base + "#graphs")
    for run in ["demo/train"] + sorted(example_runs.values()):
        scopes = _top_level_scopes(ours_graphs[run])
        assert len(scopes) >= 2, (run, scopes)
        _wait("the graph dashboard's run menu", lambda: driver.execute_script(SELECT_GRAPH_RUN, run))
        known = _all_prefixes(ours_graphs[run])
        # the drawn nodes: every top-level scope, and nothing that is not in this run's graph
        _wait("the graph of %s, all of %s and only its nodes" % (run, sorted(scopes)),
              lambda: (lambda ns: scopes <= ns <= known or sorted(ns))(set(driver.execute_script(DEEP_NODE_NAMES))))
        time.sleep(1)
        shot = driver.get_screenshot_as_png()
        (tmp_path / ("graph_%s.png" % run.replace("/", "_"))).write_bytes(shot)
        assert _not_blank(shot) > 10, run


PROJECTOR_STATE = """
// the projector's text and its WebGL canvas's box in the page (it lives in an iframe, inside shadow roots)
const texts = [], canvases = [];
function walk(node, dx, dy) {
  if (node.nodeType === Node.TEXT_NODE) { texts.push(node.textContent); return; }
  if (node.tagName === 'CANVAS') {
    const r = node.getBoundingClientRect();
    if (r.width > 100 && r.height > 100) canvases.push([r.left + dx, r.top + dy, r.width, r.height]);
  }
  if (node.tagName === 'IFRAME' && node.contentDocument) {
    const r = node.getBoundingClientRect();
    walk(node.contentDocument, dx + r.left, dy + r.top);
  }
  if (node.shadowRoot) walk(node.shadowRoot, dx, dy);
  for (const child of node.childNodes) walk(child, dx, dy);
}
walk(document, 0, 0);
return [texts.join(' ').replace(/\\s+/g, ' '), canvases];
"""


def test_projector_in_headless_chromium(logdir, servers, tmp_path, driver):
    """TensorBoard's Projector tab on the demo's logdir: it names the embedding, counts its points and draws them."""
    from tfevents.core.demo import EMBEDDING_TAG, LAYERS
    from PIL import Image
    root, result, example_runs = logdir
    server = servers["false"]
    _loaded(server, result, example_runs)
    # the first run of its menu is shown: the demo's test set or a sweep trial's
    points = {"Points: %d" % c["n_test"] for c in (CONFIG, SWEEP_CONFIG)}
    wanted = ("Dimension: %d" % LAYERS[-1], EMBEDDING_TAG, "label")
    load(driver, server.url + "#projector")
    state = _wait("the projector showing one of %s, %s and a canvas" % (points, wanted), lambda: (
        lambda st: st if all(w in st[0] for w in wanted) and any(p in st[0] for p in points) and st[1]
        else False)(driver.execute_script(PROJECTOR_STATE)))
    time.sleep(3)     # let the points and their sprites draw
    shot = driver.get_screenshot_as_png()
    (tmp_path / "projector.png").write_bytes(shot)
    image = np.asarray(Image.open(io.BytesIO(shot)).convert("L"), dtype=np.float64)
    x, y, w, h = (int(v) for v in max(state[1], key=lambda box: box[2] * box[3]))   # CSS px = screenshot px
    plot = image[y:y + h, x:x + w]
    assert plot.size and plot.std() > 10, "the projector's canvas is blank"
    # dark sprite pixels over the white background (64-128 thumbnails, overlapping: ~1% of a 666 x 1332 canvas)
    assert (plot < 128).sum() > 2000


def _top_level_scopes(graph_def):
    """Top-level name scopes holding a computation (the dashboard leaves out summary ops and their tag constants)."""
    skip = {"Const", "ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummaryV2", "TensorSummaryV2",
            "MergeSummary"}
    return {n.name.split("/")[0] for n in graph_def.node if "/" in n.name and n.op not in skip}


def _all_prefixes(graph_def):
    """Every name a node of the drawn hierarchy can have: node names and each of their scope prefixes."""
    out = set()
    for n in graph_def.node:
        parts = n.name.split("/")
        out.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return out
