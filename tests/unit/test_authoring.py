"""Writing packets with the typed model: Packet.new, from_dict, to_dict, replace, validate, source_hash."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cmp
from tests.support.packets import encode, full, hand_built, minimal
from tests.support.strategies import packets


def paths(error: pytest.ExceptionInfo[cmp.PacketError]) -> list[tuple[str, str | None]]:
    return [(f.path, f.keyword) for f in error.value.findings]


def test_new_validates_and_lists_every_finding_with_its_path() -> None:
    with pytest.raises(cmp.PacketError) as caught:
        cmp.Packet.new(
            goal="",
            next_step="n",
            tags=["gpu", "Not A Tag"],
            decisions=[{"what": "w", "why": "y"}, {"what": "w", "why": "y" * 1025}],
            provenance={"confidence": "certain"},
        )
    assert paths(caught) == [
        ("$.decisions[1].why", "maxLength"),
        ("$.goal", "minLength"),
        ("$.provenance.confidence", "enum"),
        ("$.tags[1]", "pattern"),
    ]


def test_new_converts_nested_mappings_and_takes_model_objects_alike() -> None:
    from_mappings = cmp.Packet.new(
        goal="g",
        next_step="n",
        project={"name": "core", "ref": "main"},
        decisions=[{"what": "w", "why": "y", "locked": True, "consequences": "c"}, cmp.Decision("v", "z")],
        methods=[{"name": "run-tests", "when_applicable": "always", "how": "make test"}],
        attempts=({"tried": "t", "outcome": "failed", "learned": "l"},),
        provenance=cmp.Provenance(confidence="high"),
    )
    assert from_mappings.project == cmp.Project("core", "main")
    assert from_mappings.decisions == (cmp.Decision("w", "y", "c", True), cmp.Decision("v", "z"))
    assert from_mappings.methods == (cmp.Method("run-tests", "always", "make test"),)
    assert from_mappings.attempts == (cmp.Attempt("t", "failed", "l"),)
    assert from_mappings.provenance == cmp.Provenance(confidence="high")
    assert from_mappings.findings() == []
    assert cmp.loads(cmp.dumps(from_mappings)) == from_mappings


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ({"tags": "gpu"}, r"^Packet\.tags must be a tuple or list of str, not str$"),
        ({"constraints": ["a", 1]}, r"^Packet\.constraints\[1\] must be a str, not int$"),
        ({"project": "core"}, r"^Packet\.project must be a Project or None, not str$"),
        ({"decisions": [{"what": "w"}]}, r"^Packet\.decisions\[0\] is missing 'why'$"),
        ({"methods": [{}]}, r"^Packet\.methods\[0\] is missing 'name', 'when_applicable' and 'how'$"),
        ({"decisions": [{"what": "w", "why": "y", "wat": 1}]}, r"^Packet\.decisions\[0\] has no member 'wat' \("),
        ({"project": {"name": "x", 1: "y"}}, r"^Packet\.project has no member 1 \("),
        ({"decisions": [{"what": "w", "why": "y", "locked": "yes"}]}, r"^Decision\.locked must be a bool, not str$"),
        ({"goal_": "x"}, r"^Packet has no member 'goal_' \(Packet has 'ltm_version', 'id', "),
        ({"parent": "0123456789"}, r"^parent must be a cmp\.Packet, not str$"),
    ],
)
def test_a_wrong_type_is_a_type_error_naming_the_member(members: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        cmp.Packet.new(goal="g", next_step="n", **members)


def test_new_with_a_parent_sets_parent_id() -> None:
    parent = cmp.Packet.new(goal="first", next_step="n")
    child = cmp.Packet.new(goal="second", next_step="n", parent=parent)
    assert child.parent_id == parent.id and child.ltm_version == "0.2" and child.id != parent.id
    with pytest.raises(TypeError, match="give parent or parent_id, not both"):
        cmp.Packet.new(goal="g", next_step="n", parent=parent, parent_id=parent.id)
    with pytest.raises(cmp.PacketError) as caught:  # v0.1 has no parent_id
        cmp.Packet.new(goal="g", next_step="n", parent=parent, ltm_version="0.1")
    assert paths(caught) == [("$.parent_id", "additionalProperties")]


def test_new_writes_a_version_and_identity_it_is_given() -> None:
    packet = cmp.Packet.new(
        goal="g", next_step="n", ltm_version="0.1", id="0123456789", created_at="2026-01-01T00:00:00Z"
    )
    assert (packet.ltm_version, packet.id, packet.created_at) == ("0.1", "0123456789", "2026-01-01T00:00:00Z")


def test_validate_is_what_dumps_refuses() -> None:
    assert cmp.loads(encode(full())).findings() == []
    bad = hand_built(goal="", next_step="n", tags=["Bad"])
    with pytest.raises(cmp.PacketError) as caught:
        cmp.dumps(bad)
    assert bad.findings() == list(caught.value.findings) and len(bad.findings()) == 2


@pytest.mark.parametrize("version", ["0.1", "0.2"])
def test_from_dict_is_loads_for_parsed_data(version: str) -> None:
    obj = full(version)
    packet = cmp.Packet.from_dict(obj)
    assert packet == cmp.loads(encode(obj))
    assert cmp.dumps(packet) == cmp.dumps(cmp.loads(encode(obj)))


def test_from_dict_refuses_what_validate_refuses() -> None:
    obj = {**minimal(), "goal": "", "x": 1}
    with pytest.raises(cmp.PacketError) as caught:
        cmp.Packet.from_dict(obj)
    assert list(caught.value.findings) == cmp.validate(obj)
    with pytest.raises(cmp.PacketError) as too_big:
        cmp.Packet.from_dict({**minimal(), "constraints": ["<" * 1024] * 6})
    assert paths(too_big) == [("$", None)] and too_big.value.findings[0].code == "size"
    with pytest.raises(cmp.PacketError) as not_a_version:
        cmp.Packet.from_dict({**minimal(), "ltm_version": "9.9"})
    assert not_a_version.value.findings[0].code == "version-unsupported"
    for not_a_mapping in ("{}", b"{}", [minimal()], None):
        with pytest.raises(TypeError, match=r"^from_dict\(\) takes a mapping"):
            cmp.Packet.from_dict(not_a_mapping)  # type: ignore[arg-type]


def test_to_dict_is_the_canonical_data() -> None:
    packet = cmp.loads(encode({**full(), "created_at": "2026-04-21T12:00:00.500000+00:00"}))
    written = json.loads(cmp.dumps(packet))
    data = packet.to_dict()
    assert list(data) == list(written)
    assert {**data, "created_at": written["created_at"]} == written  # created_at keeps the text it was given
    assert data["created_at"] == "2026-04-21T12:00:00.500000+00:00"
    assert "parent_id" not in cmp.Packet.new(goal="g", next_step="n").to_dict()


def test_replace_validates_converts_and_leaves_the_original() -> None:
    packet = cmp.loads(encode(full()))
    changed = packet.replace(goal="new goal", decisions=[{"what": "w", "why": "y"}])
    assert changed.goal == "new goal" and changed.decisions == (cmp.Decision("w", "y"),)
    assert changed.id == packet.id and changed.tags == packet.tags
    assert packet.goal != "new goal"
    with pytest.raises(cmp.PacketError) as caught:
        packet.replace(tags=["Bad Tag"])
    assert paths(caught) == [("$.tags[0]", "pattern")]
    with pytest.raises(TypeError, match="has no member 'gaol'"):
        packet.replace(gaol="x")
    assert packet.replace() == packet


def test_packets_from_the_writers_methods_need_no_second_validation() -> None:
    """They are known to conform, with their canonical bytes written once."""
    packet = cmp.Packet.new(goal="g", next_step="n", tags=["a"])
    assert packet._known.conforming and packet._known.canonical == cmp.dumps(packet)
    assert cmp.dumps(packet) is cmp.dumps(packet)
    copy = dataclasses.replace(packet, goal="h")  # the plain dataclass way knows nothing
    assert not copy._known.conforming and copy._known.canonical is None
    assert cmp.dumps(copy) != cmp.dumps(packet)


def test_source_hash() -> None:
    assert cmp.source_hash(b"abc") == "sha256:" + hashlib.sha256(b"abc").hexdigest()
    assert cmp.source_hash("é") == cmp.source_hash("é".encode())
    packet = cmp.Packet.new(goal="g", next_step="n", provenance={"source_hash": cmp.source_hash(b"session log")})
    assert packet.findings() == []
    with pytest.raises(TypeError, match=r"takes bytes or str, not int"):
        cmp.source_hash(1)  # type: ignore[arg-type]


@pytest.mark.slow
@given(packets())
def test_the_dict_views_and_replace_round_trip_any_packet(packet: cmp.Packet) -> None:
    assert cmp.Packet.from_dict(packet.to_dict()) == packet
    assert packet.replace() == packet
    members = {f.name: getattr(packet, f.name) for f in dataclasses.fields(packet) if f.init}
    assert cmp.Packet.new(**members) == packet


@pytest.mark.slow
@given(packets(), st.sampled_from(["goal", "next_step", "tags", "decisions"]))
def test_replace_agrees_with_the_long_way(packet: cmp.Packet, member: str) -> None:
    """replace(x=v) is dataclasses.replace followed by the check dumps makes."""
    value = {"goal": "", "next_step": "x" * 1025, "tags": ["UPPER"], "decisions": [{"what": "", "why": ""}]}[member]
    typed = [cmp.Decision("", "")] if member == "decisions" else value
    by_hand = dataclasses.replace(packet, **{member: typed})
    expected = by_hand.findings()
    if expected:
        with pytest.raises(cmp.PacketError) as caught:
            packet.replace(**{member: value})
        assert list(caught.value.findings) == expected
    else:
        assert packet.replace(**{member: value}) == by_hand


def test_the_public_names_load_on_first_use_and_are_the_modules_own() -> None:
    import importlib

    assert sorted(cmp._DEFINED_IN) == sorted(cmp.__all__)
    for name, (module, own) in cmp._DEFINED_IN.items():
        assert getattr(cmp, name) is getattr(importlib.import_module(module), own)
        assert name in dir(cmp)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        cmp.nothing  # type: ignore[attr-defined]  # noqa: B018
    assert cmp.model is importlib.import_module("cmp.model"), "a submodule, as before"


def test_importing_the_package_and_its_entry_points_loads_nothing_else() -> None:
    import subprocess
    import sys

    code = "import sys, cmp, cmp.cli, cmp.__main__; print(sorted(m for m in sys.modules if m.startswith('cmp')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert loaded.stdout.strip() == "['cmp', 'cmp.__main__', 'cmp.cli']"


@pytest.mark.parametrize("version", cmp.SUPPORTED_VERSIONS)
def test_the_example_packet_of_each_version_is_good_and_always_the_same(version: str) -> None:
    """What `example` and the MCP tool show: conforming, clean under both rule sets, lint-free, fixed bytes."""
    from cmp._example import example_packet

    packet = example_packet(version)
    assert packet.ltm_version == version and packet.findings() == []
    assert cmp.redact(packet, rule_set="extended") == [] and cmp.lint(packet) == []
    assert cmp.dumps(example_packet(version)) == cmp.dumps(packet)  # its own id and created_at, not fresh ones


def test_from_dict_takes_any_mapping_at_any_depth() -> None:
    import collections
    import types

    packet = cmp.Packet.new(goal="g", next_step="n", decisions=[cmp.Decision("w", "y")], project=cmp.Project("p", "r"))
    data = cmp.model.to_obj(packet)
    assert cmp.Packet.from_dict(types.MappingProxyType(data)) == packet
    assert cmp.Packet.from_dict(collections.ChainMap(data)) == packet
    nested = {
        **data,
        "decisions": [types.MappingProxyType(data["decisions"][0])],
        "project": types.MappingProxyType(data["project"]),
    }
    assert cmp.Packet.from_dict(types.MappingProxyType(nested)) == packet
    assert cmp.Packet.from_dict(nested) == packet
    with pytest.raises(cmp.PacketError, match=r"\$\.goal: expected string, got number"):
        cmp.Packet.from_dict(types.MappingProxyType({**data, "goal": 1}))


def test_from_dict_still_names_a_cycle_in_a_mapping_of_another_type() -> None:
    import types

    data = cmp.model.to_obj(cmp.Packet.new(goal="g", next_step="n"))
    data["tags"] = loop = []  # type: ignore[var-annotated]
    loop.append(loop)
    with pytest.raises(cmp.PacketError, match=r"\$\.tags\[0\] holds itself"):
        cmp.Packet.from_dict(types.MappingProxyType(data))
