"""The extended rule set: opt-in patterns for the credentials agents actually hold.

This implementation's extension, not part of the format. After the default findings come
the default credential patterns over :data:`EXTRA_FIELDS`, then the extended patterns,
both marked ``profile="extended"``. Precision comes first, since one finding blocks a whole
packet: no rule rests on entropy alone (docs/extended-rules.md says why each is precise).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from cmp._extended_patterns import EXTENDED_PATTERNS, JOIN, SET, matches, screen
from cmp._matcher import without_lone_surrogates
from cmp._patterns import Pattern
from cmp._redaction._hit import Redaction
from cmp._redaction._scan import credentials, extra_texts, lenient_texts, other_texts, texts

if TYPE_CHECKING:
    from cmp.model import Packet

# The name its findings carry (Redaction.profile) and that ``rules=`` takes.
NAME = "extended"


def scan(fields: list[tuple[str, str]]) -> list[Redaction]:
    """Extended findings for (name, text) pairs: per field, per pattern, the leftmost match."""
    if not fields:
        return []
    try:
        if not SET.Match(JOIN.join(text for _, text in fields)):
            return []
    except UnicodeEncodeError:
        # Lone surrogates (hand-built models only) cannot be UTF-8 for RE2: U+FFFD stands in.
        return scan([(name, without_lone_surrogates(text)) for name, text in fields])
    found: list[Redaction] = []
    for name, text in fields:
        for index in screen(text):
            match = next(matches(index, text), None)
            if match is not None:
                pattern = EXTENDED_PATTERNS[index]
                text_found = pattern.mask or match.group()
                found.append(
                    Redaction(name, pattern.category, text_found, match.start(), len(match.group()), profile=NAME)
                )
    return found


# --- the fields ------------------------------------------------------------------------------


def extended_texts(packet: Any) -> list[tuple[str, str]]:
    """The default scanned fields, then the extra ones: what the extended patterns read."""
    return [*texts(packet), *extra_texts(packet)]


def _typed_values(packet: Packet) -> list[str]:
    """Every text :func:`extended_texts` gives, without names or order (the tests hold them equal)."""
    out = [packet.goal, packet.next_step, *packet.success_criteria, *packet.constraints, packet.id]
    if packet.parent_id is not None:
        out.append(packet.parent_id)
    for decision in packet.decisions:
        out += (decision.what, decision.why, decision.consequences)
    for method in packet.methods:
        out += (method.when_applicable, method.how, method.name)
    for attempt in packet.attempts:
        out += (attempt.tried, attempt.learned)
    out += packet.open_questions
    out += packet.tags
    if packet.project is not None:
        out += (packet.project.name, packet.project.ref)
    if packet.provenance is not None:
        provenance = packet.provenance
        out += (provenance.author_model, provenance.author_human, provenance.source_hash)
    return out


def redact_default_credentials(packet: Packet) -> list[Redaction]:
    """The default credential patterns over :data:`EXTRA_FIELDS`, marked ``profile="extended"``."""
    return [dataclasses.replace(hit, profile=NAME) for hit in credentials(list(extra_texts(packet)))]


def redact_extended(packet: Packet | Mapping[str, Any]) -> list[Redaction]:
    """The extended findings alone, for a typed packet (or parsed JSON of the schema's shape)."""
    if not isinstance(packet, Mapping):
        try:
            if not SET.Match(JOIN.join(_typed_values(packet))):
                return []
        except (UnicodeEncodeError, TypeError, AttributeError):
            pass  # a hand-built model with odd values: the careful walk copes
    return scan(extended_texts(packet))


def every_text(obj: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Lenient mode's texts: every string and member name, named by path."""
    yield from lenient_texts(obj)
    yield from other_texts(obj)


def redact_extended_obj(obj: Mapping[str, Any]) -> list[Redaction]:
    """The extended findings for raw parsed JSON in lenient mode: every string and name in it."""
    return scan(list(every_text(obj)))


def replace_matches(text: str, replacement: Callable[[Pattern, str, int], str]) -> str:
    """``text`` with every checked match of every extended pattern replaced by
    ``replacement(pattern, match, offset)``, in table order: one pass (scrub repeats it)."""
    for index in screen(text):
        pattern = EXTENDED_PATTERNS[index]
        pieces: list[str] = []
        done = 0
        for match in list(matches(index, text)):
            pieces += [text[done : match.start()], replacement(pattern, match.group(), match.start())]
            done = match.end()
        if pieces:
            text = "".join(pieces) + text[done:]
    return text
