"""The intake's shortcuts against the long way (tests/support/intake_oracle.py): the same
values, the same refusals (message and place), the same findings, over generated, mutated
and hostile texts.

The shortcuts: the iterative parser reads runs of brackets at once and hands containers
to the C scanner (cmp._deepjson); ``nesting`` measures depth by runs and by taking out
innermost pairs; the long way's decoder drops its number hooks where no number can be
refused, and its object hook for a text of many objects whose member counts agree; the
findings of a refused document come from one walk that takes a chain of one-item arrays
in one step and writes messages only for the findings listed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp import _deepjson, _intake
from tests.support import intake_oracle
from tests.support.examples import examples

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import hostile  # noqa: E402


class _Written:
    """A number written as it is, which Python's own numbers would not write (1e999)."""

    def __init__(self, text: str) -> None:
        self.text = text


# Texts that exercise what the shortcuts read: brackets and quotes inside strings,
# escapes, lone surrogates, long and huge numbers, repeated member names.
_NAMES = st.sampled_from(["a", "b", "", "a b", "[", "{}", '"', "\\", "\ud800", "é", "x" * 40, "AKIAIOSFODNN7EXAMPLE"])
_TEXTS = st.sampled_from(["", "x", "[]{}", "\ud800", "\udc00\ud800", "\\", '"', "\n", "\x00", "😀", ":,"])
_NUMBERS = st.one_of(
    st.integers(-(10**6), 10**6),
    st.sampled_from([10**308, 10**309, -(10**400), 2**64, 0]),
    st.sampled_from([1.5, -0.0, 1e308, 1e-308, 5e-324]),
    st.sampled_from(["1e999", "-1E+400", "1" + "0" * 209 + ".5", "1" + "0" * 210 + "e1", "0.1e099", "1e100"]).map(
        lambda text: _Written(text)
    ),
)
_SCALARS = st.one_of(_TEXTS, _NUMBERS, st.booleans(), st.none())


def _values() -> st.SearchStrategy[Any]:
    # Objects as lists of pairs, so that a name may repeat.
    return st.recursive(
        _SCALARS,
        lambda inner: (
            st.lists(inner, max_size=4).map(lambda items: ("array", items))
            | st.lists(st.tuples(_NAMES, inner), max_size=4).map(lambda pairs: ("object", pairs))
        ),
        max_leaves=16,
    )


def _render(value: Any, space: str, ascii_only: bool) -> str:
    if isinstance(value, tuple) and value[0] == "array":
        return "[" + space + ("," + space).join(_render(item, space, ascii_only) for item in value[1]) + space + "]"
    if isinstance(value, tuple):
        members = (
            _string(name, ascii_only) + space + ":" + space + _render(item, space, ascii_only)
            for name, item in value[1]
        )
        return "{" + space + ("," + space).join(members) + space + "}"
    if isinstance(value, _Written):
        return value.text  # a number written as it is
    if isinstance(value, str):
        return _string(value, ascii_only)
    return json.dumps(value)


def _string(text: str, ascii_only: bool) -> str:
    # A lone surrogate can only be written as an escape.
    return json.dumps(text, ensure_ascii=ascii_only or any("\ud800" <= c <= "\udfff" for c in text))


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    """JSON text, sometimes wrapped in a deep chain, sometimes broken."""
    space = draw(st.sampled_from(["", " ", "\n", " \t\r\n"]))
    text = _render(draw(_values()), space, draw(st.booleans()))
    depth = draw(st.sampled_from([0, 0, 0, 3, 1_100, 2_500]))
    if depth:
        kind = draw(st.sampled_from(["arrays", "objects", "pairs", "spaced"]))
        if kind == "arrays":
            text = "[" * depth + text + "]" * depth
        elif kind == "objects":
            text = '{"k":' * depth + text + "}" * depth
        elif kind == "pairs":
            text = "[0," * depth + text + "]" * depth
        else:
            text = "[ " * depth + text + " ]" * depth
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["cut", "insert", "delete"]))
        if edit == "cut":
            text = text[:at]
        elif edit == "insert":
            text = (
                text[:at] + draw(st.sampled_from(["[", "]", "{", "}", ",", ":", '"', "\\", " ", "x", "0"])) + text[at:]
            )
        else:
            text = text[:at] + text[at + 1 :]
    return text


def flat(value: Any) -> list[Any]:
    """``value`` as a list of its parts, first met first: two values are the same (types,
    member order and all) when their lists are equal. No recursion: 10,000 deep is common here."""
    out: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is list:
            out.append(("list", len(item)))
            stack.extend(reversed(item))
        elif type(item) is dict:
            out.append(("dict", len(item)))
            for name, member in reversed(list(item.items())):
                stack.extend([member, ("name", name)])
        else:
            out.append((type(item).__name__, item))
    return out


def assert_same_reading(text: str) -> None:
    raw = text.encode("utf-8", "surrogatepass")
    value, findings = _intake.parse_json(text, raw)
    expected_value, expected_findings = intake_oracle.parse_json(text, raw)
    assert findings == expected_findings
    assert flat(value) == flat(expected_value)


@settings(max_examples=examples(400))
@given(json_texts())
def test_parse_json_reads_as_the_long_way(text: str) -> None:
    assert_same_reading(text)


