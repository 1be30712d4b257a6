"""The run query language (issue 35, point 2: ``tfevents.summaries.runs.query``): a table of queries and the runs
each chooses over a hand-built run table of 8 runs (every operator, and/or/not precedence, missing values, lists,
labels, quoted tags with slashes, strings with quotes), the errors (position, caret line, nearest names), and
random comparisons against the same comparison computed by pandas."""
from __future__ import annotations

import operator
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfevents.summaries.runs import Query, QueryError, parse

nan = float("nan")
NAMES = ["a/seed_1", "a/seed_2", "b/seed_1", "b/seed_10", "c", "d_old", "e's run", 'f"q']
RUNS = pd.DataFrame({
    "name": NAMES,
    "lr": [0.1, 0.01, 0.001, 1e-4, nan, 0.01, 0.05, nan],
    "optimizer": ["adam", "sgd", "adam", "adamw", None, "sgd", "adam", "rmsprop"],
    "model.depth": [2, 4, 8, 2, nan, 4, 16, 2],
    "batch": np.array([32, 64, 32, 128, 64, 32, 256, 16], dtype=np.int64),
    "use_bn": [True, False, True, None, True, False, None, True],
    "warmup": [100, "auto", 0, None, "auto", 50, 100, nan],            # numbers and strings in one hparam
    "labels": [["bad"], [], ["keep", "best"], None, ["bad", "dup"], [], ["keep"], np.array(["dup"])],
    "notes": ["diverged", "", "the one", None, 'said "hi"', "", "it's fine", ""],
    "archived": [False, False, False, True, False, True, False, False],
    "loss.last": [0.5, 0.3, 0.2, nan, 0.9, 0.4, 0.25, 0.6],
    "loss.min": [0.4, 0.3, 0.1, nan, 0.8, 0.35, 0.2, 0.6],
    "loss.max": [2.0, 1.5, 1.2, nan, 3.0, 1.8, 1.1, 0.9],
    "loss.step": [1000, 1000, 2000, nan, 500, 1000, 2000, 10],
    "val/acc.last": [0.8, 0.85, 0.93, 0.7, nan, 0.88, 0.91, 0.5],
    "val/acc.min": [0.1, 0.2, 0.15, 0.1, nan, 0.3, 0.2, 0.05],
    "val/acc.max": [0.85, 0.9, 0.95, 0.72, nan, 0.9, 0.92, 0.5],
    "val/acc.step": [1000, 1000, 2000, 300, nan, 1000, 2000, 10],
})
ALL = list(range(8))


def _names(indices):
    return [NAMES[i] for i in indices]


