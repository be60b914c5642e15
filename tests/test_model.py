"""The typed model: construction, Packet.new, and the dict views."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from ulid import ULID

import cmp
from cmp import model
from tests.packets import encode, full


def test_packet_new_fills_id_time_and_version() -> None:
    before = dt.datetime.now(dt.timezone.utc)
    packet = cmp.Packet.new(goal="Ship it.", next_step="Write the test.", tags=["a", "b"])
    after = dt.datetime.now(dt.timezone.utc)
    assert packet.ltm_version == "0.2"
    assert str(ULID.from_str(packet.id)) == packet.id and len(packet.id) == 26
    assert packet.created_at.endswith("Z")
    assert before - dt.timedelta(microseconds=1) <= packet.created_at_datetime <= after
    assert packet.tags == ("a", "b")
    assert cmp.loads(cmp.dumps(packet)) == packet


def test_two_new_packets_have_distinct_ids() -> None:
    first = cmp.Packet.new(goal="g", next_step="n")
    second = cmp.Packet.new(goal="g", next_step="n")
    assert first.id != second.id


def test_models_are_frozen_and_slotted() -> None:
    packet = cmp.Packet.new(goal="g", next_step="n")
    with pytest.raises(dataclasses.FrozenInstanceError):
        packet.goal = "x"  # type: ignore[misc]
    assert not hasattr(packet, "__dict__")


@pytest.mark.parametrize("version", ["0.1", "0.2"])
def test_loads_builds_every_member(version: str) -> None:
    obj = full(version)
    packet = cmp.loads(encode(obj))
    assert packet.project == cmp.Project(name="replay", ref="github.com/example/replay")
    assert packet.decisions[0].locked is True
    assert packet.attempts[0].outcome == "failed"
    assert packet.provenance is not None and packet.provenance.confidence == "high"
    assert model.to_obj(packet) == obj


def test_created_at_keeps_its_exact_text() -> None:
    obj = full("0.2")
    obj["created_at"] = "2026-04-21T12:00:00.500000000+00:00"
    assert cmp.loads(encode(obj)).created_at == "2026-04-21T12:00:00.500000000+00:00"


def test_to_obj_leaves_out_empty_members() -> None:
    packet = cmp.Packet(
        ltm_version="0.2",
        id="0123456789",
        created_at="2026-01-01T00:00:00Z",
        goal="g",
        next_step="n",
        project=cmp.Project(),
        decisions=(cmp.Decision(what="w", why="y", consequences="", locked=False),),
        provenance=cmp.Provenance(),
    )
    assert model.to_obj(packet) == {
        "ltm_version": "0.2",
        "id": "0123456789",
        "created_at": "2026-01-01T00:00:00Z",
        "project": {},
        "goal": "g",
        "decisions": [{"what": "w", "why": "y"}],
        "next_step": "n",
        "provenance": {},
    }