def _reading(read: Any) -> tuple[str, Any]:
    """A parser's answer as data: its value, or its refusal (type, message, offset)."""
    try:
        return "value", flat(read())
    except (_deepjson.DeepJSONError, intake_oracle.TokenError) as exc:
        return "refused", (str(exc), exc.pos)
    except _intake._Refused as exc:
        return "number", str(exc)


@settings(max_examples=examples(500))
@given(json_texts(), st.integers(1, 8), st.sampled_from([1, 2, 5, 200]), st.integers(-1, 3))
def test_the_iterative_parser_reads_as_the_token_by_token_one(
    text: str, max_depth: int, c_levels: int, slack: int
) -> None:
    """Values and refusals at any depth limit, with the C scanner taking containers from
    any depth (a bound too low is never given: slack -1 gives none)."""
    raw = text.encode("utf-8", "surrogatepass")
    bound = None if slack < 0 else _intake.nesting(raw, max_depth) + slack
    hooks = (dict, _intake._refuse_constant, _intake._finite_float, _intake._finite_int)
    expected = _reading(lambda: intake_oracle.token_by_token(text, *hooks, max_depth))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_deepjson, "C_LEVELS", c_levels)
        found = _reading(lambda: _deepjson.loads(text, _intake._PLAIN_DECODER, max_depth, bound))
    assert found == expected


@pytest.mark.parametrize("case", hostile.CASES, ids=hostile.label)
def test_hostile_inputs_read_as_the_long_way(case: hostile.Case) -> None:
    raw = hostile.build(case)
    value, findings = _intake.parse_packet(raw)
    expected_value, expected_findings = intake_oracle.parse_packet(raw)
    assert findings == expected_findings
    assert flat(value) == flat(expected_value)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 10_000 + "]" * 10_000,
        "[" * 10_001 + "]" * 10_001,
        "[ " * 9_999 + "[" + "] " * 10_000,
        "[ " * 10_001 + "] " * 10_001,
        '{"a":' * 6_000 + "0" + "}" * 6_000,
        '{"a":' * 6_000 + "0" + "}" * 5_999 + "]",
        '{ "a" : ' * 3_000 + '{"\\u0061":' * 2 + "{}" + "}" * 3_002,
        "[0," * 8_000 + "0" + "]" * 8_000,
        "[0," * 5_000 + "0 0" + "]" * 5_000,  # refused at the bottom
        "[0," * 3_000 + "[0 0," + "[0," * 2_000 + "0" + "]" * 5_001,  # refused half way down
        "[ 0 , [ true ,null, [" * 1_500 + "-1.5e3" + " ]" * 4_500,
        "[1e999," + "[0," * 5_000 + "0" + "]" * 5_001,  # a number refused before the depth is
        "[0," * 10_001 + "0" + "]" * 10_001,
        "[0," * 3_000 + "[1E400," + "[0," * 3_001 + "0" + "]" * 6_002,
        "[0," * 4_000 + "[-Infinity," + "]" * 4_001,
        "[0,[]," * 3_000 + "0" + "]" * 3_000,
        "[1,2,3," * 1_500 + '"x"' + "]" * 1_500,
        "[" * 9_000 + '"\\ud800",' * 300 + "1]" + "]" * 8_999,
        "[" * 9_000 + '{"a":1,"a":2},' * 300 + "1]" + "]" * 8_999,
        "[" * 9_000 + '"a",' * 900 + "x]" + "]" * 8_999,
        "[" * 9_000 + "1e999]" + "]" * 8_999,
        "[" * 9_000 + "}" + "]" * 9_000,
        "[" * 5_000 + "]" * 5_001,
        "[" * 1_200 + "{}" * 2,
    ],
    ids=lambda text: f"{text[:12]}…{len(text)}",
)
def test_deep_texts_read_as_the_long_way(text: str) -> None:
    assert_same_reading(text)


def _many(item: str, count: int, tail: str = "") -> str:
    return '{"ltm_version":"0.2","x":[' + ",".join([item] * count) + "]" + tail + "}"


@pytest.mark.parametrize(
    "text",
    [
        _many("{}", 2_000),  # many objects, no duplicate: read without the object hook
        _many("{}", 2_000, ',"x":1'),  # a duplicate among them: read again, with it
        _many('{"a":1,"b":{"a":":"}}', 600),  # colons in strings are no members
        _many('{"a\\"":"\\\\:"}', 600),  # escapes before colons and quotes
        _many('{"a":1}', 300) + " ",
        _many("{}", 300).replace("{}", '{"x":{"y":2,"y":3}}', 1),  # a duplicate deep in one
        _many("1", 5_000),  # numbers read in C: none can be refused
        _many("1", 5_000).replace("1,", "1" + "0" * 209 + ",", 1),
        _many("1", 5_000).replace("1,", "1" + "0" * 400 + ",", 1),  # refused: it does not fit
        _many("1", 5_000).replace("1,", "1e308,", 1),
        _many("1", 5_000).replace("1,", "1e309,", 1),
        _many("1", 5_000).replace("1,", "-1.5E+0400,", 1),
        _many('"\\ud800"', 2_000),
        _many('{"b":0}', 3_000, ',"x":1'),  # a duplicate among many objects that hold something
        '"\\ud800"',  # the whole document a string
        '["\\ud800", {"\\ud800": "\\udc00"}, [[["\\ud800"]]]]',
    ],
    ids=lambda text: text[25:50],
)
def test_wide_texts_read_as_the_long_way(text: str) -> None:
    assert_same_reading(text)
