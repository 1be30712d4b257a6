"""The package's import structure, read from the source: no import cycle at module level, each part imports only
the parts below it (ARCHITECTURE.md's table), a function-level import of our own modules says why it is lazy, and
every module imports on its own in a fresh interpreter (so no import order can hide a cycle)."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import REPO

FOLDERS = {"core": "tfevents.core", "summaries": "tfevents.summaries", "viewer": "tfevents.viewer",
           "proto": "tfevents.proto"}

# ARCHITECTURE.md's table: what each part may import at module level (besides itself)
PARTS = {
    "tfevents.proto": set(),
    "tfevents.summaries": {"tfevents.proto"},
    "tfevents.core.framework": {"tfevents.proto"},
    "tfevents.core.runtime": {"tfevents.core.framework", "tfevents.proto"},
    "tfevents.core.ops": {"tfevents.core.framework", "tfevents.core.runtime", "tfevents.proto"},
    "tfevents.core.control_flow": {"tfevents.core.framework", "tfevents.core.ops", "tfevents.proto"},
    "tfevents.core.api": {"tfevents.core.framework", "tfevents.core.runtime", "tfevents.core.ops",
                          "tfevents.core.control_flow", "tfevents.core.layers", "tfevents.core.rnn",
                          "tfevents.proto", "tfevents.summaries"},
    "tfevents.core.layers": {"tfevents.core.framework", "tfevents.core.ops", "tfevents.core.control_flow",
                             "tfevents.core.api"},
    "tfevents.core.rnn": {"tfevents.core.framework", "tfevents.core.ops", "tfevents.core.control_flow",
                          "tfevents.core.layers", "tfevents.core.api"},
    "tfevents.core.train": {"tfevents.core.framework", "tfevents.core.runtime", "tfevents.core.ops",
                            "tfevents.core.control_flow", "tfevents.core.api", "tfevents.proto",
                            "tfevents.summaries"},
    "tfevents.core.demo": {"tfevents.core", "tfevents.proto", "tfevents.summaries"},
    "tfevents.viewer": {"tfevents.summaries", "tfevents.proto", "tfevents.core.demo"},
}


def _modules() -> dict:
    """{dotted module name: source path} of the four folders."""
    found = {}
    for folder, package in FOLDERS.items():
        top = os.path.join(REPO, folder)
        for directory, subdirs, files in os.walk(top):
            subdirs[:] = [d for d in subdirs if d != "__pycache__"]
            for name in files:
                if name.endswith(".py"):
                    parts = os.path.relpath(os.path.join(directory, name), top)[:-3].split(os.sep)
                    if parts[-1] == "__init__":
                        parts = parts[:-1]
                    found[".".join([package] + parts)] = os.path.join(directory, name)
    return found


MODULES = _modules()


def _imports(module: str, path: str):
    """``(line, target modules, in a function, source line)`` for each import of our own modules. An import needs
    the module it names initialised, and the packages above it other than the importing module's own (those are
    being initialised already), unless it takes a name (not a submodule) from one of them."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    lines = source.splitlines()
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    ancestors = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}

    def needed(name: str, takes_name: bool) -> set:
        parts, out = name.split("."), set()
        for i in range(2, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in MODULES and prefix != module and (prefix not in ancestors or takes_name and prefix == name):
                out.add(prefix)
        return out

    def visit(body, in_function):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from visit(node.body, True)
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = set()
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        targets |= needed(alias.name, False)
                else:
                    base = node.module or ""
                    if node.level:
                        base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                        + ([node.module] if node.module else []))
                    for alias in node.names:
                        sub = base + "." + alias.name
                        targets |= needed(sub, False) if sub in MODULES else needed(base, True)
                if targets:
                    yield node.lineno, targets, in_function, lines[node.lineno - 1]
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                child = getattr(node, field, None)
                if isinstance(child, list):
                    yield from visit([c for c in child if isinstance(c, ast.AST)], in_function)

    return list(visit(ast.parse(source).body, False))


IMPORTS = {module: _imports(module, path) for module, path in MODULES.items()}
GRAPH = {module: {t for _, targets, lazy, _ in found if not lazy for t in targets}
         for module, found in IMPORTS.items()}


def _cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _part(module: str) -> str:
    """The part of ARCHITECTURE.md's table a module belongs to (core's API modules at its top are ``api``)."""
    for part in sorted(PARTS, key=len, reverse=True):
        if module == part or module.startswith(part + "."):
            if part == "tfevents.core.api":
                continue
            return part
    if module == "tfevents.core":
        return "tfevents.core"
    if module.startswith("tfevents.core."):
        return "tfevents.core.api"
    raise AssertionError("module %s is in no part" % module)


def test_the_graph_is_read():
    """The reader of the graph sees the imports it must (so the tests below cannot pass by reading nothing)."""
    assert len(MODULES) > 150
    assert "tfevents.core.framework.graph" in GRAPH["tfevents.core.ops.math_ops"]
    assert "tfevents.summaries.reader.scan" in GRAPH["tfevents.summaries.live.loader"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_at_module_level():
    assert _cycles(GRAPH) == []


def test_each_part_imports_only_the_parts_below_it():
    wrong = []
    for module, targets in GRAPH.items():
        part = _part(module)
        if part == "tfevents.core":      # the package's __init__ is the tf namespace: it gathers the API
            continue
        for target in targets:
            other = _part(target)
            if other != part and other not in PARTS[part]:
                wrong.append("%s -> %s (%s may import %s)" % (module, target, part, sorted(PARTS[part])))
    assert wrong == []


def test_function_level_imports_of_our_modules_say_why_they_are_lazy():
    unexplained = ["%s:%d: %s" % (os.path.relpath(MODULES[module], REPO), line, text.strip())
                   for module, found in IMPORTS.items() for line, _, lazy, text in found
                   if lazy and "# lazy:" not in text]
    assert unexplained == []


def _import_alone(module: str) -> str:
    proc = subprocess.run([sys.executable, "-c", "import " + module], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, TFEVENTS_CORE_KERNELS="1"))
    return "" if proc.returncode == 0 else "%s: %s" % (module, proc.stderr.strip().splitlines()[-1:])


@pytest.mark.parametrize("group", ["tfevents.core", "tfevents.summaries", "tfevents.viewer", "tfevents.proto"])
def test_every_module_imports_alone_in_a_fresh_interpreter(group):
    modules = sorted(m for m in MODULES if m == group or m.startswith(group + "."))
    with ThreadPoolExecutor(2) as pool:
        failures = [f for f in pool.map(_import_alone, modules) if f]
    assert failures == []
