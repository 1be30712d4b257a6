r"""The run query language: one parser for every place runs are chosen (issue 35).

``parse(text)`` returns a :class:`Query`; ``Query.evaluate(table)`` gives one bool per row of a run table (a
pandas DataFrame, one row per run) and ``Query.select(table)`` the names of the runs chosen (its ``name`` column).
Example::

    lr < 0.01 and optimizer == "adam" and "val/acc".max > 0.9 and not archived

Grammar
-------
::

    query      := or
    or         := and ("or" and)*
    and        := not ("and" not)*                  # "and" binds tighter than "or"
    not        := "not" not | predicate
    predicate  := "(" or ")"
                | operand COMPARE operand           # == != < <= > >=
                | operand ("=~" | "!~") STRING      # regex search (Python re.search), !~: no match
                | operand ["not"] "in" "[" [literal ("," literal)* [","]] "]"
                | operand ["not"] "in" column       # membership in a list column: "bad" in labels
                | column "is" ["not"] "missing"
                | operand                           # a true/false column (archived), or true/false
    operand    := column | literal
    column     := NAME                              # lr, model.depth, loss.min, _x1
                | QUOTED "." FIELD                  # "val/acc".max  (no space before the dot)
                | "`" any text "`"                  # `any column name`, e.g. one with a dash or a space
    literal    := NUMBER | STRING | "true" | "false" | "True" | "False"

- ``NAME`` is letters, digits and underscores, not starting with a digit, parts joined by dots: it names the table's
  column of that exact text, so ``model.depth`` (a nested Hydra key) and ``loss.min`` (a tag without slashes and its
  field) are columns as they are spelled.
- ``"tag".field`` is the column ``tag.field``: the run table has ``<tag>.last``, ``<tag>.min``, ``<tag>.max`` and
  ``<tag>.step`` (the last step) per scalar tag; any other ``<tag>.<field>`` column of the table works the same way.
  A tag with slashes (or any character outside NAME) is written quoted this way.
- ``NUMBER``: ``3``, ``-2``, ``0.5``, ``.5``, ``1e-3``, ``-1.5E+2`` (an int when written without ``.`` or an
  exponent). ``STRING``: in double or single quotes. Inside one, ``\"``, ``\'`` and ``\\`` are the escapes; any
  other backslash is kept as written, so a regex reads as it would in Python's ``r"..."``:
  ``name =~ "seed_\d+$"`` (and ``"seed_\\d+$"`` is the same pattern).
- The keywords (``and or not in is missing true false``) are lower case; a column of such a name is written in
  backticks. ``=`` alone is not an operator (a hint says ``==``).

Semantics
---------
- **Missing values** are ``None``, NaN, ``pd.NA`` and ``pd.NaT``. Every operator that looks at a value (``== !=
  < <= > >= =~ !~ in`` and ``not in`` on a list) is **false** when that value is missing: ``lr < 0.01`` and
  ``lr != 0.01`` both leave out the runs that have no ``lr``; ``x is missing`` finds them.
- ``not``, ``and`` and ``or`` are plain two-valued logic, so ``not Q`` is always exactly the runs ``Q`` leaves out:
  ``not (lr < 0.01)`` includes the runs without ``lr``. SQL's NULL makes both ``Q`` and ``not Q`` drop such rows; a
  user pruning runs expects a filter and its negation to split the runs in two (``runs rm --where "not (Q)"``
  deletes exactly what ``ls --where Q`` does not list), and a run without a value does not have ``lr < 0.01``.
- A **list column** (``labels``): ``"bad" in labels`` is true when the run's list holds ``"bad"``; a missing list is
  an empty one (no labels yet), so ``"bad" not in labels`` is true for it.
- **Kinds.** Values are numbers (ints and floats), strings, booleans, lists, or other objects; a number never
  equals a string or a boolean (``1`` is not ``true``). A comparison is made row by row between values of the same
  kind; a row whose two values are of different kinds is false, so a column mixing numbers and strings (``warmup``:
  ``100`` or ``"auto"``) can be queried both ways. But when no row has two values of the same kind while some row
  has two values, the query is a mistake (``optimizer > 3``, ``lr == "0.01"``, ``archived`` on a numeric column):
  that is a :class:`QueryError` at evaluation naming the column and the kinds, not a silent empty selection. An
  empty table or an all-missing column raises nothing. ``in [...]``, ``=~`` and ``in <list column>`` follow the
  same rule (``x in [ ]`` is simply false).
- Strings compare in Python's order (code points); booleans as ``false < true``.
- A column the table does not have is a :class:`QueryError` at evaluation (``Query.check(columns)`` tells it
  before), with the nearest names (``difflib.get_close_matches``, and the ``<name>.<field>`` columns when a bare
  tag was written).

Errors
------
:class:`QueryError` (a ``ValueError``) has ``.position``, the 0-based character offset in the query, and a message
naming it, with the query's line and a caret line under it::

    unknown column 'lr2' at position 0; nearest: 'lr', 'lr_decay'
      lr2 < 0.01
      ^^^

Why Lark
--------
The grammar is data (above, and ``_GRAMMAR`` below, the same rules), parsed LALR(1) by Lark: a kept, pure-Python
library without dependencies, that gives every token its character position and tells which tokens were expected
at an error, so the messages here come from the parser rather than hand-written checks. A restricted ``ast`` walk
would need Python's syntax, which has neither ``=~`` nor ``is missing``, reads ``"val/acc".max`` as an attribute
of a string, and needs backslashes doubled in regexes; ``DataFrame.query`` evaluates Python expressions (``eval``)
and wants backticks around ``loss.min``; pyparsing builds the grammar in Python code and reports positions of the
furthest failed alternative, less precise than an LALR parser's. Lark is imported inside :func:`parse` (the grammar
is built once per process), so ``import tfevents.summaries`` does not load it. Nothing here calls ``eval``: a
number is ``int()`` or ``float()`` of its text and a string is unescaped by hand.
"""
from __future__ import annotations

