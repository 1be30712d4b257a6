"""JAX arrays, as a JAX training loop passes them: every method that takes an array accepts a ``jax.Array``
without the user converting it and writes the events numpy's array writes; with jax imported and no launcher
variable, the rank comes from ``jax.process_index()``. Run in a child process so that jax (and the rank it gives)
stays out of the suite's process."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

# found, not imported: jax in this process would make every later writer take its rank from jax.process_index()
if importlib.util.find_spec("jax") is None:
    pytest.skip("jax is a test dependency (pyproject's test extra): pip install 'jax[cpu]'", allow_module_level=True)

CHILD = r'''
import json, os, sys
import numpy as np
import jax.numpy as jnp
from tfevents.summaries import SummaryWriter, summary_iterator
from tfevents.summaries.writer.ranks import detect_rank

WALL = 1_700_000_000.5
rng = np.random.default_rng(3)
image = rng.random((3, 16, 24), dtype=np.float32)
video = rng.random((1, 4, 3, 8, 8), dtype=np.float32)
values = rng.normal(size=2000).astype(np.float32)
wave = np.sin(np.arange(400, dtype=np.float32) / 7)[None]
points = rng.random((1, 10, 3), dtype=np.float32)
labels = rng.random(100) > 0.5
scores = rng.random(100).astype(np.float32)


def log(root, convert):
    with SummaryWriter(root) as w:
        w.add_scalar("loss", convert(np.float32(0.25)), convert(np.int32(3)), walltime=WALL)
        w.add_image("img", convert(image), 3, walltime=WALL)
        w.add_images("imgs", convert(np.stack([image, image])), 3, walltime=WALL)
        w.add_histogram("w", convert(values), 3, walltime=WALL)
        w.add_audio("snd", convert(wave), 3, sample_rate=8000, walltime=WALL)
        w.add_video("clip", convert(video), 3, fps=4, walltime=WALL)
        w.add_mesh("cloud", convert(points), global_step=3, walltime=WALL)
        w.add_pr_curve("pr", convert(labels), convert(scores), 3, walltime=WALL)
    events = []
    for name in sorted(os.listdir(root)):
        for e in summary_iterator(os.path.join(root, name)):
            if e.HasField("summary"):
                events.append(e.SerializeToString().hex())
    return events


out = {"numpy": log(sys.argv[1] + "/numpy", np.asarray), "jax": log(sys.argv[1] + "/jax", jnp.asarray),
       "jax_type": type(jnp.asarray(image)).__module__, "rank": detect_rank(environ={}).source}
print(json.dumps(out))
'''


def test_jax_arrays_write_what_numpy_arrays_write(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS",
                                                          "OMPI_COMM_WORLD_RANK", "PMI_RANK")}
    env["JAX_PLATFORMS"] = "cpu"
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["jax_type"].startswith("jax")                    # a real jax.Array went in, not a numpy copy
    assert len(out["numpy"]) == 8 and out["jax"] == out["numpy"]
    assert out["rank"] == "jax.process_index()"
