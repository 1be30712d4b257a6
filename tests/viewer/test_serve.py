"""`tfevents serve`: TensorBoard's own web server on our data provider answers every dashboard's HTTP routes as it
does on its Rust data server.

One logdir holds runs written by TF1, TF2, tensorboardX and torch (tests/peer_runs.py), one of ours with every
kind, and one whose series are longer than the sampling limits. Two real TensorBoards serve it: one on the Rust
data server (``--load_fast=true``), one through ``--grpc_data_provider`` on ``tfevents serve --provider-only``, run
as ``tfevents serve`` runs it (without TensorFlow: ``viewer/serve/web.py``).
The JSON (and blob bytes) of the runs, tags and data routes of Scalars, Histograms, Distributions, Images, Audio,
Text, Graphs (graph and run metadata), HParams, PR Curves, Custom Scalars and Mesh must be equal, except:

- **series longer than the sampling limit** (run ``long``): both servers keep a uniform random sample of the
  points plus the last one, but the Rust server draws it from a ChaCha20 stream and we from a hash of the step,
  so the subsets differ. For those we check the count, the last point, and that every point we serve is a point
  of the series (read in full by ``load_logdir``).
"""
import contextlib
import os
import shutil
import struct
import time

import numpy as np
import pytest

from _browser import browser, browser_session, load, required_browser  # noqa: F401 (fixtures)
from _serve import ProviderProcess
from _tensorboard import TensorBoardServer, wait_for_tensorboard_lines
from tfevents.viewer.serve import web

LONG = {"scalars": 1100, "histograms": 110, "images": 13, "text": 105}
TIMEOUT = 90


def write_ours(path):
    from tfevents import core as tf
    from tfevents.summaries import SummaryWriter
    rng = np.random.default_rng(0)
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [3], name="x")
        tf.reduce_sum(tf.tanh(x * 2.0), name="y")
    with SummaryWriter(path, graph=graph) as w:
        for step in range(6):
            w.add_scalar("loss", 1.0 / (step + 1), step)
            w.add_scalar("eval/accuracy", step / 10, step)
            w.add_histogram("weights", rng.normal(size=200) + step, step)
            w.add_image("sample", rng.random((3, 8, 6)), step)
            w.add_audio("tone", np.sin(np.arange(800) / 8.0 * (step + 1)).astype(np.float32), step, sample_rate=8000)
            w.add_text("notes", "step **%d** <b>bold</b>" % step, step)
            w.add_pr_curve("pr", rng.integers(0, 2, 50), rng.random(50), step)
            w.add_mesh("cloud", rng.random((1, 5, 3)), faces=np.array([[[0, 1, 2], [2, 3, 4]]]), global_step=step)
        w.add_custom_scalars_multilinechart(["loss", "eval/accuracy"], category="training", title="both")
        from tfevents.proto import config_pb2
        meta = config_pb2.RunMetadata()
        meta.step_stats.dev_stats.add(device="/job:localhost/cpu:0").node_stats.add(node_name="y", all_start_micros=5)
        w.add_run_metadata(meta, "step_3", 3)
    with SummaryWriter(path + "_hparams") as w:
        w.add_hparams({"lr": 0.1, "optimizer": "adam"}, {"hparam/loss": 0.25})


def write_long(path):
    from tfevents.summaries import SummaryWriter
    rng = np.random.default_rng(1)
    with SummaryWriter(path) as w:
        for step in range(LONG["scalars"]):
            w.add_scalar("loss", float(np.cos(step / 50.0)), step)
            if step < LONG["histograms"]:
                w.add_histogram("weights", rng.normal(size=50), step)
            if step < LONG["images"]:
                w.add_image("sample", rng.random((3, 4, 4)), step)
            if step < LONG["text"]:
                w.add_text("notes", "line %d" % step, step)


@pytest.fixture(scope="module")
def served(peer_logdir, tmp_path_factory):
    """(logdir, {'rust': TensorBoard on the Rust server, 'ours': TensorBoard on tfevents serve}, provider)."""
    root = str(tmp_path_factory.mktemp("serve"))
    for kind in ("tf1", "tf2", "tbx", "torch"):
        shutil.copytree(os.path.join(peer_logdir, kind), os.path.join(root, kind))
    write_ours(os.path.join(root, "ours"))
    write_long(os.path.join(root, "long"))
    logs = str(tmp_path_factory.mktemp("serve_logs"))
    with contextlib.ExitStack() as stack:
        provider = stack.enter_context(ProviderProcess(root, "--reload-interval", "1"))
        servers = {
            "rust": stack.enter_context(TensorBoardServer(root, load_fast=True, timeout=TIMEOUT, request_timeout=30,
                                                          log_path=os.path.join(logs, "rust.log"))),
            "ours": stack.enter_context(TensorBoardServer(root, timeout=TIMEOUT, request_timeout=30,
                                                          command=web.tensorboard_command(),
                                                          extra_args=("--grpc_data_provider", provider.address),
                                                          log_path=os.path.join(logs, "ours.log"))),
        }
        last = LONG["scalars"] - 1
        for server in servers.values():
            server.wait_for("every run and the long run's last step", lambda: (
                len(server.json("/data/runs")) >= 8
                and server.json("/data/plugin/scalars/scalars", run="long", tag="loss")[-1][1] == last))
        yield root, servers, provider
        for server in servers.values():   # all asked to stop at once; the stack then waits for each
            server.terminate()
        provider.terminate()


