"""restarts= modes reproduce TensorBoard's three loaders on the same restarted runs: the Python
plugin accumulator ('python'), the legacy EventAccumulator ('legacy') and the Rust data server
('rust' = the default 'tensorboard'), the latter queried over gRPC."""
import os
import subprocess
import time

import numpy as np
import pytest

from tfevents.proto import event_pb2, summary_pb2
from tfevents.summaries import record
from tfevents.summaries.reader import load_logdir

START = event_pb2.SessionLog.START
SCALARS_META = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))


def _ev(wall, step=0, **kw):
    return record.encode_record(event_pb2.Event(wall_time=wall, step=step, **kw).SerializeToString())


def _points(tags_steps, wall, tensor_tags=(), meta_done=set()):
    """One event per step holding every tag: x simple_value, y tensor-style, h histogram."""
    out = []
    for step in tags_steps:
        s = summary_pb2.Summary()
        s.value.add(tag="x", simple_value=step + wall / 1000)
        v = s.value.add(tag="y")
        v.tensor.dtype = 1
        v.tensor.float_val.append(step * 2 + wall / 1000)
        if "y" not in meta_done:
            v.metadata.CopyFrom(SCALARS_META)
            meta_done.add("y")
        s.value.add(tag="h", histo=summary_pb2.HistogramProto(min=step, max=step, num=1, sum=step,
                                                              sum_squares=step * step, bucket_limit=[step + 1.0],
                                                              bucket=[1]))
        out.append(_ev(wall + step, step, summary=s))
    return out


def _scalar(tag, step, value, wall):
    s = summary_pb2.Summary()
    s.value.add(tag=tag, simple_value=value)
    return _ev(wall, step, summary=s)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("restarts")
    # run "restart": the first START comes after points it would purge; a second file restarts at 7
    d = root / "restart"
    d.mkdir()
    meta_done = set()
    f1 = [_ev(1000.0, file_version="brain.Event:2")]
    f1 += _points(range(0, 6), 1000.0, meta_done=meta_done)
    f1 += [_ev(1100.0, 3, session_log=event_pb2.SessionLog(status=START))]
    f1 += _points(range(3, 10), 1100.0, meta_done=meta_done)
    f1 += [_scalar("z", s, s, 1200.0 + s) for s in (0, 1, 2, 3, 4, 5, 2, 3, 4)]  # no START: step goes back
    (d / "events.out.tfevents.0000001000.host.1.0").write_bytes(b"".join(f1))
    f2 = [_ev(2000.0, file_version="brain.Event:2"), _ev(2000.5, 7, session_log=event_pb2.SessionLog(status=START))]
    f2 += _points(range(7, 13), 2000.0, meta_done=meta_done)
    (d / "events.out.tfevents.0000002000.host.1.0").write_bytes(b"".join(f2))
    # run "old": no file_version event, so steps going back purge by tag (python/legacy)
    o = root / "old"
    o.mkdir()
    f3 = [_scalar("a", s, s * 10, 3000.0 + i) for i, s in enumerate([0, 1, 2, 3, 4, 2, 3, 5])]
    f3 += [_scalar("b", s, -s, 3100.0 + s) for s in (0, 1, 2)]
    (o / "events.out.tfevents.0000003000.host.1.0").write_bytes(b"".join(f3))
    return str(root)


def _tensor_value(t):
    """The value of a rank-0 float tensor as the accumulators hold it (histograms: None)."""
    values = list(t.float_val) or list(t.double_val)
    return float(values[0]) if len(values) == 1 and not t.tensor_shape.dim else None


def _series(s):
    return list(zip(s.step.tolist(), s.value.tolist()))


