"""Typed packets: frozen records (dataclasses, to the standard library) over the union of v0.1 and v0.2.

Empty means absent, as in the reference's Go structs: ``""``, ``()`` and ``locked=False``
are not written by :func:`cmp.dumps`. ``created_at`` keeps the exact text it was given.

Every construction checks each member's type against its annotation and raises
:class:`TypeError` naming class and member; lists become tuples. Values are the schema's
to judge. The compiled builder of :mod:`cmp._compiler` skips ``__init__``: it builds only
from data its schema accepted.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from cmp import _timestamps
from cmp._messages import quote
from cmp.findings import Finding
from cmp.schema import members

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as _dt
    from typing import Any, Literal

    Outcome = Literal["succeeded", "failed", "partial"]
    Confidence = Literal["low", "medium", "high", ""]

# What the annotations name that only mypy knows: Outcome and Confidence are strings here
# (which strings is the schema's rule).
_TYPE_CHECKING_ONLY = {"Outcome": str, "Confidence": str}


@dataclass(frozen=True, slots=True)
class _Rule:
    """The type one member must have: ``kind`` itself, or None too, or a tuple or list of ``kind``."""

    kind: type
    optional: bool = False
    array: bool = False


def _rule(hint: Any) -> _Rule:
    """The rule an evaluated field annotation states."""
    import typing  # here, on the first model object built by hand: check builds none this way

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _Rule(_plain(args[0]), array=True)
    if origin in (typing.Union, types.UnionType) and len(args) == 2 and type(None) in args:
        (other,) = (arg for arg in args if arg is not type(None))
        return _Rule(_plain(other), optional=True)
    if isinstance(hint, type) and origin is None:
        return _Rule(hint)
    raise TypeError(f"no type rule for annotation {hint!r}")


def _plain(hint: Any) -> type:
    """The type an array item or an optional member must have (itself neither array nor optional)."""
    rule = _rule(hint)
    if rule.optional or rule.array:
        raise TypeError(f"no type rule for nested annotation {hint!r}")
    return rule.kind


_RULES: dict[type, tuple[tuple[str, _Rule], ...]] = {}


def _rules(cls: type) -> tuple[tuple[str, _Rule], ...]:
    """The rule of each member of a model class, from its annotations (worked out once per class)."""
    rules = _RULES.get(cls)
    if rules is None:
        import typing

        hints = typing.get_type_hints(cls, localns=_TYPE_CHECKING_ONLY)
        rules = _RULES[cls] = tuple((f.name, _rule(hints[f.name])) for f in fields(cls) if f.init)
    return rules


def _a(kind: type) -> str:
    return ("an " if kind.__name__[0] in "AEIOU" else "a ") + kind.__name__


def _check_members(self: object) -> None:
    """``__post_init__`` of every model class: refuse a member of the wrong type; store lists as tuples.
    Types must match exactly: a str subclass could show the checks something other than is written."""
    for name, rule in _rules(type(self)):
        value = getattr(self, name)
        if rule.array:
            if type(value) is not tuple:
                if type(value) is not list:
                    raise _refusal(self, name, f"a tuple or list of {rule.kind.__name__}", value)
                value = tuple(value)
                object.__setattr__(self, name, value)
            for index, item in enumerate(value):
                if type(item) is not rule.kind:
                    raise _refusal(self, f"{name}[{index}]", _a(rule.kind), item)
        elif type(value) is not rule.kind and not (rule.optional and value is None):
            raise _refusal(self, name, _a(rule.kind) + (" or None" if rule.optional else ""), value)


def _refusal(self: object, member: str, expected: str, value: object) -> TypeError:
    """``Decision.locked must be a bool, not str``: never the value, which may be a secret."""
    found = "None" if value is None else type(value).__name__
    return TypeError(f"{type(self).__name__}.{member} must be {expected}, not {found}")


@dataclass(frozen=True, slots=True)
class Project:
    """``project``: what the work is on (``name``) and where (``ref``)."""

    name: str = ""
    ref: str = ""

    def __post_init__(self) -> None:
        _check_members(self)


@dataclass(frozen=True, slots=True)
class Decision:
    """One of ``decisions``: what was decided, why, and what follows from it."""

    what: str
    why: str
    consequences: str = ""
    locked: bool = False

    def __post_init__(self) -> None:
        _check_members(self)


@dataclass(frozen=True, slots=True)
class Method:
    """One of ``methods`` (v0.2): a way of working, when it applies and how."""

    name: str
    when_applicable: str
    how: str

    def __post_init__(self) -> None:
        _check_members(self)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One of ``attempts``: what was tried, how it came out, and what was learned."""

    tried: str
    outcome: Outcome
    learned: str = ""
    confidence: Confidence = ""

    def __post_init__(self) -> None:
        _check_members(self)


