"""The rule walker that explains refusals, held to jsonschema and to its own counter."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp import _explain as explain
from cmp.findings import MAX_FINDINGS, Finding
from cmp.schema import load_schema
from tests.property.test_compiler import JSON_VALUES, PATHS, edited, routed_objects
from tests.support import schema_oracle
from tests.support.examples import examples
from tests.support.packets import encode, full, minimal, put
from tests.support.strategies import packets, renderings


def assert_agrees(obj: Any, version: str) -> None:
    """Same findings as jsonschema, in the same order, and a count that matches them."""
    rules = explain._rules(version)
    walked = list(explain.walk(rules, obj))
    assert walked == schema_oracle.explain(obj, version)
    assert explain.count(rules, obj) == len(walked)
    assert explain.explain(obj, version, limit=None) == walked


def test_agrees_with_jsonschema_on_every_conformance_vector() -> None:
    objects = routed_objects()
    assert len(objects) > 700
    refused = 0
    for vector_id, obj, version in objects:
        try:
            assert_agrees(obj, version)
        except AssertionError:
            pytest.fail(f"disagrees on {vector_id}")
        refused += bool(explain.explain(obj, version))
    assert refused > 300


@pytest.mark.slow
@settings(max_examples=examples(500))
@given(st.sampled_from(["0.1", "0.2"]), st.lists(st.tuples(st.sampled_from(PATHS), JSON_VALUES), max_size=4))
def test_agrees_with_jsonschema_on_mutated_packets(version: str, edits: list[tuple[str, Any]]) -> None:
    assert_agrees(edited(full(version), edits), version)


@pytest.mark.slow
@settings(max_examples=examples(100))
@given(packets())
def test_generated_packets_have_nothing_to_explain(packet: cmp.Packet) -> None:
    from cmp import model

    assert_agrees(model.to_obj(packet), packet.ltm_version)
    assert explain.explain(model.to_obj(packet), packet.ltm_version) == []


@pytest.mark.parametrize("length", [explain._FIRST_CHUNK - 1, explain._FIRST_CHUNK, explain._FIRST_CHUNK + 1, 70])
def test_short_arrays_walked_item_by_item_and_long_ones_counted_first_agree(length: int) -> None:
    """An array of up to _FIRST_CHUNK items is walked item by item, a longer one counted a
    chunk at a time first: both ways give jsonschema's findings, clean items and bad ones
    mixed, in arrays of strings and of objects."""
    obj = full("0.2")
    obj["tags"] = ["ok" if index % 3 else "Not A Tag" for index in range(length)]
    decision = obj["decisions"][0]
    obj["decisions"] = [decision if index % 4 else {**decision, "locked": "yes", "x": 1} for index in range(length)]
    assert_agrees(obj, "0.2")
    findings = explain.explain(obj, "0.2", limit=None)
    assert {finding.path for finding in findings} >= {"$.tags[0]", f"$.decisions[{(length - 1) // 4 * 4}].locked"}


@pytest.mark.parametrize("length", [0, 1, 1024, 1025])
@pytest.mark.parametrize("member", ["goal", "constraints[0]", "decisions[0].why"])
def test_a_text_checked_for_its_length_alone_is_refused_where_jsonschema_refuses_it(member: str, length: int) -> None:
    """The first look of a leaf checked for type and length alone (_Rules.lengths) at both
    edges of the lengths, and a value of another type under the same rules."""
    rules = explain._rules("0.2")
    assert rules.properties["goal"].lengths == (1, 1024) and rules.properties["tags"].items.lengths is None
    assert_agrees(put(full("0.2"), member, "x" * length), "0.2")
    assert_agrees(put(full("0.2"), member, ["x"] * length), "0.2")


def test_findings_are_in_path_order_then_keyword_order() -> None:
    obj = put(put(put(minimal(), "tags", ["Bad", None]), "goal", ""), "zz", 1)
    obj["attempts"] = [{"outcome": None, "tried": 3}]
    found = [(f.path, f.keyword) for f in explain.explain(obj, "0.2")]
    assert found == [
        ("$.attempts[0].outcome", "enum"),
        ("$.attempts[0].outcome", "type"),
        ("$.attempts[0].tried", "type"),
        ("$.goal", "minLength"),
        ("$.tags[0]", "pattern"),
        ("$.tags[1]", "type"),
        ("$.zz", "additionalProperties"),
    ]


@pytest.mark.parametrize("items", [MAX_FINDINGS // 2, MAX_FINDINGS // 2 + 1, 5000])
def test_a_report_lists_at_most_100_findings_and_counts_the_rest(items: int) -> None:
    """Each empty attempt misses two required members: 2 findings per item, and one
    maxItems finding for the array once it has more than 64 items."""
    obj = {**minimal(), "attempts": [{}] * items}
    report = cmp.check(encode(obj))
    total = 2 * items + (items > 64)
    if total <= MAX_FINDINGS:
        assert len(report.errors) == total
        assert all(f.code == "schema" for f in report.errors)
        return
    assert len(report.errors) == MAX_FINDINGS + 1
    listed, last = report.errors[:-1], report.errors[-1]
    assert listed == tuple(schema_oracle.explain(obj, "0.2")[:MAX_FINDINGS])
    more = total - MAX_FINDINGS
    assert last == Finding("truncated", "$", f"{more:,} more findings not listed (a report lists the first 100)")
    # Lenient mode: the truncated finding stands for more schema errors, so still accepted.
    assert cmp.check(encode(obj), lenient=True).accepted


def test_a_truncated_report_in_json_and_text() -> None:
    obj = {**minimal(), "tags": ["Bad"] * 16, "constraints": [1] * 32, "decisions": [{}] * 60}
    report = cmp.check(json.dumps(obj))
    assert report.errors[-1].to_json() == {
        "code": "truncated",
        "path": "$",
        "keyword": None,
        "message": "68 more findings not listed (a report lists the first 100)",
    }
    assert str(report.errors[-1]) == "$: 68 more findings not listed (a report lists the first 100)"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("start", "\\u0032026-04-21T12:00:00Z"),
        ("middle-dot", "2026-04-21T12:00:00\\u002e5Z"),
        ("end", "2026-04-21T12:00:00\\u005a"),
        ("solidus", "2026-04-21T12:00:00\\/"),
    ],
)
def test_created_at_written_with_an_escape_is_refused(name: str, value: str) -> None:
    """Specification 7.3: the reference reads created_at's raw text, so `\\u005a` is not `Z` there."""
    text = json.dumps(minimal()).replace('"2026-04-21T10:30:00Z"', f'"{value}"')
    report = cmp.check(text)
    (finding,) = report.errors
    assert (finding.code, finding.path, finding.keyword) == ("schema", "$.created_at", "format")
    if name != "solidus":  # `\/` makes a value that is not a date-time at all
        assert "is written with a JSON escape" in finding.message


