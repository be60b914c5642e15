"""The pipeline: bytes → strict JSON → version route → schema → typed model → redaction → report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from cmp import _intake, _quick, _validation
from cmp._canonical import growth_finding
from cmp._codegen import draft_class
from cmp._redaction._hit import Redaction
from cmp._redaction._rules import RULE_SETS, RuleSet, rule_set_named
from cmp._validation import builder, validate
from cmp.findings import Finding, PacketError
from cmp.model import Packet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from cmp._redaction._rules import RuleSetName


@dataclass(frozen=True, slots=True)
class Policy:
    """How :func:`check` judges: ``lenient`` (schema errors do not refuse the packet; its raw
    data is scanned), ``allow_unredacted`` (redaction findings do not block it),
    ``rule_set`` ("default" or "extended"; unknown: ValueError, not a string: TypeError) and
    ``writer`` (the writer's rule: a credential in a string the rule set does not scan is a
    redaction finding too, where a reader gets a warning; see :attr:`Report.warnings`)."""

    lenient: bool = False
    allow_unredacted: bool = False
    rule_set: RuleSetName = "default"
    writer: bool = False
    rules: RuleSet = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", rule_set_named(self.rule_set))


# A check names its policy by four values; the sixteen that are valid are made once, so a
# check looks its policy up instead of building and validating one (about 1 µs).
_POLICIES: dict[tuple[object, object, object, object], Policy] = {
    (lenient, allow, name, writer): Policy(lenient, allow, name, writer)
    for lenient in (False, True)
    for allow in (False, True)
    for name in RULE_SETS
    for writer in (False, True)
}
DEFAULT_POLICY = Policy()


def policy_of(
    lenient: bool = False, allow_unredacted: bool = False, rule_set: RuleSetName = "default", writer: bool = False
) -> Policy:
    """The :class:`Policy` of these values (one object for each valid combination)."""
    try:
        return _POLICIES[lenient, allow_unredacted, rule_set, writer]
    except (KeyError, TypeError):  # not a bool, or not a rule set's name: Policy says what
        return Policy(lenient, allow_unredacted, rule_set, writer)


@dataclass(frozen=True, slots=True, repr=False, kw_only=True)
class Report:
    """What :func:`check` found.

    ``conforming``: intake, version and schema all passed (``errors`` is empty).
    ``ok``: conforming and no redaction finding blocks it (specification 8.7).
    ``accepted``: what a server in the chosen mode would do: ``ok``, or in lenient
    mode a packet whose only errors are schema errors, still blocked by redactions.
    ``policy``: how it was judged (:class:`Policy`; extended findings follow the default ones).
    """

    version: str | None
    errors: tuple[Finding, ...]
    redactions: tuple[Redaction, ...]
    packet: Packet | None
    policy: Policy = DEFAULT_POLICY
    # What was judged, kept (not copied) so that located() can find positions later.
    source: bytes | str | None = field(default=None, compare=False)

    @classmethod
    def refused(
        cls,
        policy: Policy,
        source: bytes | str | None,
        errors: Sequence[Finding],
        *,
        version: str | None = None,
        redactions: Sequence[Redaction] = (),
    ) -> Report:
        """The report of ``source`` judged under ``policy`` without a packet: ``errors`` say why."""
        return cls(
            version=version,
            errors=tuple(errors),
            redactions=tuple(redactions),
            packet=None,
            policy=policy,
            source=source,
        )

    @property
    def conforming(self) -> bool:
        return not self.errors

    @property
    def blocked(self) -> bool:
        return bool(self.redactions) and not self.policy.allow_unredacted

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
        return self.conforming or (self.policy.lenient and self.schema_only)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        """Advice that never changes the verdict: each credential the rule set's patterns find in
        a string of the packet that its pre-flight does not read (``project.ref``, ``tags[0]``,
        ``provenance.author_human``), code ``credential``, masked and located. A check with
        ``writer=True`` reports these as redaction findings instead, and has none."""
        if self.packet is None or self.policy.writer:
            return ()
        found = self.policy.rules.unscanned(self.packet)
        if not found:
            return ()
        if self.source is not None:
            from cmp._positions import locate_both

            found = locate_both(self.source, (), found)[1]
        return tuple(_credential_warning(hit) for hit in found)

    def __repr__(self) -> str:
        # The packet is left out: a report may be logged, and the packet may hold secrets.
        return (
            f"Report(version={self.version!r}, conforming={self.conforming}, ok={self.ok}, "
            f"errors={list(self.errors)!r}, redactions={list(self.redactions)!r})"
        )

    def located(self) -> Report:
        """This report with a :class:`~cmp.findings.Position` (line and column in the source)
        on every finding and redaction hit that has one; itself when there is nothing to place
        or no source. Reads the text again (:mod:`cmp._positions`)."""
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
        named = self.policy.rules.named
        if named is not None:  # default output stays as the reference's
            out["rule_set"] = named
        warnings = self.warnings
        if warnings:  # as is a packet's that has none
            out["warnings"] = [finding.to_json() for finding in warnings]
        return out


def _credential_warning(hit: Redaction) -> Finding:
    """A reader's warning of a credential the format's pre-flight does not look for: masked, as every finding."""
    message = f"{hit.category} {hit.masked}: a credential outside the fields the pre-flight reads; writers refuse it"
    return Finding("credential", f"$.{hit.field}", message, hit.category, hit.position)


def check(
    data: bytes | bytearray | memoryview | str,
    *,
    lenient: bool = False,
    allow_unredacted: bool = False,
    rule_set: RuleSetName = "default",
    writer: bool = False,
) -> Report:
    """Judge raw packet bytes (or text). Never raises for bad packet content; an unknown
    ``rule_set`` is a ValueError. ``writer=True`` for a program about to write or send the
    packet: a credential anywhere in it blocks it too (:class:`Policy`). :mod:`cmp._quick`
    answers when it can, else :func:`check_long`."""
    return judge(data, policy_of(lenient, allow_unredacted, rule_set, writer))


def judge(data: bytes | bytearray | memoryview | str, policy: Policy) -> Report:
    """:func:`check` under ``policy``."""
    data = _readable(data)
    raw = _utf8_or_none(data) if isinstance(data, str) else data
    counted = _quick.parse_counted(raw) if raw is not None else None
    if raw is not None and counted is not None:
        quick = _quick.conforming(raw, counted, policy.rules)
        if quick is not None:
            return _conforming_report(*quick, policy, data)
    # Text already encoded goes on as bytes: encoded once, not again by the long way, and
    # decoded once where the quick way's object is what the intake reads (its fact 4).
    read = counted[0] if counted is not None and _quick.as_the_intake_reads(*counted) else None
    return _long(data, data if raw is None else raw, policy, read)


def check_long(
    data: bytes | bytearray | memoryview | str,
    *,
    lenient: bool = False,
    allow_unredacted: bool = False,
    rule_set: RuleSetName = "default",
    writer: bool = False,
) -> Report:
    """The long way: every check in order, writing findings; the same report check() gives
    (for the same inputs: a bytearray or memoryview is read as its bytes)."""
    data = _readable(data)
    raw = _utf8_or_none(data) if isinstance(data, str) else data
    return _long(data, data if raw is None else raw, policy_of(lenient, allow_unredacted, rule_set, writer))


def _long(source: bytes | str, data: bytes | str, policy: Policy, read: dict[str, Any] | None = None) -> Report:
    """The long way for ``source``, read as ``data`` (its UTF-8 bytes, or the text itself
    when it cannot be UTF-8: the intake says where), or from ``read``, the object the
    intake reads ``data`` to, refusing nothing (cmp._quick, fact 4)."""
    if read is None:
        obj, findings = _intake.parse_packet(data)
        if obj is None:
            return Report.refused(policy, source, findings)
    else:
        obj = read
    assert isinstance(data, bytes)  # text that parsed is valid UTF-8
    routed = _validation.route(obj)
    if isinstance(routed, Finding):
        return _refused(None, [routed], obj, policy, source)
    built = builder(routed)(obj)
    escaped = _intake.escaped_members(data, _intake.RAW_TEXT_MEMBERS)
    if built is None or escaped:
        from cmp._explain import explain  # only a refused packet pays for the import

        return _refused(routed, explain(obj, routed, escaped=escaped), obj, policy, source)
    packet = built[0]
    grown = growth_finding(packet, len(data))
    if grown is not None:
        return _refused(routed, [grown], obj, policy, source)
    return _conforming_report(routed, packet, tuple(policy.rules.redact(packet)), policy, source)


def _conforming_report(
    version: str, packet: Packet, redactions: tuple[Redaction, ...], policy: Policy, source: bytes | str
) -> Report:
    """The report of a conforming packet, made from a draft (cmp._codegen.draft_class) for a third
    of __init__'s cost: about 1 us that keeps a typical check+dumps within its floor, 5x
    json.loads. The tests hold it to the constructor's report, field by field."""
    if policy.writer:
        redactions = (*redactions, *policy.rules.unscanned(packet))
    made: Any = _new(_REPORT_DRAFT)
    made.version, made.errors, made.redactions, made.packet = version, (), redactions, packet
    made.policy, made.source = policy, source
    made.__class__ = Report
    report: Report = made
    return report