def test_python_mode_matches_plugin_event_accumulator(logdir):
    from tensorboard.backend.event_processing.plugin_event_accumulator import EventAccumulator
    ours = load_logdir(logdir, restarts="python", on_error="skip")
    for run in ("restart", "old"):
        acc = EventAccumulator(os.path.join(logdir, run), size_guidance={"tensors": 0})
        acc.Reload()
        for tag in acc.Tags()["tensors"]:
            want = [(e.step, _tensor_value(e.tensor_proto)) for e in acc.Tensors(tag)]
            if tag == "h":
                got = ours.histograms[(run, tag)]
                assert got.step.tolist() == [s for s, _ in want]
            else:
                got = ours.scalars[(run, tag)]
                assert _series(got) == [(s, float(a)) for s, a in want], (run, tag)
    # the first START is ignored: x keeps 3..5 of the first session alongside the restarted 3..5
    x = ours.scalars[("restart", "x")]
    assert x.step.tolist() == [0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    assert ours.purged[("restart", "scalars", "x")] == 3  # 7, 8, 9 of the first file, by the second START


def test_legacy_mode_matches_event_accumulator(logdir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    ours = load_logdir(logdir, restarts="legacy", on_error="skip")
    for run in ("restart", "old"):
        acc = EventAccumulator(os.path.join(logdir, run), size_guidance={"scalars": 0, "tensors": 0,
                                                                           "histograms": 0})
        acc.Reload()
        tags = acc.Tags()
        for tag in tags["scalars"]:
            assert _series(ours.scalars[(run, tag)]) == [(e.step, e.value) for e in acc.Scalars(tag)], (run, tag)
        for tag in tags["tensors"]:
            want = [(e.step, _tensor_value(e.tensor_proto)) for e in acc.Tensors(tag)]
            assert _series(ours.scalars[(run, tag)]) == want
        for tag in tags["histograms"]:
            assert ours.histograms[(run, tag)].step.tolist() == [e.step for e in acc.Histograms(tag)]
        assert tags["scalars"] and (run == "old" or tags["tensors"])
    # every START purges, but never the tensor-style series y
    assert ours.scalars[("restart", "x")].step.tolist() == list(range(13))
    assert ours.scalars[("restart", "y")].step.tolist() == [0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7, 8, 9, 7, 8, 9, 10,
                                                            11, 12]
    assert ours.scalars[("old", "a")].step.tolist() == [0, 1, 2, 3, 5]


def _rustboard_scalars(logdir):
    """{(run, tag): [(step, value)]} as the Rust data server serves them (all samples kept)."""
    grpc = pytest.importorskip("grpc")
    server_mod = pytest.importorskip("tensorboard_data_server")
    from tensorboard.data.proto import data_provider_pb2 as dp
    from tensorboard.data.proto import data_provider_pb2_grpc as dpg
    binary = server_mod.server_binary()
    if not binary or not os.path.exists(binary):
        pytest.skip("no tensorboard_data_server binary")
    port_file = os.path.join(logdir, "..", "rustboard.port")
    proc = subprocess.Popen([binary, "--logdir", logdir, "--port", "0", "--port-file", port_file,
                             "--reload", "once", "--samples-per-plugin", "scalars=all", "--die-after-stdin"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            assert time.time() < deadline and proc.poll() is None, "data server did not start"
            time.sleep(0.02)
        port = int(open(port_file).read())
        stub = dpg.TensorBoardDataProviderStub(grpc.insecure_channel("127.0.0.1:%d" % port))
        req = dp.ReadScalarsRequest(plugin_filter=dp.PluginFilter(plugin_name="scalars"),
                                    downsample=dp.Downsample(num_points=10 ** 6))
        last, stable = None, 0
        while stable < 5:  # loaded once: wait until the answer stops changing
            resp = stub.ReadScalars(req, timeout=10)
            got = {(r.run_name, t.tag_name): list(zip(t.data.step, t.data.value)) for r in resp.runs for t in r.tags}
            stable = stable + 1 if got == last and got else 0
            last = got
            time.sleep(0.05)
        return last
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
        os.unlink(port_file)


def test_rust_mode_matches_data_server(logdir):
    want = _rustboard_scalars(logdir)
    ours = load_logdir(logdir, on_error="skip")  # default 'tensorboard' = rust
    got = {key: _series(s) for key, s in ours.scalars.items()}
    assert set(got) == set(want)
    for key in want:
        assert got[key] == [(s, pytest.approx(v, rel=1e-7)) for s, v in want[key]], key
    assert got[("restart", "z")] == [(0, 0.0), (1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0)]
    purges = [p for p in ours.problems if p.kind == "purged"]
    assert purges and all(p.path.startswith(logdir) for p in purges)


def test_none_mode_keeps_everything_and_modes_are_checked(logdir):
    ours = load_logdir(logdir, restarts="none", on_error="skip")
    assert len(ours.scalars[("restart", "x")].step) == 6 + 7 + 6
    assert ours.out_of_order[("restart", "scalars", "x")] == 2
    assert not ours.purged
    with pytest.raises(ValueError, match="restarts"):
        load_logdir(logdir, restarts="bogus")