def test_escapes_elsewhere_and_an_escaped_member_name_are_fine() -> None:
    text = json.dumps(minimal()).replace('"created_at"', '"created\\u005fat"').replace("Get GPU", "Get \\u0047PU")
    assert cmp.check(text).ok
    nested = json.dumps({**minimal(), "project": {"name": "p"}}).replace('"name": "p"', '"name": "\\u0070"')
    assert cmp.check(nested).ok


def test_an_escaped_created_at_is_listed_with_other_findings_in_path_order() -> None:
    obj = put(put(minimal(), "goal", ""), "constraints", [1])
    text = json.dumps(obj).replace('10:30:00Z"', '10:30:00\\u005a"')
    found = [(f.path, f.keyword) for f in cmp.check(text).errors]
    assert found == [("$.constraints[0]", "type"), ("$.created_at", "format"), ("$.goal", "minLength")]


@pytest.mark.parametrize("value", ["5", "true", "null", "[]", "{}"])
def test_a_created_at_that_is_not_a_string_is_never_taken_for_an_escaped_one(value: str) -> None:
    """After a non-string value the next token is the next member's name, not the value."""
    from cmp import _intake as intake

    raw = (
        '{"ltm_version":"0.2","id":"01J9X8K2QZ7N4M0WXYZV3R8ABC","created_at":'
        + value
        + ',"go\\u0061l":"g","next_step":"n"}'
    ).encode()
    assert intake.escaped_members(raw, intake.RAW_TEXT_MEMBERS) == frozenset()
    escaped = raw.replace(b'"go\\u0061l"', b'"created_at":"2026-04-21T12:00:00\\u005a","goal"')
    escaped = escaped.replace(b'"created_at":' + value.encode() + b",", b"")
    assert intake.escaped_members(escaped, intake.RAW_TEXT_MEMBERS) == frozenset({"created_at"})