import difflib
import functools
import re
from typing import Any, Iterable, List, Sequence, Tuple

import numpy as np

__all__ = ["parse", "Query", "QueryError"]

_GRAMMAR = r"""
?start: or_
?or_: and_ ("or" and_)*
?and_: not_ ("and" not_)*
?not_: "not" not_                  -> negation
     | predicate
?predicate: "(" or_ ")"
     | operand COMPARE operand     -> compare
     | operand MATCH STRING        -> match
     | operand "in" list           -> in_list
     | operand "not" "in" list     -> not_in_list
     | operand "in" column         -> in_column
     | operand "not" "in" column   -> not_in_column
     | column "is" "missing"       -> is_missing
     | column "is" "not" "missing" -> is_not_missing
     | operand                     -> truth
?operand: column | literal
column: NAME                       -> name
      | QUOTED_TAG                 -> quoted_tag
      | BACKTICKED                 -> backticked
literal: NUMBER                    -> number
       | STRING                    -> string
       | "true"                    -> true
       | "True"                    -> true
       | "false"                   -> false
       | "False"                   -> false
list: "[" (literal ("," literal)* ","?)? "]"

COMPARE: "==" | "!=" | "<=" | ">=" | "<" | ">"
MATCH: "=~" | "!~"
NAME: /[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*/
NUMBER: /[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/
STRING: /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/s
QUOTED_TAG.2: /(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\.[A-Za-z_][A-Za-z0-9_]*/s
BACKTICKED: /`(?:[^`\\]|\\.)*`/s

%import common.WS
%ignore WS
"""

_KEYWORDS = frozenset(["and", "or", "not", "in", "is", "missing", "true", "false", "True", "False"])

# Kinds of value (module docstring, "Kinds").
_MISSING, _NUMBER, _STRING, _BOOL, _LIST, _OTHER = range(6)
_KIND_NAMES = {_NUMBER: "numbers", _STRING: "strings", _BOOL: "true/false values", _LIST: "lists",
               _OTHER: "other values", _MISSING: "missing values"}
_KIND_ONE = {_NUMBER: "a number", _STRING: "a string", _BOOL: "true/false", _LIST: "a list", _OTHER: "a value"}

