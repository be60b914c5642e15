"""The detailed validation path: every schema violation, explained, in path order.

The compiled builder (:mod:`cmp._compiler`) only says "valid or not". When it says
"not", this module says why: it reads the same schema file into a small tree of rules
(one function per keyword, as jsonschema arranges them) and walks the packet once,
yielding findings already sorted by path, then keyword. Nothing here reprs a user
value: a value can be 10,000 levels deep or 32 KB long.

Work is bounded: a report lists the first :data:`cmp.findings.MAX_FINDINGS` findings,
and the rest are only counted, by a second walk that builds neither messages nor paths
(``count`` must equal the number of findings ``walk`` yields; the tests hold it to
that, and hold the findings to jsonschema's over the vectors and generated packets).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from itertools import islice
from typing import Any

from cmp import _timestamps
from cmp._matcher import Matcher
from cmp._messages import path_join, quote, truncated
from cmp.findings import MAX_FINDINGS, Finding
from cmp.schema import load_schema

_JSON_TYPES = {
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    dict: "object",
    list: "array",
    type(None): "null",
}
# What each schema type admits, as jsonschema's Draft 2020-12 type checker decides it.
_PYTHON_TYPES: dict[str, type] = {"string": str, "object": dict, "array": list, "boolean": bool}


def type_name(instance: Any) -> str:
    """The JSON name of a value's type (the Python name for what JSON cannot hold)."""
    return _JSON_TYPES.get(type(instance), type(instance).__name__)


def _shown(instance: Any) -> str:
    return quote(instance) if isinstance(instance, str) else type_name(instance)


# One function per leaf keyword: (keyword's value, instance) -> message, or None when it holds.
# Each ignores the types it does not apply to, as JSON Schema does, except enum and const,
# which every value must satisfy.
_Check = Callable[[Any, Any], "str | None"]


def _type(expected: str, instance: Any) -> str | None:
    if isinstance(instance, _PYTHON_TYPES[expected]):
        return None
    return f"expected {expected}, got {type_name(instance)}"


def _max_length(limit: int, instance: Any) -> str | None:
    if isinstance(instance, str) and len(instance) > limit:
        return f"is {len(instance)} characters, longer than {limit}"
    return None


def _min_length(limit: int, instance: Any) -> str | None:
    if isinstance(instance, str) and len(instance) < limit:
        return f"is {len(instance)} characters, shorter than {limit}"
    return None


def _max_items(limit: int, instance: Any) -> str | None:
    if isinstance(instance, list) and len(instance) > limit:
        return f"has {len(instance)} items, more than {limit}"
    return None


def _pattern(pattern: str, instance: Any) -> str | None:
    if isinstance(instance, str) and not _matcher(pattern)(instance):
        return f"{quote(instance)} does not match {pattern}"
    return None


def _format(fmt: str, instance: Any) -> str | None:
    if fmt != "date-time" or not isinstance(instance, str) or _timestamps.is_valid(instance):
        return None
    if _timestamps.is_rfc3339(instance):
        reason = "is RFC 3339 but outside the subset packets use"
    else:
        reason = "is not an RFC 3339 date-time"
    return f"{quote(instance)} {reason} (YYYY-MM-DDTHH:MM:SS[.1-9 digits](Z|±HH:MM))"


def _enum(allowed: list[str], instance: Any) -> str | None:
    if isinstance(instance, str) and instance in allowed:
        return None
    return f"{_shown(instance)} is not one of {', '.join(allowed)}"


def _const(const: str, instance: Any) -> str | None:
    if isinstance(instance, str) and instance == const:
        return None
    return f"{_shown(instance)} is not {const!r}"


_LEAF_KEYWORDS: dict[str, _Check] = {
    "const": _const,
    "enum": _enum,
    "format": _format,
    "maxItems": _max_items,
    "maxLength": _max_length,
    "minLength": _min_length,
    "pattern": _pattern,
    "type": _type,
}
_STRUCTURE_KEYWORDS = {"properties", "required", "additionalProperties", "items"}
_ANNOTATIONS = {"$schema", "$id", "title", "description"}


@functools.cache
def _matcher(pattern: str) -> Matcher:
    return Matcher(pattern)


# For count(): whether a check fails, without writing the message, for the checks whose
# message quotes the value (quoting asks the redaction screen about the text). Each
# answers exactly when its check in _LEAF_KEYWORDS returns a message.
_FAILS: dict[str, Callable[[Any, Any], bool]] = {
    "const": lambda const, instance: not (isinstance(instance, str) and instance == const),
    "enum": lambda allowed, instance: not (isinstance(instance, str) and instance in allowed),
    "pattern": lambda pattern, instance: isinstance(instance, str) and not _matcher(pattern)(instance),
}


class _Rules:
    """One schema node, read once: its leaf checks in keyword order, and what lies below."""

    __slots__ = ("additional", "checks", "fails", "items", "plain_object", "properties", "required")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        unknown = set(schema) - _LEAF_KEYWORDS.keys() - _STRUCTURE_KEYWORDS - _ANNOTATIONS
        if unknown:
            raise ValueError(f"cannot explain keywords {sorted(unknown)}")
        if schema.get("additionalProperties", True) not in (True, False):
            raise ValueError("only additionalProperties true or false can be explained")
        # Sorted by keyword: findings at one path are listed in keyword order.
        self.checks = tuple(
            (keyword, _LEAF_KEYWORDS[keyword], schema[keyword])
            for keyword in sorted(schema)
            if keyword in _LEAF_KEYWORDS
        )
        # The same checks as predicates, for count().
        self.fails = tuple(
            (_FAILS.get(keyword) or functools.partial(_fails_by_message, check), expected)
            for keyword, check, expected in self.checks
        )
        self.properties = {name: _Rules(sub) for name, sub in schema.get("properties", {}).items()}
        self.required = frozenset(schema.get("required", ()))
        self.additional = schema.get("additionalProperties", True) is not False
        self.items = _Rules(schema["items"]) if "items" in schema else None
        # For count(): whether "an object" is this node's only leaf rule.
        self.plain_object = schema.get("type") == "object" and [keyword for keyword, _, _ in self.checks] == ["type"]