@settings(max_examples=examples(300))
@given(
    packets(),
    st.data(),
    st.sampled_from(["as is", "value escaped", "name escaped", "both escaped", "after a list", "nested too"]),
)
def test_escaped_members_is_what_a_decoder_keeping_raw_strings_reads(
    packet: cmp.Packet, data: st.DataObject, edit: str
) -> None:
    """The token scan answers as json's pure-Python decoder does when each string it reads
    remembers whether its text held an escape."""
    from cmp import _intake as intake

    raw = data.draw(renderings(packet))
    value = json.dumps(packet.created_at).encode()
    if edit in ("value escaped", "both escaped"):
        raw = raw.replace(value, value[:-2] + b"\\u%04x" % value[-2] + b'"', 1)
    if edit in ("name escaped", "both escaped"):
        raw = raw.replace(b'"created_at"', b'"created\\u005fat"', 1)
    if edit == "after a list":
        raw = raw.replace(b"{", b'{"tags": [],', 1) if b'"tags"' not in raw else raw
    if edit == "nested too":
        raw = raw.replace(b"{", b'{"project": {"created_at": "x\\/"},', 1) if b'"project"' not in raw else raw
    names = intake.RAW_TEXT_MEMBERS
    found = intake.escaped_members(raw, names)
    assert found == _escaped_by_decoder(raw, names)
    more = names | {"id", "goal"}
    assert intake.escaped_members(raw, more) == _escaped_by_decoder(raw, more)
    if edit in ("value escaped", "both escaped") and raw.count(value[:-2]) == 1:  # the timestamp is created_at's alone
        assert found == names


class _RawString(str):
    """A decoded string that remembers whether its JSON text held an escape."""

    escaped = False


def _escaped_by_decoder(raw: bytes, names: frozenset[str]) -> frozenset[str]:
    import json.decoder
    import json.scanner

    def parse_string(text: str, end: int, strict: bool = True) -> tuple[str, int]:
        value, after = json.decoder.py_scanstring(text, end, strict)  # type: ignore[attr-defined]
        string = _RawString(value)
        string.escaped = "\\" in text[end : after - 1]
        return string, after

    decoder = json.JSONDecoder()
    decoder.parse_string = parse_string  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    obj = decoder.decode(raw.decode("utf-8"))
    return frozenset(
        str(key) for key, item in obj.items() if key in names and isinstance(item, _RawString) and item.escaped
    )


# --- the counts worked out column by column, against the long way ------------------

ARRAYS = ["success_criteria", "constraints", "decisions", "methods", "attempts", "open_questions", "tags"]
# What hostile packets fill arrays with: one value many times, or a few in turn.
ITEMS = st.one_of(
    JSON_VALUES,
    st.sampled_from(
        [
            {},
            {"what": 0, "x": 0},
            {"what": "w", "why": "y"},
            {"tried": "t", "outcome": "failed", "confidence": "low"},
            {"name": "n", "when_applicable": "w", "how": "h"},
            {"name": "Bad", "how": [], "x": None},
            "gpu",
            "Bad",
            "x" * 1025,
            [],
            [[]],
            0,
            1.5,
            True,
            None,
        ]
    ),
)


def assert_counts_agree(obj: dict[str, Any], version: str) -> None:
    """The batched counts, item by item and summed, are the long way's and the walk's."""
    rules = explain._rules(version)
    walked = list(explain.walk(rules, obj))
    assert walked == schema_oracle.explain(obj, version)
    assert explain.count(rules, obj) == explain.count_one(rules, obj) == len(walked)
    assert explain.tally(rules, [obj]) == explain.count_one(rules, obj)
    for name in ARRAYS:
        below = rules.properties.get(name)
        if below is not None and isinstance(obj.get(name), list) and below.items is not None:
            items = obj[name]
            each = [explain.count_one(below.items, item) for item in items]
            assert explain.counts(below.items, items) == each
            assert explain.tally(below.items, items) == sum(each)