# ---------------------------------------------------------------- what each dashboard asks

def pairs(tags_json):
    """[(run, tag)] of a tags route's answer ({run: {tag: ...}} or {run: [tag, ...]})."""
    return sorted((run, tag) for run, tags in tags_json.items() for tag in tags)


def snapshot(server, skip_runs=("live",)):
    """{route: answer} for every dashboard of one server; ``long``-run series are kept apart."""
    out = {"runs": [r for r in server.json("/data/runs") if r not in skip_runs]}
    listing = server.json("/data/plugins_listing")
    out["plugins enabled"] = {name: entry.get("enabled") for name, entry in listing.items()}
    keep = lambda d: {r: v for r, v in d.items() if r not in skip_runs}  # noqa: E731
    for plugin, data_route, extra in (("scalars", "scalars", {}), ("histograms", "histograms", {}),
                                      ("distributions", "distributions", {}), ("text", "text", {}),
                                      ("pr_curves", "pr_curves", {})):
        tags = keep(server.json("/data/plugin/%s/tags" % plugin))
        # text lists a run's tags in the provider's order (the Rust server's: its HashMap's)
        out[plugin + " tags"] = {r: sorted(t) if isinstance(t, list) else t for r, t in tags.items()}
        for run, tag in pairs(tags):
            out[(plugin, run, tag)] = server.json("/data/plugin/%s/%s" % (plugin, data_route), run=run, tag=tag,
                                                  **extra)
    for plugin, data_route, blob_route in (("images", "images", "individualImage"),
                                           ("audio", "audio", "individualAudio")):
        tags = keep(server.json("/data/plugin/%s/tags" % plugin))
        out[plugin + " tags"] = tags
        for run, tag in pairs(tags):
            for sample in range(tags[run][tag].get("samples", 1)):
                entries = server.json("/data/plugin/%s/%s" % (plugin, data_route), run=run, tag=tag, sample=sample)
                out[(plugin, run, tag, sample)] = entries
                for e in entries:
                    out[(plugin, run, tag, sample, e["step"], "blob")] = server.get(
                        "/data/plugin/%s/%s?%s" % (plugin, blob_route, e["query"]))
    mesh_tags = keep(server.json("/data/plugin/mesh/tags"))
    out["mesh tags"] = mesh_tags
    for run, tag in pairs(mesh_tags):
        meshes = server.json("/data/plugin/mesh/meshes", run=run, tag=tag, sample=0)
        # the plugin lists a mesh's parts in the provider's tag order: the Rust server's is its HashMap's
        out[("mesh", run, tag)] = sorted(meshes, key=lambda m: (m["step"], m["content_type"]))
        from tensorboard.plugins.mesh import plugin_data_pb2
        for m in meshes:
            content_type = plugin_data_pb2.MeshPluginData.ContentType.Name(m["content_type"])
            out[("mesh", run, tag, m["step"], content_type)] = server.get(
                "/data/plugin/mesh/data", run=run, tag=tag, sample=0, step=m["step"], content_type=content_type)
    info = keep(server.json("/data/plugin/graphs/info"))
    out["graphs info"] = info
    for run, entry in info.items():
        if entry.get("run_graph"):
            out[("graph", run)] = server.get("/data/plugin/graphs/graph", run=run, conceptual="false")
        for tag, what in entry.get("tags", {}).items():
            if what.get("profile"):
                out[("run_metadata", run, tag)] = server.get("/data/plugin/graphs/run_metadata", run=run, tag=tag)
    out["custom scalars layout"] = layout = server.json("/data/plugin/custom_scalars/layout")
    regexes = sorted({r for cat in layout.get("category", []) for chart in cat.get("chart", [])
                      for r in chart.get("multiline", {}).get("tag", [])})
    for run in out["runs"]:
        for regex in regexes:
            out[("custom_scalars", run, regex)] = server.json("/data/plugin/custom_scalars/scalars", run=run, tag=regex)
    return out


