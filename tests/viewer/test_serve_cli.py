"""`tfevents serve` as a user runs it: TensorBoard started as its child and stopped with it on SIGTERM, Ctrl-C or a
hang-up, and ended with it when it is SIGKILLed (no orphan, the port free again), clear errors for bad arguments,
and an fsspec URL (the moto S3 server) as the logdir."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from _serve import ProviderProcess
from _tensorboard import free_port, stop_process_group


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open("/proc/%d/stat" % pid) as f:   # a zombie is dead
        return f.read().split(") ", 1)[1][0] != "Z"


def _children(pid: int) -> list:
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        return [int(c) for c in f.read().split()]


@pytest.fixture(scope="module")
def small_logdir(tmp_path_factory):
    from tfevents.summaries import SummaryWriter
    d = tmp_path_factory.mktemp("serve_cli")
    with SummaryWriter(str(d / "run")) as w:
        for step in range(5):
            w.add_scalar("loss", 1.0 / (step + 1), step)
    return str(d)


def _port_is_free(port: int) -> bool:
    """Whether a server (TensorBoard's own check) could listen on 127.0.0.1:port now."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            s.listen()
        except OSError:
            return False
    return True


# SIGHUP: the terminal closed (tmux kill-session); SIGKILL: no clean-up at all, TensorBoard ends on its own
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL])
def test_serve_starts_tensorboard_and_stops_it_with_itself(small_logdir, sig):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tfevents.viewer.cli", "serve", small_logdir, "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    tensorboard = None
    try:
        line = proc.stdout.readline().decode()
        assert "http://127.0.0.1:%d/" % port in line
        deadline, rows = time.monotonic() + 90, None
        while time.monotonic() < deadline and rows is None:
            try:
                url = "http://127.0.0.1:%d/data/plugin/scalars/scalars?run=run&tag=loss" % port
                rows = urllib.request.urlopen(url, timeout=5).read()
            except OSError:
                time.sleep(0.5)
        assert rows and b"0.2" in rows                   # the last point, 1/5, served through TensorBoard
        (tensorboard,) = _children(proc.pid)
        assert _alive(tensorboard)
        with open("/proc/%d/maps" % tensorboard) as f:   # started without TensorFlow (viewer/serve/web.py)
            assert "libtensorflow" not in f.read()
        os.kill(proc.pid, sig)                           # the serve process only, as a terminal or systemd would
        assert proc.wait(timeout=30) == (-signal.SIGKILL if sig == signal.SIGKILL else 0)
        deadline = time.monotonic() + 10
        while _alive(tensorboard) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(tensorboard), "TensorBoard outlived tfevents serve"
        while not _port_is_free(port) and time.monotonic() < deadline + 5:   # (the kernel may release it a moment
            time.sleep(0.1)                                                   # after the process: seen once in CI)
        assert _port_is_free(port)                       # the next `tfevents serve --port P` can start
    finally:
        stop_process_group(proc)
        if tensorboard is not None and _alive(tensorboard):   # an orphan, when the test failed
            os.kill(tensorboard, signal.SIGKILL)


TIED_CHILD = ("import sys, time; from tfevents.viewer.serve.web import end_with_parent; end_with_parent(%d, %d); "
              "print('tied', flush=True); time.sleep(60)")


def test_the_lifeline_alone_ends_the_child():
    """The portable half of ``end_with_parent``: the child ends once the lifeline's write end is closed, here with
    its parent alive (so not by Linux's PR_SET_PDEATHSIG); and a child whose parent is already gone ends at once."""
    read_end, write_end = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", TIED_CHILD % (os.getpid(), read_end)], pass_fds=(read_end,),
                             stdout=subprocess.PIPE)
    os.close(read_end)
    try:
        assert child.stdout.readline() == b"tied\n"
        os.close(write_end)
        assert child.wait(timeout=10) == -signal.SIGTERM
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    if sys.platform.startswith("linux"):   # told a parent pid not its parent's: the parent went before the prctl
        read_end, write_end = os.pipe()
        no_pid = 1 << 22                     # above Linux's largest pid_max
        orphan = subprocess.run([sys.executable, "-c", TIED_CHILD % (no_pid, read_end)], pass_fds=(read_end,),
                                capture_output=True, timeout=30)
        os.close(read_end)
        os.close(write_end)
        assert orphan.returncode == -signal.SIGTERM and orphan.stdout == b""


