"""The package's import structure, read from the source: no import cycle at module level, each part imports only
the parts below it (ARCHITECTURE.md's tables, the parts of ``summaries`` included), no private name is taken across
parts, a function-level import of our own modules says why it is lazy, every module imports on its own in a fresh
interpreter (so no import order can hide a cycle), and the kind names are spelled out only where they must be."""
from __future__ import annotations

import ast
import os

import pytest

from _fresh_imports import GROUPS, source_modules
from conftest import REPO

# ARCHITECTURE.md's tables: what each part may import at module level (besides itself). ``tfevents.summaries`` is
# its base modules (record, tags, atomic, lazy, iterator, the package's lazy exports); its parts go down this table.
SUMMARIES_BASE = {"tfevents.summaries", "tfevents.proto"}
SUMMARIES_PARTS = {
    "tfevents.summaries": {"tfevents.proto"},
    "tfevents.summaries.builders": SUMMARIES_BASE,
    "tfevents.summaries.writer": SUMMARIES_BASE | {"tfevents.summaries.builders"},
    "tfevents.summaries.reader": SUMMARIES_BASE | {"tfevents.summaries.builders"},
    "tfevents.summaries.live": SUMMARIES_BASE | {"tfevents.summaries.builders", "tfevents.summaries.reader"},
    "tfevents.summaries.dask": SUMMARIES_BASE | {"tfevents.summaries.builders", "tfevents.summaries.reader"},
    "tfevents.summaries.compare": SUMMARIES_BASE | {"tfevents.summaries.builders", "tfevents.summaries.reader",
                                                    "tfevents.summaries.writer"},
    "tfevents.summaries.runs": SUMMARIES_BASE | {"tfevents.summaries.builders", "tfevents.summaries.reader",
                                                 "tfevents.summaries.live"},
}
SUMMARIES = set(SUMMARIES_PARTS)
PARTS = {
    "tfevents.proto": set(),
    **SUMMARIES_PARTS,
    "tfevents.core.framework": {"tfevents.proto"},
    "tfevents.core.runtime": {"tfevents.core.framework", "tfevents.proto"},
    "tfevents.core.ops": {"tfevents.core.framework", "tfevents.core.runtime", "tfevents.proto"},
    "tfevents.core.control_flow": {"tfevents.core.framework", "tfevents.core.ops", "tfevents.proto"},
    "tfevents.core.api": {"tfevents.core.framework", "tfevents.core.runtime", "tfevents.core.ops",
                          "tfevents.core.control_flow", "tfevents.core.layers", "tfevents.core.rnn",
                          "tfevents.proto"} | SUMMARIES,
    "tfevents.core.layers": {"tfevents.core.framework", "tfevents.core.ops", "tfevents.core.control_flow",
                             "tfevents.core.api"},
    "tfevents.core.rnn": {"tfevents.core.framework", "tfevents.core.ops", "tfevents.core.control_flow",
                          "tfevents.core.layers", "tfevents.core.api"},
    "tfevents.core.train": {"tfevents.core.framework", "tfevents.core.runtime", "tfevents.core.ops",
                            "tfevents.core.control_flow", "tfevents.core.api", "tfevents.proto"} | SUMMARIES,
    "tfevents.core.demo": {"tfevents.core", "tfevents.proto"} | SUMMARIES,
    "tfevents.viewer": {"tfevents.proto", "tfevents.core.demo"} | SUMMARIES,
    "tfevents.integrations": {"tfevents.proto"} | SUMMARIES,    # each module imports its framework too
}


MODULES = source_modules()


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
    assert "tfevents.summaries.reader.scan" in GRAPH["tfevents.summaries.live.read"]
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


@pytest.mark.parametrize("group", GROUPS)
def test_every_module_imports_alone_in_a_fresh_interpreter(group, fresh_imports):
    """``import M`` alone, for every module M of the group. Python imports M's packages first, top down; if the
    import of one of them, P, loads M, then P's import has loaded every package between P and M too (a module's
    packages are imported before it), so a fresh ``import M`` runs exactly what a fresh ``import P`` runs, and
    only looks up the rest: M is covered by P's interpreter. So the packages go first (parents before children),
    and a module gets an interpreter of its own only when no package above it loaded it (``tfevents.core``'s
    ``__init__`` loads most of core: one interpreter instead of one per module). (The interpreters of every group
    run in the session's background, conftest's ``fresh_imports``: tests/_fresh_imports.py.)"""
    modules, failures, loaded_by = fresh_imports[group]
    assert failures == []
    assert set(modules) <= set().union(*loaded_by.values())   # every module was imported by some interpreter


