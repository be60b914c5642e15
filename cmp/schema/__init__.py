"""The JSON Schema of each supported version, shipped beside this file as data.

A version is supported exactly when its schema ships here. Each object's ``properties``
are in canonical order; :func:`members` reads that order out of every supported schema.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

SUPPORTED_VERSIONS: tuple[str, ...] = ("0.1", "0.2")


@functools.cache
def load_schema(version: str) -> dict[str, Any]:
    """The packaged JSON Schema document of ``version`` (shared: do not mutate it)."""
    with open(_path(version), encoding="utf-8") as stream:
        schema: dict[str, Any] = json.load(stream)
    return schema


def _path(version: str) -> str:
    # A plain path: importlib.resources would slow check()'s start-up; the schemas ship as files.
    if version not in SUPPORTED_VERSIONS:
        raise ValueError(f"no schema for version {version!r}; supported: {', '.join(SUPPORTED_VERSIONS)}")
    return _beside_this_file(f"core-memory.v{version}.json")


def _beside_this_file(name: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)


if TYPE_CHECKING:
    Kind = Literal["string", "timestamp", "boolean", "strings", "object", "objects"]


@dataclass(frozen=True, slots=True)
class Member:
    """One member an object of the packet may have; for ``object`` and ``objects`` (an array
    of objects), ``location`` names the nested object as :data:`cmp.model.SCHEMA_CLASSES` does."""

    name: str
    kind: Kind
    required: bool
    location: str = ""


@functools.cache
def members() -> Mapping[str, tuple[Member, ...]]:
    """Each object's members, by location, in canonical order, over every supported version."""
    return layout([load_schema(version) for version in SUPPORTED_VERSIONS])


def layout(schemas: Sequence[Mapping[str, Any]]) -> dict[str, tuple[Member, ...]]:
    """The members of each object of ``schemas`` (their union), by location, in one order
    that keeps each schema's; ValueError when no such order exists or the schemas disagree
    on a member's kind or whether it is required.
    """
    found: dict[str, list[tuple[Member, ...]]] = {}
    for schema in schemas:
        _collect(schema, "$", found)
    return {location: _merged(location, lists) for location, lists in found.items()}


def _collect(schema: Mapping[str, Any], location: str, found: dict[str, list[tuple[Member, ...]]]) -> None:
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    listed = []
    for name, node in properties.items():
        where = f"{location}.{name}"
        kind = node.get("type")
        if kind == "string":
            member = Member(name, "timestamp" if node.get("format") == "date-time" else "string", name in required)
        elif kind == "boolean":
            member = Member(name, "boolean", name in required)
        elif kind == "object":
            member = Member(name, "object", name in required, where)
            _collect(node, where, found)
        elif kind == "array" and node.get("items", {}).get("type") == "string":
            member = Member(name, "strings", name in required)
        elif kind == "array" and node.get("items", {}).get("type") == "object":
            member = Member(name, "objects", name in required, where + "[]")
            _collect(node["items"], where + "[]", found)
        else:
            raise ValueError(f"no member kind for {where} ({kind!r})")
        listed.append(member)
    found.setdefault(location, []).append(tuple(listed))


def _merged(location: str, lists: list[tuple[Member, ...]]) -> tuple[Member, ...]:
    """One order that keeps every list's order: each member after the one it follows in the list that names it."""
    merged: list[Member] = []
    for listed in lists:
        previous = -1
        for member in listed:
            at = next((i for i, known in enumerate(merged) if known.name == member.name), None)
            if at is None:
                merged.insert(previous + 1, member)
                at = previous + 1
            elif merged[at] != member:
                raise ValueError(f"the schemas disagree about {location}.{member.name}: {merged[at]} and {member}")
            elif at < previous:
                raise ValueError(f"the schemas order the members of {location} differently ({member.name})")
            previous = at
    return tuple(merged)


def schema_bytes(version: str) -> bytes:
    """The packaged schema file of ``version``, byte for byte."""
    with open(_path(version), "rb") as stream:
        return stream.read()


@functools.cache
def _annotations() -> dict[str, dict[str, Any]]:
    with open(_beside_this_file("annotations.json"), encoding="utf-8") as stream:
        notes: dict[str, dict[str, Any]] = json.load(stream)
    return notes


def annotated_schema(version: str) -> dict[str, Any]:
    """A copy of ``version``'s schema for editors and agents: every object and member has a
    ``description`` (from ``annotations.json``, then the schema's bounds in words) and,
    where it helps, ``examples``. It accepts exactly what the schema accepts.
    """
    import copy  # here: only these two copies use it, and a check never asks for one

    schema = copy.deepcopy(load_schema(version))
    schema["title"] = f"{schema.get('title', 'Core Memory Packet')} (annotated)"
    _annotate(schema, "$", version)
    return schema


