"""The extended rule set: opt-in patterns for the credentials agents actually hold.

``rules="extended"`` (``--rules extended``) adds these to the pre-flight. They are this
implementation's extension, not part of the format: the reference's ten patterns
(:mod:`cmp._redaction`) stay the conformance contract, and with the default rules
nothing here runs. With the extended rules:

- the default ten patterns run over the default fields exactly as before, and their
  findings come first, unchanged;
- the patterns below run over the default fields and the members the reference leaves
  out (:data:`EXTRA_FIELDS`), and, for a refused packet in lenient mode, over every
  string and member name anywhere in the document; their findings follow, each marked
  ``profile="extended"``, and block like the default ones.

Precision comes first, since one finding blocks a whole packet: every pattern starts
from a format's public prefix or fixed structure, and where a format carries a
checksum (GitHub's classic tokens and npm's end in a CRC32 of their random part) or a
value must look random, a check in :data:`CHECKS` rules look-alikes out. No rule rests
on entropy alone. docs/extended-rules.md lists each rule, an example shape and why it
is precise.

Each pattern also has a ``screen``: its public prefix, which matches wherever the
pattern does. One RE2 set pass over the screens rules most texts clean; a flagged text
is then searched with the patterns that flagged it, field by field. No pattern or
screen is anchored, so the quick path's fact 2 holds for this table too
(:mod:`cmp._quick` asserts it on import).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import is_dataclass
from typing import TYPE_CHECKING, Any, Literal

# The patterns, their checks and screens are cmp._extended_patterns' (the bottom layer,
# where messages ask them too); the names other modules read through this one are
# re-exported.
from cmp._extended_patterns import BASE62 as BASE62
from cmp._extended_patterns import CHECKS as CHECKS
from cmp._extended_patterns import EXTENDED_CATEGORIES as EXTENDED_CATEGORIES
from cmp._extended_patterns import EXTENDED_PATTERNS as EXTENDED_PATTERNS
from cmp._extended_patterns import JOIN, SET, matches, screen
from cmp._extended_patterns import base62_crc32 as base62_crc32
from cmp._extended_patterns import matches_anywhere as matches_anywhere
from cmp._extended_patterns import matches_either as matches_either
from cmp._redaction import Pattern, Redaction, lenient_texts, texts
from cmp._redaction import redact as redact_default
from cmp._redaction import redact_obj as redact_default_obj
from cmp.findings import BoundedPath, field_name, quote

if TYPE_CHECKING:
    from cmp.model import Packet

Rules = Literal["default", "extended"]
RULES: tuple[Rules, ...] = ("default", "extended")
PROFILE = "extended"

# Scanned with the extended patterns after the default fields (cmp._redaction.SCANNED_FIELDS),
# in this order, under these names (`tags[0]`, `methods[1].name`, `provenance.author_model`).
EXTRA_FIELDS: tuple[str, ...] = (
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
        return scan([(name, text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")) for name, text in fields])
    found: list[Redaction] = []
    for name, text in fields:
        for index in screen(text):
            match = next(matches(index, text), None)
            if match is not None:
                pattern = EXTENDED_PATTERNS[index]
                text_found = pattern.mask or match.group()
                found.append(
                    Redaction(name, pattern.category, text_found, match.start(), len(match.group()), profile=PROFILE)
                )
    return found


# --- the fields ------------------------------------------------------------------------------


def _get(container: Any, name: str) -> Any:
    if isinstance(container, Mapping):
        return container.get(name)
    return getattr(container, name, None)


def extra_texts(packet: Any) -> Iterator[tuple[str, str]]:
    """(name, text) for every string in :data:`EXTRA_FIELDS`, typed packet or parsed JSON alike."""
    for spec in EXTRA_FIELDS:
        if spec.endswith("[]"):
            top = spec[:-2]
            items = _get(packet, top)
            if isinstance(items, (list, tuple)):
                for index, item in enumerate(items):
                    if isinstance(item, str):
                        yield f"{top}[{index}]", item
            continue
        top, _, member = spec.partition("[].") if "[]." in spec else spec.partition(".")
        value = _get(packet, top)
        if "[]." in spec:
            if isinstance(value, (list, tuple)):
                for index, item in enumerate(value):
                    if isinstance(item, Mapping) or is_dataclass(item):
                        text = _get(item, member)
                        if isinstance(text, str):
                            yield f"{top}[{index}].{member}", text
            continue
        if isinstance(value, Mapping) or is_dataclass(value):
            text = _get(value, member)
            if isinstance(text, str):
                yield spec, text


def extended_texts(packet: Any) -> list[tuple[str, str]]:
    """The default scanned fields, then the extra ones: what the extended patterns read."""
    return [*texts(packet), *extra_texts(packet)]


def _typed_values(packet: Packet) -> list[str]:
    """Every text :func:`extended_texts` gives for a typed packet, without names or order:
    enough for one screen pass to rule it clean (the tests hold the two to the same texts)."""
    out = [packet.goal, packet.next_step, *packet.success_criteria, *packet.constraints]
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


def redact_extended(packet: Packet | Mapping[str, Any]) -> list[Redaction]:
    """The extended findings alone, for a typed packet (or parsed JSON of the schema's shape)."""
    if not isinstance(packet, Mapping):
        try:
            if not SET.Match(JOIN.join(_typed_values(packet))):
                return []
        except (UnicodeEncodeError, TypeError, AttributeError):
            pass  # a hand-built model with odd values: the careful walk copes
    return scan(extended_texts(packet))


_ROOT = BoundedPath()


def every_text(obj: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Lenient mode's texts: :func:`cmp._redaction.lenient_texts` (every string under a
    scanned member, named the same way), then every other top-level member in document
    order, and every member name in it, with its strings named by path. A top-level
    member name is named ``(member name)``. No recursion: values may nest 10,000 deep.
    """
    yield from lenient_texts(obj)
    done = {name.partition("[")[0] for name in _default_tops()}
    for top in obj:
        if top in done:
            continue
        yield "(member name)", top
        stack: list[tuple[Any, BoundedPath, str | int]] = [(obj[top], _ROOT, top)]
        while stack:
            value, parent, key = stack.pop()
            if type(value) is str:
                yield field_name(parent.child(key)), value
            elif type(value) is dict and value:
                path = parent.child(key)
                for name in value:
                    yield f"{field_name(path)}.(member name)", name
                stack.extend((value[n], path, n) for n in reversed(list(value)))
            elif type(value) is list and value:
                path = parent.child(key)
                stack.extend((value[i], path, i) for i in range(len(value) - 1, -1, -1))


@functools.cache
def _default_tops() -> frozenset[str]:
    from cmp._redaction import SCANNED_FIELDS

    return frozenset(spec.partition("[")[0] for spec in SCANNED_FIELDS)


def redact_extended_obj(obj: Mapping[str, Any]) -> list[Redaction]:
    """The extended findings for raw parsed JSON in lenient mode: every string and name in it."""
    return scan(list(every_text(obj)))


# --- the public entry points --------------------------------------------------------------------


def checked_rules(rules: object) -> Rules:
    """``rules`` if it names a rule set, else a ValueError (a TypeError for a non-string)."""
    if not isinstance(rules, str):
        raise TypeError(f"rules must be a str, not {type(rules).__name__}")
    if rules == "default":
        return "default"
    if rules == "extended":
        return "extended"
    raise ValueError(f"rules must be one of {', '.join(map(repr, RULES))}, not {quote(rules)}")


def redact(packet: Packet, *, rules: Rules = "default") -> list[Redaction]:
    """Redaction findings for a typed :class:`cmp.Packet`: the reference's, in its order;
    with ``rules="extended"``, the extended rules' findings after them (``profile="extended"``)."""
    found = redact_default(packet)
    if checked_rules(rules) == "extended":
        found.extend(redact_extended(packet))
    return found


def redact_obj(obj: Mapping[str, Any], *, rules: Rules = "default") -> list[Redaction]:
    """:func:`cmp._redaction.redact_obj`, and with the extended rules every string of ``obj`` too."""
    found = redact_default_obj(obj)
    if checked_rules(rules) == "extended":
        found.extend(redact_extended_obj(obj))
    return found


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
