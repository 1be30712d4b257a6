"""The writer when its object store is down or hangs (moto's S3 server behind tests/_tcp_proxy.py, which refuses
connections or accepts them and never answers): no value is lost and nothing is raised into ``add_*`` by an outage;
what waits is capped in memory; ``flush(timeout=)`` and ``close(timeout=)`` keep their bounds; a program that ends
(at exit or on SIGTERM) tries for a bounded time and then names the run and steps it could not store; permanent
errors are raised at once. And errors of the writer's thread reach the caller every time (issue 38)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from urllib.parse import urlparse

import numpy as np
import pytest

from _tcp_proxy import TcpProxy

pytest.importorskip("s3fs")

BUCKET = "tfevents-outage"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def bucket(s3_endpoint):
    import boto3
    boto3.client("s3", endpoint_url=s3_endpoint, aws_access_key_id="testing", aws_secret_access_key="testing",
                 region_name="us-east-1").create_bucket(Bucket=BUCKET)
    return BUCKET


@pytest.fixture
def proxy(s3_endpoint, bucket):
    parsed = urlparse(s3_endpoint)
    with TcpProxy((parsed.hostname, parsed.port)) as p:
        yield p


def options(endpoint: str) -> dict:
    return {"key": "testing", "secret": "testing",
            "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"}}


def stored_steps(url: str, endpoint: str, tag: str = "loss") -> np.ndarray:
    from tfevents.summaries.reader import read_scalars
    return read_scalars(url, storage_options=options(endpoint))[(".", tag)].step


def tensorboard_steps(url: str, endpoint: str, tmp_path, tag: str = "loss") -> list:
    """The steps of ``tag`` as TensorBoard's own event file loader reads the run's objects (downloaded, in name
    order)."""
    from tensorboard.backend.event_processing import event_file_loader
    import s3fs
    fs = s3fs.S3FileSystem(**options(endpoint))
    names = sorted(p for p in fs.ls(url[len("s3://"):], detail=False, refresh=True) if "tfevents" in p)
    steps = []
    for i, name in enumerate(names):
        path = str(tmp_path / ("%04d.tfevents" % i))
        fs.get(name, path)
        for event in event_file_loader.EventFileLoader(path).Load():
            steps += [event.step for value in event.summary.value if value.tag == tag]
    return steps


# ------------------------------------------------------------------------------------------- (a) outage

# The 22 s loop of (a) runs in a process of its own (its writer, and the proxy in front of moto's server), started
# when this module's first test starts and checked by the module's last test, so the other tests' waits on their
# timeouts overlap with it.
_OUTAGE_CHILD = textwrap.dedent("""
    import json, sys, time, warnings
    sys.path.insert(0, sys.argv[1])
    from _tcp_proxy import TcpProxy
    from tfevents.summaries import SummaryWriter
    url, opts, upstream = sys.argv[2], json.loads(sys.argv[3]), (sys.argv[4], int(sys.argv[5]))
    with TcpProxy(upstream) as proxy:
        # botocore is told not to retry (a common setting; the writer retries), so every attempt fails fast
        opts["client_kwargs"]["endpoint_url"] = proxy.url
        fail_fast = dict(opts, config_kwargs={"retries": {"max_attempts": 1}})
        w = SummaryWriter(url, flush_secs=0.5, storage_options=fail_fast)
        step, started = 0, time.monotonic()
        outage = (1.0, 21.0)   # the issue's 20 s
        with warnings.catch_warnings(record=True):   # the writer may warn that the store is down: not an error
            warnings.simplefilter("always")
            while time.monotonic() - started < 22.0:
                elapsed = time.monotonic() - started
                if outage[0] <= elapsed < outage[1] and proxy.state != "refuse":
                    proxy.refuse()
                elif elapsed >= outage[1] and proxy.state != "forward":
                    proxy.forward()
                w.add_scalar("loss", float(step), step)   # an exception here ends the child: the test fails
                step += 1
                time.sleep(0.002)
        w.close()
    print(json.dumps({"steps": step}), flush=True)
