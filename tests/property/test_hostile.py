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
from cmp._timestamps import canonical
from cmp.cli import main
from tests.support.packets import encode, full
from tests.support.strategies import mutated, packets

SETTINGS = settings(max_examples=300)
SECRET = "ghp_" + "Z9y8X7w6" * 6  # 52 characters: a whole one must never be echoed
MESSAGE_LIMIT = 400


def in_canonical_form(packet: cmp.Packet) -> cmp.Packet:
    """What loads(dumps(packet)) gives: the same packet, created_at in its canonical form."""
    return dataclasses.replace(packet, created_at=canonical(packet.created_at))


def assert_well_formed(report: cmp.Report) -> None:
    for finding in report.errors:
        assert finding.code in cmp.FINDING_CODES
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


@settings(max_examples=100)
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
@settings(max_examples=60)
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


@settings(max_examples=300)
@given(st.lists(st.one_of(st.integers(0, 10**6), st.text(max_size=40)), max_size=60))
def test_bounded_paths_grown_step_by_step_equal_the_whole_path_bounded(keys: list[str | int]) -> None:
    from cmp._messages import BoundedPath, bounded_path, path_join

    grown, whole = BoundedPath(), "$"
    for key in keys:
        grown, whole = grown.child(key), path_join(whole, key)
        assert grown.text == bounded_path(whole)
        assert grown.length == len(whole)