@dataclass(frozen=True, slots=True)
class Provenance:
    """``provenance``: who wrote the packet (a model, a person) and the hash of its source."""

    author_model: str = ""
    author_human: str = ""
    source_hash: str = ""
    confidence: Confidence = ""

    def __post_init__(self) -> None:
        _check_members(self)


@dataclass(frozen=True, slots=True)
class Known:
    """Facts about a packet's (frozen) values found by the step that read them, kept for later
    steps. A packet made any other way knows nothing, and every step finds out for itself."""

    # It passed its version's schema (check's builder, from_obj): dumps need not validate it.
    conforming: bool = False
    # No string holds a character JSON escapes (quote, backslash, control character): it
    # was read from text without a backslash (cmp._quick, fact 5). dumps need not look.
    escape_free: bool = False
    # Its canonical bytes, when check had to write them to measure a large packet
    # (cmp._canonical.growth_finding): dumps returns them.
    canonical: bytes | None = None


CONFORMING = Known(conforming=True)


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
    # What the library found out about these values while reading them (see Known).
    _known: Known = field(default=Known(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_members(self)

    # The validating methods are a facade over cmp._authoring, pydantic's hooks over
    # cmp.integrations.pydantic: their imports inside functions are the house's upward edges
    # (tests/unit/test_layers.py).

    @classmethod
    def new(cls, *, goal: str, next_step: str, parent: Packet | None = None, **members: Any) -> Packet:
        """A fresh, conforming packet: a new ULID ``id``, ``created_at`` of now in UTC, and
        ``ltm_version`` "0.2" unless given; ``parent`` (a Packet) sets ``parent_id``. Nested
        members may be model objects or mappings. A wrong type, unknown or missing member is a
        TypeError naming it; values the schema refuses, or a canonical form over 32,768 bytes,
        raise :class:`cmp.PacketError`.
        """
        from cmp._authoring import new

        return new(goal=goal, next_step=next_step, parent=parent, members=members)

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> Packet:
        """The packet that parsed JSON data ``obj`` holds, or :class:`cmp.PacketError` listing every finding."""
        from cmp._authoring import from_dict

        return from_dict(obj)

    @classmethod
    def from_draft(
        cls,
        obj: Mapping[str, Any],
        *,
        version: str = "0.2",
        parent: Packet | str | None = None,
        id: str | None = None,
        created_at: str | None = None,
    ) -> Packet:
        """The packet a draft describes (the document :func:`cmp.draft_schema` asks a model for).

        A member that is null or empty is absent; an object given is kept even when empty. The
        writer fills in ``ltm_version`` (``version``), ``id`` (a fresh ULID unless given),
        ``created_at`` (now unless given) and ``parent_id`` (from ``parent``, a Packet or id).
        What the schema refuses raises :class:`cmp.PacketError` listing each finding by its path
        in the draft; a draft that is not a mapping, or wrong argument types, TypeError.
        """
        from cmp._authoring import from_draft

        return from_draft(obj, version=version, parent=parent, id=id, created_at=created_at)

    def to_draft(self) -> dict[str, Any]:
        """This packet as a draft of its version (the inverse of :meth:`from_draft`): every
        member of the draft schema present, null where the packet has none; without
        ``ltm_version``, ``id``, ``created_at`` and ``parent_id``."""
        from cmp._authoring import to_draft

        return to_draft(self)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data in canonical member order, empty members left out (as :func:`cmp.dumps` writes)."""
        return to_obj(self)

    def replace(self, **changes: Any) -> Packet:
        """A copy with ``changes`` (converted as in :meth:`new`), or :class:`cmp.PacketError` if it does not conform."""
        from cmp._authoring import replace

        return replace(self, changes)

    def findings(self) -> list[Finding]:
        """Every reason this packet does not conform (empty when :func:`cmp.dumps` would write it)."""
        from cmp._authoring import findings as packet_findings

        return packet_findings(self)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """pydantic's hook: a Packet field (or FastAPI body) validates through this library."""
        from cmp.integrations.pydantic import pydantic_core_schema

        return pydantic_core_schema()

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        """pydantic's hook: the JSON Schema of a Packet field is the shipped schemas."""
        from cmp.integrations.pydantic import pydantic_json_schema

        return pydantic_json_schema()

    @property
    def created_at_datetime(self) -> _dt.datetime:
        """``created_at`` as an aware datetime (digits past microseconds dropped)."""
        return _timestamps.to_datetime(self.created_at)


def from_obj(obj: Mapping[str, Any]) -> Packet:
    """Build a Packet from a mapping that already passed its version's schema (the tests hold
    the compiled builder of :mod:`cmp._compiler` to this)."""
    packet: Packet = build(obj, "Packet")
    object.__setattr__(packet, "_known", CONFORMING)
    return packet


def build(values: Mapping[str, Any], where: str, location: str = "$") -> Any:
    """The model object of the schema object at ``location``, from its members' values (nested
    ones may be mappings). A TypeError names the object by ``where`` (``Packet.decisions[0]``)."""
    cls = SCHEMA_CLASSES[location]
    listed = {member.name: member for member in members()[location]}
    missing = [m.name for m in listed.values() if m.required and m.name not in values]
    if missing:
        raise TypeError(f"{where} is missing {_names(missing)}")
    given: dict[str, Any] = {}
    for name, value in values.items():
        member = listed.get(name) if type(name) is str else None
        if member is None:
            shown = quote(name) if type(name) is str else repr(name)
            raise TypeError(f"{where} has no member {shown} ({cls.__name__} has {_names(list(listed))})")
        if member.kind == "object" and isinstance(value, Mapping):
            value = build(value, f"{where}.{name}", member.location)
        elif member.kind == "objects" and type(value) in (list, tuple):
            value = [
                build(item, f"{where}.{name}[{index}]", member.location) if isinstance(item, Mapping) else item
                for index, item in enumerate(value)
            ]
        given[name] = value
    return cls(**given)


def _names(names: list[str]) -> str:
    quoted = [repr(name) for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


# The model class of each object in the schemas, by schema location (see cmp.schema.members).
SCHEMA_CLASSES: dict[str, type] = {
    "$": Packet,
    "$.project": Project,
    "$.decisions[]": Decision,
    "$.methods[]": Method,
    "$.attempts[]": Attempt,
    "$.provenance": Provenance,
}
# Each class's type rules are worked out on its first construction, not at import (about
# 2 ms); tests/unit/test_model.py works them out for every class.


def to_obj(packet: Packet) -> dict[str, Any]:
    """The packet as plain JSON data, in canonical member order, empty members left out."""
    return _data(packet, "$")


def _data(value: object, location: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for member in members()[location]:
        item = getattr(value, member.name)
        if not (member.required or item):  # "", False, (), None: absent (a model object is never false)
            continue
        if member.kind == "object":
            item = _data(item, member.location)
        elif member.kind == "objects":
            item = [_data(each, member.location) for each in item]
        elif member.kind == "strings":
            item = list(item)
        out[member.name] = item
    return out


# The public model; the rest of this module (Known, from_obj, to_obj, build) serves the library.
__all__ = ["Attempt", "Decision", "Method", "Packet", "Project", "Provenance"]


def __dir__() -> list[str]:
    return sorted(__all__)