def hparams(server):
    """The HParams dashboard's two answers, session groups (and their sessions and metrics) in name order."""
    experiment = server.post_json("/data/plugin/hparams/experiment", {"experimentName": ""})
    groups = server.post_json("/data/plugin/hparams/session_groups", {
        "experimentName": "", "allowedStatuses": ["STATUS_UNKNOWN", "STATUS_SUCCESS", "STATUS_FAILURE",
                                                  "STATUS_RUNNING"],
        "colParams": [], "startIndex": 0, "sliceSize": 1000})
    for group in groups.get("sessionGroups", []):
        group.get("sessions", []).sort(key=lambda x: x["name"])
        for holder in [group] + group.get("sessions", []):
            holder.get("metricValues", []).sort(key=lambda m: (m["name"]["group"], m["name"]["tag"]))
    groups.get("sessionGroups", []).sort(key=lambda g: g["name"])
    return experiment, groups


LIMITS = {"scalars": 1000, "histograms": 100, "distributions": 100, "text": 100, "pr_curves": 100,
          "images": 10, "audio": 10}


def sampled_series(root):
    """{(plugin, run, tag)} of the series longer than TensorBoard's default sampling limit for their plugin."""
    from tfevents.summaries import load_logdir
    logdir = load_logdir(root, on_error="skip")
    out = set()
    for plugin, kinds in (("scalars", ("scalars",)), ("histograms", ("histograms",)), ("text", ("text",)),
                          ("pr_curves", ("pr_curves",)), ("images", ("images", "videos")), ("audio", ("audio",))):
        for kind in kinds:
            for (run, tag), series in getattr(logdir, kind).items():
                if len(series if not hasattr(series, "step") else series.step) > LIMITS[plugin]:
                    out.add((plugin, run, tag))
                    if plugin == "histograms":
                        out.add(("distributions", run, tag))
    return out


def test_every_dashboard_answers_as_on_the_rust_data_server(served):
    root, servers, _ = served
    rust, ours = snapshot(servers["rust"]), snapshot(servers["ours"])
    sampled = sampled_series(root)

    sampled_runs = {run for _, run, _ in sampled}

    def is_sampled(key):   # a sampled series' data, its blobs, or a custom-scalars chart over a sampled run
        return isinstance(key, tuple) and len(key) > 2 and (
            (key[0], key[1], key[2]) in sampled or key[0] == "custom_scalars" and key[1] in sampled_runs)
    assert sampled >= {("images", "tf1", "img_1/image/0"), ("scalars", "long", "loss")}
    assert {k for k in rust if not is_sampled(k)} == {k for k in ours if not is_sampled(k)}
    assert {k[0] for k in rust if isinstance(k, tuple)} >= {
        "scalars", "histograms", "distributions", "text", "pr_curves", "images", "audio", "mesh", "graph",
        "run_metadata", "custom_scalars"}
    assert len(rust["runs"]) >= 8
    different = [k for k in rust if not is_sampled(k) and rust[k] != ours[k]]
    assert not different, "\n".join("%r:\n rust %.300r\n ours %.300r" % (k, rust[k], ours[k]) for k in different[:5])


def test_series_longer_than_the_sampling_limits(served):
    """Same size, same last point, and only real points: the sample itself differs (see the module docstring)."""
    root, servers, _ = served
    from tfevents.summaries import load_logdir
    full = load_logdir(os.path.join(root, "long"), on_error="skip")
    limits = {"scalars": 1000, "histograms": 51, "text": 100, "images": 10}  # the histograms route asks for 51
    for plugin, route in (("scalars", "scalars"), ("histograms", "histograms"), ("text", "text")):
        tag = {"scalars": "loss", "histograms": "weights", "text": "notes/text_summary"}[plugin]
        answers = {name: s.json("/data/plugin/%s/%s" % (plugin, route), run="long", tag=tag)
                   for name, s in servers.items()}
        assert len(answers["ours"]) == len(answers["rust"]) == limits[plugin]
        assert answers["ours"][-1] == answers["rust"][-1]
        steps = [e["step"] if isinstance(e, dict) else e[1] for e in answers["ours"]]
        assert steps == sorted(set(steps))
        if plugin == "scalars":
            series = full.scalars[(".", "loss")]
            real = {int(st): float(np.float32(v)) for st, v in zip(series.step, series.value)}
            assert all(real[step] == value for _, step, value in answers["ours"])
    images = {name: s.json("/data/plugin/images/images", run="long", tag="sample", sample=0)
              for name, s in servers.items()}
    assert len(images["ours"]) == len(images["rust"]) == limits["images"]
    assert images["ours"][-1]["step"] == images["rust"][-1]["step"] == LONG["images"] - 1


