"""Scrub: make a blocked packet sendable by replacing what the redaction pre-flight finds.

Writers must redact before they emit (specification 8). :func:`scrub` does it for them:
in every scanned field, each match of each pattern becomes a placeholder naming its
category (``[redacted:aws-key]``), pass after pass until no pattern matches. That ends:
no placeholder matches any pattern (asserted when this module is imported), so every
match a pass finds consumes at least one character of the text the writer gave, and
that text runs out. Nothing outside the matches changes.

With ``rules="extended"`` the extended rule set's matches are replaced too (placeholders
named by their categories, ``[redacted:openai-key]``): in the default fields after the
default patterns' in every pass, and in the extra fields the extended rules read
(``project``, ``provenance``, ``tags``, method names). A placeholder can break such a
field's schema (a tag allows no brackets): then the result does not conform and
:class:`cmp.PacketError` names the field, as for a placeholder that overfills one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cmp._authoring import from_dict
from cmp._redaction import CATEGORIES, Pattern, Redaction, matches_anywhere, replace_matches, texts
from cmp.model import Packet, to_obj

if TYPE_CHECKING:
    from cmp._extended import Rules

# One pass of replacements over a text (cmp._redaction.replace_matches and the like).
_Pass = Callable[[str, Callable[[Pattern, str, int], str]], str]


def placeholder(category: str) -> str:
    """What a match of ``category`` becomes: ``[redacted:aws-key]``."""
    return f"[redacted:{category}]"


_MATCHING = [category for category in CATEGORIES if matches_anywhere(placeholder(category))]
if _MATCHING:  # pragma: no cover - a change to the pattern table would have to cause it
    raise AssertionError(f"scrub's placeholders must match no pattern; these do: {_MATCHING}")

# A scanned field's name as the pre-flight gives it: goal, constraints[0], decisions[1].why,
# and with the extended rules project.ref, tags[0], methods[0].name.
_FIELD_NAME = re.compile(r"([a-z_]+)(?:\[(\d+)\])?(?:\.([a-z_]+))?")


def scrub(packet: Packet, *, rules: Rules = "default") -> tuple[Packet, list[Redaction]]:
    """(the packet with every match replaced by its placeholder, one Redaction per match).

    Raises :class:`cmp.PacketError` when the result does not conform: the packet did not
    to begin with, or a placeholder longer than its match pushed a field past its
    maximum length (the finding names the field). ``rules="extended"`` replaces the
    extended rule set's matches too (see the module's docstring).
    """
    if not isinstance(packet, Packet):
        raise TypeError(f"scrub() takes a cmp.Packet, not {type(packet).__name__}")
    passes: list[tuple[list[tuple[str, str]], list[_Pass]]] = []
    data = to_obj(packet)
    if rules == "default":
        passes.append((list(texts(data)), [replace_matches]))
    else:
        extended = _extended_table(rules)
        both: list[_Pass] = [replace_matches, extended.replace_matches]
        passes.append((list(texts(data)), both))
        passes.append((list(extended.extra_texts(data)), [extended.replace_matches]))
    replaced: list[Redaction] = []
    for fields, replacers in passes:
        for name, text in fields:
            clean = _scrubbed(name, text, replaced, replacers)
            if clean != text:
                _put(data, name, clean)
    return from_dict(data), replaced


@functools.cache
def _extended_table(rules: str) -> Any:
    """cmp._extended for ``rules`` (a ValueError for an unknown rule set), its placeholders checked."""
    from cmp import _extended

    _extended.checked_rules(rules)
    matching = [c for c in (*CATEGORIES, *_extended.EXTENDED_CATEGORIES) if _extended.matches_anywhere(placeholder(c))]
    matching += [c for c in _extended.EXTENDED_CATEGORIES if matches_anywhere(placeholder(c))]
    if matching:  # pragma: no cover - a change to a pattern table would have to cause it
        raise AssertionError(f"scrub's placeholders must match no pattern; these do: {matching}")
    return _extended


def _scrubbed(field: str, text: str, replaced: list[Redaction], replacers: list[_Pass]) -> str:
    """``text`` with no match left, each replacement recorded in ``replaced`` (pass by pass)."""

    def replacement(pattern: Pattern, match: str, at: int) -> str:
        profile = "default" if replacer is replace_matches else "extended"
        found = pattern.mask or match
        replaced.append(Redaction(field, pattern.category, found, at, len(match), profile=profile))
        return placeholder(pattern.category)

    while True:
        before = len(replaced)
        for replacer in replacers:
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