""")
OUTAGE_URL = "s3://%s/outage/run" % BUCKET


@pytest.fixture(scope="module", autouse=True)
def outage_run(s3_endpoint, bucket, tmp_path_factory):
    """The child process of (a), running while the module's other tests run: ``(process, its stdout file, its
    stderr file)``; the test at the end waits for it."""
    parsed = urlparse(s3_endpoint)
    out = tmp_path_factory.mktemp("outage")
    with open(out / "stdout", "wb") as stdout, open(out / "stderr", "wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-c", _OUTAGE_CHILD, os.path.join(REPO, "tests"), OUTAGE_URL,
                                 json.dumps(options(s3_endpoint)), parsed.hostname, str(parsed.port)],
                                stdout=stdout, stderr=stderr, cwd=REPO)
    try:
        yield proc, out / "stdout", out / "stderr"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


# ------------------------------------------------------------------------------------------- (b) black hole

def test_flush_with_a_timeout_returns_within_it_when_the_store_never_answers(proxy, s3_endpoint):
    from tfevents.summaries import SummaryWriter
    url = "s3://%s/blackhole/run" % BUCKET
    w = SummaryWriter(url, storage_options=options(proxy.url))
    for step in range(100):
        w.add_scalar("loss", float(step), step)
    proxy.blackhole()
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"s3://%s/blackhole/run.*100 events.*steps 0-99" % BUCKET):
        w.flush(timeout=5)
    assert time.monotonic() - started < 15
    proxy.forward()                                  # the records were kept: the store back, they are stored
    w.add_scalar("loss", 100.0, 100)
    w.close(timeout=30)
    np.testing.assert_array_equal(stored_steps(url, s3_endpoint), np.arange(101))


def test_close_with_a_timeout_keeps_its_bound_and_names_what_it_could_not_store(proxy, s3_endpoint):
    """The writer is closed all the same; what it holds goes on being retried (the exit hook waits for it), so
    it is stored once the store answers again."""
    from tfevents.summaries import SummaryWriter
    url = "s3://%s/blackhole-close/run" % BUCKET
    w = SummaryWriter(url, storage_options=options(proxy.url))
    for step in range(10, 20):
        w.add_scalar("loss", float(step), step)
    proxy.blackhole()
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"blackhole-close/run.*10 events.*steps 10-19"):
        w.close(timeout=3)
    assert time.monotonic() - started < 13
    assert w._file_writer.closed
    proxy.forward()
    w._file_writer._sink.sync(time.monotonic() + 30)
    np.testing.assert_array_equal(stored_steps(url, s3_endpoint), np.arange(10, 20))


_CHILD = textwrap.dedent("""
    import json, sys, time
    from tfevents.summaries import SummaryWriter
    url, opts, mode = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    w = SummaryWriter(url, storage_options=opts)
    for step in range(1000):
        w.add_scalar("loss", float(step), step)
    w.flush()
    for step in range(1000, 2000):
        w.add_scalar("loss", float(step), step)
    print("ready", flush=True)
    sys.stdin.readline()               # the parent black-holes the store, then says go
    if mode == "close":                # a close() that times out: its uploads go on until the exit hook gives up
        try:
            w.close(timeout=0.5)
        except TimeoutError:
            pass
    if mode in ("exit", "close"):
        sys.exit(0)
    for _ in range(1200):              # a loop: one long time.sleep would miss a signal landing just before it
        time.sleep(0.1)
