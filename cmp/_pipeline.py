"""The pipeline: bytes → strict JSON → version route → schema → typed model → redaction → report."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from cmp import _intake, _quick, _validation
from cmp._canonical import growth_finding
from cmp._codegen import draft_class
from cmp._redaction import Redaction, redact_obj
from cmp._redaction import redact as _redaction_default
from cmp._validation import builder, validate
from cmp.findings import Finding, PacketError
from cmp.model import Packet

if TYPE_CHECKING:
    from cmp._extended import Rules


@dataclass(frozen=True, slots=True, repr=False, kw_only=True)
class Report:
    """What :func:`check` found.

    ``conforming``: intake, version and schema all passed (``errors`` is empty).
    ``ok``: conforming and no redaction finding blocks it (specification 8.7).
    ``accepted``: what a server in the chosen mode would do: ``ok``, or in lenient
    mode a packet whose only errors are schema errors, still blocked by redactions.
    ``rules``: the rule set the pre-flight applied ("default", or "extended": then the
    extended findings follow the default ones, each with ``profile="extended"``).
    """

    version: str | None
    errors: tuple[Finding, ...]
    redactions: tuple[Redaction, ...]
    packet: Packet | None
    lenient: bool = False
    allow_unredacted: bool = False
    rules: str = "default"
    # What was judged, kept (not copied) so that located() can find positions later.
    source: bytes | str | None = field(default=None, compare=False)

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
    def schema_only(self) -> bool:
        """Every error is a schema error (a ``truncated`` finding stands for more of the same)."""
        return all(f.code in ("schema", "truncated") for f in self.errors)

    @property
    def accepted(self) -> bool:
        if self.blocked:
            return False
        return self.conforming or (self.lenient and self.schema_only)

    def __repr__(self) -> str:
        # The packet is left out: a report may be logged, and the packet may hold secrets.
        return (
            f"Report(version={self.version!r}, conforming={self.conforming}, ok={self.ok}, "
            f"errors={list(self.errors)!r}, redactions={list(self.redactions)!r})"
        )

    def located(self) -> Report:
        """This report with a :class:`~cmp.findings.Position` (line and column in the source
        text) on every finding and redaction hit that has one; itself when there is
        nothing to place or no source (a report built by hand).

        Checking never computes positions; this reads the text again (:mod:`cmp._positions`).
        """
        if self.source is None or not (self.errors or self.redactions):
            return self
        from cmp._positions import locate_both

        errors, redactions = locate_both(self.source, self.errors, self.redactions)
        return replace(self, errors=tuple(errors), redactions=tuple(redactions))

    def to_json(self, *, show_found: bool = False) -> dict[str, Any]:
        """The report as JSON data; redaction hits masked unless ``show_found`` (see :meth:`Redaction.to_json`)."""
        out = {
            "ok": self.ok,
            "conforming": self.conforming,
            "accepted": self.accepted,
            "version": self.version,
            "errors": [f.to_json() for f in self.errors],
            "redactions": [r.to_json(show_found=show_found) for r in self.redactions],
        }
        if self.rules != "default":  # default output stays as it was
            out["rules"] = self.rules
        return out


def check(
    data: bytes | bytearray | memoryview | str,
    *,
    lenient: bool = False,
    allow_unredacted: bool = False,
    rules: Rules = "default",
) -> Report:
    """Judge raw packet bytes (or text). Never raises for bad packet content.

    The quick path (:mod:`cmp._quick`) answers for a conforming packet written without
    a backslash; everything else, and every finding, comes from :func:`check_long`.
    ``rules="extended"`` adds the extended rule set (:mod:`cmp._extended`) to the
    pre-flight; a ValueError names an unknown rule set.
    """
    data = _readable(data)
    _checked_rules(rules)
    raw = _utf8_or_none(data) if isinstance(data, str) else data
    quick = _quick.conforming(raw, rules) if raw is not None else None
    if quick is None:
        # Text already encoded goes on as bytes: encoded once, not again by check_long.
        return check_long(data if raw is None else raw, lenient=lenient, allow_unredacted=allow_unredacted, rules=rules)
    version, packet, redactions = quick
    return _conforming(
        version, packet, redactions, lenient=lenient, allow_unredacted=allow_unredacted, rules=rules, source=data
    )


def _checked_rules(rules: object) -> None:
    """Nothing for the default rules; the extended table loads only when asked for."""
    if rules != "default":
        from cmp._extended import checked_rules

        checked_rules(rules)


def check_long(
    data: bytes | str, *, lenient: bool = False, allow_unredacted: bool = False, rules: Rules = "default"
) -> Report:
    """The long way: every check in order, writing findings; the same report check() gives."""
    _checked_rules(rules)
    raw = _utf8_or_none(data) if isinstance(data, str) else data
    obj, findings = _intake.parse_packet(data if raw is None else raw)  # str: encoded once
    if obj is None:
        return Report(
            version=None,
            errors=tuple(findings),
            redactions=(),
            packet=None,
            lenient=lenient,
            allow_unredacted=allow_unredacted,
            rules=rules,
            source=data,
        )
    assert raw is not None  # text that parsed is valid UTF-8
    routed = _validation.route(obj)
    if isinstance(routed, Finding):
        return _refused(
            None, [routed], obj, lenient=lenient, allow_unredacted=allow_unredacted, rules=rules, source=data
        )
    built = builder(routed)(obj)
    escaped = _intake.escaped_members(raw, _intake.RAW_TEXT_MEMBERS)
    if built is None or escaped:
        from cmp._explain import explain  # only a refused packet pays for the import

        errors = explain(obj, routed, escaped=escaped)
        return _refused(
            routed, errors, obj, lenient=lenient, allow_unredacted=allow_unredacted, rules=rules, source=data
        )
    packet = built[0]
    grown = growth_finding(packet, len(raw))
    if grown is not None:
        return _refused(
            routed, [grown], obj, lenient=lenient, allow_unredacted=allow_unredacted, rules=rules, source=data
        )
    redactions = tuple(_redaction_default(packet))
    if rules != "default":
        from cmp._extended import redact_extended

        redactions += tuple(redact_extended(packet))
    return _conforming(
        routed, packet, redactions, lenient=lenient, allow_unredacted=allow_unredacted, rules=rules, source=data
    )


def _conforming(
    version: str,
    packet: Packet,
    redactions: tuple[Redaction, ...],
    *,
    lenient: bool,
    allow_unredacted: bool,
    rules: Rules,
    source: bytes | str,
) -> Report:
    """The report of a conforming packet, read either way.

    Made as the schema compiler makes the model (cmp._compiler): a draft with Report's
    slots is filled in, then becomes a Report, for a fifth of what the frozen dataclass's
    __init__ costs (about 1 µs of every check). It sets every field the constructor
    would (the tests hold the two to equal reports, field by field).
    """
    made: Any = _new(_REPORT_DRAFT)
    made.version, made.errors, made.redactions, made.packet = version, (), redactions, packet
    made.lenient, made.allow_unredacted, made.rules, made.source = lenient, allow_unredacted, rules, source
    made.__class__ = Report
    report: Report = made
    return report


_REPORT_DRAFT = draft_class(Report)
_new = object.__new__


def redact(packet: Packet, *, rules: Rules = "default") -> list[Redaction]:
    """Redaction findings for a typed :class:`cmp.Packet`, in the reference's order; with
    ``rules="extended"``, the extended rule set's findings follow (``profile="extended"``)."""
    if rules == "default":
        return _redaction_default(packet)
    from cmp._extended import redact as redact_with

    return redact_with(packet, rules=rules)


