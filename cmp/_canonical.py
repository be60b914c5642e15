"""Canonical bytes: exactly what the reference's encoder writes for a parsed packet.

Written straight from the typed model (never from input bytes): two-space indent, one
member per line, no trailing newline, members in schema order, empty members left out,
strings escaped as Go's encoding/json escapes them (HTML-safe, U+2028/U+2029 escaped).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from json.encoder import encode_basestring

from cmp._intake import MAX_PACKET_BYTES, size_finding
from cmp._timestamps import canonical as canonical_time
from cmp._validation import validate
from cmp.findings import Finding, PacketError
from cmp.model import Packet, to_obj

# Python escapes quote, backslash and C0 controls exactly as Go does (short escapes for
# \b \f \n \r \t, lowercase \u00xx for the rest). Go also escapes these five. They can
# only occur inside strings (member names are fixed ASCII), so one pass over the whole
# text at the end is the same as escaping each string.
_GO_EXTRA = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


# The renderer lays the text out as pieces that alternate: layout, string, layout, ...,
# layout. Strings go in as they stand; when some need escaping, all of them are escaped
# together in one C call over their join, split apart again at a separator that the
# escaper copies through unchanged and that no escape sequence can contain: DEL. (The
# ASCII-only escaper would write DEL as the six characters \u007f, which an escaped
# backslash followed by the text "u007f" also produces, so it is never used here.)
# When a string itself holds DEL, each string is escaped on its own.
_ESCAPE_SPLIT = "\x7f"


def _string_array(out: list[str], tail: str, name: str, items: Sequence[str]) -> str:
    """Append a non-empty array of strings; return the layout that must follow it."""
    if not items:
        return tail
    out += (f'{tail},\n  "{name}": [\n    "', items[0])
    for item in items[1:]:
        out += ('",\n    "', item)
    return '"\n  ]'


def _small_object(out: list[str], tail: str, name: str, members: Sequence[tuple[str, str]]) -> str:
    """Append an object of optional strings (project, provenance); return the layout to follow."""
    first = f'{tail},\n  "{name}": {{\n    "'
    opener = first
    for key, value in members:
        if value:
            out += (f'{opener}{key}": "', value)
            opener = '",\n    "'
    if opener is first:  # nothing written: an empty object
        return f'{tail},\n  "{name}": {{}}'
    return '"\n  }'


def _pieces(packet: Packet, identity: bool) -> list[str]:
    out = ['{\n  "ltm_version": "', packet.ltm_version]
    if identity:
        out += ('",\n  "id": "', packet.id)
    if packet.parent_id:
        out += ('",\n  "parent_id": "', packet.parent_id)
    if identity:
        out += ('",\n  "created_at": "', canonical_time(packet.created_at))
    tail = '"'
    if packet.project is not None:
        tail = _small_object(out, tail, "project", (("name", packet.project.name), ("ref", packet.project.ref)))
    out += (f'{tail},\n  "goal": "', packet.goal)
    tail = _string_array(out, '"', "success_criteria", packet.success_criteria)
    tail = _string_array(out, tail, "constraints", packet.constraints)
    opener = f'{tail},\n  "decisions": [\n    {{\n      "'
    for d in packet.decisions:
        out += (f'{opener}what": "', d.what, '",\n      "why": "', d.why)
        if d.consequences:
            out += ('",\n      "consequences": "', d.consequences)
        opener = ('",\n      "locked": true' if d.locked else '"') + '\n    },\n    {\n      "'
    if packet.decisions:
        tail = opener.removesuffix(',\n    {\n      "') + "\n  ]"
    opener = f'{tail},\n  "methods": [\n    {{\n      "'
    for m in packet.methods:
        out += (f'{opener}name": "', m.name, '",\n      "when_applicable": "', m.when_applicable)
        out += ('",\n      "how": "', m.how)
        opener = '"\n    },\n    {\n      "'
    if packet.methods:
        tail = opener.removesuffix(',\n    {\n      "') + "\n  ]"
    opener = f'{tail},\n  "attempts": [\n    {{\n      "'
    for a in packet.attempts:
        out += (f'{opener}tried": "', a.tried, '",\n      "outcome": "', a.outcome)
        if a.learned:
            out += ('",\n      "learned": "', a.learned)
        if a.confidence:
            out += ('",\n      "confidence": "', a.confidence)
        opener = '"\n    },\n    {\n      "'
    if packet.attempts:
        tail = opener.removesuffix(',\n    {\n      "') + "\n  ]"
    tail = _string_array(out, tail, "open_questions", packet.open_questions)
    out += (f'{tail},\n  "next_step": "', packet.next_step)
    tail = _string_array(out, '"', "tags", packet.tags)
    if packet.provenance is not None:
        p = packet.provenance
        members = (
            ("author_model", p.author_model),
            ("author_human", p.author_human),
            ("source_hash", p.source_hash),
            ("confidence", p.confidence),
        )
        tail = _small_object(out, tail, "provenance", members)
    out.append(tail + "\n}")
    return out


def _escape_strings(pieces: list[str]) -> None:
    """Escape the strings among ``pieces`` in place, if any of them needs it."""
    strings = pieces[1::2]
    joined = "".join(strings)  # the model's constructors admit only str members
    if '"' not in joined and "\\" not in joined and joined.isprintable():
        return  # isprintable() also balks at some characters that need no escape; harmless
    if _ESCAPE_SPLIT in joined:
        pieces[1::2] = [encode_basestring(text)[1:-1] for text in strings]
    else:
        pieces[1::2] = encode_basestring(_ESCAPE_SPLIT.join(strings))[1:-1].split(_ESCAPE_SPLIT)


def _render(packet: Packet, identity: bool) -> str:
    pieces = _pieces(packet, identity)
    if not packet._escape_free:  # read from text without a backslash: nothing to escape (cmp._quick, fact 3)
        _escape_strings(pieces)
    text = "".join(pieces)
    for char, escape in _GO_EXTRA:  # str.replace runs in C; str.translate would not
        if char in text:
            text = text.replace(char, escape)
    return text


def _utf8_or_packet_error(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PacketError([Finding("json", "$", f"invalid json: lone surrogate at index {exc.start}")]) from None


def encode(packet: Packet) -> bytes:
    """Canonical bytes of a packet, without validating it (see :func:`dumps`)."""
    return _utf8_or_packet_error(_render(packet, identity=True))


def file_bytes(canonical: bytes) -> bytes:
    """A packet's canonical bytes as a file holds them (specification 9.8).

    One final newline, as editors and end-of-file fixers keep text files, except after
    canonical bytes already at the size limit: there the newline would make a file that
    every reader refuses as too large, so the file is the canonical bytes alone.
    """
    return canonical + b"\n" if len(canonical) < MAX_PACKET_BYTES else canonical


# No packet's canonical form is more than this many times the length of the JSON text it
# was read from: the most any byte of that text can become is `<`, `>` or `&` turning
# into a six-byte escape, and every line break and indent the layout adds is paid for by
# quotes, brackets and commas the text had to hold (at worst 2.7 bytes of layout for a
# 3-byte `"",`). So a text of at most 32,768 / 6 bytes never needs measuring; the tests
# hold the bound over generated packets and the worst shapes.
MAX_GROWTH = 6


def growth_finding(packet: Packet, source_bytes: int) -> Finding | None:
    """The ``size`` finding for a packet whose canonical form would exceed 32,768 bytes.

    ``source_bytes`` is the length of the text the packet was read from. A packet may be
    within the limit as written and over it in canonical form (indentation, escapes); the
    reference stores such a packet and then cannot read its own bytes back.
    """
    if source_bytes * MAX_GROWTH <= MAX_PACKET_BYTES:
        return None
    data = encode(packet)
    size = len(data)
    if size <= MAX_PACKET_BYTES:
        if packet._conforming:  # dumps will want them: written once, not twice
            object.__setattr__(packet, "_canonical", data)
        return None
    return Finding(
        "size",
        "$",
        f"canonical form is {size} bytes, max is {MAX_PACKET_BYTES} (the packet as written is {source_bytes} bytes)",
    )


def dumps(packet: Packet) -> bytes:
    """Canonical bytes of a conforming packet.

    Raises :class:`cmp.PacketError` when the packet does not conform to its
    version's schema, or when its canonical form (indented) exceeds 32,768 bytes.
    Normalises as the reference does: empty optional members and ``locked: false``
    are left out, members are put in schema order, and created_at loses trailing
    fraction zeros and writes a zero offset as ``Z``.
    """
    if not isinstance(packet, Packet):
        raise TypeError(f"dumps() takes a cmp.Packet, not {type(packet).__name__}")
    if packet._canonical is not None:
        return packet._canonical
    if not packet._conforming:
        # Construction already refused members of the wrong type; values are judged here.
        findings = validate(to_obj(packet))
        if findings:
            raise PacketError(findings)
    data = encode(packet)
    if len(data) > MAX_PACKET_BYTES:
        raise PacketError([size_finding(len(data))])
    return data


def state_digest(packet: Packet) -> str:
    """``sha256:<hex>`` of the canonical bytes with ``id`` and ``created_at`` left out.

    Two emissions of the same session state compare equal (specification 9.7: idempotent
    modulo id and created_at).
    """
    if not isinstance(packet, Packet):
        raise TypeError(f"state_digest() takes a cmp.Packet, not {type(packet).__name__}")
    return "sha256:" + hashlib.sha256(_utf8_or_packet_error(_render(packet, identity=False))).hexdigest()
