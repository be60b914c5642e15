"""The writer's rule: a credential in any string of a packet, not only in the fields the
format's pre-flight reads (issue #47, A1; docs/specification.md, "What the writer adds").

A reader (``cmp.check``, ``check``, ``lint``) keeps the format's verdict and warns (code
``credential``); a writer (``writer=True``: new, save, gate, fmt, the hooks, MCP) refuses it as
a redaction finding unless ``allow_unredacted``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cmp
from cmp._pipeline import check_long
from cmp.store import Store, UnredactedPacket
from tests.support.packets import AWS, SLACK_TAG, encode, full, put

GHP = "ghp_" + "Zq3xW8vB2nM6kL1pR9tY4uI7oA5sD0fG3hJ2"
REF = f"https://x-access-token:{GHP}@github.com/example/repo"

# (where, the value put there, the finding's field, its category)
PLACES = [
    ("id", AWS, "id", "aws-key"),
    ("parent_id", f"p-{AWS}", "parent_id", "aws-key"),
    ("project.name", f"n {AWS}", "project.name", "aws-key"),
    ("project.ref", REF, "project.ref", "gh-token"),
    ("methods[0].name", f"m-{SLACK_TAG}", "methods[0].name", "slack-token"),
    ("tags", ["gpu", SLACK_TAG], "tags[1]", "slack-token"),
    ("provenance.author_model", GHP, "provenance.author_model", "gh-token"),
    ("provenance.author_human", AWS, "provenance.author_human", "aws-key"),
]


def _packet(where: str, value: Any) -> bytes:
    return encode(put(full(), where, value))


def _leaks(text: str) -> bool:
    """Whether more of a credential than its public prefix is in ``text``."""
    return any(secret in text for secret in (AWS[4:], GHP[4:], SLACK_TAG[5:]))


@pytest.mark.parametrize(("where", "value", "field", "category"), PLACES, ids=[p[0] for p in PLACES])
def test_a_reader_keeps_the_verdict_and_warns(where: str, value: Any, field: str, category: str) -> None:
    report = cmp.check(_packet(where, value))
    assert report.ok and report.conforming and report.accepted and report.redactions == ()
    [warning] = report.warnings
    assert (warning.code, warning.path, warning.keyword) == ("credential", f"$.{field}", category)
    assert warning.position is not None, "located, as a finding shown with its line"
    shown = repr(report) + str(report.warnings) + json.dumps(report.to_json()) + warning.message
    assert not _leaks(shown)
    assert report.to_json()["warnings"] == [warning.to_json()]


@pytest.mark.parametrize(("where", "value", "field", "category"), PLACES, ids=[p[0] for p in PLACES])
def test_a_writer_refuses_unless_allowed(where: str, value: Any, field: str, category: str) -> None:
    data = _packet(where, value)
    report = cmp.check(data, writer=True)
    assert report.conforming and report.blocked and not report.ok and not report.accepted
    assert [(r.field, r.category) for r in report.redactions] == [(field, category)]
    assert report.warnings == (), "a writer reports it once, as a redaction finding"
    assert not _leaks(repr(report) + json.dumps(report.to_json()))
    assert cmp.check(data, writer=True, allow_unredacted=True).ok
    assert check_long(data, writer=True).redactions == report.redactions
    packet = cmp.loads(data)
    assert [(r.field, r.category) for r in cmp.redact(packet, writer=True)] == [(field, category)]
    assert cmp.redact(packet) == []


def test_the_extended_rules_read_those_fields_already() -> None:
    data = _packet("project.ref", REF)
    extended = cmp.check(data, rule_set="extended")
    found = [(r.field, r.category, r.profile) for r in extended.redactions]
    assert found == [("project.ref", "gh-token", "extended"), ("project.ref", "url-credentials", "extended")]
    assert extended.warnings == ()
    assert cmp.check(data, rule_set="extended", writer=True).redactions == extended.redactions


def test_a_path_outside_the_scanned_fields_is_neither_warned_of_nor_refused() -> None:
    data = _packet("project.ref", "/home/me/repo")
    assert cmp.check(data).warnings == () and cmp.check(data, writer=True).ok


def test_a_packet_with_nothing_outside_the_scanned_fields_has_no_warning() -> None:
    checked = 0
    for path in sorted(Path(__file__).parents[2].joinpath("examples").glob("*.json")):
        report = cmp.check(path.read_bytes())
        if report.packet is not None:
            assert report.warnings == (), path.name
            checked += 1
    assert checked >= 3


def test_warnings_follow_scanned_field_findings_and_leave_them_alone() -> None:
    data = encode(put(put(full(), "goal", f"Rotate {AWS} today."), "project.ref", REF))
    report = cmp.check(data)
    assert [(r.field, r.category) for r in report.redactions] == [("goal", "aws-key")]
    assert [w.path for w in report.warnings] == ["$.project.ref"]
    writer = cmp.check(data, writer=True)
    assert [(r.field, r.category) for r in writer.redactions] == [("goal", "aws-key"), ("project.ref", "gh-token")]


# Any string the schema allows in the unscanned members, a key put somewhere in it or not.
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


@given(
    text=_TEXT,
    key=st.sampled_from([AWS, GHP, "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", ""]),
    where=st.sampled_from(["project.ref", "project.name", "provenance.author_human", "provenance.author_model"]),
    at=st.integers(0, 40),
)
def test_the_quick_path_and_the_long_way_agree_on_the_writer_rule(text: str, key: str, where: str, at: int) -> None:
    value = (text[:at] + key + text[at:])[:128]
    data = encode(put(full(), where, value))
    quick, long = cmp.check(data, writer=True), check_long(data, writer=True)
    assert quick.redactions == long.redactions and quick.ok == long.ok
    reader = cmp.check(data)
    assert reader.ok == cmp.check(data, rule_set="default").ok
    # What a writer adds is exactly what a reader warns of, in the same order.
    added = quick.redactions[len(reader.redactions) :]
    assert [(f"$.{r.field}", r.category) for r in added] == [(w.path, w.keyword) for w in reader.warnings]


def test_redact_names_what_it_takes() -> None:
    with pytest.raises(TypeError, match=r"takes a cmp.Packet, not dict"):
        cmp.redact({})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"takes a cmp.Packet, not str"):
        cmp.redact("x")  # type: ignore[arg-type]


@pytest.mark.parametrize("as_bytes", [False, True])
def test_the_store_refuses_a_credential_anywhere_unless_allowed(tmp_path: Path, as_bytes: bool) -> None:
    data = _packet("project.ref", REF)
    store = Store(tmp_path / "store")
    given_in: Any = data if as_bytes else cmp.loads(data)
    with pytest.raises(UnredactedPacket) as refused:
        store.save(given_in)
    assert "project.ref: gh-token found" in str(refused.value) and not _leaks(str(refused.value))
    assert store.list() == []
    saved = store.save(given_in, allow_unredacted=True)
    assert [p.id for p in store.list()] == [saved.id]


@pytest.mark.parametrize("rules", ["default", "extended"])
def test_scrub_makes_a_packet_a_writer_accepts(rules: str) -> None:
    packet = encode(put(put(put(full(), "project.ref", REF), "tags", ["gpu", SLACK_TAG]), "id", AWS))
    clean, replaced = cmp.scrub(cmp.loads(packet), rule_set=rules)  # type: ignore[arg-type]
    assert {r.field for r in replaced} == {"id", "project.ref", "tags[1]"}
    assert clean.tags == ("gpu", "redacted-slack-token")
    assert (
        clean.project is not None
        and clean.project.ref == "https://x-access-token:[redacted:gh-token]@github.com/example/repo"
    )
    assert cmp.check(cmp.dumps(clean), writer=True, rule_set=rules).ok  # type: ignore[arg-type]
