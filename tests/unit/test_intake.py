"""Strict intake (specification clause 2): size, encoding, syntax, duplicates, depth."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp._intake import MAX_DEPTH, MAX_PACKET_BYTES
from cmp._quick import parse_counted
from cmp.findings import Finding
from tests.support.examples import examples
from tests.support.packets import encode, full, minimal, put, strings_in


def codes(data: bytes | str) -> list[str]:
    return [f.code for f in cmp.check(data).errors]


VALID = encode(minimal())


def padded(size: int) -> bytes:
    return VALID + b" " * (size - len(VALID))


def test_exactly_32768_bytes_passes_and_32769_is_too_large() -> None:
    assert cmp.check(padded(MAX_PACKET_BYTES)).ok
    report = cmp.check(padded(MAX_PACKET_BYTES + 1))
    assert [(f.code, f.message) for f in report.errors] == [("size", "packet is 32769 bytes, max is 32768")]


def test_size_is_judged_before_json() -> None:
    assert codes(b"\xff" * (MAX_PACKET_BYTES + 1)) == ["size"]
    assert codes("é" * 20000) == ["size"]  # 40,000 bytes as UTF-8


@pytest.mark.parametrize(
    "raw",
    [
        b"\xef\xbb\xbf" + VALID,
        VALID.decode().encode("utf-16"),
        VALID.decode().encode("utf-16-le"),
        VALID.decode().encode("utf-16-be"),
        VALID.decode().encode("utf-32"),
        VALID.decode().encode("utf-32-le"),
        VALID.replace(b"GPU", b"GP\xff"),
        VALID.replace(b"GPU", b"GP\xc3"),  # truncated sequence
        VALID.replace(b"GPU", b"\xc0\xafPU"),  # overlong
        VALID.replace(b"GPU", b"\xed\xa0\x80U"),  # encoded surrogate
    ],
    ids=["bom", "utf16", "utf16le", "utf16be", "utf32", "utf32le", "ff", "truncated", "overlong", "cesu"],
)
def test_only_utf8_without_bom(raw: bytes) -> None:
    assert codes(raw) == ["json"]


def _sized(obj: dict[str, Any], long: bool) -> dict[str, Any]:
    """``obj``, or with constraints that take its text past 5 KB."""
    return dict(obj, constraints=["x" * 1000] * 5) if long else obj


@pytest.mark.parametrize("long", [False, True], ids=["short", "long"])
@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\uDC00", "\\ud83dx", "\\ude00\\ud83d"])
def test_lone_surrogate_escapes_refused(escape: str, long: bool) -> None:
    text = json.dumps(_sized(minimal(), long)).replace("GPU", "GPU" + escape)
    report = cmp.check(text)
    assert [(f.code, f.path) for f in report.errors] == [("json", "$")]
    assert report.errors[0].message.endswith("in $.goal")


def test_lone_surrogate_in_member_name_refused() -> None:
    text = json.dumps(minimal())[:-1] + ', "\\ud800": 1}'
    assert codes(text) == ["json"]


@pytest.mark.parametrize("long", [False, True], ids=["short", "long"])
def test_surrogate_pairs_and_escaped_backslash_u_are_fine(long: bool) -> None:
    text = json.dumps(_sized(minimal(), long)).replace("GPU", "GPU \\ud83d\\ude00 \\\\ud800")
    report = cmp.check(text)
    assert report.ok
    assert report.packet is not None and "😀 \\ud800" in report.packet.goal


def test_str_input_with_lone_surrogate_is_refused() -> None:
    assert codes(json.dumps(minimal(), ensure_ascii=False).replace("GPU", "\ud800")) == ["json"]


@pytest.mark.parametrize(
    "literal", ["NaN", "Infinity", "-Infinity", "nan", "1e400", "-1e400", "1" * 400, "-" + "9" * 5000]
)
@pytest.mark.parametrize("long", [False, True], ids=["short", "long"])
def test_numbers_must_be_finite_json_numbers(literal: str, long: bool) -> None:
    assert codes(json.dumps(_sized(minimal(), long))[:-1] + f', "x": {literal}}}') == ["json"]


@pytest.mark.parametrize("literal", ["1e-400", "123456789012345678901234567890", "-0", "0.5e10"])
def test_finite_numbers_parse_and_fail_only_the_schema(literal: str) -> None:
    report = cmp.check(json.dumps(minimal())[:-1] + f', "x": {literal}}}')
    assert [(f.code, f.path) for f in report.errors] == [("schema", "$.x")]


@pytest.mark.parametrize("tail", [" x", "}", ",", " {}", "\x00", " /* c */"])
def test_trailing_garbage_refused(tail: str) -> None:
    assert codes(VALID + tail.encode()) == ["json"]


@pytest.mark.parametrize("space", [" ", "\n", "\r\n", "\t", " \n\t\r "])
def test_surrounding_whitespace_allowed(space: str) -> None:
    assert cmp.check(space.encode() + VALID + space.encode()).ok


@pytest.mark.parametrize("space", ["\x0b", "\x0c", "\u00a0", "\u2028"])
def test_non_json_whitespace_refused(space: str) -> None:
    assert codes(space + VALID.decode()) == ["json"]


@pytest.mark.parametrize(
    "text", ["", " ", "{", '{"a":1,}', "[1,]", "{'a': 1}", '{"a" 1}', "tru", '"\x01"', "01", '{"a":"\\x"}']
)
def test_malformed_json(text: str) -> None:
    assert codes(text) == ["json"]


@pytest.mark.parametrize("text", ["[]", '"x"', "1", "null", "true", "[{}]"])
def test_top_level_must_be_an_object(text: str) -> None:
    report = cmp.check(text)
    assert [(f.code, f.message) for f in report.errors] == [("not-object", "packet must be a JSON object")]


def nest(depth: int) -> str:
    return "[" * (depth - 1) + "]" * (depth - 1)


def test_nesting_up_to_10000_parses() -> None:
    # depth 10,000 counting the top-level object: valid JSON, a schema error
    text = '{"ltm_version": "0.2", "x": ' + nest(MAX_DEPTH) + "}"
    assert set(codes(text)) == {"schema"}


def test_nesting_past_10000_is_invalid_json_without_recursion_error() -> None:
    text = '{"ltm_version": "0.2", "x": ' + nest(MAX_DEPTH + 1) + "}"
    assert codes(text) == ["json"]
    assert codes("[" * 16000) == ["json"]
    assert codes("{" * 16000) == ["json"]


DOCUMENTS = [
    "{}",
    "[]",
    ' { "a" : [ 1 , -2.5e3 , true , false , null , "x\\n\\u00e9\\ud83d\\ude00" ] , "b" : { } } ',
    '[[[{"a": [[]]}]]]',
    '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
    "-0",
    "0.5E+10",
    "[1e-400]",
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_iterative_parser_agrees_with_json_module(text: str) -> None:
    from cmp import _deepjson as deepjson
    from cmp import _intake as intake

    assert deepjson.loads(text, intake._DECODER, MAX_DEPTH) == json.loads(text)


def test_many_brackets_take_the_iterative_parser_and_report_the_same() -> None:
    items = ",".join(["[]"] * 450)
    text = json.dumps(minimal())[:-1] + ', "constraints": [' + items + "]}"
    report = cmp.check(text)
    paths = [f.path for f in report.errors]
    assert paths[0] == "$.constraints"
    assert paths[1:100] == [f"$.constraints[{i}]" for i in range(99)]
    assert report.errors[100] == Finding(
        "truncated", "$", "351 more findings not listed (a report lists the first 100)"
    )


def test_duplicate_member_names_refused_anywhere() -> None:
    text = json.dumps(minimal())[:-1] + ', "goal": "again"}'
    report = cmp.check(text)
    assert [(f.code, f.path) for f in report.errors] == [("duplicate-key", "$.goal")]
    nested = (
        '{"ltm_version":"0.2","id":"0123456789","created_at":"2026-01-01T00:00:00Z","goal":"g","next_step":"n",'
        '"decisions":[{"what":"a","why":"b"},{"what":"a","why":"b","why":"c"}],"project":{"name":"a","name":"b"}}'
    )
    report = cmp.check(nested)
    assert sorted((f.code, f.path) for f in report.errors) == [
        ("duplicate-key", "$.decisions[1].why"),
        ("duplicate-key", "$.project.name"),
    ]


def test_duplicate_hides_no_secret() -> None:
    # The reference validates the last "goal" while forwarding bytes that hold the first.
    text = (
        '{"ltm_version":"0.2","id":"0123456789","created_at":"2026-01-01T00:00:00Z",'
        '"goal":"key AKIAIOSFODNN7EXAMPLE","goal":"clean","next_step":"n"}'
    )
    report = cmp.check(text)
    assert not report.ok and report.errors[0].code == "duplicate-key"


def test_duplicates_inside_deep_documents_found() -> None:
    text = '{"x": ' + "[" * 600 + '{"a":1,"a":2}' + "]" * 600 + "}"
    report = cmp.check(text)
    assert [f.code for f in report.errors] == ["duplicate-key"]
    assert report.errors[0].path.endswith("[0].a")


def test_check_accepts_bytearray_and_memoryview() -> None:
    assert cmp.check(bytearray(VALID)).ok
    assert cmp.check(memoryview(VALID)).ok


def test_check_rejects_non_bytes_with_type_error() -> None:
    with pytest.raises(TypeError):
        cmp.check(minimal())  # type: ignore[arg-type]


# --- parse_counted (cmp._quick): the quick read check() tries first ---


def test_counted_read_counts_every_name_and_string_value() -> None:
    counted = parse_counted(encode(full()))
    assert counted is not None
    obj, strings = counted
    assert obj == full()
    assert strings == strings_in(obj)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"goal": "\\ud800"}',
        b'{"goal": "\\u0061"}',  # any \u escape: it may write a surrogate or an escaped created_at
        b'{"goal": "C:\\\\users"}',  # an escaped backslash before a u looks like one: the long way
        b'{"goal": "a\\"b}',  # the quote is escaped: the string never ends
        b'{"goal": "\\ud83d\\ude00"}',  # fine JSON, but surrogate escapes go the long way
        b'{"goal": "\xff"}',
        b'\xef\xbb\xbf{"goal": "g"}',
        b'{"goal": "g",}',
        b'["goal"]',
        b'{"goal": "unterminated}',
        b'{"goal": "' + b"x" * MAX_PACKET_BYTES + b'"}',
    ],
)
def test_counted_read_declines_anything_unusual(raw: bytes) -> None:
    assert parse_counted(raw) is None


@pytest.mark.parametrize("number", [b"NaN", b"-Infinity", b"1e999", b"-1" + b"0" * 400, b"1.5", b"7"])
def test_the_quick_path_reads_numbers_unhooked_and_leaves_them_to_the_long_way(number: bytes) -> None:
    """No schema admits a number: read in C without a refusal, a packet holding one still
    goes the long way, which refuses what does not fit a double as before."""
    from cmp._pipeline import check_long
    from cmp._quick import read

    raw = encode({**full(), "goal": "g"}).replace(b'"g"', number, 1)
    counted = parse_counted(raw)
    assert counted is not None and not isinstance(counted[0]["goal"], str)
    assert not isinstance(read(raw), tuple)
    report = cmp.check(raw)
    assert report == check_long(raw) and not report.conforming
    expected = "schema" if number in (b"1.5", b"7") else "json"
    assert [f.code for f in report.errors] == [expected]


@pytest.mark.parametrize(
    ("raw", "strings"),
    [
        (b'{"goal": "a\\"b"}', 2),  # an escaped quote is no string's edge
        (b'{"goal": "a\\\\"}', 2),  # an escaped backslash, then the closing quote
        (b'{"goal": "a\\\\\\"b", "x": "\\n"}', 4),
        (b'{"goal": "\\/\\b\\f\\n\\r\\t"}', 2),
    ],
)
def test_counted_read_counts_strings_through_escapes(raw: bytes, strings: int) -> None:
    """Fact 1 of cmp._quick: the quotes left once every escape is taken out are the strings' edges."""
    counted = parse_counted(raw)
    assert counted is not None and counted[1] == strings == strings_in(counted[0])


