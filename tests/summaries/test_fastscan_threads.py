"""The C scanner (``_fastscan``) releases the GIL while it frames and decodes records.

Files are written by the real tools (tensorboardX: simple_value scalars; torch.utils.tensorboard:
tensor-style scalars with plugin metadata; both: histograms and text for the proto decoder) and
read back with TensorBoard's own event loader as the oracle. Checked here: two files scanned by two
threads at once give exactly the rows of scanning them one after the other; a tag filter still
works when tags first appear in the middle of a chunk (their verdict is asked after the loop);
a Python thread keeps running while one long ``feed`` runs; and a feed that fails (accept()
raising, memory running out inside or after the loop) leaves no trace of its chunk.
"""
import glob
import os
import threading
import time

import numpy as np
import pytest

from tfevents.summaries.reader import scan as _reader_scan

_fastscan = _reader_scan.native
pytestmark = pytest.mark.skipif(_fastscan is None, reason="the _fastscan extension is not built")

STEPS = 6000


def _only_file(logdir):
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    return path


@pytest.fixture(scope="module")
def tbx_file(tmp_path_factory):
    """tensorboardX: simple_value scalars, tags appearing mid-file, histograms and text every 500 steps."""
    from tensorboardX import SummaryWriter
    logdir = str(tmp_path_factory.mktemp("tbx"))
    w = SummaryWriter(logdir)
    for i in range(STEPS):
        w.add_scalar("keep/loss", 1.0 / (i + 1), i, walltime=1000.0 + i)
        if i >= STEPS // 3:
            w.add_scalar("drop/grad", float(i), i, walltime=1000.0 + i)
            w.add_scalar("keep/lr", 0.5 * i, i, walltime=1000.0 + i, display_name="learning rate")
        if i >= 2 * STEPS // 3:
            w.add_scalar("drop/late", -float(i), i, walltime=1000.0 + i, summary_description="late tag")
        if i % 500 == 0:
            w.add_histogram("keep/weights", np.arange(i % 7 + 3, dtype=np.float64), i, walltime=1000.0 + i)
            w.add_text("drop/note", "step %d" % i, i, walltime=1000.0 + i)
    w.close()
    return _only_file(logdir)


@pytest.fixture(scope="module")
def torch_file(tmp_path_factory):
    """torch.utils.tensorboard: rank-0 tensor scalars (with the scalars plugin's metadata) and histograms."""
    from torch.utils.tensorboard import SummaryWriter
    logdir = str(tmp_path_factory.mktemp("torch"))
    w = SummaryWriter(logdir)
    for i in range(STEPS):
        w.add_scalar("keep/acc", i / STEPS, i, walltime=2000.0 + i, new_style=True)
        if i >= STEPS // 2:
            w.add_scalar("drop/tensor", float(i), i, walltime=2000.0 + i, new_style=True, double_precision=True)
        if i % 700 == 0:
            w.add_histogram("drop/hist", np.arange(5, dtype=np.float64) * i, i, walltime=2000.0 + i)
    w.close()
    return _only_file(logdir)


@pytest.fixture(scope="module")
def damaged_file(tbx_file, tmp_path_factory):
    """The tensorboardX file with a flipped payload byte at about 40% and a cut-off last record."""
    data = bytearray(open(tbx_file, "rb").read())
    data[int(len(data) * 0.4)] ^= 0x55
    path = str(tmp_path_factory.mktemp("damaged") / "events.out.tfevents.damaged")
    with open(path, "wb") as f:
        f.write(bytes(data[:-7]))
    return path


def _oracle_scalars(path, accept=lambda tag: True):
    """{tag: [(step, wall_time, value)]} as TensorBoard's own loader reads the file."""
    from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
    from tensorboard.util import tensor_util
    rows = {}
    for event in LegacyEventFileLoader(path).Load():
        if not event.HasField("summary"):
            continue
        for value in event.summary.value:
            kind = value.WhichOneof("value")
            if kind == "simple_value":
                scalar = value.simple_value
            elif kind == "tensor" and not value.tensor.tensor_shape.dim:
                scalar = float(tensor_util.make_ndarray(value.tensor))
            else:
                continue
            if accept(value.tag):
                rows.setdefault(value.tag, []).append((event.step, event.wall_time, scalar))
    return rows


def _rows_of(file_rows):
    """Everything a FileRows holds, as plain comparable values."""
    return {
        "scalars": {tag: tuple(np.asarray(c).tolist() for c in cols) for tag, cols in file_rows.scalars.items()},
        "scalar_order": list(file_rows.scalars),
        "values": file_rows.values, "metadata": file_rows.metadata, "graphs": file_rows.graphs,
        "session_logs": file_rows.session_logs, "file_versions": file_rows.file_versions,
        "problems": file_rows.problems, "tensor_scalars": file_rows.tensor_scalars,
        "records": file_rows.records, "end": file_rows.end, "min_wall_time": file_rows.min_wall_time,
    }