# What the parser expected, in words (Lark's terminal names -> text), in the order they are listed.
_EXPECTED_WORDS = [("NAME", "a column"), ("QUOTED_TAG", "a column"), ("BACKTICKED", "a column"),
                   ("NUMBER", "a value"), ("STRING", "a value"), ("TRUE", "a value"), ("FALSE", "a value"),
                   ("COMPARE", "a comparison (== != < <= > >=)"), ("MATCH", "'=~'"), ("IN", "'in'"),
                   ("IS", "'is'"), ("NOT", "'not'"), ("MISSING", "'missing'"), ("AND", "'and'"), ("OR", "'or'"),
                   ("LPAR", "'('"), ("RPAR", "')'"), ("LSQB", "'['"), ("RSQB", "']'"), ("COMMA", "','"),
                   ("$END", "the end of the query")]


class QueryError(ValueError):
    """A query that cannot be parsed or evaluated: ``.position`` (0-based offset in ``.query``), ``.reason`` (the
    message without the position and the caret lines)."""

    def __init__(self, reason: str, query: str, position: int, length: int = 1, hint: str = ""):
        self.reason = reason + ("; " + hint if hint else "")
        self.query, self.position = query, int(position)
        self._args = (reason, query, int(position), length, hint)
        super().__init__(_point_at(reason, hint, query, self.position, length))

    def __reduce__(self):   # picklable (worker processes), its arguments not being its message
        return type(self), self._args


def _point_at(reason: str, hint: str, query: str, position: int, length: int) -> str:
    """``reason`` with the position named, then the query's line holding it and a caret line under it."""
    start = query.rfind("\n", 0, position) + 1
    end = query.find("\n", position)
    line = query[start:] if end < 0 else query[start:end]
    column = position - start
    where = "at position %d" % position
    if start or end >= 0:
        where += " (line %d, column %d)" % (query.count("\n", 0, position) + 1, column + 1)
    length = max(1, min(length, len(line) - column))
    pad = "".join(c if c == "\t" else " " for c in line[:column])   # tabs kept, so the caret lines up
    return "%s %s%s\n  %s\n  %s%s" % (reason, where, "; " + hint if hint else "", line, pad, "^" * length)


# ------------------------------------------------------------------------------------------------ the tree

class _Node:
    position = 0
    length = 1


class _Column(_Node):
    def __init__(self, name: str, position: int, length: int, bare: bool):
        self.name, self.position, self.length, self.bare = name, position, length, bare


class _Literal(_Node):
    def __init__(self, value: Any, position: int, length: int):
        self.value, self.position, self.length = value, position, length
        self.kind = _classify(value)[0]


class _Op(_Node):
    def __init__(self, op: str, children: Sequence[Any], position: int, length: int = 1, extra: Any = None):
        self.op, self.children, self.position, self.length, self.extra = op, list(children), position, length, extra


def _unescape(body: str) -> str:
    r"""A string's text between its quotes: ``\"``, ``\'``, ``\\`` (and ``\``` in backticks) are escapes, any
    other backslash stays as written (module docstring)."""
    return re.sub(r"\\([\"'\\`])", r"\1", body)


def _number(text: str) -> Any:
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    return float(text)


