"""migrate(): v0.1 up to v0.2 (additive), and down with the lost members named or dropped."""

from __future__ import annotations

from typing import Any

import pytest

import cmp
from cmp.conformance import vector_input
from cmp.schema import load_schema
from tests.support.packets import encode, full, minimal
from tests.support.vectors import committed_vectors


def _v01_packets() -> list[Any]:
    """Every conformance vector of either schema area that holds a v0.1 packet check accepts."""
    found = []
    for vector in committed_vectors(("schema-v0.1", "canonical", "redaction", "created-at", "versioning")):
        report = cmp.check(vector_input(vector))
        if report.packet is not None and report.version == "0.1":
            found.append(pytest.param(report.packet, id=vector["id"]))
    return found


V01 = _v01_packets()


def test_there_are_v01_vectors_to_migrate() -> None:
    assert len(V01) >= 20


@pytest.mark.parametrize("packet", V01)
def test_every_v01_vector_migrates_up_and_back(packet: cmp.Packet) -> None:
    up = cmp.migrate(packet, "0.2")
    assert up.ltm_version == "0.2" and up.findings() == []
    assert {**up.to_dict(), "ltm_version": "0.1"} == packet.to_dict()  # only the version changed
    down = cmp.migrate(up, "0.1")
    assert down == packet and cmp.dumps(down) == cmp.dumps(packet)


def test_v01_members_are_v02_members_under_the_same_rules() -> None:
    """Why migrating up only changes ltm_version: v0.2 is a superset, rule for rule."""
    older, newer = load_schema("0.1"), load_schema("0.2")

    def walk(old: dict[str, Any], new: dict[str, Any], where: str) -> None:
        for key, value in old.items():
            if key in ("properties", "items"):
                continue
            assert new.get(key) == value or key in ("$id", "title"), (where, key)
        for name, node in old.get("properties", {}).items():
            if where == "$" and name == "ltm_version":
                continue  # a pattern in v0.1, the constant "0.2" in v0.2
            walk(node, new["properties"][name], f"{where}.{name}")
        if "items" in old:
            walk(old["items"], new["items"], where + "[]")

    walk(older, newer, "$")


def test_a_downgrade_that_would_lose_members_names_them_all() -> None:
    packet = cmp.loads(encode(full("0.2")))
    with pytest.raises(cmp.PacketError) as caught:
        cmp.migrate(packet, "0.1")
    assert [(f.path, f.keyword) for f in caught.value.findings] == [
        ("$.parent_id", "additionalProperties"),
        ("$.success_criteria", "additionalProperties"),
        ("$.decisions[0].consequences", "additionalProperties"),
        ("$.methods", "additionalProperties"),
        ("$.attempts[0].confidence", "additionalProperties"),
    ]
    assert "drop" in caught.value.findings[0].message
    dropped = cmp.migrate(packet, "0.1", drop=True)
    assert dropped.ltm_version == "0.1" and dropped.findings() == []
    assert (dropped.parent_id, dropped.success_criteria, dropped.methods) == ("", (), ())
    assert dropped.decisions[0].consequences == "" and dropped.attempts[0].confidence == ""
    assert (dropped.id, dropped.goal, dropped.tags) == (packet.id, packet.goal, packet.tags)


def test_a_v02_packet_without_v02_members_goes_down_without_drop() -> None:
    packet = cmp.loads(encode(minimal("0.2")))
    assert cmp.migrate(packet, "0.1").to_dict() == {**packet.to_dict(), "ltm_version": "0.1"}
    assert cmp.migrate(packet, "0.2") == packet


def test_bad_targets_and_arguments() -> None:
    packet = cmp.loads(encode(minimal()))
    for version in ("0.3", "", "v0.2", "0.2.0"):
        with pytest.raises(ValueError, match=r"cannot migrate to version .*; supported: 0\.1, 0\.2"):
            cmp.migrate(packet, version)
    with pytest.raises(TypeError, match=r"takes a cmp\.Packet"):
        cmp.migrate(minimal(), "0.2")  # type: ignore[arg-type]


@pytest.mark.parametrize("to", [1, 0.2, None, b"0.2"])
def test_a_version_that_is_not_a_string_is_a_clear_type_error(to: object) -> None:
    packet = cmp.Packet.new(goal="g", next_step="n")
    with pytest.raises(
        TypeError, match=rf"^migrate\(\) takes the version as a str such as '0.2', not {type(to).__name__}$"
    ):
        cmp.migrate(packet, to)  # type: ignore[arg-type]

