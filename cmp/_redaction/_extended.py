"""The extended rule set: opt-in patterns for the credentials agents actually hold.

``rule_set="extended"`` (``--rule-set extended``) adds these to the pre-flight. They are this
implementation's extension, not part of the format: the reference's ten patterns
(:mod:`cmp._redaction._scan`) stay the conformance contract, and with the default rules
nothing here runs. With the extended rules:

- the default ten patterns run over the default fields exactly as before, and their
  findings come first, unchanged;
- the default credential patterns (all but abs-path) run over the members the reference
  leaves out (:data:`EXTRA_FIELDS`: project, method names, tags, provenance, ``id`` and
  ``parent_id``); their findings follow, marked ``profile="extended"`` since the
  format's pre-flight would not make them;
- the patterns below run over the default fields and :data:`EXTRA_FIELDS`, and, for a
  refused packet in lenient mode, over every string and member name anywhere in the
  document; their findings follow, each marked ``profile="extended"``, and block like
  the default ones.

Precision comes first, since one finding blocks a whole packet: every pattern starts
from a format's public prefix or fixed structure, and where a format carries a
checksum (GitHub's classic tokens and npm's end in a CRC32 of their random part) or a
value must look random, the pattern's ``check`` (:mod:`cmp._extended_patterns`) rules
look-alikes out. No rule rests on entropy alone. docs/extended-rules.md lists each
rule, an example shape and why it is precise.

Each pattern also has a ``screen``: its public prefix, which matches wherever the
pattern does. One RE2 set pass over the screens rules most texts clean; a flagged text
is then searched with the patterns that flagged it, field by field. No pattern or
screen is anchored, so the quick path's fact 2 holds for this table too
(:mod:`cmp._quick` asserts it on import).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

# The patterns, their checks and screens are cmp._extended_patterns' (the bottom layer,
# where messages ask them too).
from cmp._extended_patterns import EXTENDED_PATTERNS, JOIN, SET, matches, screen
from cmp._matcher import without_lone_surrogates
from cmp._patterns import Pattern
from cmp._redaction._hit import Redaction
from cmp._redaction._scan import credentials, is_dataclass_instance, lenient_texts, member_of, other_texts, texts

if TYPE_CHECKING:
    from cmp.model import Packet

# The name its findings carry (Redaction.profile) and that ``rules=`` takes.
NAME = "extended"

# The fields the reference leaves out that the extended rules read, in this order, under
# these names (`tags[0]`, `methods[1].name`, `provenance.author_model`, `id`): every string
# member of the schema but the version and the timestamp, which the schema holds to a
# fixed form. Over them run the default table's credential patterns (abs-path stays on
# the default fields) and the extended patterns; over the default fields (SCANNED_FIELDS)
# every pattern of both tables.
EXTRA_FIELDS: tuple[str, ...] = (
    "id",
    "parent_id",
    "project.name",
    "project.ref",
    "methods[].name",
    "tags[]",
    "provenance.author_model",
    "provenance.author_human",
    "provenance.source_hash",
)


def scan(fields: list[tuple[str, str]]) -> list[Redaction]:
    """Extended findings for (name, text) pairs: per field, per pattern, the leftmost match."""
    if not fields:
        return []
    try:
        if not SET.Match(JOIN.join(text for _, text in fields)):
            return []
    except UnicodeEncodeError:
        # Lone surrogates (hand-built models only) cannot be UTF-8 for RE2; as in the
        # default scan, U+FFFD stands in for them (no pattern matches either).
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


def extra_texts(packet: Any) -> Iterator[tuple[str, str]]:
    """(name, text) for every string in :data:`EXTRA_FIELDS`, typed packet or parsed JSON alike."""
    for spec in EXTRA_FIELDS:
        if spec.endswith("[]"):
            top = spec[:-2]
            items = member_of(packet, top)
            if isinstance(items, (list, tuple)):
                for index, item in enumerate(items):
                    if isinstance(item, str):
                        yield f"{top}[{index}]", item
            continue
        top, _, member = spec.partition("[].") if "[]." in spec else spec.partition(".")
        value = member_of(packet, top)
        if not member:  # id, parent_id
            if isinstance(value, str):
                yield spec, value
            continue
        if "[]." in spec:
            if isinstance(value, (list, tuple)):
                for index, item in enumerate(value):
                    if isinstance(item, Mapping) or is_dataclass_instance(item):
                        text = member_of(item, member)
                        if isinstance(text, str):
                            yield f"{top}[{index}].{member}", text
            continue
        if isinstance(value, Mapping) or is_dataclass_instance(value):
            text = member_of(value, member)
            if isinstance(text, str):
                yield spec, text


def extended_texts(packet: Any) -> list[tuple[str, str]]:
    """The default scanned fields, then the extra ones: what the extended patterns read."""
    return [*texts(packet), *extra_texts(packet)]


def _typed_values(packet: Packet) -> list[str]:
    """Every text :func:`extended_texts` gives for a typed packet, without names or order:
    enough for one screen pass to rule it clean (the tests hold the two to the same texts)."""
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
    """The default table's credential patterns over :data:`EXTRA_FIELDS`, marked
    ``profile="extended"``: the format's own pre-flight does not read these fields."""
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
    """Lenient mode's texts: :func:`cmp._redaction._scan.lenient_texts` (every string under a
    scanned member), then :func:`cmp._redaction._scan.other_texts` (every other string and
    member name, named by path)."""
    yield from lenient_texts(obj)
    yield from other_texts(obj)


def redact_extended_obj(obj: Mapping[str, Any]) -> list[Redaction]:
    """The extended findings for raw parsed JSON in lenient mode: every string and name in it."""
    return scan(list(every_text(obj)))


def replace_matches(text: str, replacement: Callable[[Pattern, str, int], str]) -> str:
    """``text`` with every checked match of every extended pattern replaced, pattern by
    pattern in table order, by ``replacement(pattern, match, offset)``: one pass (scrub repeats it)."""
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