def _fails_by_message(check: _Check, expected: Any, instance: Any) -> bool:
    return check(expected, instance) is not None


@functools.cache
def _rules(version: str) -> _Rules:
    return _Rules(load_schema(version))


def walk(rules: _Rules, instance: Any, path: str = "$", escaped: frozenset[str] = frozenset()) -> Iterator[Finding]:
    """Every violation of ``rules`` by ``instance``, sorted by path, then keyword.

    Findings at a node come first (sorted by keyword), then each member in name order
    or each item in index order, each with everything below it: that is path order.
    A missing required member and an unexpected one are reported at the member's own
    path. Recursion is as deep as the schema (three levels), never as the document.
    ``escaped`` names members of ``instance`` whose JSON text held an escape, for
    :func:`_plain_text`.
    """
    for keyword, check, expected in rules.checks:
        message = check(expected, instance)
        if message is not None:
            yield Finding("schema", path, message, keyword=keyword)
    if isinstance(instance, dict):
        properties = rules.properties
        names = set(instance)
        missing = rules.required - names
        if missing:
            names |= missing
        for name in sorted(names, key=_name_order):
            below = properties.get(name)
            if name in missing:
                yield Finding("schema", path_join(path, name), f"missing required member {name!r}", keyword="required")
            elif below is not None:
                yield from walk(below, instance[name], path_join(path, name))
                if name in escaped:
                    message = _plain_text(name, instance[name])
                    if message is not None:
                        yield Finding("schema", path_join(path, name), message, keyword="format")
            elif not rules.additional:
                message = f"unexpected member {quote(str(name))}"
                yield Finding("schema", path_join(path, name), message, keyword="additionalProperties")
    elif isinstance(instance, list) and rules.items is not None:
        for index, item in enumerate(instance):
            yield from walk(rules.items, item, f"{path}[{index}]")


def _name_order(name: Any) -> tuple[int, Any]:
    # JSON names are strings; Python data may hold others (validate refuses them first).
    # Integers sort before strings as a path's array indices do.
    if isinstance(name, str):
        return (1, name)
    return (0, name) if isinstance(name, int) else (2, repr(name))


def count(rules: _Rules, instance: Any, escaped: frozenset[str] = frozenset()) -> int:
    """How many findings :func:`walk` yields, without making any of them."""
    total = 0
    for fails, expected in rules.fails:
        if fails(expected, instance):
            total += 1
    if isinstance(instance, dict):
        names = instance.keys()
        total += len(rules.required - names)
        properties = rules.properties
        for name in names:
            below = properties.get(name)
            if below is not None:
                total += count(below, instance[name])
                if name in escaped and _plain_text(name, instance[name]) is not None:
                    total += 1
            elif not rules.additional:
                total += 1
    elif isinstance(instance, list) and rules.items is not None:
        items = rules.items
        if not items.plain_object:
            return total + sum(count(items, item) for item in instance)
        # Arrays of objects (decisions, attempts): an item's own rules counted in place,
        # a call only for its members. Ten thousand `{}` items cost one loop, not 10,000 calls.
        required, properties, additional = items.required, items.properties, items.additional
        for item in instance:
            if type(item) is not dict:
                total += count(items, item)
                continue
            names = item.keys()
            total += len(required - names)
            for name in names:
                below = properties.get(name)
                if below is not None:
                    total += count(below, item[name])
                elif not additional:
                    total += 1
    return total


def explain(
    obj: Mapping[str, Any],
    version: str,
    *,
    escaped: frozenset[str] = frozenset(),
    limit: int | None = MAX_FINDINGS,
    listed_before: int = 0,
) -> list[Finding]:
    """The schema violations of ``obj`` against ``version``: the first ``limit`` in path
    order, then a ``truncated`` finding counting the rest (``limit=None``: all of them).

    ``listed_before``: findings already listed ahead of these in the same report. They
    take their share of ``limit``; past it, the ``truncated`` finding counts them too.

    ``escaped`` names the top-level members of :data:`cmp._intake.RAW_TEXT_MEMBERS` that
    the JSON text wrote with an escape.
    """
    rules = _rules(version)
    found = walk(rules, obj, "$", escaped)
    if limit is None:
        return list(found)
    room = max(0, limit - listed_before)
    listed = list(islice(found, room + 1))
    if len(listed) <= room and listed_before <= limit:
        return listed
    more = listed_before - (limit - room) + count(rules, obj, escaped) - room
    return [*listed[:room], truncated(more)]


def _plain_text(name: str, value: Any) -> str | None:
    """Why a raw-text member written with an escape is refused, or None when another
    finding (its type or format) already refuses it."""
    if not isinstance(value, str) or not _timestamps.is_valid(value):
        return None
    return (
        f"{quote(value)} is written with a JSON escape; {name} must be plain text "
        "(the reference reads it without unescaping)"
    )
