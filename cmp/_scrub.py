"""Scrub: make a blocked packet sendable by replacing what the redaction pre-flight finds.

Writers must redact before they emit (specification 8). :func:`scrub` does it for them:
in every scanned field, each match of each pattern becomes a placeholder naming its
category (``[redacted:aws-key]``), pass after pass until no pattern matches. That ends:
no placeholder matches any pattern (asserted when this module is imported), so every
match a pass finds consumes at least one character of the text the writer gave, and
that text runs out. Nothing outside the matches changes.
"""

from __future__ import annotations

import re
from typing import Any

from cmp._authoring import from_dict
from cmp._redaction import CATEGORIES, Pattern, Redaction, matches_anywhere, replace_matches, texts
from cmp.model import Packet, to_obj


def placeholder(category: str) -> str:
    """What a match of ``category`` becomes: ``[redacted:aws-key]``."""
    return f"[redacted:{category}]"


_MATCHING = [category for category in CATEGORIES if matches_anywhere(placeholder(category))]
if _MATCHING:  # pragma: no cover - a change to the pattern table would have to cause it
    raise AssertionError(f"scrub's placeholders must match no pattern; these do: {_MATCHING}")

# A scanned field's name as the pre-flight gives it: goal, constraints[0], decisions[1].why.
_FIELD_NAME = re.compile(r"([a-z_]+)(?:\[(\d+)\])?(?:\.([a-z_]+))?")


def scrub(packet: Packet) -> tuple[Packet, list[Redaction]]:
    """(the packet with every match replaced by its placeholder, one Redaction per match).

    Raises :class:`cmp.PacketError` when the result does not conform: the packet did not
    to begin with, or a placeholder longer than its match pushed a field past its
    maximum length (the finding names the field).
    """
    if not isinstance(packet, Packet):
        raise TypeError(f"scrub() takes a cmp.Packet, not {type(packet).__name__}")
    data = to_obj(packet)
    replaced: list[Redaction] = []
    for name, text in list(texts(data)):
        clean = _scrubbed(name, text, replaced)
        if clean != text:
            _put(data, name, clean)
    return from_dict(data), replaced


def _scrubbed(field: str, text: str, replaced: list[Redaction]) -> str:
    """``text`` with no match left, each replacement recorded in ``replaced`` (pass by pass)."""

    def replacement(pattern: Pattern, match: str, at: int) -> str:
        replaced.append(Redaction(field, pattern.category, pattern.mask or match, at, len(match)))
        return placeholder(pattern.category)

    while True:
        before = len(replaced)
        text = replace_matches(text, replacement)
        if len(replaced) == before:
            return text


def _put(data: dict[str, Any], name: str, text: str) -> None:
    parsed = _FIELD_NAME.fullmatch(name)
    assert parsed is not None, name  # texts() names fields only this way
    top, index, member = parsed.groups()
    if index is None:
        data[top] = text
    elif member is None:
        data[top][int(index)] = text
    else:
        data[top][int(index)][member] = text
