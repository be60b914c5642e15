"""Positions: every finding and redaction hit points at the text it is about.

The oracle here reads the text its own way (the standard decoder's ``raw_decode`` at the
claimed offset, its pairs kept so duplicates are seen) and asks, for each kind of
finding, whether what is written at the line and column is what the finding is about:
the value at the path, the member name, the object missing a member, the match inside a
string, the decoder's own error position. It runs over every vector (strict and
lenient, both rule sets) and over generated and mutated packets.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp._intake import MAX_DEPTH, MAX_PACKET_BYTES
from cmp._messages import path_join
from cmp._pipeline import Report, check, check_long
from cmp._redaction._hit import Redaction
from cmp.conformance import vector_input
from cmp.findings import Finding, Position
from tests.support.examples import examples
from tests.support.strategies import mutated, packets, renderings
from tests.support.vectors import FOLDER, committed_vectors

_DECODER = json.JSONDecoder(object_pairs_hook=lambda pairs: ("object", pairs))
_WHITESPACE = " \t\n\r"


def _offset(text: str, position: Position) -> int:
    """The code point offset of a 1-based line and column, lines ending at LF."""
    lines = text.split("\n")
    assert 1 <= position.line <= len(lines), position
    assert 1 <= position.column <= len(lines[position.line - 1]) + 1, position
    return sum(len(line) + 1 for line in lines[: position.line - 1]) + position.column - 1


class _Written:
    """The document as the oracle reads it: every value and member name by rendered path, all occurrences."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.values: dict[str, list[Any]] = {}
        self.names: dict[str, list[str]] = {}  # path of a member -> its name (each occurrence)
        self.objects: dict[str, list[list[tuple[str, Any]]]] = {}
        root = json.loads(text, object_pairs_hook=lambda pairs: ("object", pairs))
        stack: list[tuple[str, Any]] = [("$", root)]
        while stack:
            path, value = stack.pop()
            self.values.setdefault(path, []).append(value)
            if isinstance(value, tuple):
                self.objects.setdefault(path, []).append(value[1])
                for name, item in value[1]:
                    child = path_join(path, name)
                    self.names.setdefault(child, []).append(name)
                    stack.append((child, item))
            elif isinstance(value, list):
                stack.extend((path_join(path, i), item) for i, item in enumerate(value))

    def value_at(self, offset: int) -> Any:
        return _DECODER.raw_decode(self.text, offset)[0]

    def name_at(self, offset: int) -> str:
        """The member name written at ``offset``: a string followed by a colon."""
        name, end = json.JSONDecoder().raw_decode(self.text, offset)
        assert isinstance(name, str)
        assert self.text[end:].lstrip(_WHITESPACE).startswith(":"), "a member name is followed by a colon"
        return name


def _first_value_start(text: str) -> int:
    return len(text) - len(text.lstrip(_WHITESPACE))


_DECODER_WHERE = re.compile(r" at line (\d+) column (\d+)$")


def _assert_json_finding(finding: Finding, raw: bytes, text: str, offset: int, message: str) -> None:
    """``message`` is the finding's before it was located: once placed, the decoder's own
    "at line N column M" is left out of it (the place is said in front of the line)."""
    where = _DECODER_WHERE.search(message)
    if where is not None:  # the decoder's own account of where it stopped
        assert finding.position == Position(int(where.group(1)), int(where.group(2)))
        assert finding.message == re.sub(r"(?: starting)?" + _DECODER_WHERE.pattern, "", message)
    elif "byte order mark" in message or "UTF-16" in message:
        assert offset == 0
    elif message.startswith("invalid json: invalid UTF-8 at byte "):
        byte = int(message.rsplit(" ", 1)[1])
        assert text[:offset].encode() == raw[:byte]
    elif "is not a JSON number" in message:
        constant = message.removeprefix("invalid json: ").split(" ")[0]
        assert text.startswith(constant, offset)
    elif "does not fit a finite double" in message:
        number = message.removeprefix("invalid json: number ").split(" ")[0].rstrip("…")
        assert text.startswith(number, offset)
    elif "lone surrogate" in message:
        written = json.JSONDecoder().raw_decode(text, offset)[0]
        assert isinstance(written, str) and re.search("[\ud800-\udfff]", written)
    else:
        raise AssertionError(f"a json finding the oracle does not know: {message}")


