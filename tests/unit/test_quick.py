"""cmp._quick's own rules: the anchoring guard on the pattern table, parse_counted's count, and
what it hands the long way decoded (fact 5)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp import _quick, model
from cmp._extended_patterns import EXTENDED_PATTERNS
from cmp._intake import parse_packet
from cmp._matcher import anchored
from cmp._pipeline import check_long
from cmp._quick import parse_counted
from cmp._redaction._scan import PATTERNS
from cmp.conformance import vector_input
from tests.property.test_compiler import JSON_VALUES, PATHS, edited
from tests.support.examples import examples
from tests.support.packets import encode, full
from tests.support.strategies import packets, renderings
from tests.support.vectors import committed_vectors


@pytest.mark.parametrize("regex", [r"^AKIA", r"key$", r"\AAKIA", r"x\z", r"(?m)x", r"(?im)x", r"a|^b", r"(?:x$)"])
def test_an_anchored_regex_is_seen(regex: str) -> None:
    assert anchored(regex)


@pytest.mark.parametrize(
    "regex", [r"[^a]x", r"\$5", r"\^", r"\B/home", r"\bAKIA[0-9A-Z]{16}\b", r"[$^]", r"\\A", r"(?i)x"]
)
def test_what_only_looks_anchored_is_not(regex: str) -> None:
    assert not anchored(regex)


def test_no_redaction_pattern_is_anchored() -> None:
    """The import-time guard, restated: fact 2 of cmp._quick holds for the shipped table."""
    assert not [p.category for p in PATTERNS if anchored(p.regex) or anchored(p.screened_by)]
    # The extended table too: the quick path rules a packet clean of it by one pass over its text.
    assert not [p.category for p in EXTENDED_PATTERNS if anchored(p.regex) or anchored(p.screened_by)]


def test_strings_are_half_the_quotes_and_a_backslash_opts_out() -> None:
    raw = encode(full())
    counted = parse_counted(raw)
    assert counted is not None and counted[1] == raw.count(b'"') // 2
    assert parse_counted(raw.replace(b"GPU", b"G\\u0050U")) is None


@pytest.mark.parametrize(
    "text", ["C:\\Users\\dev", 'a \\\\\\"b', 'say "hi"\\', "\\\\\\\\", "tab\there", "\\/ and \\\\", "u\\x\\"]
)
def test_escapes_are_counted_one_backslash_and_one_byte_at_a_time(text: str) -> None:
    """Escapes pair up from the start of each run of backslashes: the strings are counted right."""
    import cmp
    from cmp._pipeline import check_long

    raw = encode({**full(), "goal": text})
    counted = parse_counted(raw)
    assert counted is not None and counted[0]["goal"] == text
    assert counted[1] == _strings(counted[0])
    assert cmp.check(raw) == check_long(raw)


def _strings(value: object) -> int:
    """The member names and string values in parsed JSON."""
    if isinstance(value, str):
        return 1
    if isinstance(value, dict):
        return sum(1 + _strings(item) for item in value.values())
    if isinstance(value, list):
        return sum(_strings(item) for item in value)
    return 0


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(st.data())
def test_counting_from_the_first_backslash_counts_what_the_whole_text_holds(data: st.DataObject) -> None:
    """parse_counted reads escapes from the first backslash on: the same strings and
    object as a reading of the whole text."""
    from cmp._quick import _escape, parse_counted

    packet = data.draw(packets())
    raw = data.draw(renderings(packet))
    read = parse_counted(raw)
    if read is None:
        return
    escapes = _escape().findall(raw)
    assert read[1] == (raw.count(b'"') - escapes.count(b'\\"')) // 2 == _strings(read[0])
    assert read[0] == json.loads(raw)


@pytest.mark.parametrize(
    "text",
    [b'{"a": 1}', b' \n{"a": 1}', b'{"a": 1}\n', b'{"a": 1} \t\r\n ', b'{"a": 1} x', b'{"a": 1}\x0b', b"", b"  ",
     b"x", b'{"a":', b"[1] [2]", b'"s"', b'{"a": NaN}', b'{"a": 1e999}', b"\xff{}", b"[" * 50_000],
)  # fmt: skip
def test_decode_plain_answers_as_the_decoder_does(text: bytes) -> None:
    """decode_plain skips JSONDecoder.decode's frames, not its rules: leading and trailing
    whitespace, extra data, bad UTF-8 and depth; numbers and constants it reads as
    json.loads does (the quick path leaves every packet with a number to the long way)."""
    from cmp._intake import _QUICK_DECODER, decode_plain

    try:
        expected = _QUICK_DECODER.decode(text.decode("utf-8"))
    except (ValueError, RecursionError):
        expected = None
    assert repr(decode_plain(text)) == repr(expected)  # NaN is not equal to itself


@settings(max_examples=examples(300))
@given(st.text(alphabet=' \t\n\r{}[]",:0123456789.eEtrufalsn-x\\', max_size=24))
def test_decode_plain_answers_as_the_decoder_does_on_any_text(text: str) -> None:
    from cmp._intake import _QUICK_DECODER, decode_plain

    try:
        expected = _QUICK_DECODER.decode(text)
    except (ValueError, RecursionError):
        expected = None
    assert repr(decode_plain(text.encode())) == repr(expected)


def _largest(schema: dict[str, Any]) -> Any:
    """The value ``schema`` admits that holds the most strings: every member there, every
    array full, every string as short as it may be."""
    kind = schema["type"]
    if kind == "object":
        return {name: _largest(sub) for name, sub in schema["properties"].items()}
    if kind == "array":
        return [_largest(schema["items"])] * schema["maxItems"]
    if kind == "boolean":
        return True
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "pattern" in schema:
        from cmp._matcher import Matcher

        return next(text for text in ("a", "0.1", "sha256:" + "0" * 64) if Matcher(schema["pattern"])(text))
    if schema.get("format") == "date-time":
        return "2026-04-21T10:30:00Z"
    return "x" * schema.get("minLength", 0)


@pytest.mark.parametrize("version", ["0.1", "0.2"])
def test_the_largest_packet_holds_the_most_strings_the_quick_path_reads(
    version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No conforming packet holds more strings than the schemas allow (every array has
    maxItems): the largest one is read the quick way, and a text with more strings goes
    the long way without being decoded first."""
    from cmp import _intake, _quick
    from cmp._compiler import most_strings
    from cmp._validation import builder
    from cmp.schema import load_schema

    obj = _largest(load_schema(version))
    raw = json.dumps(obj).encode()
    built = builder(version)(json.loads(raw))
    assert built is not None and built[1] == raw.count(b'"') // 2 == most_strings(load_schema(version))
    assert isinstance(_quick.read(raw), tuple)
    assert max(most_strings(load_schema(v)) or 0 for v in ("0.1", "0.2")) == _quick._MOST_STRINGS
    more = raw[:-1] + b', "' + b'", "'.join([b"x"] * (_quick._MOST_STRINGS // 2)) + b'": 1}'
    monkeypatch.setattr(_intake, "decode_plain", lambda raw: pytest.fail("decoded"))
    assert _quick.read(more) is None


# Fact 4: what the quick way hands the long way decoded is what the intake reads.


def _handed_over(raw: bytes) -> Any:
    """What the quick way hands the long way for ``raw``: its object, or None."""
    counted = parse_counted(raw)
    if counted is None or _quick.conforming(raw, counted) is not None:
        return None
    return counted[0] if _quick.as_the_intake_reads(*counted) else None


def assert_handed_over_as_the_intake_reads(raw: bytes) -> bool:
    """When the quick way hands ``raw`` over decoded, the intake reads it to an object of
    the same members, values and types (repr tells 1, 1.0 and True apart), refusing nothing."""
    handed = _handed_over(raw)
    if handed is None:
        return False
    obj, findings = parse_packet(raw)
    assert findings == [] and repr(obj) == repr(handed), raw[:200]
    return True


def test_every_vector_handed_over_is_read_alike() -> None:
    handed = sum(assert_handed_over_as_the_intake_reads(vector_input(vector)) for vector in committed_vectors())
    assert handed > 100  # refused packets that parse: a schema error, no JSON one


@pytest.mark.parametrize(
    ("value", "handed"),
    [
        ("1", True),
        ("-0.0", True),
        ("1.5e300", True),
        ("1e308", True),
        (str(2**53), True),
        (str(-(2**53)), True),
        (str(2**53 + 1), False),  # perhaps past a double: the intake decides
        ("1" + "0" * 400, False),  # past any double: the intake refuses it
        ("1e309", False),
        ("-1e999", False),
        ("NaN", False),
        ("Infinity", False),
        ("-Infinity", False),
        ("true", True),
        ("null", True),
    ],
)
def test_a_number_is_handed_over_only_where_both_ways_read_it_alike(value: str, handed: bool) -> None:
    """An unexpected member holding ``value`` makes the packet refused; whether the quick way
    hands it over decoded, and what the intake reads, agree; the reports are the same."""
    raw = json.dumps(full()).encode()[:-1] + b', "extra": ' + value.encode() + b"}"
    assert assert_handed_over_as_the_intake_reads(raw) is handed
    assert cmp.check(raw) == check_long(raw) and not cmp.check(raw).conforming


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b'{"goal": "a", "goal": "b"}', "a duplicate member"),
        (b'{"ltm_version": "0.2", "goal": [[[[[[[[["deep"]]]]]]]]]}', "deeper than a packet nests"),
        (b'{"ltm_version": "0.2", "x": [' + b", ".join([b"[]"] * 1000) + b"]}", "more values than a packet holds"),
        (b'{"goal": "a\\u0041"}', "a \\u escape"),
        (b'["not", "an", "object"]', "no object"),
        (b'\xef\xbb\xbf{"goal": "a"}', "a byte order mark"),
    ],
)
def test_what_the_intake_must_read_itself_is_not_handed_over(raw: bytes, why: str) -> None:
    assert _handed_over(raw) is None, why
    assert cmp.check(raw) == check_long(raw)


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(st.data())
def test_a_packet_refused_for_its_schema_is_handed_over_as_the_intake_reads_it(data: st.DataObject) -> None:
    """Generated packets edited anywhere with any JSON value (numbers of every size, nesting,
    unknown members), written by json.dumps with NaN and Infinity allowed."""
    packet = data.draw(packets(plain=True))
    edits = data.draw(st.lists(st.tuples(st.sampled_from(PATHS), JSON_VALUES | st.floats()), max_size=3))
    numbers = data.draw(st.lists(st.integers() | st.floats(), max_size=2))
    obj = edited(model.to_obj(packet), edits)
    obj.update({f"extra_{index}": number for index, number in enumerate(numbers)})
    raw = json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")
    assert_handed_over_as_the_intake_reads(raw)


