"""Canonical bytes: exactly what the reference's encoder writes for a parsed packet.

Written straight from the typed model (never from input bytes): two-space indent, one
member per line, no trailing newline, members in schema order, empty members left out,
strings escaped as Go's encoding/json escapes them (HTML-safe, U+2028/U+2029 escaped).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import fields, is_dataclass, replace
from json.encoder import encode_basestring
from typing import Any

from cmp.check import validate
from cmp.findings import Finding, PacketError
from cmp.intake import MAX_PACKET_BYTES, size_finding
from cmp.model import Packet, to_obj
from cmp.timestamps import canonical as canonical_time

# Python escapes quote, backslash and C0 controls exactly as Go does (short escapes for
# \b \f \n \r \t, lowercase \u00xx for the rest). Go also escapes these five. They can
# only occur inside strings (member names are fixed ASCII), so one pass over the whole
# text at the end is the same as escaping each string.
_GO_EXTRA = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def _escaped(value: Any) -> Any:
    """A model value with every string replaced by its JSON-escaped body (quotes left off)."""
    if isinstance(value, str):
        return encode_basestring(value)[1:-1]
    if isinstance(value, (tuple, list)):  # a hand-built packet may hold lists
        return tuple(map(_escaped, value))
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: _escaped(getattr(value, f.name)) for f in fields(value) if f.init})
    return value


# The renderer writes each string between quotes as it stands: fast, because Python's
# per-call cost, not the characters, dominates here. Strings that need escaping are
# escaped first, all at once (_escaped); a packet check() read from text without a
# backslash has none (Packet._escape_free) and skips that step.


def _strings(name: str, items: Sequence[str], out: list[str]) -> None:
    if items:
        out.append(f',\n  "{name}": [\n    "' + '",\n    "'.join(items) + '"\n  ]')


def _objects(name: str, rendered: list[str], out: list[str]) -> None:
    if rendered:
        out.append(f',\n  "{name}": [\n    {{\n' + "\n    },\n    {\n".join(rendered) + "\n    }\n  ]")


def _small_object(name: str, members: Sequence[tuple[str, str]], out: list[str]) -> None:
    present = [f'    "{key}": "{value}"' for key, value in members if value]
    out.append(f',\n  "{name}": ' + ("{\n" + ",\n".join(present) + "\n  }" if present else "{}"))


def _render(packet: Packet, identity: bool) -> str:
    if not packet._escape_free:
        packet = _escaped(packet)
    out = [f'{{\n  "ltm_version": "{packet.ltm_version}"']
    if identity:
        out.append(f',\n  "id": "{packet.id}"')
    if packet.parent_id:
        out.append(f',\n  "parent_id": "{packet.parent_id}"')
    if identity:
        out.append(f',\n  "created_at": "{canonical_time(packet.created_at)}"')
    if packet.project is not None:
        _small_object("project", (("name", packet.project.name), ("ref", packet.project.ref)), out)
    out.append(f',\n  "goal": "{packet.goal}"')
    _strings("success_criteria", packet.success_criteria, out)
    _strings("constraints", packet.constraints, out)
    decisions = [
        f'      "what": "{d.what}",\n      "why": "{d.why}"'
        + (f',\n      "consequences": "{d.consequences}"' if d.consequences else "")
        + (',\n      "locked": true' if d.locked else "")
        for d in packet.decisions
    ]
    _objects("decisions", decisions, out)
    methods = [
        f'      "name": "{m.name}",\n      "when_applicable": "{m.when_applicable}",\n      "how": "{m.how}"'
        for m in packet.methods
    ]
    _objects("methods", methods, out)
    attempts = [
        f'      "tried": "{a.tried}",\n      "outcome": "{a.outcome}"'
        + (f',\n      "learned": "{a.learned}"' if a.learned else "")
        + (f',\n      "confidence": "{a.confidence}"' if a.confidence else "")
        for a in packet.attempts
    ]
    _objects("attempts", attempts, out)
    _strings("open_questions", packet.open_questions, out)
    out.append(f',\n  "next_step": "{packet.next_step}"')
    _strings("tags", packet.tags, out)
    if packet.provenance is not None:
        p = packet.provenance
        members = (
            ("author_model", p.author_model),
            ("author_human", p.author_human),
            ("source_hash", p.source_hash),
            ("confidence", p.confidence),
        )
        _small_object("provenance", members, out)
    out.append("\n}")
    text = "".join(out)
    for char, escape in _GO_EXTRA:  # str.replace runs in C; str.translate would not
        if char in text:
            text = text.replace(char, escape)
    return text


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PacketError([Finding("json", "$", f"invalid json: lone surrogate at index {exc.start}")]) from None


def encode(packet: Packet) -> bytes:
    """Canonical bytes of a packet, without validating it (see :func:`dumps`)."""
    return _utf8(_render(packet, identity=True))


def dumps(packet: Packet) -> bytes:
    """Canonical bytes of a conforming packet.

    Raises :class:`cmp.PacketError` when the packet does not conform to its
    version's schema, or when its canonical form (indented) exceeds 32,768 bytes.
    Normalises as the reference does: empty optional members and ``locked: false``
    are left out, members are put in schema order, and created_at loses trailing
    fraction zeros and writes a zero offset as ``Z``.
    """
    if not packet._conforming:
        try:
            obj = to_obj(packet)
        except (AttributeError, TypeError) as exc:
            raise PacketError([Finding("schema", "$", f"not a packet model: {exc}", keyword="type")]) from None
        findings = validate(obj)
        if findings:
            raise PacketError(findings)
    data = encode(packet)
    if len(data) > MAX_PACKET_BYTES:
        raise PacketError([size_finding(len(data))])
    return data


def state_digest(packet: Packet) -> str:
    """``sha256:<hex>`` of the canonical bytes with ``id`` and ``created_at`` left out.

    Two emissions of the same session state compare equal (SPEC: idempotent
    modulo id and created_at).
    """
    return "sha256:" + hashlib.sha256(_utf8(_render(packet, identity=False))).hexdigest()