# ---------------------------------------------------------------- private names stay in their part

def _owner(module: str) -> str:
    """Who may use a module's private names: its part of ``summaries`` (base, builders, writer, reader, live,
    compare, dask), else its top-level package (core, viewer, proto may share their private names inside)."""
    for part in sorted(SUMMARIES, key=len, reverse=True):
        if module == part or module.startswith(part + "."):
            return part
    return ".".join(module.split(".")[:2])


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_uses(module: str, path: str):
    """``(line, target module, name)`` for each private name ``module`` takes from one of our modules: imported
    (``from x import _y``, ``import x._y``) or read as an attribute of a module it imported (``x._y``)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    bound = {}   # local name -> our module it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([node.module] if node.module else []))
            if not base.startswith("tfevents"):
                continue
            for alias in node.names:
                target = base + "." + alias.name
                if target in MODULES or _private(alias.name) and "." in target:
                    if target in MODULES:
                        bound[alias.asname or alias.name] = target
                    if _private(alias.name):
                        found.append((node.lineno, target if target in MODULES else base, alias.name))
                elif _private(alias.name):
                    found.append((node.lineno, base, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tfevents."):
                    parts = alias.name.split(".")
                    if any(_private(p) for p in parts):
                        found.append((node.lineno, alias.name, parts[-1]))
                    if alias.asname:
                        bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in bound):
            found.append((node.lineno, bound[node.value.id], node.attr))
    return found


def test_the_private_name_reader_sees_private_names():
    """It finds a private import, one across a relative import, and a private attribute of an imported module."""
    uses = {(target, name) for module, path in MODULES.items() for _, target, name in _private_uses(module, path)}
    assert ("tfevents.core.ops.array_ops", "_i32") in uses            # allowed: inside core
    assert ("tfevents.summaries.reader", "_fastscan") in uses or ("tfevents.summaries.reader._fastscan",
                                                                   "_fastscan") in uses
    assert any(name.startswith("_") for _, name in uses)


def test_no_private_name_is_taken_across_parts():
    """A helper one part needs from another is public in the part that owns it (``_name`` stays inside its part:
    a part of ``summaries``, or a top-level package)."""
    crossing = ["%s:%d takes %s.%s" % (os.path.relpath(path, REPO), line, target, name)
                for module, path in MODULES.items() for line, target, name in _private_uses(module, path)
                if _owner(target) != _owner(module)]
    assert crossing == []


# ---------------------------------------------------------------- where the kind names are spelled out

# Besides the kinds table, modules that must name kinds for a reason of their own: the interactive report's data
# document (a section per kind it draws, the page reads them by name) and `inspect --json`'s document (its fields).
KIND_NAME_LISTS = {"tfevents.viewer.reports.interactive.collect", "tfevents.viewer.cli.cmd_inspect"}


def _kind_lists(path: str, names: frozenset) -> list:
    """Lines of list, tuple, set or dict literals naming three or more kinds, kinds being at least half of the
    strings in them (a list of builder functions names some kinds by chance: ``audio``, ``text``)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    exports = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and id(node) not in exports:
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        strings = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
        kinds = [v for v in strings if v in names]
        if len(set(kinds)) >= 3 and 2 * len(kinds) >= len(strings):
            lines.append(node.lineno)
    return lines


def test_kind_names_are_spelled_out_only_in_the_kinds_table_and_two_documents():
    from tfevents.summaries.reader.kinds import KIND_NAMES
    spelled = {module for module, path in MODULES.items()
               if module.startswith(("tfevents.summaries", "tfevents.viewer")) and _kind_lists(path, KIND_NAMES)}
    assert spelled == KIND_NAME_LISTS
    # the reader of literals finds a list of kind names where there is one
    assert _kind_lists(MODULES["tfevents.viewer.reports.interactive.collect"], KIND_NAMES)
