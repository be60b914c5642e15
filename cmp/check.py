"""The pipeline: bytes → strict JSON → version route → schema → typed model → redaction → report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cmp import intake, model, versions
from cmp.findings import Finding, PacketError
from cmp.model import Packet
from cmp.redact import Redaction, redact, redact_obj, source_is_clean
from cmp.schemas import builder, schema_findings


@dataclass(frozen=True, slots=True, repr=False)
class Report:
    """What :func:`check` found.

    ``conforming``: intake, version and schema all passed (``errors`` is empty).
    ``ok``: conforming and no redaction finding blocks it (SPEC conformance).
    ``accepted``: what a server in the chosen mode would do: ``ok``, or in lenient
    mode a packet whose only errors are schema errors, still blocked by redactions.
    """

    version: str | None
    errors: tuple[Finding, ...]
    redactions: tuple[Redaction, ...]
    packet: Packet | None
    lenient: bool = False
    allow_unredacted: bool = False

    @property
    def conforming(self) -> bool:
        return not self.errors

    @property
    def blocked(self) -> bool:
        return bool(self.redactions) and not self.allow_unredacted

    @property
    def ok(self) -> bool:
        return self.conforming and not self.blocked

    @property
    def accepted(self) -> bool:
        if self.blocked:
            return False
        return self.conforming or (self.lenient and all(f.code == "schema" for f in self.errors))

    def __repr__(self) -> str:
        # The packet is left out: a report may be logged, and the packet may hold secrets.
        return (
            f"Report(version={self.version!r}, conforming={self.conforming}, ok={self.ok}, "
            f"errors={list(self.errors)!r}, redactions={list(self.redactions)!r})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "conforming": self.conforming,
            "accepted": self.accepted,
            "version": self.version,
            "errors": [f.to_json() for f in self.errors],
            "redactions": [r.to_json() for r in self.redactions],
        }


def check(
    data: bytes | bytearray | memoryview | str, *, lenient: bool = False, allow_unredacted: bool = False
) -> Report:
    """Judge raw packet bytes (or text). Never raises for bad packet content."""
    if type(data) is not bytes and not isinstance(data, str):
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"check() takes bytes or str, not {type(data).__name__}")
        data = bytes(data)
    raw = _utf8(data) if isinstance(data, str) else data
    if raw is not None:
        quick = _quick_check(raw, lenient, allow_unredacted)
        if quick is not None:
            return quick
    obj, findings = intake.parse_packet(data if raw is None else raw)  # str: encoded once
    if obj is None:
        return Report(None, tuple(findings), (), None, lenient, allow_unredacted)
    routed = versions.route(obj)
    if isinstance(routed, Finding):
        scanned = redact_obj(obj) if lenient else ()
        return Report(None, (routed,), tuple(scanned), None, lenient, allow_unredacted)
    built = builder(routed)(obj)
    errors = [] if built is not None else schema_findings(obj, routed)
    if errors:
        scanned = redact_obj(obj) if lenient else ()
        return Report(routed, tuple(errors), tuple(scanned), None, lenient, allow_unredacted)
    # A mapping only the detailed path accepts cannot come out of the JSON decoder;
    # from_obj builds it all the same rather than trust that.
    packet = built[0] if built is not None else model.from_obj(obj)
    return Report(routed, (), tuple(redact(packet)), packet, lenient, allow_unredacted)


def _utf8(text: str) -> bytes | None:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None  # parse_packet says where


def _quick_check(raw: bytes, lenient: bool, allow_unredacted: bool) -> Report | None:
    """The report of a conforming packet written without escapes, in one decode and one walk.

    None for anything else (a backslash, a dropped duplicate, a schema error): that
    goes the long way round, which alone writes findings, so no verdict depends on this.
    """
    counted = intake.parse_counted(raw)
    if counted is None:
        return None
    obj, strings = counted
    routed = versions.route(obj)
    if type(routed) is not str:
        return None
    built = builder(routed)(obj)
    if built is None or built[1] != strings:
        return None
    packet = built[0]
    object.__setattr__(packet, "_escape_free", True)
    # The text holds every string verbatim between quotes: if no pattern matches
    # anywhere in it, none matches in any scanned field.
    redactions = () if source_is_clean(raw) else tuple(redact(packet))
    return Report(routed, (), redactions, packet, lenient, allow_unredacted)


def loads(data: bytes | bytearray | memoryview | str) -> Packet:
    """A typed Packet from conforming bytes or text; raises :class:`PacketError` otherwise.

    Redaction findings do not stop ``loads`` (reading a packet is not sending it);
    call :func:`cmp.redact` on the result before it travels.
    """
    report = check(data)
    if report.packet is None:
        raise PacketError(report.errors)
    return report.packet


def validate(obj: Any) -> list[Finding]:
    """Findings for a packet the caller already parsed into Python data (empty when valid)."""
    if not isinstance(obj, dict):
        return [Finding("not-object", "$", "packet must be a JSON object")]
    routed = versions.route(obj)
    if isinstance(routed, Finding):
        return [routed]
    # Data from the caller never passed intake: a lone surrogate cannot be written as UTF-8.
    unencodable = intake.lone_surrogates(obj)
    return unencodable + schema_findings(obj, routed)
