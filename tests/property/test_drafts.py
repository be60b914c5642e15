"""Drafts and packets: every document the draft schema accepts becomes a conforming packet
or a PacketError naming each finding's path in the draft, and a packet's draft makes the
packet again. Documents are drawn from the draft schema itself (tests/support/schema_documents.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cmp
from cmp.schema import SUPPORTED_VERSIONS, draft_schema
from tests.support.examples import examples
from tests.support.packets import parse_path
from tests.support.schema_documents import documents
from tests.support.strategies import packets
from tests.support.strict_modes import nullable

_DRAFTS = {version: documents(draft_schema(version)) for version in SUPPORTED_VERSIONS}
_ANY_DRAFT = st.sampled_from(SUPPORTED_VERSIONS).flatmap(lambda version: st.tuples(st.just(version), _DRAFTS[version]))


def _exists(draft: Any, path: str) -> bool:
    """Whether ``path`` names a member of ``draft``, or one its object lacks (a missing member)."""
    node = draft
    steps = parse_path(path.removeprefix("$."))
    for index, step in enumerate(steps):
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                return False
            node = node[step]
        elif isinstance(node, dict) and step in node:
            node = node[step]
        else:
            return isinstance(node, dict) and index == len(steps) - 1
    return True


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ANY_DRAFT)
def test_every_draft_the_schema_accepts_is_a_packet_or_findings_by_path(drawn: tuple[str, dict[str, Any]]) -> None:
    version, draft = drawn
    try:
        packet = cmp.Packet.from_draft(draft, version=version)
    except cmp.PacketError as exc:
        assert exc.findings
        for finding in exc.findings:
            assert finding.code == "schema"
            assert finding.keyword  # the bound that was broken
            assert _exists(draft, finding.path), (finding, draft)
        return
    assert packet.findings() == []
    assert packet.ltm_version == version
    assert cmp.loads(cmp.dumps(packet)) == packet
    # What the draft said is what the packet holds: its draft, null for every empty member.
    again = packet.to_draft()
    assert again == _as_drafted(draft, draft_schema(version))


def _as_drafted(value: Any, node: dict[str, Any]) -> Any:
    """A draft as to_draft writes what it says: an optional member that is empty ("", false,
    no items) is null; an object stays an object."""
    value_node = node["anyOf"][0] if "anyOf" in node else node
    if isinstance(value, dict):
        value = {name: _as_drafted(value[name], member) for name, member in value_node["properties"].items()}
    elif isinstance(value, list):
        value = [_as_drafted(item, value_node["items"]) for item in value]
    return None if nullable(node) and value in ("", False, [], None) else value


@settings(max_examples=examples(300), deadline=None)
@given(packets())
def test_a_packets_draft_makes_the_packet_again(packet: cmp.Packet) -> None:
    draft = packet.to_draft()
    assert set(draft) == set(draft_schema(packet.ltm_version)["properties"])
    again = cmp.Packet.from_draft(
        draft, version=packet.ltm_version, parent=packet.parent_id or None, id=packet.id, created_at=packet.created_at
    )
    assert again == packet
    assert cmp.dumps(again) == cmp.dumps(packet)
    fresh = cmp.Packet.from_draft(draft, version=packet.ltm_version, parent=packet.parent_id or None)
    assert fresh.replace(id=packet.id, created_at=packet.created_at) == packet
