"""Every module of the package imported alone, each in a fresh interpreter (``tests/e2e/test_imports.py``'s
``test_every_module_imports_alone_in_a_fresh_interpreter``): the package's modules as found in the source
(``source_modules``), and the interpreters of one group (``import_group``; conftest's background job
``fresh_imports`` runs every group's while the tests before it run)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Set, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = {"core": "tfevents.core", "summaries": "tfevents.summaries", "viewer": "tfevents.viewer",
           "proto": "tfevents.proto", os.path.join("summaries", "integrations"): "tfevents.integrations"}
GROUPS = ["tfevents.core", "tfevents.summaries", "tfevents.viewer", "tfevents.proto", "tfevents.integrations"]


def source_modules() -> dict:
    """{dotted module name: source path} of the four folders."""
    found = {}
    for folder, package in FOLDERS.items():
        top = os.path.join(REPO, folder)
        for directory, subdirs, files in os.walk(top):
            subdirs[:] = [d for d in subdirs if d != "__pycache__"
                          and os.path.relpath(os.path.join(directory, d), REPO) not in FOLDERS]
            for name in files:
                if name.endswith(".py"):
                    parts = os.path.relpath(os.path.join(directory, name), top)[:-3].split(os.sep)
                    if parts[-1] == "__init__":
                        parts = parts[:-1]
                    found[".".join([package] + parts)] = os.path.join(directory, name)
    return found


_LOADED = "import json, sys; import %s; print(json.dumps(sorted(m for m in sys.modules if m.startswith('tfevents'))))"


def import_alone(module: str):
    """``(failure text or "", our modules the import loaded)`` of ``import module`` in a fresh interpreter."""
    proc = subprocess.run([sys.executable, "-c", _LOADED % module], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, TFEVENTS_CORE_KERNELS="1"))
    if proc.returncode != 0:
        return "%s: %s" % (module, proc.stderr.strip().splitlines()[-1:]), set()
    return "", set(json.loads(proc.stdout.strip().splitlines()[-1]))


def import_group(group: str, modules) -> Tuple[List[str], List[str], Dict[str, Set[str]]]:
    """``(the group's modules, failures, {module imported in an interpreter of its own: our modules it loaded})``.
    The packages go first (parents before children), and a module gets an interpreter of its own only when no
    package above it loaded it (the test's docstring says why that covers it)."""
    members = sorted((m for m in modules if m == group or m.startswith(group + ".")),
                     key=lambda m: (m.count("."), m))
    loaded_by: Dict[str, Set[str]] = {}
    failures: List[str] = []
    for depth in sorted({m.count(".") for m in members}):
        level = [m for m in members if m.count(".") == depth]
        alone = [m for m in level if not any(m in loaded_by.get(".".join(m.split(".")[:i]), ())
                                             for i in range(1, depth + 1))]
        with ThreadPoolExecutor(2) as pool:
            for module, (failure, loaded) in zip(alone, pool.map(import_alone, alone)):
                if failure:
                    failures.append(failure)
                loaded_by[module] = loaded
    return members, failures, loaded_by