# Fact 5: a text without a backslash writes no string that needs an escape.


def _strings_of(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [text for name, item in value.items() for text in (name, *_strings_of(item))]
    if isinstance(value, list):
        return [text for item in value for text in _strings_of(item)]
    return [value] if isinstance(value, str) else []


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(st.data())
def test_a_packet_read_from_text_without_a_backslash_is_escape_free(data: st.DataObject) -> None:
    """Marked escape_free exactly when read the quick way from text without a backslash;
    then no string holds a character JSON escapes, and the bytes are a fresh copy's."""
    import dataclasses
    from json.encoder import encode_basestring

    packet = data.draw(packets())
    raw = data.draw(renderings(packet))
    checked = cmp.check(raw).packet
    assert checked is not None
    assert checked._known.escape_free is (b"\\" not in raw and _quick.read(raw) is not None)
    if checked._known.escape_free:
        assert all(encode_basestring(text) == f'"{text}"' for text in _strings_of(json.loads(raw)))
    assert cmp.dumps(checked) == cmp.dumps(dataclasses.replace(checked))


def test_escape_free_is_what_the_quick_way_marks_and_no_copy_keeps() -> None:
    import dataclasses

    plain = cmp.loads(encode(full()))
    assert plain._known.escape_free and plain._known.conforming
    assert not dataclasses.replace(plain)._known.escape_free
    quoted = cmp.loads(json.dumps(dict(full(), goal='say "hi"')).encode())
    assert not quoted._known.escape_free
    assert cmp.dumps(quoted) == cmp.dumps(dataclasses.replace(quoted))