def _scan(path, tags=None, fast=True):
    return _rows_of(_reader_scan.scan_file(path, tags=tags, fast=fast, on_error="skip"))  # problems kept, not warned


def _in_threads(jobs):
    """Run the callables at once (released together by a barrier); their results, in order."""
    barrier = threading.Barrier(len(jobs))
    results, errors = [None] * len(jobs), []

    def run(i):
        try:
            barrier.wait()
            results[i] = jobs[i]()
        except BaseException as err:  # reported by the main thread
            errors.append(err)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


@pytest.mark.parametrize("chunk", [pytest.param(None, id="whole-file"), pytest.param(32 << 10, id="32KiB-chunks")])
@pytest.mark.parametrize("tags", [None, "^keep/"])
def test_two_threads_give_the_rows_of_one_after_the_other(tbx_file, torch_file, damaged_file, chunk, tags,
                                                          monkeypatch):
    if chunk is not None:
        monkeypatch.setattr(_reader_scan, "CHUNK", chunk)
    for pair in [(tbx_file, torch_file), (damaged_file, torch_file), (tbx_file, damaged_file)]:
        sequential = [_scan(p, tags) for p in pair]
        for _ in range(3):
            concurrent = _in_threads([lambda p=p: _scan(p, tags) for p in pair])
            assert concurrent == sequential
        # the fast path as a whole still agrees with the proto-based path
        assert sequential == [_scan(p, tags, fast=False) for p in pair]
    damaged = _scan(damaged_file, tags)
    assert [p.kind for p in damaged["problems"]] == ["corrupted", "truncated"]
    assert damaged["values"] and (tags or damaged["file_versions"])  # records went to the proto decoder too
    # and the rows are TensorBoard's
    for path in (tbx_file, torch_file):
        rows = _scan(path, tags)
        accept = (lambda tag: True) if tags is None else (lambda tag: tag.startswith("keep/"))
        expected = _oracle_scalars(path, accept)
        got = {tag: list(zip(cols[1], cols[2], cols[3])) for tag, cols in rows["scalars"].items()}
        assert got == expected


def _feed_all(scanner, data, chunk):
    """Feed data in pieces of about `chunk` bytes, keeping incomplete records for the next piece, as scan.py does."""
    base, statuses = 0, []
    while base < len(data):
        piece = data[base:base + chunk]
        status, used, length = scanner.feed(piece, base)
        statuses.append(status)
        if status != 0:
            raise AssertionError("bad record at %d" % (base + used))
        if base + len(piece) >= len(data):
            assert used == len(piece)
            break
        if used == 0:  # the record is longer than the piece
            chunk = max(chunk, length)
            continue
        base += used
    return statuses


@pytest.mark.parametrize("chunk", [1 << 30, 40 << 10])
def test_tag_filter_with_tags_first_seen_mid_chunk(tbx_file, chunk):
    data = open(tbx_file, "rb").read()
    asked = []

    def accept(tag):
        asked.append(tag)
        return tag.startswith("keep/")

    scanner = _fastscan.Scanner(accept, 7, True)
    _feed_all(scanner, data, chunk)
    # each scalar tag asked once, in the order first seen, though all but the first appear mid-chunk
    assert asked == ["keep/loss", "drop/grad", "keep/lr", "drop/late"]
    columns = scanner.columns()
    assert [c[0] for c in columns] == ["keep/loss", "keep/lr"]
    expected = _oracle_scalars(tbx_file, lambda tag: tag.startswith("keep/"))
    for tag, meta_offset, meta, rows, from_tensor, reduced, min_wall_time, extremes in columns:
        table = np.frombuffer(rows, _reader_scan.ROW)
        got = list(zip(table["step"].tolist(), table["wall_time"].tolist(), table["value"].tolist()))
        assert got == expected[tag]
        assert not from_tensor and not reduced  # no keep(): every row is kept
        assert min_wall_time == min(w for _, w, _ in expected[tag])
        values = [v for _, _, v in expected[tag]]   # the value extremes with their steps, the first of equals
        lo, hi = values.index(min(values)), values.index(max(values))
        steps = [s for s, _, _ in expected[tag]]
        assert extremes == (values[lo], steps[lo], values[hi], steps[hi], False)
        offsets = table["offset"]
        assert (np.diff(offsets) > 0).all() and offsets[-1] < len(data)
        if tag == "keep/lr":  # the first metadata of the tag, from its first record
            from tfevents.proto import summary_pb2
            assert meta_offset == offsets[0]
            assert summary_pb2.SummaryMetadata.FromString(meta).display_name == "learning rate"
        else:
            assert meta is None and meta_offset == -1
    # the histograms and texts went to the proto decoder with their payloads intact
    others = scanner.take_others()
    from tfevents.proto import event_pb2
    kinds = [event_pb2.Event.FromString(payload).WhichOneof("what") for _, payload in others]
    assert kinds.count("summary") == 2 * len(range(0, STEPS, 500)) and kinds[0] == "file_version"
    assert scanner.take_others() == []
    assert scanner.columns() == columns  # columns() can be asked again
    assert scanner.records == sum(1 for _ in _iter_records(data))


