"""Hostile input: arbitrary and mutated bytes never raise, never leak a secret, never mislead."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp._intake import MAX_DEPTH
from cmp._timestamps import canonical
from cmp.cli import main
from tests.support.examples import examples
from tests.support.packets import encode, full
from tests.support.strategies import mutated, packets

SETTINGS = settings(max_examples=examples(300))
SECRET = "ghp_" + "Z9y8X7w6" * 6  # 52 characters: a whole one must never be echoed
MESSAGE_LIMIT = 400


def in_canonical_form(packet: cmp.Packet) -> cmp.Packet:
    """What loads(dumps(packet)) gives: the same packet, created_at in its canonical form."""
    return dataclasses.replace(packet, created_at=canonical(packet.created_at))


def assert_well_formed(report: cmp.Report) -> None:
    for finding in report.errors:
        assert finding.code in cmp.findings.CODES
        assert (finding.keyword is not None) == (finding.code == "schema")
        line = str(finding)
        assert "\n" not in line and "\r" not in line
        assert len(finding.message) <= MESSAGE_LIMIT and len(finding.path) <= MESSAGE_LIMIT
    for hit in report.redactions:
        assert "\n" not in hit.field and len(hit.echo) <= 33
    assert (report.packet is not None) == report.conforming


@SETTINGS
@given(st.binary(max_size=2048))
def test_arbitrary_bytes(data: bytes) -> None:
    assert_well_formed(cmp.check(data))
    assert_well_formed(cmp.check(data, lenient=True))


@SETTINGS
@given(st.text(max_size=512))
def test_arbitrary_text(text: str) -> None:
    assert_well_formed(cmp.check(text))


@pytest.mark.slow
@SETTINGS
@given(mutated())
def test_mutated_packets(data: bytes) -> None:
    report = cmp.check(data)
    assert_well_formed(report)
    if report.packet is not None:
        data = cmp.dumps(report.packet)
        again = cmp.loads(data)
        assert again == in_canonical_form(report.packet)
        assert cmp.dumps(again) == data
    else:
        with pytest.raises(cmp.PacketError):
            cmp.loads(data)


@pytest.mark.slow
@SETTINGS
@given(packets())
def test_generated_packets_round_trip(packet: cmp.Packet) -> None:
    data = cmp.dumps(packet)
    report = cmp.check(data)
    assert report.conforming and report.packet == in_canonical_form(packet)
    assert cmp.dumps(report.packet) == data
    assert [str(r) for r in cmp.redact(packet)] == [str(r) for r in report.redactions]


SECRET_SITES = [
    "ltm_version",
    "id",
    "parent_id",
    "created_at",
    "goal",
    "tags[0]",
    "methods[0].name",
    "attempts[0].outcome",
    "attempts[0].confidence",
    "provenance.source_hash",
    "provenance.confidence",
    "project.name",
    "decisions[0].why",
]


@settings(max_examples=examples(100))
@given(st.sampled_from(SECRET_SITES), st.sampled_from(["", "x ", "Bad "]), st.booleans())
def test_no_message_echoes_a_whole_secret(site: str, prefix: str, as_key: bool) -> None:
    from tests.support.packets import put

    obj: dict[str, Any] = full()
    obj = put(obj, SECRET, 1) if as_key else put(obj, site, prefix + SECRET)
    for lenient in (False, True):
        report = cmp.check(encode(obj), lenient=lenient)
        rendered = [str(f) for f in report.errors] + [str(r) for r in report.redactions]
        rendered += [repr(report), json.dumps(report.to_json())]
        for text in rendered:
            assert SECRET not in text and SECRET[:33] not in text
    with pytest.raises(cmp.PacketError) as caught:
        cmp.loads(encode(put(obj, "tags", ["Bad"])))
    assert SECRET[:33] not in str(caught.value)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.binary(max_size=600))
def test_cli_main_on_arbitrary_files(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("cli") / "x.json"
    path.write_bytes(data)
    for args in (["check", str(path)], ["check", "--format", "json", "--lenient", str(path)], ["fmt", str(path)]):
        assert main(args) in (0, 1)


def test_deep_duplicate_path_is_bounded() -> None:
    text = '{"x": ' + "[" * 5000 + '{"a":1,"a":2}' + "]" * 5000 + "}"
    (finding,) = cmp.check(text).errors
    assert finding.code == "duplicate-key" and len(finding.path) <= MESSAGE_LIMIT
    assert finding.path.startswith("$.x[0]") and finding.path.endswith("[0].a")


def test_many_findings_stay_bounded(tmp_path: Path) -> None:
    obj = full()
    for i in range(2000):
        obj[f"x{i:04}"] = i
    report = cmp.check(encode(obj))
    assert len(report.errors) == 101
    assert [f.path for f in report.errors[:100]] == [f"$.x{i:04}" for i in range(100)]
    assert all(f.keyword == "additionalProperties" for f in report.errors[:100])
    assert report.errors[100].code == "truncated" and report.errors[100].message.startswith("1,900 more findings")


def calls_made(function: Any, *args: Any) -> int:
    """How many Python and C function calls ``function(*args)`` makes: a measure of work
    that, unlike a clock, does not vary from run to run."""
    import sys

    made = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal made
        if event in ("call", "c_call"):
            made += 1

    sys.setprofile(count)
    try:
        function(*args)
    finally:
        sys.setprofile(None)
    return made


@pytest.mark.parametrize("kind", ["surrogates", "duplicates"])
def test_finding_paths_cost_the_same_at_any_depth(kind: str) -> None:
    """Paths grow one step per level, once: the work stays proportional to the document,
    however many findings sit at the bottom of a deep one (it was findings x depth)."""

    def document(depth: int, count: int) -> str:
        inner = ",".join(['"\\ud800"'] * count)  # JSON text: lone surrogate escapes
        if kind == "duplicates":
            inner = "{" + ",".join(f'"a{i}":1,"a{i}":2' for i in range(count)) + "}"
        return "[" * depth + inner + "]" * depth

    report = cmp.check(document(3000, 400))
    assert len(report.errors) == 101 and report.errors[-1].code == "truncated"
    assert all(len(f.message) < MESSAGE_LIMIT for f in report.errors)
    small = calls_made(cmp.check, document(1500, 200))
    large = calls_made(cmp.check, document(3000, 400))
    assert large < 2.5 * small  # twice the document, about twice the work (was four times)


@settings(max_examples=examples(300))
@given(st.lists(st.one_of(st.integers(0, 10**6), st.text(max_size=40)), max_size=60))
def test_bounded_paths_grown_step_by_step_equal_the_whole_path_bounded(keys: list[str | int]) -> None:
    from cmp._messages import BoundedPath, bounded_path, path_join

    grown, whole = BoundedPath(), "$"
    for key in keys:
        grown, whole = grown.child(key), path_join(whole, key)
        assert grown.text == bounded_path(whole)
        assert grown.length == len(whole)


@settings(max_examples=examples(300))
@given(
    st.lists(st.one_of(st.integers(0, 10**6), st.text(max_size=40)), max_size=40),
    st.integers(0, 200),
    st.integers(0, 10**4),
    st.lists(st.one_of(st.integers(0, 10**6), st.text(max_size=40)), max_size=8),
)
def test_paths_grown_in_one_go_equal_paths_grown_step_by_step(
    keys: list[str | int], times: int, index: int, last: list[str | int]
) -> None:
    """repeated (a chain of one-item arrays), child_text and then_texts (the last step of
    many siblings at once) are child taken step by step."""
    from cmp._messages import BoundedPath, member_step

    path = BoundedPath()
    for key in keys:
        path = path.child(key)
    chained = path.repeated(index, times)
    stepped = path
    for _ in range(times):
        stepped = stepped.child(index)
    assert (chained.text, chained.length) == (stepped.text, stepped.length)
    assert [chained.child_text(key) for key in last] == [chained.child(key).text for key in last]
    steps = [f"[{key}]" if isinstance(key, int) else member_step(key) for key in last]
    assert chained.then_texts(steps) == [chained.child(key).text for key in last]


SECRET_NAMES = [AWS := "AKIAIOSFODNN7EXAMPLE", "ghp_" + "a1B2c3D4e5" * 4, "x/home/dev/y", "C:\\Users\\x"]


@settings(max_examples=examples(300))
@given(
    st.lists(st.one_of(st.text(max_size=40), st.sampled_from([*SECRET_NAMES, "a", "é", "it's", "a" * 40])), max_size=8),
    st.lists(st.sampled_from(["", " ", "goal", AWS, "ghp_" + "Z" * 36, "eyJa.b.c"]), max_size=3),
    st.booleans(),
)
def test_member_steps_for_a_text_are_member_steps(names: list[str], values: list[str], as_bytes: bool) -> None:
    """Where one pass over the text rules its names clean, their steps are written without
    asking the screens name by name: the same steps as member_step's, secrets or not."""
    from cmp._messages import member_step, member_steps

    text = json.dumps({name: values for name in names}, ensure_ascii=False)
    steps = member_steps(text.encode("utf-8", "surrogatepass") if as_bytes else text)
    assert [steps(name) for name in names] == [member_step(name) for name in names]


