"""What each rule set reads in each mode (issue #26, A4 and A5; docs/extended-rules.md).

- A strict check with the default rules reads the scanned fields: the format's contract.
- Lenient mode keeps a refused packet as it came, so it also reads every other string and
  member name with the credential patterns (abs-path stays on the scanned fields).
- The extended rules read the default fields with every pattern of both tables, and the
  extra fields (project, method names, tags, provenance, id, parent_id) with the
  credential patterns of both; scrub replaces what they find.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp._pipeline import check_long
from tests.support.examples import examples
from tests.support.packets import (
    AWS,
    SLACK_TAG,
    beyond_the_default_fields,
    encode,
    full,
    minimal,
    put,
)

RULES = ["default", "extended"]


def _hits(report: cmp.Report) -> list[tuple[str, str]]:
    return [(r.field, r.category) for r in report.redactions]


LENIENT_CASES = [
    pytest.param(put(full(), "tags", [AWS]), ("tags[0]", "aws-key"), id="a key as a tag"),
    pytest.param({**full(), "notes": f"key {AWS}"}, ("notes", "aws-key"), id="an unknown member"),
    pytest.param(
        put(full(), "project", {"name": "n", "ref": "r", "extra": {"deep": [AWS]}}),
        ("project.extra.deep[0]", "aws-key"),
        id="an unknown nested member",
    ),
    pytest.param(
        put(put(full(), "tags", ["Bad Tag"]), "project.ref", AWS), ("project.ref", "aws-key"), id="project.ref"
    ),
    pytest.param(put(put(full(), "tags", ["Bad Tag"]), "id", AWS), ("id", "aws-key"), id="the id"),
    pytest.param({**full(), AWS: 1}, ("(member name)", "aws-key"), id="a member name"),
]


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize(("packet", "hit"), LENIENT_CASES)
def test_lenient_mode_blocks_a_credential_anywhere_in_a_packet_it_would_keep(
    packet: dict[str, Any], hit: tuple[str, str], rules: str
) -> None:
    data = encode(packet)
    report = cmp.check(data, lenient=True, rule_set=rules)  # type: ignore[arg-type]
    assert not report.conforming and report.schema_only
    assert hit in _hits(report)
    assert report.blocked and not report.accepted
    # Said plainly, and masked: the finding names the field and the key's public prefix.
    assert AWS[4:] not in repr(report) + str(report.to_json())
    assert cmp.check(data, lenient=True, allow_unredacted=True, rule_set=rules).accepted  # type: ignore[arg-type]


def test_lenient_mode_leaves_paths_outside_the_scanned_fields_alone() -> None:
    report = cmp.check(encode({**full(), "notes": "see /home/me/notes.txt"}), lenient=True)
    assert report.redactions == () and report.accepted


@pytest.mark.parametrize("member", ["id", "project.ref", "provenance.author_model"])
def test_a_strict_default_check_still_reads_only_the_scanned_fields(member: str) -> None:
    """A conforming packet's acceptance is the format's contract (specification 8)."""
    report = cmp.check(encode(put(full(), member, AWS)))
    assert report.ok and report.redactions == ()
    assert cmp.check(encode(put(full(), member, AWS)), lenient=True).ok


BEYOND = [
    ("id", "aws-key"),
    ("project.ref", "stripe-key"),
    ("tags[1]", "slack-token"),
    ("provenance.author_model", "google-api-key"),
]


def test_the_extended_rules_read_the_default_credentials_in_every_extra_field() -> None:
    data = encode(beyond_the_default_fields())
    assert cmp.check(data).ok, "the format's own rules do not read these fields"
    report = cmp.check(data, rule_set="extended")
    assert sorted(_hits(report)) == sorted(BEYOND)
    assert all(r.profile == "extended" for r in report.redactions)
    assert not report.ok and report.conforming
    parent = cmp.check(encode({**put(full(), "tags", []), "parent_id": f"p-{AWS}"}), rule_set="extended")
    assert _hits(parent) == [("parent_id", "aws-key")]


def test_the_extended_rules_leave_paths_in_the_extra_fields_alone() -> None:
    report = cmp.check(encode(put(full(), "project.ref", "/home/me/repo")), rule_set="extended")
    assert report.ok


def test_the_quick_path_and_the_long_way_agreebeyond_the_default_fields() -> None:
    data = encode(beyond_the_default_fields())
    quick = cmp.check(data, rule_set="extended")
    long = check_long(data, rule_set="extended")
    assert quick.redactions == long.redactions and quick.ok == long.ok


def test_scrub_with_the_extended_rules_replaces_them() -> None:
    packet = cmp.loads(encode(put(beyond_the_default_fields(), "tags", ["gpu"])))
    clean, replaced = cmp.scrub(packet, rule_set="extended")
    assert sorted((r.field, r.category) for r in replaced) == sorted(hit for hit in BEYOND if hit[0] != "tags[1]")
    assert clean.id == "[redacted:aws-key]"
    assert clean.project is not None and clean.project.ref == "[redacted:stripe-key]"
    assert clean.provenance is not None and clean.provenance.author_model == "[redacted:google-api-key]"
    assert cmp.check(cmp.dumps(clean), rule_set="extended").redactions == ()
    # The default rules replace there what the writer's rule refuses: their own credentials.
    default_clean, default_replaced = cmp.scrub(packet)
    refused = cmp.check(encode(put(beyond_the_default_fields(), "tags", ["gpu"])), writer=True).redactions
    assert [(r.field, r.category) for r in default_replaced] == [(r.field, r.category) for r in refused]
    assert cmp.check(cmp.dumps(default_clean), writer=True).ok


def test_a_minimal_packet_is_read_the_same_either_way() -> None:
    data = encode(minimal())
    assert cmp.check(data, rule_set="extended").ok and cmp.check(data, lenient=True).ok


@pytest.mark.parametrize("rules", RULES)
def test_scrub_gives_a_tag_that_holds_a_credential_a_placeholder_that_is_a_tag(rules: str) -> None:
    """A tag allows no brackets: the whole tag gives way to ``redacted-<category>``, which conforms."""
    packet = cmp.loads(encode(put(full(), "tags", ["gpu", SLACK_TAG, f"x-{SLACK_TAG}"])))
    clean, replaced = cmp.scrub(packet, rule_set=rules)  # type: ignore[arg-type]
    assert clean.tags == ("gpu", "redacted-slack-token", "redacted-slack-token")
    assert [(r.field, r.category) for r in replaced] == [("tags[1]", "slack-token"), ("tags[2]", "slack-token")]
    assert cmp.check(cmp.dumps(clean), rule_set=rules, writer=True).ok  # type: ignore[arg-type]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(["", "x", AWS, f"k {AWS}", "/home/me/x", "\ud800"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", AWS, "id"]), inner, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.property
@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(st.sampled_from(["id", "tags", "notes", "goal", "project", AWS]), _JSON, max_size=5))
def test_lenient_reading_of_the_other_members_takes_its_shortcut_exactly(obj: dict[str, Any]) -> None:
    """The screen over the bare texts (cmp._redaction._scan.other_values) rules them clean
    only where the scan of every named text finds no credential: the long way."""
    from cmp._redaction import _scan

    assert list(_scan.other_values(obj)) == [text for _, text in _scan.other_texts(obj)]
    long_way = [*_scan.scan(list(_scan.lenient_texts(obj))), *_scan.credentials(list(_scan.other_texts(obj)))]
    assert _scan.redact_obj(obj) == long_way
