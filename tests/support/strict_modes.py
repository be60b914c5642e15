"""A checker of the rules the strict structured-output and strict tool-use modes put on a
JSON Schema (OpenAI's ``strict: true``, Anthropic's strict tool use and JSON outputs, and
LangChain's ``with_structured_output`` over either), as their public documentation states
them. Written here, from those rules, so that the draft schema is held to them by
something other than the code that built it.

The rules, the strictest common subset:
1. The root is an object schema (not an ``anyOf``, not an array).
2. Every object has ``"additionalProperties": false`` and lists each of its properties in
   ``required``; an optional member is nullable instead: ``"type": [T, "null"]`` (with
   ``null`` among an enum's values) or an ``anyOf`` whose one other branch is ``{"type": "null"}``.
3. Only these keywords: types, enums, ``required``, ``additionalProperties``, nesting
   (``properties``, ``items``, ``anyOf``) and descriptions. Length and count bounds,
   ``pattern``, ``format``, ``default``, ``const``, ``examples``, ``$schema`` and ``$id``
   are refused or ignored by one provider or another.
4. Every array says what its items are; every node says its type.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

ALLOWED = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum", "anyOf", "description"})
TYPES = frozenset({"object", "array", "string", "boolean", "number", "integer", "null"})


def violations(schema: Mapping[str, Any]) -> list[str]:
    """Every way ``schema`` breaks the strict modes' rules, each with the node's location."""
    found = []
    if schema.get("type") != "object" or "anyOf" in schema:
        found.append("$: the root must be an object schema")
    found.extend(_node(schema, "$"))
    return found


def _node(node: Mapping[str, Any], where: str) -> Iterator[str]:
    if not isinstance(node, Mapping):
        yield f"{where}: a schema must be an object"
        return
    for keyword in node:
        if keyword not in ALLOWED:
            yield f"{where}: keyword {keyword!r} is not in the strict modes' common subset"
    if "anyOf" in node:
        branches = node["anyOf"]
        nulls = [branch for branch in branches if branch == {"type": "null"}]
        if len(branches) != 2 or len(nulls) != 1 or "type" in node:
            yield f"{where}: anyOf is used only as one schema or null"
        for index, branch in enumerate(branches):
            if branch != {"type": "null"}:
                yield from _node(branch, f"{where}.anyOf[{index}]")
        return
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else kind
    if not isinstance(kinds, list) or not kinds or any(k not in TYPES for k in kinds):
        yield f"{where}: every node says its type"
        return
    real = [k for k in kinds if k != "null"]
    if len(real) != 1 or len(kinds) > 2:
        yield f"{where}: a type is one type, or one type and null"
        return
    if "enum" in node:
        values = node["enum"]
        if ("null" in kinds) != (None in values):
            yield f"{where}: a nullable enum lists null, and only a nullable one"
    if real[0] == "object":
        properties = node.get("properties")
        if not isinstance(properties, Mapping):
            yield f"{where}: an object lists its properties"
            return
        if node.get("additionalProperties") is not False:
            yield f"{where}: an object has additionalProperties false"
        if sorted(node.get("required", ())) != sorted(properties):
            yield f"{where}: every property is in required"
        for name, member in properties.items():
            yield from _node(member, f"{where}.{name}")
    elif real[0] == "array":
        if "items" not in node:
            yield f"{where}: an array says what its items are"
        else:
            yield from _node(node["items"], f"{where}[]")
    elif "properties" in node or "items" in node:
        yield f"{where}: only objects have properties and only arrays items"


def nullable(node: Mapping[str, Any]) -> bool:
    """Whether ``node`` takes null (how the strict modes write an optional member)."""
    kind = node.get("type")
    return (isinstance(kind, list) and "null" in kind) or {"type": "null"} in node.get("anyOf", ())
