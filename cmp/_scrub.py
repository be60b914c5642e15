"""Scrub: make a blocked packet sendable by replacing what the redaction pre-flight finds.

Each match becomes a placeholder naming its category (``[redacted:aws-key]``), pass after
pass until no pattern matches. That ends: no placeholder matches any pattern (asserted by
cmp._redaction._rules), so every match consumes a character of the writer's text.

The default rules' credential matches are replaced in the strings the format does not scan
too (the writer's rule: project, tags, provenance); with ``rule_set="extended"``, the extended
rules' matches as well. A tag holding a match becomes a tag placeholder whole (``redacted-aws-key``).
"""

from __future__ import annotations

import re
from typing import Any

from cmp._authoring import from_dict
from cmp._patterns import Pattern
from cmp._redaction._hit import Redaction
from cmp._redaction._rules import Replacer, RuleSet, placeholder, placeholder_in, rule_set_named
from cmp.model import Packet, to_obj

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp._redaction._rules import RuleSetName

__all__ = ["placeholder", "scrub"]

# A scanned field's name as the pre-flight gives it: goal, constraints[0], decisions[1].why,
# and with the extended rules project.ref, tags[0], methods[0].name.
_FIELD_NAME = re.compile(r"([a-z_]+)(?:\[(\d+)\])?(?:\.([a-z_]+))?")


def scrub(packet: Packet, *, rule_set: RuleSetName = "default") -> tuple[Packet, list[Redaction]]:
    """(the packet with every match replaced by its placeholder, one Redaction per match);
    :class:`cmp.PacketError` when the result does not conform."""
    if not isinstance(packet, Packet):
        raise TypeError(f"scrub() takes a cmp.Packet, not {type(packet).__name__}")
    data, replaced = scrubbed_data(packet, rule_set)
    return from_dict(data), replaced


def scrubbed_data(packet: Packet, rule_set: RuleSetName = "default") -> tuple[dict[str, Any], list[Redaction]]:
    """The packet's JSON data with every match replaced, not yet judged (what :func:`scrub`
    validates, and what cmp.render shows when a placeholder made a field too long)."""
    data = to_obj(packet)
    replaced: list[Redaction] = []
    for fields, replacers in rule_set_named(rule_set).scrub_passes(data):
        for name, text in fields:
            first = len(replaced)
            clean = _scrubbed(name, text, replaced, replacers)
            if clean != text:
                _put(data, name, placeholder_in(name, replaced[first].category) if name.startswith("tags[") else clean)
    return data, replaced


def _scrubbed(field: str, text: str, replaced: list[Redaction], replacers: list[tuple[RuleSet, Replacer]]) -> str:
    """``text`` with no match left, each replacement recorded in ``replaced`` (pass by pass)."""

    finder = ""  # the name of the rule set whose replacer runs

    def replacement(pattern: Pattern, match: str, at: int) -> str:
        found = pattern.mask or match
        replaced.append(Redaction(field, pattern.category, found, at, len(match), profile=finder))
        return placeholder(pattern.category)

    while True:
        before = len(replaced)
        for rules, replacer in replacers:
            finder = rules.name
            text = replacer(text, replacement)
        if len(replaced) == before:
            return text


def _put(data: dict[str, Any], name: str, text: str) -> None:
    parsed = _FIELD_NAME.fullmatch(name)
    assert parsed is not None, name  # texts() names fields only this way
    top, index, member = parsed.groups()
    if index is None:
        if member is None:
            data[top] = text
        else:
            data[top][member] = text  # project.ref, provenance.author_model
    elif member is None:
        data[top][int(index)] = text
    else:
        data[top][int(index)][member] = text
