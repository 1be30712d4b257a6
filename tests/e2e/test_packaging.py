"""Packaging: the namespace layout, the console script, and README/CI agreement."""
import os
import re
import subprocess
import sys
from conftest import REPO


def test_subpackages_map_into_the_tfevents_namespace():
    import tfevents.core
    import tfevents.proto
    import tfevents.summaries
    import tfevents.viewer
    for module, folder in [(tfevents.core, "core"), (tfevents.summaries, "summaries"),
                           (tfevents.proto, "proto"), (tfevents.viewer, "viewer")]:
        assert os.path.basename(os.path.dirname(module.__file__)) == folder
    # no generic top-level packages leak out of the distribution
    for generic in ("core", "proto", "summaries", "viewer"):
        out = subprocess.run([sys.executable, "-c", "import %s" % generic], cwd="/", capture_output=True)
        assert out.returncode != 0, "a top-level %r package is importable" % generic


def test_console_script_version():
    out = subprocess.run([sys.executable, "-m", "tfevents.viewer.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert re.match(r"tfevents \d+\.\d+", out.stdout)


def test_importing_summaries_does_not_load_numpy_or_tensorboard():
    code = ("import sys, tfevents.summaries; from tfevents.summaries import SummaryWriter; "
            "print(sorted(m for m in ('numpy', 'tensorboard', 'tensorflow', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_readme_test_command_is_what_ci_runs():
    readme = open(os.path.join(REPO, "README.md")).read()
    ci = open(os.path.join(REPO, ".ci", "run")).read()
    block = readme.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2, "the quick start must be exactly two commands: %r" % commands
    assert "tfevents demo" in commands[0]
    for command in commands:
        assert command in ci.splitlines(), "README's quick start must run in .ci/run as written: %r" % command


def test_every_subpackage_is_listed_in_pyproject():
    """A folder with __init__.py that pyproject's `packages` misses is absent from a non-editable install."""
    tomllib = __import__("pytest").importorskip("tomllib")
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        setuptools_cfg = tomllib.load(f)["tool"]["setuptools"]
    folder_of = {folder: name for name, folder in setuptools_cfg["package-dir"].items()}
    found = set()
    for folder, name in folder_of.items():
        for dirpath, dirnames, filenames in os.walk(os.path.join(REPO, folder)):
            # a folder mapped on its own (summaries/integrations -> tfevents.integrations) is its own package
            dirnames[:] = [d for d in dirnames if d != "__pycache__"
                           and os.path.relpath(os.path.join(dirpath, d), REPO) not in folder_of]
            if "__init__.py" in filenames:
                rel = os.path.relpath(dirpath, os.path.join(REPO, folder))
                found.add(name if rel == "." else name + "." + rel.replace(os.sep, "."))
    assert found == set(setuptools_cfg["packages"])
