"""Packet.from_draft and to_draft: what the writer fills, what empty means, and bad arguments."""

from __future__ import annotations

import re
import types

import pytest

import cmp
from tests.support.packets import full


def test_the_writer_fills_version_id_time_and_parent() -> None:
    parent = cmp.Packet.from_dict(full())
    packet = cmp.Packet.from_draft({"goal": "g", "next_step": "n"}, parent=parent)
    assert (packet.ltm_version, packet.parent_id, len(packet.id)) == ("0.2", parent.id, 26)
    assert packet.created_at.endswith("Z")
    by_id = cmp.Packet.from_draft(
        {"goal": "g", "next_step": "n"}, parent=parent.id, id="0123456789", created_at="2026-04-21T10:30:00Z"
    )
    assert (by_id.parent_id, by_id.id, by_id.created_at) == (parent.id, "0123456789", "2026-04-21T10:30:00Z")


def test_null_and_empty_members_are_absent_but_an_object_given_stays() -> None:
    draft = {
        "goal": "g",
        "next_step": "n",
        "tags": [],
        "constraints": None,
        "project": {"name": None, "ref": ""},
        "provenance": None,
        "decisions": [{"what": "w", "why": "y", "consequences": "", "locked": False}],
    }
    packet = cmp.Packet.from_draft(draft)
    assert (packet.tags, packet.constraints, packet.provenance) == ((), (), None)
    assert packet.project == cmp.Project()
    assert packet.decisions == (cmp.Decision(what="w", why="y"),)
    assert packet.to_draft()["project"] == {"name": None, "ref": None}


def test_a_value_of_the_wrong_type_is_named_not_dropped() -> None:
    # 0 is not false and {} is not a list: each is kept for the validator to name.
    with pytest.raises(cmp.PacketError) as caught:
        cmp.Packet.from_draft(
            {"goal": "g", "next_step": "n", "decisions": [{"what": "w", "why": "y", "locked": 0}], "tags": {}}
        )
    assert [(f.path, f.keyword) for f in caught.value.findings] == [
        ("$.decisions[0].locked", "type"),
        ("$.tags", "type"),
    ]


def test_members_the_writer_fills_and_unknown_members_are_findings() -> None:
    with pytest.raises(cmp.PacketError) as caught:
        cmp.Packet.from_draft(
            {"goal": "g", "next_step": "n", "ltm_version": "0.2", "created_at": "now", "color": "red"}
        )
    assert [(f.path, f.message) for f in caught.value.findings] == [
        ("$.color", "unexpected member 'color'"),
        ("$.created_at", "unexpected member 'created_at': the writer fills it in"),
        ("$.ltm_version", "unexpected member 'ltm_version': the writer fills it in"),
    ]


def test_a_v0_1_draft_refuses_what_v0_1_has_not() -> None:
    with pytest.raises(cmp.PacketError) as caught:
        cmp.Packet.from_draft(
            {"goal": "g", "next_step": "n", "methods": [{"name": "x", "when_applicable": "w", "how": "h"}]},
            version="0.1",
        )
    assert [f.path for f in caught.value.findings] == ["$.methods"]
    assert cmp.Packet.from_draft({"goal": "g", "next_step": "n", "tags": None}, version="0.1").ltm_version == "0.1"


def test_any_mapping_is_a_draft() -> None:
    draft = types.MappingProxyType(
        {"goal": "g", "next_step": "n", "project": types.MappingProxyType({"name": "p", "ref": None})}
    )
    assert cmp.Packet.from_draft(draft).project == cmp.Project(name="p")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cmp.Packet.from_draft(["goal"]), "from_draft() takes a mapping"),  # type: ignore[arg-type]
        (lambda: cmp.Packet.from_draft({}, version=2), "version must be a string"),  # type: ignore[arg-type]
        (lambda: cmp.Packet.from_draft({}, id=12), "id must be a string"),  # type: ignore[arg-type]
        (lambda: cmp.Packet.from_draft({}, parent=3), "parent must be a cmp.Packet or its id"),  # type: ignore[arg-type]
        (lambda: cmp.Packet.to_draft({}), "to_draft() takes a cmp.Packet"),  # type: ignore[arg-type]
    ],
)
def test_bad_arguments_are_type_errors(call: object, message: str) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        call()  # type: ignore[operator]


def test_an_unknown_version_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=re.escape("no schema for version '0.3'")):
        cmp.Packet.from_draft({"goal": "g", "next_step": "n"}, version="0.3")