""")


ENDINGS = ("exit", "close", "sigterm")


def test_a_program_ending_while_the_store_hangs_ends_in_bounded_time_naming_what_was_not_stored(proxy):
    """At interpreter exit (with the writer open, or closed by a close() that timed out) and on SIGTERM the
    writer tries for TFEVENTS_EXIT_TIMEOUT seconds (3 here; 30 by default), then says on stderr which run and
    steps it could not store, and the process ends. (The three endings run at once, one process each, behind one
    black hole: each waits its own bound.)"""
    env = dict(os.environ, TFEVENTS_EXIT_TIMEOUT="3")
    urls = {mode: "s3://%s/ending-%s/run" % (BUCKET, mode) for mode in ENDINGS}
    procs = {mode: subprocess.Popen([sys.executable, "-c", _CHILD, urls[mode], json.dumps(options(proxy.url)), mode],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    env=env, cwd=REPO)
             for mode in ENDINGS}
    results = {}
    try:
        for proc in procs.values():
            assert proc.stdout.readline() == "ready\n", proc.stderr.read() if proc.poll() is not None else ""
        proxy.blackhole()
        started = time.monotonic()
        for proc in procs.values():
            proc.stdin.write("go\n")
            proc.stdin.flush()
        time.sleep(0.3)
        procs["sigterm"].send_signal(signal.SIGTERM)
        for mode, proc in procs.items():
            returncode = proc.wait(timeout=max(1.0, 25 - (time.monotonic() - started)))
            results[mode] = (returncode, time.monotonic() - started, proc.stderr.read())
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for mode, (returncode, elapsed, stderr) in results.items():
        assert returncode == (-signal.SIGTERM if mode == "sigterm" else 0), (mode, stderr)
        assert elapsed < 15, (mode, elapsed, stderr)
        assert urls[mode] in stderr and "1000 events" in stderr and "steps 1000-1999" in stderr, (mode, stderr)


# ------------------------------------------------------------------------------------------- (c) memory cap

def test_memory_held_during_an_outage_stays_under_the_cap_oldest_dropped_and_counted(proxy, s3_endpoint):
    """10 KB texts while the store refuses: the records held stay under max_held_bytes (plus the newest batch);
    past it the oldest are dropped, counted and warned about; the rest is stored when the store is back, and
    stored + dropped is every step."""
    from tfevents.summaries import SummaryWriter
    from tfevents.summaries.reader import load_logdir
    cap = 256 << 10
    url = "s3://%s/capped/run" % BUCKET
    w = SummaryWriter(url, max_queue=4, flush_secs=0.05, max_held_bytes=cap, storage_options=options(proxy.url))
    sink = w._file_writer._sink
    proxy.refuse()
    most = 0
    with pytest.warns(RuntimeWarning, match=r"dropped the oldest"):
        for step in range(150):                        # 1.5 MB of text, six times the cap
            w.add_text("notes", "x" * 10_000, step)
            time.sleep(0.01)
            most = max(most, sink.held_bytes)
    assert most <= cap + 5 * 10_100, most
    assert sink.dropped_events > 0
    proxy.forward()
    w.close(timeout=30)
    dropped = sink.dropped_steps()        # (an upload in flight since before a drop may have stored some after all)
    assert sink.dropped_events == len(dropped) > 0
    texts = load_logdir(url, storage_options=options(s3_endpoint)).text[(".", "notes/text_summary")]
    stored = sorted(record.step for record in texts)
    assert sorted(set(stored) | set(dropped)) == list(range(150))
    assert not set(stored) & set(dropped)
    assert stored[-1] == 149 and dropped == list(range(dropped[0], dropped[-1] + 1))   # the oldest went first


# ------------------------------------------------------------------------------------------- (d) permanent errors

# Raised at once, not retried: a transient error is retried with backoff up to 30 s and never raised into the
# constructor, so a permanent one mistaken for it would outlast this bound by far. The bound is loose on purpose: a
# cold s3fs session took 2.4 s under a full suite on 2 busy cores (2.0 s failed there); the exception's type is what
# the code before the fix got wrong.
PERMANENT_BOUND = 10.0


def test_no_such_bucket_raises_at_once(proxy):
    from tfevents.summaries import SummaryWriter
    started = time.monotonic()
    with pytest.raises(FileNotFoundError, match=r"s3://tfevents-no-such-bucket-here/run.*bucket does not exist"):
        SummaryWriter("s3://tfevents-no-such-bucket-here/run", storage_options=options(proxy.url))
    assert time.monotonic() - started < PERMANENT_BOUND


def test_missing_credentials_raise_at_once(proxy, monkeypatch, tmp_path):
    """No key anywhere (botocore's NoCredentialsError, which is no OSError): before, 5 attempts with backoff."""
    from tfevents.summaries import SummaryWriter
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    started = time.monotonic()
    with pytest.raises(PermissionError, match=r"s3://%s/nocreds.*credentials" % BUCKET):
        SummaryWriter("s3://%s/nocreds" % BUCKET,
                      storage_options={"client_kwargs": {"endpoint_url": proxy.url, "region_name": "us-east-1"}})
    assert time.monotonic() - started < PERMANENT_BOUND


def test_an_upper_case_scheme_is_accepted(proxy, s3_endpoint):
    from tfevents.summaries import SummaryWriter
    from tfevents.summaries.reader import read_scalars
    with SummaryWriter("S3://%s/upper/run" % BUCKET, storage_options=options(proxy.url)) as w:
        w.add_scalar("loss", 1.0, 1)
    assert w._file_writer.get_filename().startswith("s3://%s/upper/run/" % BUCKET)
    series = read_scalars("S3://%s/upper" % BUCKET, storage_options=options(s3_endpoint))
    np.testing.assert_array_equal(series[("run", "loss")].step, [1])


# ------------------------------------------------------------------------------------- (e) errors reach the caller

def test_an_encoding_error_reaches_flush_or_close_every_time(tmp_path):
    """A histogram with a NaN (found while it is encoded on the writer's thread), then flush() and close(): one
    of them raises it, 100 times out of 100 (before, the error could be stored by the writer's thread after
    flush() had looked, and close() never looked). (A bad add_embedding, as the issue found it, now raises in
    the call: its files are written there.)"""
    from tfevents.summaries import SummaryWriter
    values = np.append(np.ones(1_000_000), np.nan)           # long enough to be in the thread's hands at flush()
    heard = 0
    for i in range(100):
        w = SummaryWriter(str(tmp_path / ("run%d" % i)))
        w.add_histogram("weights", values, i)
        time.sleep(0.001)                                    # the writer's thread starts encoding it
        raised = 0
        for call in (w.flush, w.close):
            try:
                call()
            except ValueError as e:
                assert "non-finite" in str(e)
                raised += 1
        heard += raised == 1
        assert w._file_writer.closed
    assert heard == 100


def test_the_call_that_hears_of_an_error_keeps_its_value(tmp_path):
    from tfevents.summaries import SummaryWriter
    from tfevents.summaries.reader import read_scalars
    w = SummaryWriter(str(tmp_path / "run"))
    w.add_histogram("weights", np.array([1.0, np.nan]), 3)   # fails on the writer's thread
    deadline = time.monotonic() + 10
    while w._file_writer._error is None and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(ValueError, match="non-finite"):
        w.add_scalar("loss", 5.0, 5)
    w.close()
    np.testing.assert_array_equal(read_scalars(str(tmp_path))[("run", "loss")].step, [5])


# ------------------------------------------------------------------------------------------- (a) outage, checked

def test_an_outage_loses_no_value_and_raises_nothing_into_add_scalar(outage_run, s3_endpoint, tmp_path):
    """The store refuses connections for 20 s of a 22 s loop of add_scalar (before the fix, add_scalar raised
    OSError ~4 s into the outage and the value of that call was lost): every step is stored afterwards, as our
    reader and TensorBoard's read the objects. botocore is told not to retry (a common setting; the writer
    retries), so every attempt fails fast. (The loop ran in a child process, ``_OUTAGE_CHILD``, since this
    module's first test.)"""
    proc, stdout, stderr = outage_run
    returncode = proc.wait(timeout=180)
    assert returncode == 0, stderr.read_text(errors="replace")[-3000:]
    step = json.loads(stdout.read_text().strip().splitlines()[-1])["steps"]
    assert step > 1000
    np.testing.assert_array_equal(stored_steps(OUTAGE_URL, s3_endpoint), np.arange(step))
    assert tensorboard_steps(OUTAGE_URL, s3_endpoint, tmp_path) == list(range(step))