def _readable(data: object) -> bytes | str:
    """``data`` as bytes or str; a TypeError for anything else."""
    if type(data) is bytes or isinstance(data, str):
        return data
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"check() takes bytes or str, not {type(data).__name__}")
    try:
        return bytes(data)
    except ValueError:  # a released memoryview
        raise TypeError("check() cannot read a released memoryview") from None


def _refused(
    version: str | None,
    errors: list[Finding],
    obj: dict[str, Any],
    *,
    lenient: bool,
    allow_unredacted: bool,
    rules: Rules = "default",
    source: bytes | str,
) -> Report:
    """The report of a packet that parsed but does not conform; lenient mode still scans it
    (with the extended rules, every string and member name in it as well)."""
    redactions: tuple[Redaction, ...] = ()
    if lenient:
        redactions = tuple(redact_obj(obj))
        if rules != "default":
            from cmp._extended import redact_extended_obj

            redactions += tuple(redact_extended_obj(obj))
    return Report(
        version=version,
        errors=tuple(errors),
        redactions=redactions,
        packet=None,
        lenient=lenient,
        allow_unredacted=allow_unredacted,
        rules=rules,
        source=source,
    )


def _utf8_or_none(text: str) -> bytes | None:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None  # parse_packet says where


def loads(data: bytes | bytearray | memoryview | str) -> Packet:
    """A typed Packet from conforming bytes or text; raises :class:`PacketError` otherwise.

    Redaction findings do not stop ``loads`` (reading a packet is not sending it);
    call :func:`cmp.redact` on the result before it travels.
    """
    report = check(data)
    if report.packet is None:
        raise PacketError(report.errors)
    return report.packet


__all__ = ["Report", "check", "loads", "redact", "validate"]
