"""Canonical bytes: exactly what the reference's encoder writes for a parsed packet.

Written straight from the typed model (never from input bytes): two-space indent, one
member per line, no trailing newline, members in schema order, empty members left out,
strings escaped as Go's encoding/json escapes them (HTML-safe, U+2028/U+2029 escaped).
"""

from __future__ import annotations

from dataclasses import replace
from json.encoder import encode_basestring

from cmp._intake import MAX_PACKET_BYTES, size_finding
from cmp._validation import validate
from cmp._writer import shipped_writer
from cmp.findings import Finding, PacketError
from cmp.model import Packet, to_obj

# Python escapes quote, backslash and C0 controls exactly as Go does; Go also escapes
# these five. They occur only inside strings (member names are fixed ASCII), so one pass
# over the whole text is the same as escaping each string. They are replaced in the UTF-8
# bytes, where replace skips ahead with memchr; UTF-8 synchronises, so a character's
# encoding is found only where the character is.
_GO_EXTRA = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))
_GO_EXTRA_UTF8 = tuple((char, char.encode(), escape.encode()) for char, escape in _GO_EXTRA)

# The writer's pieces alternate layout and string. The strings are escaped together in one
# call over their join, split again at DEL, which the escaper copies through unchanged and
# no escape sequence contains (so the ASCII-only escaper, which writes it as \u007f, is never
# used). When a string holds DEL, each is escaped on its own.
_ESCAPE_SPLIT = "\x7f"

# Every byte but those of the characters JSON escapes: deleting these leaves the ones to escape.
_NEEDS_NO_ESCAPE = bytes(sorted(set(range(256)) - set(range(0x20)) - set(b'"\\')))


def _joined(pieces: list[str], escape_free: bool) -> str:
    """The writer's pieces as one text, the strings JSON-escaped (``escape_free``: none needs it)."""
    if escape_free:
        return "".join(pieces)
    strings = "".join(pieces[1::2])  # the model's constructors admit only str members
    # Each of those characters is one byte of UTF-8, and no other character's bytes are
    # ASCII; a lone surrogate, which only the caller refuses, passes as its own bytes.
    escaped = strings.encode("utf-8", "surrogatepass").translate(None, _NEEDS_NO_ESCAPE)
    if not escaped.strip(b"\\"):
        # Nothing to escape, or only backslashes. The layout holds no backslash, so doubling
        # every one escapes exactly the strings' (Windows paths: a replace, not an escaping
        # pass; the dirty packet's floor in docs/performance.md rests on it).
        text = "".join(pieces)
        return text.replace("\\", "\\\\") if escaped else text
    if _ESCAPE_SPLIT in strings:
        pieces[1::2] = [encode_basestring(text)[1:-1] for text in pieces[1::2]]
    else:
        pieces[1::2] = encode_basestring(_ESCAPE_SPLIT.join(pieces[1::2]))[1:-1].split(_ESCAPE_SPLIT)
    return "".join(pieces)


def _render(packet: Packet, identity: bool) -> bytes:
    """The canonical bytes (with ``identity`` False, without the members the digest leaves out)."""
    text = _joined(shipped_writer()(packet, identity), packet._known.escape_free)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise _surrogate_error(text) from None
    for char, char_utf8, escape in _GO_EXTRA_UTF8:
        if char in text:
            data = data.replace(char_utf8, escape)
    return data


def _surrogate_error(text: str) -> PacketError:
    """Why a text holding a lone surrogate has no canonical bytes: where it is, Go's escapes included."""
    for char, escape in _GO_EXTRA:
        text = text.replace(char, escape)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return PacketError([Finding("json", "$", f"invalid json: lone surrogate at index {exc.start}")])
    raise AssertionError("no lone surrogate")  # pragma: no cover - called for one


def encode(packet: Packet) -> bytes:
    """Canonical bytes of a packet, without validating it (see :func:`dumps`)."""
    return _render(packet, identity=True)


def file_bytes(canonical: bytes) -> bytes:
    """A packet's canonical bytes as a file holds them (specification 9.8): with one final
    newline, except at the size limit, where the newline would make the file too large."""
    return canonical + b"\n" if len(canonical) < MAX_PACKET_BYTES else canonical


# No canonical form is more than this many times the length of the text it was read from:
# the most a byte can become is a six-byte escape of `<`, `>` or `&`, and the layout added
# is paid for by quotes, brackets and commas the text held. So a text of at most 32,768 / 6
# bytes is never measured; the tests hold the bound over generated packets and worst shapes.
MAX_GROWTH = 6


def growth_finding(packet: Packet, source_bytes: int) -> Finding | None:
    """The ``size`` finding for a packet whose canonical form would exceed 32,768 bytes.

    ``source_bytes`` is the length of the text it was read from. The reference stores a
    packet within the limit as written but over it canonically, then cannot read it back.
    """
    if source_bytes * MAX_GROWTH <= MAX_PACKET_BYTES:
        return None
    data = encode(packet)
    size = len(data)
    if size <= MAX_PACKET_BYTES:
        if packet._known.conforming:  # dumps will want them: written once, not twice
            object.__setattr__(packet, "_known", replace(packet._known, canonical=data))
        return None
    return Finding(
        "size",
        "$",
        f"canonical form is {size} bytes, max is {MAX_PACKET_BYTES} (the packet as written is {source_bytes} bytes)",
    )


def dumps(packet: Packet) -> bytes:
    """Canonical bytes of a conforming packet, normalised as the reference does (empty
    members and ``locked: false`` left out, schema order, created_at without trailing
    fraction zeros and with ``Z`` for a zero offset).

    Raises :class:`cmp.PacketError` when it does not conform or is over 32,768 bytes.
    """
    if not isinstance(packet, Packet):
        raise TypeError(f"dumps() takes a cmp.Packet, not {type(packet).__name__}")
    findings, data = judged(packet)
    if data is None:
        raise PacketError(findings)
    return data


def judged(packet: Packet) -> tuple[list[Finding], bytes | None]:
    """(why not, None) for a packet that does not conform, else ([], its canonical bytes)."""
    known = packet._known
    if known.canonical is not None:
        return [], known.canonical
    if not known.conforming:
        # Construction already refused members of the wrong type; values are judged here.
        findings = validate(to_obj(packet))
        if findings:
            return findings, None
    data = encode(packet)  # validate() reported any lone surrogate, which alone could stop it
    if len(data) > MAX_PACKET_BYTES:
        return [size_finding(len(data))], None
    return [], data


def state_digest(packet: Packet) -> str:
    """``sha256:<hex>`` of the canonical bytes without ``id`` and ``created_at``: two
    emissions of the same session state compare equal (specification 9.7)."""
    if not isinstance(packet, Packet):
        raise TypeError(f"state_digest() takes a cmp.Packet, not {type(packet).__name__}")
    import hashlib  # here: a check that asks for no digest does not load it

    return "sha256:" + hashlib.sha256(_render(packet, identity=False)).hexdigest()