def test_member_steps_skip_the_screens_only_for_a_clean_text() -> None:
    from cmp._messages import _shown_step, member_step, member_steps

    clean = json.dumps({f"name{i}": i for i in range(100)}).encode()
    assert member_steps(clean) is _shown_step
    assert member_steps(clean.replace(b"name7", AWS.encode())) is member_step
    assert member_steps(clean.replace(b"name7", b"na\\u006de7")) is member_step  # an escape may hide one


def test_locating_a_hundred_json_findings_reads_the_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each json finding's place was found by reading the whole text again: 100 lone
    surrogates at the bottom of 9,000 levels took seconds to locate."""
    from cmp import _intake

    text = "[" * 9_000 + ",".join(['"\\ud800"'] * 150) + "]" * 9_000
    report = cmp.check(text)
    assert len(report.errors) == 101
    readings = 0
    refused_at = _intake.refused_at

    def counted(*args: Any) -> Any:
        nonlocal readings
        readings += 1
        return refused_at(*args)

    monkeypatch.setattr(_intake, "refused_at", counted)
    located = report.located()
    assert readings == 1
    # The first path, cut short, renders as an array's high up (the first written is
    # taken); the next ones are the strings' own.
    assert [str(f.position) for f in located.errors[:3]] == ["1:68", "1:9010", "1:9019"]


def python_calls(function: Any, *args: Any) -> int:
    """How many Python functions ``function(*args)`` calls (C functions left out)."""
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
    "level",
    ["[", '{"a":', "[ ", '{ "a" : '],
    ids=["arrays", "objects", "spaced-arrays", "spaced-objects"],
)
@pytest.mark.parametrize("bottom", ['"\\ud800"', '{"a":1,"a":2}', "0"], ids=["surrogate", "duplicate", "number"])
def test_deep_nesting_costs_no_python_call_per_level(level: str, bottom: str) -> None:
    """Runs of brackets are opened and closed at once, the C scanner reads what lies at
    the bottom, and a finding's path takes a chain of arrays in one step: nesting as
    deep as 32 KB allows makes about the calls a quarter of it does (it made several per
    level, an object's own hook aside)."""
    closer = "]" if level.startswith("[") else "}"
    deepest = min(32_000 // (len(level) + 1), MAX_DEPTH - 1)
    hooks = 0 if closer == "]" else 1  # the object hook: a Python call per object, as in json.loads

    def document(depth: int) -> str:
        return level * depth + bottom + closer * depth

    assert len(document(deepest)) <= cmp.MAX_PACKET_BYTES
    for depth in (deepest, deepest // 4):  # what a process does once (tables loaded, caches filled)
        cmp.check(document(depth))
    deep, shallow = python_calls(cmp.check, document(deepest)), python_calls(cmp.check, document(deepest // 4))
    assert deep - shallow < 100 + hooks * deepest
