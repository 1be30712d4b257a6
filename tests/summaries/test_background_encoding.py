"""Encoding on the writer's thread (SummaryWriter(encode_in_background=True), EventFileWriter.add_deferred_event).

The file a background-encoding writer writes equals, event for event, the one the synchronous path
(``encode_in_background=False``, encoding in the call as torch and tensorboardX do) writes for the same calls;
inputs are copied at the call; an encoding error is raised by the caller's next call, or by flush/close.
"""
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import torch

from _events import event_file, read_events
from tfevents.summaries import EventFileWriter, SummaryWriter, record

WALL = 1_700_000_000.25


def _calls(rng):
    """(name, call) pairs covering every method that encodes in the background, numpy and torch inputs
    (bfloat16 too), with explicit wall times so that two writers write the same bytes."""
    image = rng.random((3, 32, 48), dtype=np.float32)
    video = rng.random((2, 5, 3, 16, 16), dtype=np.float32)
    return [
        ("scalar", lambda w, s: w.add_scalar("loss", 0.5, s, walltime=WALL)),
        ("image", lambda w, s: w.add_image("img", image, s, walltime=WALL)),
        ("image torch bf16", lambda w, s: w.add_image("img_bf16", torch.from_numpy(image).bfloat16(), s,
                                                       walltime=WALL)),
        ("image uint8 HWC", lambda w, s: w.add_image("img_u8", (image * 255).astype(np.uint8).transpose(1, 2, 0), s,
                                                      walltime=WALL, dataformats="HWC")),
        ("images", lambda w, s: w.add_images("grid", np.stack([image] * 3), s, walltime=WALL)),
        ("boxes", lambda w, s: w.add_image_with_boxes("boxed", image, torch.tensor([[1.0, 2.0, 20.0, 30.0]]), s,
                                                       walltime=WALL, labels=["cat"])),
        ("histogram", lambda w, s: w.add_histogram("w", rng.normal(size=5000), s, walltime=WALL)),
        ("histogram torch bf16 bins", lambda w, s: w.add_histogram("w_bf16", torch.randn(1000).bfloat16(), s,
                                                                    bins=np.linspace(-4, 4, 17), walltime=WALL)),
        ("histogram int bins", lambda w, s: w.add_histogram("w_int", rng.normal(size=100), s, bins=10,
                                                             walltime=WALL)),
        ("audio", lambda w, s: w.add_audio("snd", torch.sin(torch.arange(800.0) / 10).unsqueeze(0), s,
                                           sample_rate=8000, walltime=WALL)),
        ("video", lambda w, s: w.add_video("clip", video, s, fps=5, walltime=WALL)),
        ("mesh", lambda w, s: w.add_mesh("cloud", rng.random((1, 20, 3)), colors=np.full((1, 20, 3), 200),
                                         faces=np.array([[[0, 1, 2], [2, 3, 4]]]), global_step=s, walltime=WALL,
                                         config_dict={"camera": {"fov": 75}})),
        ("pr curve", lambda w, s: w.add_pr_curve("pr", rng.random(200) > 0.5, rng.random(200), s,
                                                 weights=np.full(200, 2.0), walltime=WALL)),
        ("text", lambda w, s: w.add_text("note", "step %d" % s, s, walltime=WALL)),
        ("embedding", lambda w, s: w.add_embedding(torch.randn(10, 4), metadata=list("abcdefghij"),
                                                   label_img=torch.rand(10, 3, 8, 8), global_step=s, tag="emb")),
        ("scalar after", lambda w, s: w.add_scalar("loss", 0.25, s, walltime=WALL)),
    ]


def _write(logdir, background, steps=3):
    rng = np.random.default_rng(7)
    torch.manual_seed(7)
    calls = _calls(rng)
    with SummaryWriter(logdir, encode_in_background=background, max_queue=5) as w:
        for step in range(steps):
            for _, call in calls:
                call(w, step)
    return [name for name, _ in calls]


def _records(logdir):
    return [data for _, data in record.iter_records(event_file(logdir))][1:]     # after the file_version event


def _embedding_files(logdir):
    found = {}
    for d, _, files in os.walk(logdir):
        for f in files:
            if "tfevents" not in f:
                with open(os.path.join(d, f), "rb") as fh:
                    found[os.path.relpath(os.path.join(d, f), logdir)] = fh.read()
    return found