CASES = [
    # every comparison operator; a missing lr (runs 4 and 7) makes each false, != included
    ("lr == 0.01", [1, 5]),
    ("lr != 0.01", [0, 2, 3, 6]),
    ("lr < 0.01", [2, 3]),
    ("lr <= 0.01", [1, 2, 3, 5]),
    ("lr > 0.01", [0, 6]),
    ("lr >= 0.05", [0, 6]),
    ("0.01 > lr", [2, 3]),                                   # the literal on the left
    ("lr < 1e-3", [3]),
    ("lr >= 1E-3 and lr < 5e-2", [1, 2, 5]),
    ("model.depth > -1", [0, 1, 2, 3, 5, 6, 7]),             # a negative number; a NaN depth is not > -1
    ("lr < .5", [0, 1, 2, 3, 5, 6]),
    ("batch != 32 and batch < 100", [1, 4, 7]),              # an int64 column
    # missing values: not is the complement, is missing / is not missing
    ("not (lr < 0.01)", [0, 1, 4, 5, 6, 7]),
    ("lr < 0.01 or lr is missing", [2, 3, 4, 7]),
    ("lr is missing", [4, 7]),
    ("lr is not missing", [0, 1, 2, 3, 5, 6]),
    ("optimizer is missing", [4]),
    ('"val/acc".max is missing', [4]),
    ("lr < 0.01 or not (lr is not missing)", [2, 3, 4, 7]),
    # strings, and/or/not precedence, parentheses
    ('optimizer == "adam"', [0, 2, 6]),
    ("optimizer == 'adam' and lr < 0.01", [2]),
    ('optimizer == "sgd" or optimizer == "adam" and lr < 0.01', [1, 2, 5]),     # and binds tighter than or
    ('(optimizer == "sgd" or optimizer == "adam") and lr < 0.01', [2]),
    ('not optimizer == "adam" and batch > 32', [1, 3, 4]),                     # not binds tighter than and
    ('not (optimizer == "adam" and batch > 32)', [0, 1, 2, 3, 4, 5, 7]),
    ('optimizer < "b"', [0, 2, 3, 6]),                                          # strings in Python's order
    ('notes == ""', [1, 5, 7]),
    # in [...] with strings and numbers, not in
    ('optimizer in ["adam", "adamw"]', [0, 2, 3, 6]),
    ("optimizer not in ['adam', 'adamw',]", [1, 5, 7]),      # a missing optimizer is in no list and not "not in"
    ("batch in [32, 64]", [0, 1, 2, 4, 5]),
    ("model.depth in [2, 16.0]", [0, 3, 6, 7]),
    ("lr in []", []),
    ('warmup in [100, "auto"]', [0, 1, 4, 6]),               # a column of numbers and strings
    ('warmup == "auto"', [1, 4]),
    ("warmup > 10", [0, 5, 6]),
    # regexes (re.search); a backslash other than an escape is kept, so \d and \\d are the same pattern
    (r'name =~ "seed_\d+$"', [0, 1, 2, 3]),
    (r'name =~ "seed_\\d{2}"', [3]),
    ('name =~ "^b/seed_1$"', [2]),
    ('name !~ "seed"', [4, 5, 6, 7]),
    (r'notes =~ "it\'s"', [6]),
    # strings with escaped quotes, in both kinds of quotes
    (r'name == "f\"q"', [7]),
    (r"name == 'e\'s run'", [6]),
    ("name == \"e's run\"", [6]),
    (r"notes == 'said \"hi\"'", [4]),
    ("notes == 'said \"hi\"'", [4]),
    # labels
    ('"bad" in labels', [0, 4]),
    ('"bad" not in labels', [1, 2, 3, 5, 6, 7]),             # no labels (None) is an empty list
    ("'dup' in labels", [4, 7]),                             # a list stored as a numpy array
    ('"keep" in labels and not archived', [2, 6]),
    ('not ("keep" in labels or "bad" in labels)', [1, 3, 5, 7]),
    # booleans: bare columns, true/false
    ("archived", [3, 5]),
    ("not archived", [0, 1, 2, 4, 6, 7]),
    ("archived == true", [3, 5]),
    ("archived == false", [0, 1, 2, 4, 6, 7]),
    ("not not archived", [3, 5]),
    ("use_bn", [0, 2, 4, 7]),                                # an object column with None
    ("not use_bn", [1, 3, 5, 6]),
    ("use_bn == False", [1, 5]),
    ("true", ALL),
    ("False", []),
    ("False or archived", [3, 5]),
    # quoted tags with slashes and each field; bare dotted tags; a column against a column
    ('"val/acc".max > 0.9', [2, 6]),
    ('"val/acc".last >= 0.88', [2, 5, 6]),
    ("'val/acc'.min < 0.1", [7]),
    ('"val/acc".step == 2000', [2, 6]),
    ("loss.min < 0.3", [2, 6]),
    ('"loss".min < 0.3', [2, 6]),
    ("loss.last > 0.5", [4, 7]),
    ("loss.max <= 1.2", [2, 6, 7]),
    ("loss.step > 500", [0, 1, 2, 5, 6]),
    ("loss.min == loss.last", [1, 7]),
    ('"val/acc".max > "val/acc".last and "val/acc".max < 0.9', [0, 3]),
    ("`model.depth` == 8", [2]),
    # the example, and white space
    ('lr < 0.02 and optimizer == "adam" and "val/acc".max > 0.9 and not archived', [2]),
    ("lr<0.01 or\n   name==\"c\"", [2, 3, 4]),
]


@pytest.mark.parametrize("query, expected", CASES, ids=[q for q, _ in CASES])
def test_query_selects_the_expected_runs(query, expected):
    assert parse(query).select(RUNS) == _names(expected)
    mask = parse(query).evaluate(RUNS)
    assert mask.dtype == bool and mask.shape == (8,)
    assert list(np.flatnonzero(~parse("not (%s)" % query).evaluate(RUNS))) == expected   # not is the complement


ERRORS = [
    # (query, position, fragments of the message)
    ("lr2 < 0.01", 0, ["unknown column 'lr2'", "'lr'", "  lr2 < 0.01\n  ^^^"]),
    ('lr < 0.01 and optimiser == "adam"', 14, ["unknown column 'optimiser'", "nearest: 'optimizer'"]),
    ("loss < 1", 0, ["'loss.last'", "'loss.min'", "'loss.max'", "'loss.step'"]),
    ('"val/acc".mean > 0.9', 0, ["unknown column 'val/acc.mean'", "'val/acc.max'"]),
    ("batchsize > 3", 0, ["'batch'"]),
    ("val/acc.max > 0.9", 3, ['"val/acc".max']),
    ("lr = 0.01", 3, ["=="]),
    ("lr <", 4, ["ends too soon", "a column or a value"]),
    ("(lr < 0.01", 10, ["')'"]),
    ("lr < 0.01 and", 13, ["ends too soon"]),
    ('name == "abc', 8, ["not closed"]),
    ("lr < 0.01 and and", 14, ["unexpected 'and'"]),
    ("lr is 3", 6, ["'missing'"]),
    ("lr < 1 & batch > 2", 7, ["'&'", "'and'"]),
    ("lr < 1e-3x", 9, ["unexpected 'x'"]),
    ("", 0, ["empty"]),
    ("3", 0, ["a number is not a condition"]),
    ("optimizer > 3", 0, ["column 'optimizer' holds strings", "3 is a number"]),
    ('lr == "0.01"', 0, ["column 'lr' holds numbers", "'0.01' is a string"]),
    ('lr in ["a", "b"]', 0, ["column 'lr'"]),
    ("archived == 1", 0, ["column 'archived' holds true/false values"]),
    ("lr", 0, ["not true/false"]),
    ("batch =~ '3'", 0, ["a regex matches strings"]),
    ('"bad" in name', 9, ["list column", "=~"]),
    ('name =~ "a(b"', 10, ["bad regular expression", "missing )"]),
]