def assert_points_at(report: Report, raw: bytes) -> None:
    """Every finding and hit of ``report.located()`` has a position, and it points at the right text."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_DEPTH))  # the oracle's decoder recurses; packets nest 10,000 deep
    try:
        _assert_points_at(report, raw)
    finally:
        sys.setrecursionlimit(limit)


def _assert_points_at(report: Report, raw: bytes) -> None:
    located = report.located()
    text = raw.decode("utf-8", "replace")
    written: _Written | None = None
    for unplaced, finding in zip(report.errors, located.errors, strict=True):
        assert finding.position is not None, finding
        offset = _offset(text, finding.position)
        if finding.code == "json":
            _assert_json_finding(finding, raw, text, offset, unplaced.message)
            continue
        if finding.code == "size":
            if len(raw) > MAX_PACKET_BYTES:  # the character that holds the first byte past the limit
                assert len(text[:offset].encode()) <= MAX_PACKET_BYTES < len(text[: offset + 1].encode())
            else:
                assert offset == _first_value_start(text)
            continue
        if finding.path == "$":
            assert offset == _first_value_start(text), finding
            continue
        written = written or _Written(text)
        if finding.code == "duplicate-key":
            name = written.name_at(offset)
            assert name == written.names[finding.path][0]
            assert name in _names_written(text[:offset]), "the second time the name is written, not the first"
        elif finding.path not in written.values:  # a missing member: the object that lacks it
            value = written.value_at(offset)
            assert value[0] == "object"
            assert value in written.values[_parent(finding.path, written)]
        elif finding.keyword == "additionalProperties":
            assert written.name_at(offset) == written.names[finding.path][0]
        else:
            assert written.value_at(offset) == written.values[finding.path][0], finding
    for hit in located.redactions:
        assert hit.position is not None, hit
        _assert_hit(hit, text, _offset(text, hit.position))


# From the start of valid JSON text, successive matches are exactly its string tokens.
_STRING_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"')


def _names_written(text: str) -> set[str]:
    """The member names written in ``text`` (a prefix of valid JSON): strings followed by a colon."""
    names = set()
    for match in _STRING_TOKEN.finditer(text):
        if text[match.end() :].lstrip(_WHITESPACE).startswith(":"):
            names.add(json.loads(match.group()))
    return names


def _parent(path: str, written: _Written) -> str:
    for end in range(len(path) - 1, 0, -1):
        if path[end] in ".[" and path[:end] in written.values:
            return path[:end]
    return "$"


def _assert_hit(hit: Redaction, text: str, offset: int) -> None:
    """``offset`` is inside a string, ``hit.at`` decoded code points after its opening quote."""
    for quote in _quotes_before(text, offset):
        try:
            prefix = json.loads('"' + text[quote + 1 : offset] + '"')
        except json.JSONDecodeError:
            continue
        if len(prefix) != hit.at:
            continue
        whole = json.JSONDecoder().raw_decode(text, quote)[0]
        rest = whole[hit.at :]
        assert len(rest) >= hit.length
        if hit.found == hit.echo and not hit.found.endswith("…"):
            assert rest.startswith(hit.found), (hit, rest)
        return
    raise AssertionError(f"{hit!r} does not point inside a string at its offset")


def _quotes_before(text: str, offset: int) -> Iterator[int]:
    index = text.rfind('"', 0, offset)
    while index >= 0:
        yield index
        index = text.rfind('"', 0, index)


def _vector_reports() -> Iterator[Any]:
    for vector in committed_vectors():
        raw = vector_input(vector)
        for lenient in (False, True):
            for rules in ("default", "extended"):
                yield pytest.param(
                    raw, lenient, rules, id=f"{vector['id']}-{'lenient' if lenient else 'strict'}-{rules}"
                )


@pytest.mark.slow  # 3,871 cases: seconds of per-test overhead alone
@pytest.mark.parametrize(("raw", "lenient", "rules"), list(_vector_reports()))
def test_every_vector_finding_points_at_its_text(raw: bytes, lenient: bool, rules: Any) -> None:
    assert_points_at(check(raw, lenient=lenient, rule_set=rules), raw)


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None)
@given(mutated())
def test_every_finding_of_a_mutated_packet_points_at_its_text(raw: bytes) -> None:
    assert_points_at(check_long(raw, lenient=True, rule_set="extended"), raw)


_SECRETS = ("AKIAIOSFODNN7EXAMPLE", "C:\\Users\\me\\x", "/home/me/notes")


@pytest.mark.slow
@settings(max_examples=examples(200), deadline=None)
@given(st.data())
def test_a_hit_after_escapes_points_at_the_match(data: st.DataObject) -> None:
    packet = data.draw(packets(version="0.2"))
    before = data.draw(st.text(alphabet=st.sampled_from(['"', "\\", "\n", "é", "😀", "\u2028", "a", " "]), max_size=6))
    secret = data.draw(st.sampled_from(_SECRETS))
    packet = packet.replace(goal=before + " " + secret)
    raw = data.draw(renderings(packet))
    report = check(raw)
    assert report.redactions, "the planted text is found"
    assert_points_at(report, raw)


def test_positions_are_computed_only_when_asked() -> None:
    raw = b'{"ltm_version": "0.2",\n "goal": 7}'
    report = check(raw)
    assert all(finding.position is None for finding in report.errors)
    located = report.located()
    assert [f.position for f in located.errors if f.path == "$.goal"] == [Position(2, 10)]
    assert located.located() == located, "locating twice changes nothing"


def test_text_and_bytes_give_the_same_positions() -> None:
    raw = '{"ltm_version": "0.2", "goal": "é😀 AKIAIOSFODNN7EXAMPLE"}'
    from_text = check(raw, lenient=True).located()
    from_bytes = check(raw.encode(), lenient=True).located()
    assert [h.position for h in from_text.redactions] == [h.position for h in from_bytes.redactions]
    assert from_text.redactions[0].position == Position(1, 36)


def test_locate_places_lint_findings() -> None:
    raw = (FOLDER.parent / "examples" / "typical-v0.2.json").read_bytes()
    packet = cmp.loads(raw).replace(attempts=(cmp.Attempt(tried="Ran the encoder twice.", outcome="failed"),))
    raw = cmp.dumps(packet)
    findings = cmp.lint(packet)
    missing = [f for f in findings if f.keyword == "missing-learned"]
    assert missing, "an attempt without learned gets advice"
    located = cmp.locate(raw, findings)
    report = check(raw)
    assert_points_at(dataclasses.replace(report, errors=tuple(located)), raw)
    text = raw.decode()
    attempt = next(f for f in located if f.keyword == "missing-learned")
    assert attempt.position is not None
    assert text.split("\n")[attempt.position.line - 1].strip() == "{", "the attempt that lacks it"


def test_a_finding_about_python_data_has_no_place() -> None:
    finding = Finding("json", "$", "invalid json: member name of type int in $ is not a string")
    assert cmp.locate(b'{"a": 1}', [finding]) == [finding]
    assert cmp.Report(version=None, errors=(finding,), redactions=(), packet=None).located().errors == (finding,)


def test_to_json_carries_the_position_once_located() -> None:
    report = check(b'{"ltm_version": "0.2",\n  "goal": 7}')
    assert all("line" not in entry for entry in report.to_json()["errors"])
    entries = report.located().to_json()["errors"]
    goal = next(entry for entry in entries if entry["path"] == "$.goal")
    assert (goal["line"], goal["column"]) == (2, 11)
    assert all(entry["line"] == 1 and entry["column"] == 1 for entry in entries if entry["keyword"] == "required")


# --- places that render alike, found by a red-team review ---------------------------------------

_URL = "https://user:hunter2@host.example/"


def _text_at(text: str, position: Position | None) -> str:
    assert position is not None
    return text[_offset(text, position) :]


def test_names_that_render_alike_each_get_their_own_place() -> None:
    """Two masked member names render as one path; each finding and hit points at its own name."""
    names = [f"https://u{i}:pw{i}@host.example/" for i in range(40)]
    text = '{"ltm_version": "0.2",\n' + ",\n".join(f"  {json.dumps(n)}: {i}" for i, n in enumerate(names)) + "\n}"
    report = check(text, lenient=True, rule_set="extended").located()
    unexpected = [f for f in report.errors if f.keyword == "additionalProperties"]
    hits = [h for h in report.redactions if h.field == "(member name)"]
    assert len(unexpected) == len(hits) == len(names)
    # Each finding at a name, each name once (the report orders them by path, not as written).
    named = sorted(json.JSONDecoder().raw_decode(_text_at(text, f.position))[0] for f in unexpected)
    assert named == sorted(names)
    hit_at = sorted(_text_at(text, h.position).split('"', 1)[0] for h in hits)
    assert hit_at == sorted(names)


def test_a_hit_deep_under_a_cut_path_is_placed_in_its_string() -> None:
    value: Any = _URL
    for _ in range(100):
        value = {"a": value}
    text = json.dumps({"ltm_version": "0.2", "x": value})
    report = check(text, lenient=True, rule_set="extended").located()
    (hit,) = [h for h in report.redactions if h.category == "url-credentials"]
    assert "…" in hit.field, "the path is cut"
    assert _text_at(text, hit.position).startswith(_URL)


def test_a_duplicate_inside_a_duplicated_member_points_at_its_own_second_writing() -> None:
    text = '{"x": {"a": 1},\n "x": {"a": 1,\n  "a": 2}}'
    report = check(text).located()
    inner = next(f for f in report.errors if f.path == "$.x.a")
    outer = next(f for f in report.errors if f.path == "$.x")
    assert inner.position == Position(3, 3) and outer.position == Position(2, 2)


def test_locate_refuses_what_it_cannot_place() -> None:
    finding = Finding("schema", "$.goal", "x", "type")
    with pytest.raises(TypeError, match="bytes or str"):
        cmp.locate(123, [finding])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="findings and redaction hits"):
        cmp.locate(b"{}", ["$.goal"])  # type: ignore[list-item]


def test_strings_that_render_alike_each_get_their_own_hit() -> None:
    """Two long member names cut to one path, each holding a key: each hit is placed in its own string."""
    aws = "AKIAIOSFODNN7EXAMPLE"
    text = (
        '{"ltm_version": "0.2",\n "decisions": [{"what": "w", "why": "y",\n  '
        + json.dumps("a" * 40 + "1")
        + ': "first '
        + aws
        + '",\n  '
        + json.dumps("a" * 40 + "2")
        + ': "second one '
        + aws
        + '"}]}'
    )
    report = check(text, lenient=True).located()
    hits = [h for h in report.redactions if h.category == "aws-key"]
    assert len(hits) == 2 and hits[0].field == hits[1].field, "the two fields render alike"
    assert sorted((h.position.line if h.position else 0) for h in hits) == [3, 4]
    assert all(_text_at(text, h.position).startswith(aws) for h in hits)


def test_a_refused_number_with_junk_after_it_is_placed() -> None:
    for raw, column in ((b"[1e999x]", 2), (b'{"a":1e999x}', 6), (b"[NaNx]", 2), (b"[1, -Infinityy]", 5)):
        (finding,) = check(raw).located().errors
        assert finding.position == Position(1, column), raw


def test_locate_on_text_that_does_not_parse_gives_back_what_it_cannot_place() -> None:
    finding = Finding("schema", "$.goal", "m", "type")
    hit = Redaction("goal", "aws-key", "AKIA", 0, 20)
    for raw in (b"}", b"]", b'{"a":1}}}', b'{"goal": "unfinished', b""):
        placed = cmp.locate(raw, [finding, hit])
        assert [type(item) for item in placed] == [Finding, Redaction]


def test_an_odd_top_level_name_keeps_its_bracket_in_a_field() -> None:
    text = json.dumps({"ltm_version": "0.2", "odd key": {"k": "https://user:hunter2@host.example/"}})
    report = check(text, lenient=True, rule_set="extended").located()
    (hit,) = [h for h in report.redactions if h.category == "url-credentials"]
    assert hit.field == "['odd key'].k"
    assert _text_at(text, hit.position).startswith("https://user:")


def _one_at_a_time(report: Report) -> list[Position | None]:
    """Each finding placed alone, from a fresh reading of the text: the long way."""
    assert report.source is not None
    return [cmp.locate(report.source, [finding])[0].position for finding in report.errors]


def test_a_text_with_many_json_findings_is_parsed_once_and_places_each_the_same() -> None:
    """Lone surrogates give one ``json`` finding each; where the text stops being JSON is
    worked out once per text (cmp._positions._Text.refused_at), each finding still placed as alone."""
    escapes = "".join(f'"k{i}": "\\ud800{i}", ' for i in range(150))
    for data in (
        ("{" + escapes + '"goal": "g"}').encode(),
        ("[" * 600 + '{"a": "\\udc00", "b": "\\ud800"}' + "]" * 600).encode(),
        b'{"a": "\\ud800", "b": 1e999}',
    ):
        report = check(data)
        assert report.errors and all(f.code in ("json", "truncated") for f in report.errors)
        assert [f.position for f in report.located().errors] == _one_at_a_time(report)