def test_hparams_dashboard_for_each_experiment(served):
    """TensorBoard's HParams plugin shows the first experiment summary in the provider's run order, and the Rust
    server's order is its HashMap's (random per process): with several experiments in one logdir the two servers
    show different ones. So each writer's experiment is compared alone, the others' runs moved out meanwhile
    (both servers drop runs whose files are gone) and back after."""
    root, servers, _ = served
    from tfevents.summaries.reader.scan import scan_file
    experiments = sorted(os.path.relpath(d, root) for d, _, files in os.walk(root) for f in files
                         if "tfevents" in f and "_hparams_/experiment" in scan_file(os.path.join(d, f),
                                                                                       on_error="skip").metadata)
    assert len(experiments) == 3          # tensorboardX's, torch's and ours
    parked = root + "_parked"
    os.makedirs(parked, exist_ok=True)
    try:
        for keep in experiments:
            for run in experiments:
                src, dst = os.path.join(root, run), os.path.join(parked, run.replace("/", "_"))
                if run != keep and os.path.exists(src):
                    os.rename(src, dst)
                elif run == keep and os.path.exists(dst):
                    os.rename(dst, src)
            others = set(experiments) - {keep}
            for server in servers.values():
                server.wait_for("runs without %s" % sorted(others), lambda: server.json("/data/runs"),
                                done=lambda runs: keep in runs and not others & set(runs))
            rust, ours = hparams(servers["rust"]), hparams(servers["ours"])
            assert rust[0]["hparamInfos"] and rust[1]["sessionGroups"]
            assert ours == rust, keep
    finally:
        for run in experiments:
            dst = os.path.join(parked, run.replace("/", "_"))
            if os.path.exists(dst):
                os.rename(dst, os.path.join(root, run))


def test_appended_events_are_served_within_two_reload_intervals(served):
    root, servers, _ = served
    from tfevents.summaries import SummaryWriter
    ours = servers["ours"]
    with SummaryWriter(os.path.join(root, "live"), flush_secs=0.1) as w:
        w.add_scalar("progress", 0.0, 0)
        w.flush()
        ours.wait_for("the live run", lambda: ours.json("/data/plugin/scalars/scalars", run="live", tag="progress"),
                      timeout=10)
        for step in range(1, 4):
            w.add_scalar("progress", float(step), step)
        w.flush()
        started = time.monotonic()
        rows = ours.wait_for("the appended steps", lambda: ours.json("/data/plugin/scalars/scalars", run="live",
                                                                      tag="progress"),
                             done=lambda rows: [r[1] for r in rows] == [0, 1, 2, 3], timeout=10)
        # reload interval 1 s on both sides; two intervals and a little for the HTTP round trips
        assert time.monotonic() - started < 2.5
        assert [r[2] for r in rows] == [0.0, 1.0, 2.0, 3.0]


def test_a_corrupted_record_is_reported_and_the_records_after_it_served(served):
    root, servers, provider = served
    from tfevents.summaries import SummaryWriter
    from tfevents.summaries.reader.scan import scan_file
    run = os.path.join(root, "corrupt")
    with SummaryWriter(run) as w:
        for step in range(10):
            w.add_scalar("metric", float(step), step)
    (path,) = [os.path.join(run, f) for f in os.listdir(run)]
    scalars = scan_file(path, on_error="skip").scalars["metric"]
    offset = int(scalars[0][4])                      # the record of step 4
    with open(path, "r+b") as f:                     # flip a payload byte: its checksum no longer holds
        f.seek(offset + 14)
        byte = f.read(1)
        f.seek(offset + 14)
        f.write(struct.pack("B", byte[0] ^ 0xFF))
    ours = servers["ours"]
    rows = ours.wait_for("the records after the corrupted one", lambda: ours.json(
        "/data/plugin/scalars/scalars", run="corrupt", tag="metric"),
        done=lambda rows: [r[1] for r in rows] == [0, 1, 2, 3, 5, 6, 7, 8, 9], timeout=15)
    assert [r[2] for r in rows] == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    deadline = time.monotonic() + 5
    while "corrupted" not in provider.log() and time.monotonic() < deadline:
        time.sleep(0.2)
    log = provider.log()
    assert "%s at offset %d: corrupted" % (path, offset) in log
    time.sleep(2.5)                                  # two more reload passes: reported once, not per pass
    assert provider.log().count("offset %d: corrupted" % offset) == 1


def test_the_scalars_dashboard_draws_charts_in_chromium(served, tmp_path, request):
    driver = required_browser(request, "the scalars dashboard is checked in Debian's chromium")
    _, servers, _ = served
    driver.set_window_size(1280, 1600)       # the window the screenshot check was written for
    load(driver, servers["ours"].url + "#scalars")
    count = wait_for_tensorboard_lines(driver, 2)
    shot = driver.get_screenshot_as_png()
    (tmp_path / "scalars.png").write_bytes(shot)
    assert count > 0, "no scalar chart on the page"
    from PIL import Image
    import io
    pixels = np.asarray(Image.open(io.BytesIO(shot)).convert("RGB")).reshape(-1, 3)
    assert len(np.unique(pixels, axis=0)) > 50       # charts, lines and text, not a blank page