_REPORT_DRAFT = draft_class(Report)
_new = object.__new__


def redact(packet: Packet, *, rule_set: RuleSetName = "default", writer: bool = False) -> list[Redaction]:
    """Redaction findings for a typed :class:`cmp.Packet`, in the reference's order; with
    ``rule_set="extended"``, the extended rule set's findings follow (``profile="extended"``);
    with ``writer=True``, the credentials in the strings the rule set does not scan last."""
    if not isinstance(packet, Packet):
        raise TypeError(f"redact() takes a cmp.Packet, not {type(packet).__name__}")
    rules = rule_set_named(rule_set)
    found = rules.redact(packet)
    return [*found, *rules.unscanned(packet)] if writer else found


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
    version: str | None, errors: list[Finding], obj: dict[str, Any], policy: Policy, source: bytes | str
) -> Report:
    """The report of a packet that parsed but does not conform; lenient mode still scans it
    (with the extended rules, every string and member name in it as well)."""
    redactions = policy.rules.redact_obj(obj) if policy.lenient else ()
    return Report.refused(policy, source, errors, version=version, redactions=redactions)


def _utf8_or_none(text: str) -> bytes | None:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None  # parse_packet says where


def loads(data: bytes | bytearray | memoryview | str) -> Packet:
    """A typed Packet from conforming bytes or text; raises :class:`PacketError` otherwise.
    Redaction findings do not stop it: call :func:`cmp.redact` before the packet travels."""
    report = check(data)
    if report.packet is None:
        raise PacketError(report.errors)
    return report.packet


__all__ = ["Policy", "Report", "check", "judge", "loads", "redact", "validate"]