@pytest.mark.parametrize("args, message", [
    (["--samples-per-plugin", "scalars"], "PLUGIN=COUNT"),
    (["--samples-per-plugin", "scalars=-3"], "non-negative"),
    (["--samples-per-plugin", "images=lots"], "integer or 'all'"),
])
def test_bad_arguments_are_clear_errors(small_logdir, args, message):
    out = subprocess.run([sys.executable, "-m", "tfevents.viewer.cli", "serve", small_logdir, "--provider-only"]
                         + args, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and message in out.stderr


def test_a_missing_logdir_is_a_clear_error(tmp_path):
    out = subprocess.run([sys.executable, "-m", "tfevents.viewer.cli", "serve", str(tmp_path / "nope")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "no such directory" in out.stderr


def test_tensorflow_is_needed_only_for_checkpoint_backed_embeddings(tmp_path):
    from tfevents.viewer.serve.web import needs_tensorflow
    (tmp_path / "run").mkdir()
    assert not needs_tensorflow(str(tmp_path))
    (tmp_path / "run" / "projector_config.pbtxt").write_text('embeddings { tensor_path: "tensors.tsv" }')
    assert not needs_tensorflow(str(tmp_path))
    (tmp_path / "run" / "projector_config.pbtxt").write_text('model_checkpoint_path: "model.ckpt-5"')
    assert needs_tensorflow(str(tmp_path)) and not needs_tensorflow("s3://bucket/logs")


def test_samples_per_plugin_parses_tensorboards_flag():
    from tfevents.summaries.live.loader import UNBOUNDED
    from tfevents.viewer.serve.server import parse_samples_per_plugin
    assert parse_samples_per_plugin("scalars=5, images=all,audio=0") == {
        "scalars": 5, "images": UNBOUNDED, "audio": UNBOUNDED}   # 'all' and 0 keep every point, as in TensorBoard


def test_samples_per_plugin_bounds_what_is_kept(small_logdir):
    import grpc
    from tensorboard.data.proto import data_provider_pb2 as pb
    from tensorboard.data.proto import data_provider_pb2_grpc as pb_grpc
    with ProviderProcess(small_logdir, "--samples-per-plugin", "scalars=2") as provider:
        stub = pb_grpc.TensorBoardDataProviderStub(grpc.insecure_channel(provider.address))
        request = pb.ReadScalarsRequest(plugin_filter=pb.PluginFilter(plugin_name="scalars"),
                                        downsample=pb.Downsample(num_points=1000))
        deadline = time.monotonic() + 30
        while True:
            answer = stub.ReadScalars(request, timeout=10)
            if answer.runs or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        (run,) = answer.runs
        (tag,) = run.tags
        assert len(tag.data.step) == 2 and tag.data.step[-1] == 4   # two kept, the last among them
        with pytest.raises(grpc.RpcError) as err:               # the Rust server's argument checks
            stub.ReadScalars(pb.ReadScalarsRequest(downsample=pb.Downsample(num_points=5)), timeout=10)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as err:
            list(stub.ReadBlob(pb.ReadBlobRequest(blob_key="not a key"), timeout=10))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_an_s3_logdir_is_served(tmp_path, s3_endpoint):
    """The logdir as an s3:// URL on the moto S3 server: the provider lists and reads it with fsspec."""
    import boto3
    import grpc
    from tensorboard.data.proto import data_provider_pb2 as pb
    from tensorboard.data.proto import data_provider_pb2_grpc as pb_grpc
    from tfevents.summaries import SummaryWriter
    env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
               AWS_DEFAULT_REGION="us-east-1", AWS_ENDPOINT_URL=s3_endpoint)
    s3 = boto3.client("s3", endpoint_url=s3_endpoint, aws_access_key_id="testing",
                      aws_secret_access_key="testing", region_name="us-east-1")
    s3.create_bucket(Bucket="served")
    with SummaryWriter(str(tmp_path / "exp")) as w:
        for step in range(4):
            w.add_scalar("loss", float(step), step)
    (name,) = os.listdir(tmp_path / "exp")
    s3.upload_file(str(tmp_path / "exp" / name), "served", "logs/exp/" + name)
    proc = subprocess.Popen([sys.executable, "-m", "tfevents.viewer.cli", "serve", "s3://served/logs",
                             "--provider-only"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)
    try:
        address = proc.stdout.readline().decode().split(": ", 1)[1].strip()
        stub = pb_grpc.TensorBoardDataProviderStub(grpc.insecure_channel(address))
        deadline = time.monotonic() + 30
        while True:
            runs = stub.ListRuns(pb.ListRunsRequest(), timeout=10).runs
            if runs or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert [r.name for r in runs] == ["exp"]
        answer = stub.ReadScalars(pb.ReadScalarsRequest(plugin_filter=pb.PluginFilter(plugin_name="scalars"),
                                                        downsample=pb.Downsample(num_points=10)), timeout=10)
        assert list(answer.runs[0].tags[0].data.value) == [0.0, 1.0, 2.0, 3.0]
        assert stub.GetExperiment(pb.GetExperimentRequest(), timeout=10).data_location == "s3://served/logs"
    finally:
        stop_process_group(proc)