def _iter_records(data):
    import io
    from tfevents.summaries import record
    return record.iter_records(io.BytesIO(data))


def test_accept_errors_and_reentry(tbx_file):
    data = open(tbx_file, "rb").read()
    calls = []

    def failing(tag):
        calls.append(tag)
        if tag == "drop/grad":
            raise ValueError("no verdict for " + tag)
        return True

    scanner = _fastscan.Scanner(failing, 7, True)
    with pytest.raises(ValueError, match="no verdict for drop/grad"):
        scanner.feed(data, 0)
    assert calls == ["keep/loss", "drop/grad"]
    # a failed feed keeps nothing of its chunk: the next one starts afresh and asks again
    assert scanner.records == 0 and scanner.take_others() == [] and scanner.columns() == []
    calls.clear()
    with pytest.raises(ValueError):
        scanner.feed(data, 0)
    assert calls == ["keep/loss", "drop/grad"]

    def reenter(tag):
        scanner2.columns()

    scanner2 = _fastscan.Scanner(reenter, 7, True)
    with pytest.raises(RuntimeError, match="Scanner.feed is running"):
        scanner2.feed(data, 0)
    scanner3 = _fastscan.Scanner(lambda tag: scanner3.feed(data, 0), 7, True)
    with pytest.raises(RuntimeError, match="Scanner.feed is running"):
        scanner3.feed(data, 0)


def test_feed_releases_the_gil(tbx_file):
    """A Python thread watching ``scanner.records`` sees it mid-feed: impossible if feed held the GIL
    (the watcher could then only run before the call, seeing 0, or after it, seeing the total)."""
    from tfevents.summaries import record
    data = open(tbx_file, "rb").read()
    records = [p for _, p in _iter_records(data)]
    big = b"".join(record.encode_record(p) for p in records) * max(1, (48 << 20) // len(data))
    total = len(records) * max(1, (48 << 20) // len(data))
    current, mid_feed, stop = [None], [], threading.Event()

    def watch():  # a plain Python loop, which can only run while no other thread holds the GIL
        while not stop.is_set():
            scanner = current[0]
            n = scanner.records if scanner is not None else 0
            if 0 < n < total:
                mid_feed.append(n)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(5):  # one long feed is enough in practice; a few tries if the watcher got no CPU
            scanner = _fastscan.Scanner(None, 0, True)
            current[0] = scanner
            assert scanner.feed(big, 0) == (0, len(big), 0)
            assert scanner.records == total
            current[0] = None
            if mid_feed:
                break
    finally:
        stop.set()
        watcher.join()
    assert mid_feed, "no Python thread ran while feed() was running: the GIL was held"
    assert mid_feed == sorted(mid_feed)  # the watcher saw the count rise as feed went on


def test_out_of_memory_leaves_no_trace_of_the_chunk(tbx_file):
    """Fail one memory allocation at a time (raw ones in the loop included) during the second of two
    feeds: feed() either succeeds with the right rows or raises MemoryError leaving the scanner as
    the first feed left it, and feeding the chunk again then gives the right rows."""
    _testcapi = pytest.importorskip("_testcapi")
    data = open(tbx_file, "rb").read()
    offsets = [o for o, _ in _iter_records(data)]
    cut = offsets[len(offsets) // 2]  # new tags and metadata appear after it (see tbx_file)
    keep = lambda tag: not tag.startswith("drop/")  # noqa: E731

    def state(scanner):  # the rows as bytes: columns() hands out the scanner's own buffers
        columns = [c[:3] + (bytes(c[3]),) + c[4:] for c in scanner.columns()]
        return scanner.records, columns, scanner.take_others()

    reference = _fastscan.Scanner(keep, 7, True)
    reference.feed(data[:cut], 0)
    halfway = state(reference)
    reference.feed(data[cut:], cut)
    full = state(reference)
    first, second = data[:cut], data[cut:]
    failures = 0
    for k in range(1, 200):
        scanner = _fastscan.Scanner(keep, 7, True)
        scanner.feed(first, 0)
        scanner.take_others()  # as `halfway` was taken: others of the first chunk gone
        _testcapi.set_nomemory(k, k + 1)  # the k-th allocation from here fails
        try:
            result = scanner.feed(second, cut)
        except MemoryError:
            result = None
        finally:
            _testcapi.remove_mem_hooks()
        if result is None:
            failures += 1
            records, columns, others = state(scanner)
            assert (records, columns, others) == (halfway[0], halfway[1], []), k
            scanner.feed(second, cut)
        assert result in (None, (0, len(data) - cut, 0)), k
        records, columns, others = state(scanner)
        assert (records, columns) == full[:2] and others == full[2], k
    assert failures > 10, failures  # the failures did land inside feed()
