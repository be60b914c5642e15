"""Typed packets: frozen dataclasses over the union of v0.1 and v0.2.

Empty means absent, as in the reference's Go structs: an optional text member that
is ``""``, an array that is ``()`` and ``locked=False`` are not written by
:func:`cmp.dumps`. ``created_at`` keeps the exact text it was given.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from cmp import timestamps

Outcome = Literal["succeeded", "failed", "partial"]
Confidence = Literal["low", "medium", "high", ""]


@dataclass(frozen=True, slots=True)
class Project:
    name: str = ""
    ref: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    what: str
    why: str
    consequences: str = ""
    locked: bool = False


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    when_applicable: str
    how: str


@dataclass(frozen=True, slots=True)
class Attempt:
    tried: str
    outcome: Outcome
    learned: str = ""
    confidence: Confidence = ""


@dataclass(frozen=True, slots=True)
class Provenance:
    author_model: str = ""
    author_human: str = ""
    source_hash: str = ""
    confidence: Confidence = ""


@dataclass(frozen=True, slots=True)
class Packet:
    """One Core Memory Packet. Build with :meth:`new`, or get one from :func:`cmp.loads`."""

    ltm_version: str
    id: str
    created_at: str
    goal: str
    next_step: str
    parent_id: str = ""
    project: Project | None = None
    success_criteria: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    decisions: tuple[Decision, ...] = ()
    methods: tuple[Method, ...] = ()
    attempts: tuple[Attempt, ...] = ()
    open_questions: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    provenance: Provenance | None = None
    # True only on packets built from schema-valid data (by check or from_obj); every
    # other construction (including dataclasses.replace) starts False. Frozen members
    # keep it true for the packet's life, so dumps need not validate such a packet again.
    _conforming: bool = field(default=False, init=False, repr=False, compare=False)
    # True only on packets check() read from JSON text without a single backslash:
    # no string of theirs can hold a quote, a backslash or a control character, so
    # dumps may write them between quotes without an escaping pass.
    _escape_free: bool = field(default=False, init=False, repr=False, compare=False)

    @classmethod
    def new(cls, *, goal: str, next_step: str, **fields: Any) -> Packet:
        """A fresh v0.2 packet: a new ULID ``id`` and ``created_at`` of now, in UTC.

        Lists given for array members are stored as tuples. The packet is not
        validated here; :func:`cmp.dumps` refuses one that does not conform.
        """
        from ulid import ULID  # only writers need it; check() should not pay for the import

        now = _dt.datetime.now(_dt.timezone.utc)
        values: dict[str, Any] = {
            "ltm_version": "0.2",
            "id": str(ULID()),
            "created_at": now.strftime("%Y-%m-%dT%H:%M:%S") + _fraction(now.microsecond) + "Z",
        }
        values.update(fields)
        for name in _ARRAY_MEMBERS:
            if name in values and not isinstance(values[name], tuple):
                values[name] = tuple(values[name])
        return cls(goal=goal, next_step=next_step, **values)

    @property
    def created_at_datetime(self) -> _dt.datetime:
        """``created_at`` as an aware datetime (digits past microseconds dropped)."""
        return timestamps.to_datetime(self.created_at)


_ARRAY_MEMBERS = ("success_criteria", "constraints", "decisions", "methods", "attempts", "open_questions", "tags")


def _fraction(microsecond: int) -> str:
    return ("." + f"{microsecond:06d}".rstrip("0")) if microsecond else ""


def from_obj(obj: Mapping[str, Any]) -> Packet:
    """Build a Packet from a mapping that already passed its version's schema.

    check() builds with the compiled builder of :mod:`cmp.fastpath` instead; this plain
    construction is what the tests hold that builder to.
    """
    get = obj.get
    project = get("project")
    provenance = get("provenance")
    packet = Packet(
        obj["ltm_version"],
        obj["id"],
        obj["created_at"],
        obj["goal"],
        obj["next_step"],
        get("parent_id", ""),
        None if project is None else Project(**project),
        tuple(get("success_criteria", ())),
        tuple(get("constraints", ())),
        tuple([Decision(**d) for d in get("decisions", ())]),
        tuple([Method(**m) for m in get("methods", ())]),
        tuple([Attempt(**a) for a in get("attempts", ())]),
        tuple(get("open_questions", ())),
        tuple(get("tags", ())),
        None if provenance is None else Provenance(**provenance),
    )
    object.__setattr__(packet, "_conforming", True)
    return packet


# The model class of each object in the schemas, by schema location (see cmp.fastpath).
SCHEMA_CLASSES: dict[str, type] = {
    "$": Packet,
    "$.project": Project,
    "$.decisions[]": Decision,
    "$.methods[]": Method,
    "$.attempts[]": Attempt,
    "$.provenance": Provenance,
}


def to_obj(packet: Packet) -> dict[str, Any]:
    """The packet as plain JSON data, in canonical member order, empty members left out."""
    out: dict[str, Any] = {"ltm_version": packet.ltm_version, "id": packet.id}
    if packet.parent_id:
        out["parent_id"] = packet.parent_id
    out["created_at"] = packet.created_at
    if packet.project is not None:
        out["project"] = _drop_empty({"name": packet.project.name, "ref": packet.project.ref})
    out["goal"] = packet.goal
    _put_array(out, "success_criteria", list(packet.success_criteria))
    _put_array(out, "constraints", list(packet.constraints))
    _put_array(out, "decisions", [_decision(d) for d in packet.decisions])
    _put_array(
        out, "methods", [{"name": m.name, "when_applicable": m.when_applicable, "how": m.how} for m in packet.methods]
    )
    _put_array(out, "attempts", [_attempt(a) for a in packet.attempts])
    _put_array(out, "open_questions", list(packet.open_questions))
    out["next_step"] = packet.next_step
    _put_array(out, "tags", list(packet.tags))
    if packet.provenance is not None:
        p = packet.provenance
        out["provenance"] = _drop_empty(
            {
                "author_model": p.author_model,
                "author_human": p.author_human,
                "source_hash": p.source_hash,
                "confidence": p.confidence,
            }
        )
    return out


def _drop_empty(members: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in members.items() if v}


def _put_array(out: dict[str, Any], name: str, items: list[Any]) -> None:
    if items:
        out[name] = items


def _decision(d: Decision) -> dict[str, Any]:
    out: dict[str, Any] = {"what": d.what, "why": d.why}
    if d.consequences:
        out["consequences"] = d.consequences
    if d.locked:
        out["locked"] = True
    return out


def _attempt(a: Attempt) -> dict[str, Any]:
    out: dict[str, Any] = {"tried": a.tried, "outcome": a.outcome}
    if a.learned:
        out["learned"] = a.learned
    if a.confidence:
        out["confidence"] = a.confidence
    return out