def _depth_oracle(value: object) -> int:
    """Nesting depth of parsed JSON: 0 for a scalar, 1 for [] or {}."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(
    st.recursive(
        st.text(alphabet='[]{}"\\ax', max_size=6) | st.integers(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[{}]"', max_size=3), inner),
        max_leaves=12,
    ),
    st.integers(0, 6),
)
def test_depth_measure_is_exact_and_ignores_brackets_in_strings(value: object, limit: int) -> None:
    from cmp import _intake as intake

    raw = json.dumps(value).encode()
    depth = _depth_oracle(value)
    # Each way of measuring: runs counted out, innermost pairs taken out, the running sum.
    for few_runs, passes in ((64, 4), (0, 4), (0, 1), (0, 0)):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(intake, "_FEW_RUNS", few_runs)
            patch.setattr(intake, "_PASSES", passes)
            measured = intake.nesting(raw, limit)
        assert (measured > limit) is (depth > limit)
        assert measured >= depth  # what the iterative parser relies on
        if measured > limit:
            assert measured == depth


def test_wide_documents_are_not_taken_for_deep_ones() -> None:
    from cmp._intake import nesting

    wide = json.dumps({**minimal(), "attempts": [{}] * 10_900}).encode()
    assert wide.count(b"{") > MAX_DEPTH and nesting(wide, MAX_DEPTH) <= MAX_DEPTH
    quoted = json.dumps({"goal": "[" * (MAX_DEPTH + 5)}).encode()
    assert nesting(quoted, MAX_DEPTH) <= MAX_DEPTH
    deep = b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
    assert nesting(deep, MAX_DEPTH) == MAX_DEPTH + 1
    assert nesting(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, MAX_DEPTH) == MAX_DEPTH


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'{"a": "x\n"}', "invalid json: Invalid control character at line 1 column 9"),
        (b'{"a": "abc', "invalid json: Unterminated string starting at line 1 column 7"),
    ],
)
def test_decoder_messages_that_end_in_at_say_it_once(text: bytes, message: str) -> None:
    (finding,) = cmp.check(text).errors
    assert finding.message == message


def test_text_dense_with_escapes_goes_the_long_way() -> None:
    """cmp._quick's escape density rule: a performance choice, never a verdict."""
    dense = encode(put(full(), "goal", "\\" * 100))
    sparse = encode(put(full(), "goal", "\\" * 10))
    assert parse_counted(dense) is None and parse_counted(sparse) is not None
    assert cmp.check(dense).ok and cmp.check(sparse).ok
