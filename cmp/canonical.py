"""Canonical bytes: exactly what the reference's encoder writes for a parsed packet.

Built from the typed model only. Two-space indent, one member per line, no trailing
newline; strings escaped as Go's encoding/json escapes them (HTML-safe, U+2028/U+2029).
"""

from __future__ import annotations

import hashlib
from json.encoder import encode_basestring
from typing import Any

from cmp import timestamps
from cmp.check import validate
from cmp.findings import Finding, PacketError
from cmp.intake import MAX_PACKET_BYTES, size_finding
from cmp.model import Packet, to_obj

# Python already escapes quote, backslash and C0 controls the way Go does
# (short escapes for \b \f \n \r \t, lowercase \u00xx for the rest); Go adds these.
_GO_EXTRA = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _string(text: str) -> str:
    out: str = encode_basestring(text)
    if not text.isascii() or "<" in text or ">" in text or "&" in text:
        out = out.translate(_GO_EXTRA)
    return out


def _encode(value: Any, indent: str, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_string(value))
    elif value is True:
        out.append("true")
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        out.append("{")
        first = True
        for key, item in value.items():
            out.append(("\n" if first else ",\n") + inner + '"' + key + '": ')
            first = False
            _encode(item, inner, out)
        out.append("\n" + indent + "}")
    elif isinstance(value, list):
        inner = indent + "  "
        out.append("[")
        for index, item in enumerate(value):
            out.append(("\n" if index == 0 else ",\n") + inner)
            _encode(item, inner, out)
        out.append("\n" + indent + "]")
    else:  # pragma: no cover - the model holds only the types above
        raise TypeError(f"cannot encode {type(value).__name__}")


def encode(packet: Packet) -> bytes:
    """Canonical bytes of a packet, without validating it (see :func:`dumps`)."""
    obj = to_obj(packet)
    obj["created_at"] = timestamps.canonical(packet.created_at)
    out: list[str] = []
    _encode(obj, "", out)
    return "".join(out).encode("utf-8")


def dumps(packet: Packet) -> bytes:
    """Canonical bytes of a conforming packet.

    Raises :class:`cmp.PacketError` when the packet does not conform to its
    version's schema, or when its canonical form (indented) exceeds 32,768 bytes.
    Normalises as the reference does: empty optional members and ``locked: false``
    are left out, members are put in schema order, and created_at loses trailing
    fraction zeros and writes a zero offset as ``Z``.
    """
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
    obj = to_obj(packet)
    del obj["id"], obj["created_at"]
    out: list[str] = []
    _encode(obj, "", out)
    return "sha256:" + hashlib.sha256("".join(out).encode("utf-8")).hexdigest()