def test_background_file_equals_synchronous_file_event_for_event(tmp_path):
    names = _write(str(tmp_path / "sync"), background=False)
    _write(str(tmp_path / "background"), background=True)
    sync, background = _records(tmp_path / "sync"), _records(tmp_path / "background")
    assert len(sync) == len(background) == 3 * (len(names) - 1)      # the embedding writes files, no event
    for i, (a, b) in enumerate(zip(sync, background)):
        assert a == b, "event %d differs" % i
    assert _embedding_files(tmp_path / "sync") == _embedding_files(tmp_path / "background")
    assert "00002/emb/sprite.png" in _embedding_files(tmp_path / "background")


def test_inputs_are_copied_at_the_call(tmp_path):
    image = np.full((3, 8, 8), 0.5, np.float32)
    values = torch.linspace(-1, 1, 1000)
    with SummaryWriter(str(tmp_path / "sync"), encode_in_background=False) as w:
        w.add_image("img", image, 1, walltime=WALL)
        w.add_histogram("h", values, 1, walltime=WALL)
    with SummaryWriter(str(tmp_path / "background")) as w:
        w.add_image("img", image, 1, walltime=WALL)
        w.add_histogram("h", values, 1, walltime=WALL)
        image[:] = 1.0                     # the caller reuses its buffers at once
        values.mul_(3)
    assert _records(tmp_path / "sync") == _records(tmp_path / "background")


def test_encoding_error_is_raised_by_the_next_call_and_the_other_events_are_kept(logdir):
    w = SummaryWriter(logdir)
    w.add_scalar("before", 1.0, 1)
    w.add_histogram("weights", np.array([1.0, np.nan]), 7)       # returns: the NaN is found on the writer's thread
    w.add_scalar("between", 2.0, 1)
    deadline = time.monotonic() + 30
    with pytest.raises(ValueError, match=r"add_histogram\('weights'\) at step 7.*non-finite"):
        while time.monotonic() < deadline:      # the thread is asked to write at once; a later call hears of it
            w.add_scalar("after", 3.0, 1)
            time.sleep(0.01)
    w.add_image("image", np.zeros((1, 2, 2)), 1)
    w.close()
    tags = [e.summary.value[0].tag for e in read_events(logdir)]
    assert tags[:2] == ["before", "between"] and "weights" not in tags and tags[-1] == "image"


@pytest.mark.parametrize("how", ["flush", "close"])
def test_encoding_error_is_raised_by_flush_and_close(logdir, how):
    w = SummaryWriter(logdir, flush_secs=3600)
    w.add_image("bad", np.full((3, 2, 2), np.nan), 3)             # NaN pixels: found while encoding
    with pytest.raises(ValueError, match=r"add_image\('bad'\) at step 3.*non-finite"):
        getattr(w, how)()
    w.close()
    assert read_events(logdir) == []


def test_deferred_events_are_built_on_the_writer_thread_in_queue_order(logdir):
    threads = []

    def make(n):
        def build():
            threads.append(threading.current_thread().name)
            return b"deferred %d" % n
        return build

    w = EventFileWriter(logdir)
    for n in range(3):
        w.add_serialized_event(b"plain %d" % n)
        w.add_deferred_event(make(n), nbytes=10)
    w.add_deferred_event(lambda: None)                            # builds nothing: nothing written
    deadline = time.monotonic() + 30
    while len(threads) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    w.close()
    assert threads == ["tfevents-writer"] * 3
    assert [data for _, data in record.iter_records(w.get_filename())][1:] == [
        b"plain 0", b"deferred 0", b"plain 1", b"deferred 1", b"plain 2", b"deferred 2"]


def test_deferred_bytes_are_bounded_the_caller_builds_beyond(logdir):
    threads = []

    def build():
        threads.append(threading.current_thread().name)
        return b"x"

    w = EventFileWriter(logdir, flush_secs=3600, max_deferred_bytes=100)
    w.add_deferred_event(build, nbytes=60)
    w.add_deferred_event(build, nbytes=60)                         # 120 bytes pending > 100: built in this call
    assert threading.current_thread().name in threads
    w.close()


def test_no_array_library_is_imported_unless_passed(tmp_path):
    code = ("import sys, numpy as np\n"
            "from tfevents.summaries import SummaryWriter\n"
            "with SummaryWriter(sys.argv[1]) as w:\n"
            "    w.add_image('i', np.zeros((3, 4, 4))); w.add_histogram('h', [1.0, 2.0]); w.add_scalar('s', 1.0)\n"
            "    w.add_video('v', np.zeros((1, 2, 3, 4, 4))); w.add_mesh('m', np.zeros((1, 3, 3)))\n"
            "print(sorted(m for m in ('torch', 'jax', 'jaxlib', 'cupy', 'tensorflow') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