def _note(location: str) -> dict[str, Any]:
    """The words annotations.json has for ``location``; a location without words is a ValueError."""
    note = _annotations().get(location)
    if note is None:
        raise ValueError(f"annotations.json has no words for {location}")
    return note


def _annotate(node: dict[str, Any], location: str, version: str) -> None:
    note = _note(location)
    node["description"] = " ".join([note["description"], *_bounds(node)])
    examples = [version] if location == "$.ltm_version" else note.get("examples")
    if examples is not None:
        node["examples"] = examples
    for name, member in node.get("properties", {}).items():
        _annotate(member, f"{location}.{name}", version)
    if "items" in node:
        _annotate(node["items"], location + "[]", version)


def _bounds(node: Mapping[str, Any]) -> list[str]:
    """The schema's rules for one node, as sentences."""
    said = []
    if node.get("required"):
        said.append(f"Required members: {', '.join(node['required'])}.")
    if node.get("additionalProperties") is False:
        said.append("No other members.")
    return said + _limits(node)


def _limits(node: Mapping[str, Any]) -> list[str]:
    """The schema's rules for one node's value (not which members an object has), as sentences."""
    said = []
    if node.get("minLength") == 1:
        said.append("Not empty.")
    elif "minLength" in node:
        said.append(f"At least {node['minLength']:,} characters.")
    if "maxLength" in node:
        said.append(f"At most {node['maxLength']:,} characters.")
    if "maxItems" in node:
        said.append(f"At most {node['maxItems']:,} items.")
    if "pattern" in node:
        said.append(f"Matches the pattern {node['pattern']}.")
    if "const" in node:
        said.append(f"Always {json.dumps(node['const'])}.")
    if "enum" in node:
        said.append(f"One of {', '.join(json.dumps(value) for value in node['enum'])}.")
    if node.get("format") == "date-time":
        said.append("An RFC 3339 date-time.")
    return said


# What a writer fills in, never the author of a draft: the version it writes, a fresh id,
# the time, and the id of the packet it continues (a packet the writer holds).
WRITER_FILLED: tuple[str, ...] = ("ltm_version", "id", "created_at", "parent_id")

# The subset of keywords the main providers' strict structured-output and tool-use modes
# all take. Bounds, patterns and formats are refused by one or another, so a draft states
# them in words and the writer checks them.
DRAFT_KEYWORDS: frozenset[str] = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum", "anyOf", "description"}
)


@functools.cache
def _draft(version: str) -> dict[str, Any]:
    schema = load_schema(version)  # the ValueError naming the versions there are, for one not among them
    draft = _draft_node(schema, "$", optional=False)
    for name in WRITER_FILLED:
        draft["properties"].pop(name, None)
    draft["required"] = list(draft["properties"])
    draft["description"] = (
        f"{draft['description']} This is a draft of a version {version} packet: every member is "
        "present, null (or empty) where the session has nothing to say. The writer fills in "
        f"{', '.join(WRITER_FILLED)}, and checks the bounds stated in each description."
    )
    return draft


def draft_schema(version: str = "0.2") -> dict[str, Any]:
    """A fresh JSON Schema for a model to fill through strict structured output or tool use:
    a draft of a ``version`` packet for :meth:`cmp.Packet.from_draft`. No :data:`WRITER_FILLED`
    member; every property required, an optional one nullable; bounds in descriptions."""
    import copy

    return copy.deepcopy(_draft(version))


def _draft_node(node: Mapping[str, Any], location: str, *, optional: bool) -> dict[str, Any]:
    words = [_note(location)["description"], *_limits(node)]
    kind = node["type"]
    value: dict[str, Any] = {"type": kind}
    if "enum" in node or "const" in node:
        value["enum"] = list(node["enum"]) if "enum" in node else [node["const"]]
    if kind == "object":
        required = set(node.get("required", ()))
        value["properties"] = {
            name: _draft_node(member, f"{location}.{name}", optional=name not in required)
            for name, member in node.get("properties", {}).items()
        }
        value["required"] = list(value["properties"])
        value["additionalProperties"] = False
    elif kind == "array":
        value["items"] = _draft_node(node["items"], location + "[]", optional=False)
    if not optional:
        return {**value, "description": " ".join(words)}
    # Nullable as an anyOf of the value and null, the form each provider's tooling reads
    # (pydantic writes an Optional so); a type list (["object", "null"]) is refused by some.
    words.append("Null when there is none.")
    return {"anyOf": [value, {"type": "null"}], "description": " ".join(words)}


__all__ = [
    "DRAFT_KEYWORDS",
    "SUPPORTED_VERSIONS",
    "WRITER_FILLED",
    "Member",
    "annotated_schema",
    "draft_schema",
    "layout",
    "load_schema",
    "members",
    "schema_bytes",
]


def __dir__() -> list[str]:
    return sorted(__all__)