def _build(tree, query: str) -> _Node:
    """Lark's tree -> our nodes (with positions), checked as far as the text alone allows."""
    from lark import Token   # lazy: the parser library, loaded by parse() only

    if isinstance(tree, Token):   # pragma: no cover - every token sits under a rule of the grammar
        raise AssertionError(tree)
    rule, kids = tree.data, tree.children
    pos = getattr(tree.meta, "start_pos", 0)
    length = max(1, getattr(tree.meta, "end_pos", pos + 1) - pos)
    if rule == "name":
        if kids[0] in _KEYWORDS:   # the lexer reads a keyword as a name where no keyword can come
            raise QueryError("unexpected %r" % str(kids[0]), query, kids[0].start_pos, len(kids[0]),
                             "expected a column or a value (a column of that name is written `%s`)" % kids[0])
        return _Column(str(kids[0]), kids[0].start_pos, len(kids[0]), bare=True)
    if rule == "quoted_tag":
        text = str(kids[0])
        dot = text.rfind(".")
        return _Column(_unescape(text[1:dot - 1]) + text[dot:], kids[0].start_pos, len(text), bare=False)
    if rule == "backticked":
        return _Column(_unescape(str(kids[0])[1:-1]), kids[0].start_pos, len(kids[0]), bare=False)
    if rule == "number":
        return _Literal(_number(str(kids[0])), kids[0].start_pos, len(kids[0]))
    if rule == "string":
        return _Literal(_unescape(str(kids[0])[1:-1]), kids[0].start_pos, len(kids[0]))
    if rule in ("true", "false"):
        return _Literal(rule == "true", pos, length)
    if rule in ("or_", "and_"):
        return _Op(rule[:-1], [_build(k, query) for k in kids], pos, length)
    if rule == "negation":
        return _Op("not", [_build(kids[0], query)], pos, length)
    if rule == "compare":
        left, op, right = kids
        return _Op(str(op), [_build(left, query), _build(right, query)], op.start_pos, len(op))
    if rule == "match":
        left, op, pattern = kids
        text = _unescape(str(pattern)[1:-1])
        try:
            regex = re.compile(text)
        except re.error as e:   # pointed at the character re names when the escapes moved nothing before it
            body = str(pattern)[1:-1]
            at = e.pos if e.pos is not None and body[:e.pos] == text[:e.pos] else None
            raise QueryError("bad regular expression %r" % text, query,
                             pattern.start_pos if at is None else pattern.start_pos + 1 + at,
                             len(pattern) if at is None else 1, e.msg) from None
        return _Op(str(op), [_build(left, query)], op.start_pos, len(op), extra=regex)
    if rule in ("in_list", "not_in_list"):
        items = [_build(k, query) for k in kids[1].children]
        return _Op(rule, [_build(kids[0], query)], pos, length, extra=items)
    if rule in ("in_column", "not_in_column"):
        return _Op(rule, [_build(kids[0], query), _build(kids[1], query)], pos, length)
    if rule in ("is_missing", "is_not_missing"):
        return _Op(rule, [_build(kids[0], query)], pos, length)
    if rule == "truth":
        operand = _build(kids[0], query)
        if isinstance(operand, _Literal) and operand.kind != _BOOL:
            raise QueryError("%s is not a condition" % _KIND_ONE[operand.kind], query, operand.position,
                             operand.length, "compare it with a column")
        return _Op("truth", [operand], pos, length)
    raise AssertionError(rule)   # pragma: no cover


@functools.lru_cache(maxsize=1)
def _parser():
    from lark import Lark   # lazy: the parser library is loaded by the first parse(), not by the package
    return Lark(_GRAMMAR, parser="lalr", lexer="contextual", propagate_positions=True, maybe_placeholders=False)


def _expected_words(names: Iterable[str]) -> str:
    names = set(names)
    words: List[str] = []
    for name, word in _EXPECTED_WORDS:
        if name in names and word not in words:
            words.append(word)
    known = {n for n, _ in _EXPECTED_WORDS}
    words += sorted(n.lower() for n in names if n not in known and not n.startswith("__"))
    if not words:
        return ""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _accepts(error) -> Iterable[str]:
    """The terminals the parser could take where it stopped: exactly (its state fed each one), else Lark's list
    (which, LALR states being merged, may name a few that cannot come)."""
    interactive = getattr(error, "interactive_parser", None)
    if interactive is not None:
        try:
            return interactive.accepts()
        except Exception:   # pragma: no cover - the estimate below is only less precise
            pass
    return getattr(error, "expected", None) or getattr(error, "allowed", None) or ()