@settings(max_examples=examples(300))
@given(
    st.sampled_from(["0.1", "0.2"]),
    st.sampled_from(ARRAYS),
    st.lists(ITEMS, max_size=12),
    st.integers(0, 80),
)
def test_counts_agree_with_the_long_way_on_arrays_of_anything(
    version: str, name: str, items: list[Any], repeats: int
) -> None:
    obj = full(version)
    obj[name] = items + items[:1] * repeats  # many of one kind, as floods are
    assert_counts_agree(obj, version)


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(st.sampled_from(["0.1", "0.2"]), st.lists(st.tuples(st.sampled_from(PATHS), JSON_VALUES), max_size=4))
def test_counts_agree_with_the_long_way_on_mutated_packets(version: str, edits: list[tuple[str, Any]]) -> None:
    assert_counts_agree(edited(full(version), edits), version)


def test_counts_agree_on_the_hostile_inputs() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import hostile

    for case in hostile.CASES:
        obj, _ = cmp._intake.parse_packet(hostile.build(case))
        if obj is not None and isinstance(obj.get("ltm_version"), str) and obj["ltm_version"] in ("0.1", "0.2"):
            assert_counts_agree(obj, obj["ltm_version"])


def test_python_data_of_other_types_is_counted_the_long_way() -> None:
    """Types JSON does not make (a str subclass, a tuple) are counted one by one."""

    class Name(str):
        pass

    obj = {**full(), "tags": [Name("Bad"), ("a",), "ok", 3] * 5, "decisions": [{Name("what"): 1}, {1: 2}]}
    assert_counts_agree(obj, "0.2")


def calls_made(function: Any, *args: Any) -> int:
    """How many Python functions ``function(*args)`` calls: a measure of work that, unlike
    a clock, is the same from run to run."""
    import sys

    made = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal made
        if event == "call":
            made += 1

    sys.setprofile(count)
    try:
        function(*args)
    finally:
        sys.setprofile(None)
    return made


@pytest.mark.parametrize(
    "flood",
    [{"what": 0, "x": 0}, "Bad", 0, {"tried": "t", "outcome": "won"}],
    ids=["bad-decision", "bad-tag", "number", "bad-attempt"],
)
def test_explaining_ten_thousand_items_costs_what_explaining_a_hundred_does(flood: Any) -> None:
    """The walk stops at the findings listed and the count runs in C: the Python calls
    of an explanation do not grow with the items (they grew by a few per item)."""
    name = "tags" if isinstance(flood, str) else "decisions"

    def explained(items: int) -> int:
        obj = {**minimal(), name: [flood] * items}
        return calls_made(explain.explain, obj, "0.2")

    assert explained(10_000) < explained(100) + 50


def _patterns(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return found.union(*(_patterns(value) for value in node.values()))
    return set()


SCHEMA_PATTERNS = sorted(_patterns(load_schema("0.1")) | _patterns(load_schema("0.2")))
ALIKE_PATTERNS = [*SCHEMA_PATTERNS, "^a+b*c?$", r"^\w{2,3}:\d+$", "^[A-Z_]{1}x$"]


def test_the_schemas_patterns_are_read_by_python_alike() -> None:
    """Every pattern the schemas hold has a `re` twin (each is counted in C, not with a
    call per string); a pattern with more than the two read alike has none."""
    assert SCHEMA_PATTERNS and all(explain.python_pattern(p) is not None for p in SCHEMA_PATTERNS)
    for pattern in ["^a|b$", "^[^a]$", "^.$", r"^\s$", "a$", "^a", r"^\bA$", "^(?i)a$", "^a$\n", "^[a-z]+$$"]:
        assert explain.python_pattern(pattern) is None, pattern


@settings(max_examples=examples(500))
@given(
    st.sampled_from(ALIKE_PATTERNS),
    st.one_of(
        st.text(max_size=40),
        st.text(alphabet="abcxyzAZ09_:-.\n٣\ud800", max_size=12),
        st.sampled_from(["a", "a\n", "gpu", "sha256:" + "0" * 64, "sha256:" + "0" * 64 + "\n", "0.1", "٣.٣", "ab"]),
    ),
)
def test_python_twins_match_where_re2_does(pattern: str, text: str) -> None:
    from cmp._matcher import Matcher

    twin = explain.python_pattern(pattern)
    assert twin is not None
    assert (twin.fullmatch(text) is not None) == Matcher(pattern)(text)
