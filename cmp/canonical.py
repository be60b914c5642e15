"""Canonical bytes: exactly what the reference's encoder writes for a parsed packet.

Written straight from the typed model (never from input bytes): two-space indent, one
member per line, no trailing newline, members in schema order, empty members left out,
strings escaped as Go's encoding/json escapes them (HTML-safe, U+2028/U+2029 escaped).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from json.encoder import encode_basestring

from cmp.check import validate
from cmp.findings import Finding, PacketError
from cmp.intake import MAX_PACKET_BYTES, size_finding
from cmp.model import Attempt, Decision, Method, Packet, Project, Provenance, to_obj
from cmp.timestamps import canonical as canonical_time

# Python escapes quote, backslash and C0 controls exactly as Go does (short escapes for
# \b \f \n \r \t, lowercase \u00xx for the rest). Go also escapes these five. They can
# only occur inside strings (member names are fixed ASCII), so one pass over the whole
# text at the end is the same as escaping each string.
_GO_EXTRA = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def _needs_escaping(packet: Packet) -> bool:
    """Whether some string of the packet holds a quote, a backslash or a control character.

    Also true for characters str.isprintable() rejects that need no escape (NBSP,
    U+2028): a false alarm only costs the escaping pass.
    """
    texts = [packet.ltm_version, packet.id, packet.parent_id, packet.created_at, packet.goal, packet.next_step]
    for items in (packet.success_criteria, packet.constraints, packet.open_questions, packet.tags):
        texts += items
    for d in packet.decisions:
        texts += (d.what, d.why, d.consequences)
    for m in packet.methods:
        texts += (m.name, m.when_applicable, m.how)
    for a in packet.attempts:
        texts += (a.tried, a.outcome, a.learned, a.confidence)
    if packet.project is not None:
        texts += (packet.project.name, packet.project.ref)
    if packet.provenance is not None:
        p = packet.provenance
        texts += (p.author_model, p.author_human, p.source_hash, p.confidence)
    try:
        joined = "".join(texts)
    except TypeError:
        return True  # not all strings: the escaping pass raises the same TypeError
    return '"' in joined or "\\" in joined or not joined.isprintable()


def _escaped(packet: Packet) -> Packet:
    """The packet with every string replaced by its JSON-escaped body (quotes left off)."""
    e = encode_basestring

    def each(items: Sequence[str]) -> tuple[str, ...]:
        return tuple([e(item)[1:-1] for item in items])

    project, provenance = packet.project, packet.provenance
    return Packet(
        ltm_version=e(packet.ltm_version)[1:-1],
        id=e(packet.id)[1:-1],
        created_at=e(packet.created_at)[1:-1],
        goal=e(packet.goal)[1:-1],
        next_step=e(packet.next_step)[1:-1],
        parent_id=e(packet.parent_id)[1:-1],
        project=None if project is None else Project(e(project.name)[1:-1], e(project.ref)[1:-1]),
        success_criteria=each(packet.success_criteria),
        constraints=each(packet.constraints),
        decisions=tuple(
            [Decision(e(d.what)[1:-1], e(d.why)[1:-1], e(d.consequences)[1:-1], d.locked) for d in packet.decisions]
        ),
        methods=tuple([Method(*each((m.name, m.when_applicable, m.how))) for m in packet.methods]),
        attempts=tuple(
            [Attempt(e(a.tried)[1:-1], a.outcome, e(a.learned)[1:-1], a.confidence) for a in packet.attempts]
        ),
        open_questions=each(packet.open_questions),
        tags=each(packet.tags),
        provenance=None
        if provenance is None
        else Provenance(
            e(provenance.author_model)[1:-1],
            e(provenance.author_human)[1:-1],
            e(provenance.source_hash)[1:-1],
            provenance.confidence,
        ),
    )


# The renderer writes each string between quotes as it stands: fast, because Python's
# per-call cost, not the characters, dominates here. Strings that need escaping are
# escaped first, all at once (_escaped); a packet check() read from text without a
# backslash has none (Packet._escape_free) and skips the test.


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
    if not packet._escape_free and _needs_escaping(packet):
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