def _syntax_error(error, query: str) -> QueryError:
    """A Lark error -> a QueryError naming what was found and what could come there."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken  # lazy: as _parser

    end = len(query.rstrip())
    expected = _expected_words(_accepts(error))
    if isinstance(error, UnexpectedCharacters):
        pos = error.pos_in_stream
        char = query[pos]
        if char in "\"'":
            return QueryError("a string that is not closed (a quote inside one is written \\%s)" % char, query, pos)
        if char == "`":
            return QueryError("a backticked column name that is not closed", query, pos)
        if char == "=" and not query.startswith(("==", "=~"), pos):
            return QueryError("unexpected '='", query, pos, 1, "compare with ==")
        if char == "/":
            return QueryError("unexpected '/'", query, pos, 1, "a tag with slashes is quoted, with its field after the "
                              "quote: \"val/acc\".max")
        if char == "." and pos and query[pos - 1] in "\"'":
            return QueryError("unexpected '.'", query, pos, 1,
                              "a quoted tag is followed by a field: .last, .min, .max or .step")
        return QueryError("unexpected character %r" % char, query, pos, 1, "expected " + expected if expected else "")
    if isinstance(error, UnexpectedToken) and error.token.type != "$END":
        token = error.token
        return QueryError("unexpected %r" % str(token), query, token.start_pos, len(token),
                          "expected " + expected if expected else "")
    if not end:
        return QueryError("the query is empty", query, 0, 1, "expected a condition such as lr < 0.01")
    return QueryError("the query ends too soon", query, end, 1, "expected " + expected if expected else "")


def parse(text: str) -> "Query":
    """The :class:`Query` of ``text`` (module docstring: grammar and semantics); a bad query raises
    :class:`QueryError`. A :class:`Query` given is returned as it is."""
    if isinstance(text, Query):
        return text
    if not isinstance(text, str):
        raise TypeError("a query is a str, not %s" % type(text).__name__)
    from lark.exceptions import UnexpectedInput   # lazy: as _parser
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as e:
        raise _syntax_error(e, text) from None
    return Query(text, _build(tree, text))


# ------------------------------------------------------------------------------------------------ evaluation

def _classify(value: Any) -> Tuple[int, float]:
    """``(kind, value as a float for numbers and booleans, else NaN)``."""
    if value is None:
        return _MISSING, np.nan
    if isinstance(value, (bool, np.bool_)):
        return _BOOL, float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        f = float(value)
        return (_MISSING, np.nan) if f != f else (_NUMBER, f)
    if isinstance(value, str):
        return _STRING, np.nan
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
        return _LIST, np.nan
    if type(value).__name__ in ("NAType", "NaTType"):   # pandas' missing values, without importing pandas
        return _MISSING, np.nan
    return _OTHER, np.nan


class _Values:
    """One operand over the table's rows: ``values`` (objects), ``num`` (floats of numbers and booleans),
    ``kinds`` (one per row), and the node it came from (for messages)."""

    def __init__(self, values: np.ndarray, num: np.ndarray, kinds: np.ndarray, node: _Node):
        self.values, self.num, self.kinds, self.node = values, num, kinds, node

    @property
    def label(self) -> str:
        if isinstance(self.node, _Column):
            return "column %r" % self.node.name
        return repr(self.node.value)

    def holds(self) -> str:
        if isinstance(self.node, _Column):
            present = sorted(set(self.kinds[self.kinds != _MISSING].tolist()))
            return "column %r holds %s" % (self.node.name, " and ".join(_KIND_NAMES[k] for k in present))
        return "%r is %s" % (self.node.value, _KIND_ONE[self.node.kind])


def _column_values(series, node: _Column) -> _Values:
    array = series.to_numpy()
    n = len(array)
    if array.dtype.kind in "iuf":
        num = array.astype(np.float64)
        kinds = np.where(np.isnan(num), _MISSING, _NUMBER).astype(np.int8)
        return _Values(num, num, kinds, node)
    if array.dtype.kind == "b":
        num = array.astype(np.float64)
        return _Values(array, num, np.full(n, _BOOL, dtype=np.int8), node)
    values = np.empty(n, dtype=object)
    values[:] = list(array)
    num = np.empty(n, dtype=np.float64)
    kinds = np.empty(n, dtype=np.int8)
    for i, v in enumerate(values):
        kinds[i], num[i] = _classify(v)
    return _Values(values, num, kinds, node)


class Query:
    """A parsed query: ``text``, ``columns`` (the column names it reads, in order of first use), ``evaluate``,
    ``select`` and ``check``."""

    def __init__(self, text: str, root: _Node):
        self.text, self._root = text, root
        names: List[str] = []
        for column in self._columns(root):
            if column.name not in names:
                names.append(column.name)
        self.columns: Tuple[str, ...] = tuple(names)

    def __repr__(self) -> str:
        return "Query(%r)" % self.text

    def _columns(self, node: _Node) -> Iterable[_Column]:
        if isinstance(node, _Column):
            yield node
        elif isinstance(node, _Op):
            for child in node.children:
                yield from self._columns(child)

    def check(self, columns: Iterable[str]) -> None:
        """Raise :class:`QueryError` if the query reads a column not in ``columns`` (with the nearest names)."""
        known = [str(c) for c in columns]
        known_set = set(known)
        for column in self._columns(self._root):
            if column.name not in known_set:
                raise self._unknown(column, known)

    def _unknown(self, column: _Column, known: Sequence[str]) -> QueryError:
        nearest = [c for c in known if c.startswith(column.name + ".")][:4]
        nearest += [c for c in difflib.get_close_matches(column.name, known, n=4) if c not in nearest]
        if nearest:
            hint = "nearest: " + ", ".join(repr(c) for c in nearest[:5])
        else:
            hint = "the table has %s" % (", ".join(repr(c) for c in known[:12]) + (", ..." if len(known) > 12
                                                                                   else "") if known else "no columns")
        if column.bare and "." not in column.name and any(c.startswith(column.name + ".") for c in known):
            hint += " (a tag's value is one of its fields, e.g. %s.last)" % column.name
        return QueryError("unknown column %r" % column.name, self.text, column.position, column.length, hint)

    def select(self, table) -> List[str]:
        """The ``name`` of every run (row of ``table``) the query chooses, in the table's order."""
        mask = self.evaluate(table)
        if "name" not in table.columns:
            raise QueryError("the table has no 'name' column to select runs by", self.text, 0, len(self.text))
        return [str(n) for n in np.asarray(table["name"].to_numpy(), dtype=object)[mask]]

    def evaluate(self, table) -> np.ndarray:
        """A numpy bool array, one per row of ``table`` (a pandas DataFrame of runs): does the run match?"""
        self.check(table.columns)
        cache: dict = {}
        out = self._eval(self._root, table, len(table), cache)
        return np.asarray(out, dtype=bool)

    # -------------------------------------------------------------------------------------------- nodes

    def _operand(self, node: _Node, table, n: int, cache: dict) -> _Values:
        if isinstance(node, _Column):
            if node.name not in cache:
                cache[node.name] = _column_values(table[node.name], node)
            v = cache[node.name]
            return _Values(v.values, v.num, v.kinds, node)
        assert isinstance(node, _Literal)
        values = np.empty(n, dtype=object)
        values[:] = [node.value] * n
        kind, num = _classify(node.value)
        return _Values(values, np.full(n, num), np.full(n, kind, dtype=np.int8), node)

    def _kind_error(self, node: _Op, sides: Sequence[_Values], what: str) -> QueryError:
        column = next((s for s in sides if isinstance(s.node, _Column)), sides[0])
        return QueryError(what, self.text, column.node.position, column.node.length,
                          "; ".join(s.holds() for s in sides))

    def _eval(self, node: _Node, table, n: int, cache: dict) -> np.ndarray:
        op = node.op
        kids = node.children
        if op == "or":
            out = np.zeros(n, dtype=bool)
            for k in kids:
                out |= self._eval(k, table, n, cache)
            return out
        if op == "and":
            out = np.ones(n, dtype=bool)
            for k in kids:
                out &= self._eval(k, table, n, cache)
            return out
        if op == "not":
            return ~self._eval(kids[0], table, n, cache)
        if op in ("is_missing", "is_not_missing"):
            missing = self._operand(kids[0], table, n, cache).kinds == _MISSING
            return missing if op == "is_missing" else ~missing
        if op == "truth":
            side = self._operand(kids[0], table, n, cache)
            is_bool = side.kinds == _BOOL
            if (side.kinds != _MISSING).any() and not is_bool.any():
                raise self._kind_error(node, [side], "%s is not true/false (compare it instead)" % side.label)
            return is_bool & (side.num == 1.0)
        if op in ("=~", "!~"):
            side = self._operand(kids[0], table, n, cache)
            is_str = side.kinds == _STRING
            if (side.kinds != _MISSING).any() and not is_str.any():
                raise self._kind_error(node, [side], "a regex matches strings")
            out = np.zeros(n, dtype=bool)
            search = node.extra.search
            for i in np.flatnonzero(is_str):
                out[i] = (search(side.values[i]) is not None) == (op == "=~")
            return out
        if op in ("in_list", "not_in_list"):
            return self._in_list(node, self._operand(kids[0], table, n, cache), node.extra, op == "not_in_list")
        if op in ("in_column", "not_in_column"):
            return self._in_column(node, self._operand(kids[0], table, n, cache),
                                   self._operand(kids[1], table, n, cache), op == "not_in_column")
        left = self._operand(kids[0], table, n, cache)
        right = self._operand(kids[1], table, n, cache)
        return self._compare(node, op, left, right)

    def _compare(self, node: _Op, op: str, left: _Values, right: _Values) -> np.ndarray:
        n = len(left.kinds)
        present = (left.kinds != _MISSING) & (right.kinds != _MISSING)
        same = present & (left.kinds == right.kinds)
        if present.any() and not same.any():
            raise self._kind_error(node, [left, right], "%s cannot be compared with %s" % (left.label, right.label))
        out = np.zeros(n, dtype=bool)
        numeric = same & ((left.kinds == _NUMBER) | (left.kinds == _BOOL))
        if numeric.any():
            a, b = left.num[numeric], right.num[numeric]
            out[numeric] = _OPS[op](a, b)
        for i in np.flatnonzero(same & ~numeric):   # strings, lists, other objects: Python's operators
            try:
                out[i] = bool(_OPS[op](left.values[i], right.values[i]))
            except TypeError:
                out[i] = False
        return out

    def _in_list(self, node: _Op, side: _Values, items: Sequence[_Literal], negate: bool) -> np.ndarray:
        n = len(side.kinds)
        present = side.kinds != _MISSING
        item_kinds = {item.kind for item in items}
        comparable = present & np.isin(side.kinds, list(item_kinds))
        if items and present.any() and not comparable.any():
            kinds = " and ".join(_KIND_NAMES[k] for k in sorted(item_kinds))
            raise QueryError("%s cannot be looked up in a list of %s" % (side.label, kinds), self.text,
                             side.node.position, side.node.length, side.holds())
        member = np.zeros(n, dtype=bool)
        numbers = [item.value for item in items if item.kind == _NUMBER]
        bools = [float(item.value) for item in items if item.kind == _BOOL]
        strings = {item.value for item in items if item.kind == _STRING}
        if numbers:
            member |= (side.kinds == _NUMBER) & np.isin(side.num, np.asarray(numbers, dtype=np.float64))
        if bools:
            member |= (side.kinds == _BOOL) & np.isin(side.num, np.asarray(bools, dtype=np.float64))
        if strings:
            for i in np.flatnonzero(side.kinds == _STRING):
                member[i] = side.values[i] in strings
        return present & (~member if negate else member)

    def _in_column(self, node: _Op, item: _Values, lists: _Values, negate: bool) -> np.ndarray:
        n = len(lists.kinds)
        is_list = lists.kinds == _LIST
        others = (lists.kinds != _MISSING) & ~is_list
        if others.any() and not is_list.any():
            raise QueryError("'in' looks in a list column such as labels", self.text, lists.node.position,
                             lists.node.length, "%s (to match text use =~)" % lists.holds())
        out = np.zeros(n, dtype=bool)
        present = item.kinds != _MISSING
        for i in np.flatnonzero(present & (is_list | (lists.kinds == _MISSING))):
            found = False
            if is_list[i]:
                value, kind = item.values[i], item.kinds[i]
                if kind in (_NUMBER, _BOOL):
                    value = item.num[i]
                for element in list(lists.values[i]):
                    k, f = _classify(element)
                    if k == kind and (f == value if kind in (_NUMBER, _BOOL) else element == value):
                        found = True
                        break
            out[i] = found != negate
        return out


_OPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