@pytest.mark.parametrize("query, position, fragments", ERRORS, ids=[q or "empty" for q, _, _ in ERRORS])
def test_error_names_the_position_with_a_caret(query, position, fragments):
    with pytest.raises(QueryError) as info:
        parse(query).evaluate(RUNS)
    error = info.value
    assert isinstance(error, ValueError)
    assert error.position == position
    message = str(error)
    assert "at position %d" % position in message
    *_, line, carets = message.split("\n")
    assert line == "  " + query
    assert carets.index("^") == 2 + position and set(carets[2 + position:]) == {"^"}
    for fragment in fragments:
        assert fragment in message


def test_error_on_a_later_line_shows_that_line():
    query = "lr < 0.01 and\n    nope > 1"
    with pytest.raises(QueryError) as info:
        parse(query).select(RUNS)
    assert info.value.position == 18
    assert "line 2, column 5" in str(info.value)
    assert str(info.value).endswith("\n      nope > 1\n      ^^^^")
    again = pickle.loads(pickle.dumps(info.value))                # e.g. from a worker process
    assert (str(again), again.position) == (str(info.value), 18)


def test_check_columns_and_a_query_reused():
    query = parse('"val/acc".max > 0.9 and loss.min < 1 and "bad" in labels and loss.min > 0')
    assert isinstance(query, Query) and query.columns == ("val/acc.max", "loss.min", "labels")
    query.check(RUNS.columns)
    with pytest.raises(QueryError, match="unknown column 'loss.min' at position 24; nearest: 'loss.mix'"):
        query.check(["val/acc.max", "loss.mix", "labels"])
    assert parse(query) is query
    assert query.select(RUNS.iloc[:0]) == []                  # an empty table: nothing, and no kind error
    assert query.select(RUNS.set_index(pd.Index(range(10, 18)))) == query.select(RUNS)   # rows by position


def test_missing_values_of_pandas_kinds():
    table = pd.DataFrame({"name": ["x", "y", "z"], "n": pd.array([1, None, 3], dtype="Int64"),
                          "s": pd.array(["a", None, "c"], dtype="string")})
    assert parse("n is missing").select(table) == ["y"]
    assert parse("n >= 1").select(table) == ["x", "z"]
    assert parse('s != "a"').select(table) == ["z"]


def test_the_package_import_does_not_load_lark():
    code = ("import sys, tfevents.summaries, tfevents.summaries.runs.query as q; assert 'lark' not in sys.modules; "
            "q.parse('x > 1'); assert 'lark' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# ---------------------------------------------------------------- random comparisons against pandas

NUMERIC = {"lr": "lr", "batch": "batch", "model.depth": "model.depth", "loss.min": "loss.min",
           "val/acc.max": '"val/acc".max', "val/acc.step": "'val/acc'.step"}
OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
       ">=": operator.ge}
FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _quoted(text: str) -> str:
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


@st.composite
def comparisons(draw):
    op = draw(st.sampled_from(sorted(OPS)))
    if draw(st.booleans()):
        column = draw(st.sampled_from(sorted(NUMERIC)))
        seen = [v for v in RUNS[column] if v == v]
        value = draw(st.one_of(st.sampled_from(seen), st.integers(-300, 300),
                               st.floats(-10, 10, allow_nan=False, allow_infinity=False)))
        literal, source = repr(value), NUMERIC[column]
    else:
        column = draw(st.sampled_from(["optimizer", "name", "notes"]))
        seen = [v for v in RUNS[column] if isinstance(v, str)]
        value = draw(st.one_of(st.sampled_from(seen), st.text(alphabet="ab'\"\\/_ sgd", max_size=6)))
        literal, source = _quoted(value), column
    flipped = draw(st.booleans())
    text = "%s %s %s" % (literal, FLIPPED[op], source) if flipped else "%s %s %s" % (source, op, literal)
    return text, column, op, value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(comparisons())
def test_random_comparisons_equal_pandas(case):
    text, column, op, value = case
    series = RUNS[column]
    present = series.notna()
    expected = present & OPS[op](series.where(present, "" if column in ("optimizer", "name", "notes") else 0), value)
    # a missing value compares false
    assert list(parse(text).evaluate(RUNS)) == list(expected), text
