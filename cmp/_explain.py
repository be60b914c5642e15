"""The detailed validation path: every schema violation, explained, in path order.

When the compiled builder (:mod:`cmp._compiler`) says "not valid", this module says why: it reads the
same schema into a small tree of rules and walks the packet once, yielding findings sorted by path, then
keyword. Nothing here reprs a user value (it can be 10,000 levels deep). Past MAX_FINDINGS the rest are
only counted (``count`` equals the number ``walk`` yields; the tests hold it to that).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from itertools import chain, compress, islice, repeat
from operator import add, mul, not_, sub
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


# A leaf keyword's check: (its value, instance) -> message or None; it ignores the types it does not
# apply to, as JSON Schema does, except enum and const.
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
_LENGTH_KEYWORDS = {"type", "minLength", "maxLength"}
_ANNOTATIONS = {"$schema", "$id", "title", "description"}


@functools.cache
def _matcher(pattern: str) -> Matcher:
    return Matcher(pattern)


# For count(): whether a check fails, without the message (quoting asks the redaction screen); each
# answers exactly when its check in _LEAF_KEYWORDS returns a message.
_FAILS: dict[str, Callable[[Any, Any], bool]] = {
    "const": lambda const, instance: not (isinstance(instance, str) and instance == const),
    "enum": lambda allowed, instance: not (isinstance(instance, str) and instance in allowed),
    "pattern": lambda pattern, instance: isinstance(instance, str) and not _matcher(pattern)(instance),
}


class _Rules:
    """One schema node, read once: its leaf checks in keyword order, and what lies below."""

    __slots__ = (
        "additional",
        "checks",
        "fails",
        "items",
        "known",
        "leaf",
        "lengths",
        "max_items",
        "properties",
        "required",
        "text_fails",
        "type_fails",
    )

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
        self.fails = tuple(
            (_FAILS.get(keyword) or functools.partial(_fails_by_message, check), expected)
            for keyword, check, expected in self.checks
        )
        self.properties = {name: _Rules(sub) for name, sub in schema.get("properties", {}).items()}
        self.required = frozenset(schema.get("required", ()))
        self.additional = schema.get("additionalProperties", True) is not False
        self.items = _Rules(schema["items"]) if "items" in schema else None
        # For counts(): the checks a non-string's type alone decides (all but maxItems), maxItems, the members.
        self.type_fails = tuple(
            pair for pair, (keyword, _, _) in zip(self.fails, self.checks, strict=True) if keyword != "maxItems"
        )
        self.text_fails = tuple(
            bulk for bulk in (_bulk(keyword, check, expected) for keyword, check, expected in self.checks) if bulk
        )
        self.max_items: int | None = schema.get("maxItems")
        self.known = frozenset(self.properties)
        # Nothing below it: walk() yields only its checks' findings, so its parent runs them (_leaf_findings).
        self.leaf = not self.properties and not self.required and self.additional and self.items is None
        # A text leaf checked for type and length alone: the lengths a string passes all its checks within.
        self.lengths: tuple[int, float] | None = None
        if schema.get("type") == "string" and {keyword for keyword, _, _ in self.checks} <= _LENGTH_KEYWORDS:
            self.lengths = (schema.get("minLength", 0), schema.get("maxLength", float("inf")))


def _fails_by_message(check: _Check, expected: Any, instance: Any) -> bool:
    return check(expected, instance) is not None


@functools.cache
def _rules(version: str) -> _Rules:
    return _Rules(load_schema(version))


def walk(rules: _Rules, instance: Any, path: str = "$", escaped: frozenset[str] = frozenset()) -> Iterator[Finding]:
    """Every violation of ``rules`` by ``instance``, sorted by path, then keyword.

    Findings at a node come first, then each member in name order or item in index order, with everything
    below it. Recursion is as deep as the schema (three levels), never as the document. ``escaped`` names
    members whose JSON text held an escape (:func:`_plain_text`).
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
        # Sorted by name; Python data may hold names that are not strings (_name_order).
        ordered = sorted(names) if set(map(type, names)) <= _STR else sorted(names, key=_name_order)
        for name in ordered:
            below = properties.get(name)
            if name in missing:
                yield Finding("schema", path_join(path, name), f"missing required member {name!r}", keyword="required")
            elif below is not None:
                if below.leaf:
                    yield from _leaf_findings(below, instance[name], path, name)
                else:
                    yield from walk(below, instance[name], path_join(path, name))
                if name in escaped:
                    message = _plain_text(name, instance[name])
                    if message is not None:
                        yield Finding("schema", path_join(path, name), message, keyword="format")
            elif not rules.additional:
                message = f"unexpected member {quote(str(name))}"
                yield Finding("schema", path_join(path, name), message, keyword="additionalProperties")
    elif isinstance(instance, list) and rules.items is not None:
        if len(instance) <= _FIRST_CHUNK:
            # A short array: walking each item costs less than counting the chunk's findings
            # first, and gives the same findings (a clean item yields none).
            items = rules.items
            for index, item in enumerate(instance):
                if items.leaf:
                    yield from _leaf_findings(items, item, path, index=index)
                else:
                    yield from walk(items, item, f"{path}[{index}]")
            return
        # Past that, clean items are counted (in C, in doubling chunks: a caller may stop early) and skipped.
        start, size = 0, _FIRST_CHUNK
        while start < len(instance):
            chunk = instance[start : start + size]
            for index in compress(range(start, start + len(chunk)), counts(rules.items, chunk)):
                yield from walk(rules.items, instance[index], f"{path}[{index}]")
            start, size = start + size, size * 2


_FIRST_CHUNK = 32


def _leaf_findings(rules: _Rules, value: Any, parent: str, name: Any = None, index: int | None = None) -> list[Finding]:
    """``walk(rules, value, path)`` of a leaf: member ``name`` or item ``index`` of ``parent``,
    without a generator and without the path unless a check fails (most leaves pass)."""
    lengths = rules.lengths
    if lengths is not None and type(value) is str and lengths[0] <= len(value) <= lengths[1]:
        return []  # a string, neither shorter nor longer than it may be: no check fails
    found: list[Finding] = []
    for keyword, check, expected in rules.checks:
        message = check(expected, value)
        if message is not None:
            path = path_join(parent, name) if index is None else f"{parent}[{index}]"
            found.append(Finding("schema", path, message, keyword=keyword))
    return found


def _name_order(name: Any) -> tuple[int, Any]:
    # Python data may hold names that are not strings; integers sort first, as array indices do.
    if isinstance(name, str):
        return (1, name)
    return (0, name) if isinstance(name, int) else (2, repr(name))


def count(rules: _Rules, instance: Any, escaped: frozenset[str] = frozenset()) -> int:
    """How many findings :func:`walk` yields, without making any (:func:`tally`)."""
    total = tally(rules, [instance])
    if escaped and isinstance(instance, dict):
        properties = rules.properties
        for name in escaped:
            if name in instance and name in properties and _plain_text(name, instance[name]) is not None:
                total += 1
    return total


def count_one(rules: _Rules, instance: Any, escaped: frozenset[str] = frozenset()) -> int:
    """:func:`count` the long way, one member at a time (for values :func:`counts` does not group)."""
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
                total += count_one(below, instance[name])
                if name in escaped and _plain_text(name, instance[name]) is not None:
                    total += 1
            elif not rules.additional:
                total += 1
    elif isinstance(instance, list) and rules.items is not None:
        total += sum(count_one(rules.items, item) for item in instance)
    return total


# What JSON text decodes to: the types :func:`counts` groups instances by.
_JSON_KINDS = frozenset({str, int, float, bool, type(None), dict, list})
_STR = frozenset({str})


class _Absent:
    """The value of a member an object does not have, in a column of member values."""

    __slots__ = ()


_ABSENT = _Absent()
_KINDS = _JSON_KINDS | {_Absent}


def counts(rules: _Rules, instances: list[Any]) -> list[int]:
    """For each of ``instances``, how many findings :func:`walk` yields for it (what :func:`count_one` says
    of each), worked out for all of them at once.

    A leaf check's answer depends on the value's type alone, except for a string (each distinct string is
    checked once) and an array's length (maxItems); members are counted a column of objects at a time, in
    C. Values of a type JSON does not make are counted one by one. The tests hold this to :func:`count_one`.
    """
    if not instances:
        return []
    kinds = set(map(type, instances))
    if not kinds <= _KINDS:
        return [0 if item is _ABSENT else count_one(rules, item) for item in instances]
    out = _leaf_counts(rules, instances, kinds)
    if dict in kinds and (rules.properties or rules.required or not rules.additional):
        out = _spread(out, instances, kinds, dict, _member_counts(rules, _of_kind(instances, kinds, dict)))
    if list in kinds and rules.items is not None:
        out = _spread(out, instances, kinds, list, _item_counts(rules.items, _of_kind(instances, kinds, list)))
    return out


def tally(rules: _Rules, instances: list[Any]) -> int:
    """``sum(counts(rules, instances))``, summed as it goes over the same columns and grouping."""
    if not instances:
        return 0
    kinds = set(map(type, instances))
    if not kinds <= _KINDS:
        return sum(count_one(rules, item) for item in instances if item is not _ABSENT)
    found = 0
    if rules.checks:
        by_kind = Counter(map(type, instances))
        for kind, many in by_kind.items():
            if kind is str:
                texts = (
                    Counter(instances)
                    if len(by_kind) == 1
                    else Counter(item for item in instances if type(item) is str)
                )
                found += sum(map(mul, texts.values(), _text_fails(rules, list(texts))))
            elif kind is not _Absent:
                sample = next(item for item in instances if type(item) is kind)
                found += many * sum(1 for fails, expected in rules.type_fails if fails(expected, sample))
        if list in by_kind and rules.max_items is not None:
            limit = rules.max_items
            found += sum(1 for item in instances if type(item) is list and len(item) > limit)
    if dict in kinds and (rules.properties or rules.required or not rules.additional):
        objects = _of_kind(instances, kinds, dict)
        members = sum(map(len, objects))
        found += len(rules.required) * len(objects)
        if members:
            found -= sum(sum(map(dict.__contains__, objects, repeat(name))) for name in rules.required)
            listed = 0
            for name, below in rules.properties.items():
                column = list(map(dict.get, objects, repeat(name), repeat(_ABSENT)))
                present = len(column) - column.count(_ABSENT)
                if present:
                    listed += present
                    found += tally(below, column)
            if not rules.additional:
                found += members - listed
    if list in kinds and rules.items is not None:
        lists = _of_kind(instances, kinds, list)
        found += tally(rules.items, lists[0] if len(lists) == 1 else list(chain.from_iterable(lists)))
    return found


def _of_kind(instances: list[Any], kinds: set[type], kind: type) -> list[Any]:
    return instances if len(kinds) == 1 else [item for item in instances if type(item) is kind]


def _spread(out: list[int], instances: list[Any], kinds: set[type], kind: type, found: list[int]) -> list[int]:
    """``out`` plus ``found``, which counts the instances of ``kind``, in their order."""
    if len(kinds) == 1:
        return list(map(add, out, found))
    more = iter(found)
    return [total + next(more) if type(item) is kind else total for total, item in zip(out, instances, strict=True)]


def _leaf_counts(rules: _Rules, instances: list[Any], kinds: set[type]) -> list[int]:
    """How many of the node's own checks each instance fails."""
    if not rules.checks:
        return [0] * len(instances)
    by_kind: dict[type, int] = {_Absent: 0}
    for kind in kinds - {str, _Absent}:
        sample = next(item for item in instances if type(item) is kind)
        # maxItems is the one check of a value that is not a string to read more than its type: added below.
        by_kind[kind] = sum(1 for fails, expected in rules.type_fails if fails(expected, sample))
    if str in kinds:
        only_text = kinds <= {str, _Absent}
        texts = set(instances) if only_text else {item for item in instances if type(item) is str}
        texts.discard(_ABSENT)
        distinct = list(texts)
        by_text: dict[Any, int] = dict(zip(distinct, _text_fails(rules, distinct), strict=True))
        by_text[_ABSENT] = 0
        if only_text:
            out = list(map(by_text.__getitem__, instances))
        else:
            out = [by_text[item] if type(item) is str else by_kind[type(item)] for item in instances]
    else:
        out = list(map(by_kind.__getitem__, map(type, instances)))
    if list in kinds and rules.max_items is not None:
        limit = rules.max_items
        out = [total + (type(item) is list and len(item) > limit) for total, item in zip(out, instances, strict=True)]
    return out


def _text_fails(rules: _Rules, texts: list[str]) -> list[int]:
    """How many of the node's own checks each of ``texts`` fails, check by check (:func:`_bulk`)."""
    out = [0] * len(texts)
    for fails in rules.text_fails:
        out = list(map(add, out, fails(texts)))
    return out


_Bulk = Callable[[list[str]], "list[bool]"]


def _bulk(keyword: str, check: _Check, expected: Any) -> _Bulk | None:
    """Whether each of many strings fails one check, in one pass (maps that run in C where it
    can); None for a check no string can fail (maxItems). The tests hold each to the check."""
    if keyword == "maxItems":
        return None
    if keyword == "type":
        fails = check(expected, "") is not None  # a string's type is a string's
        return lambda texts: [fails] * len(texts)
    if keyword == "maxLength":
        return lambda texts: list(map(int(expected).__lt__, map(len, texts)))
    if keyword == "minLength":
        return lambda texts: list(map(int(expected).__gt__, map(len, texts)))
    if keyword == "const":
        return lambda texts: list(map(str(expected).__ne__, texts))
    if keyword == "enum":
        allowed = frozenset(expected)
        return lambda texts: list(map(not_, map(allowed.__contains__, texts)))
    if keyword == "pattern":
        same = python_pattern(expected)
        if same is not None:
            return lambda texts: list(map(not_, map(same.fullmatch, texts)))
        matches = _matcher(expected).matches
        return lambda texts: list(map(not_, map(matches, texts)))
    return lambda texts: [check(expected, text) is not None for text in texts]


# A pattern written only with what Python's `re` (ASCII) and RE2 read alike: anchored at both ends, literal
# letters, digits and :-_, classes of those (no negation), \d, \w, counted repeats. It matches exactly where
# its middle fully matches in `re`: RE2's $ is the text's end (fullmatch takes no final newline either), \d
# and \w are ASCII in both, and no atom matches a lone surrogate. The tests hold them to RE2.
_ATOM = r"(?:\[[A-Za-z0-9_:\-]+\]|\\[dw.]|[A-Za-z0-9_:\-])"
_ALIKE = re.compile(r"\^(?:" + _ATOM + r"(?:\{[0-9]+(?:,[0-9]+)?\}|[+*?])?)*\$")


@functools.cache
def python_pattern(pattern: str) -> re.Pattern[str] | None:
    """The `re` pattern that matches a whole string where RE2 ``pattern`` matches it, or
    None when ``pattern`` uses more than the two read alike (see _ALIKE)."""
    if _ALIKE.fullmatch(pattern) is None:
        return None
    return re.compile(pattern[1:-1], re.ASCII)


def _member_counts(rules: _Rules, objects: list[dict[Any, Any]]) -> list[int]:
    """Each object's findings below its own checks, a column of member values at a time."""
    out = [0] * len(objects)
    if rules.required:
        out = list(map(len, map(rules.required.difference, objects)))
    if not rules.additional:
        unexpected = map(sub, map(len, objects), map(len, map(rules.known.intersection, objects)))
        out = list(map(add, out, unexpected))
    for name, below in rules.properties.items():
        column = list(map(dict.get, objects, repeat(name), repeat(_ABSENT)))
        if column.count(_ABSENT) == len(column):
            continue
        out = list(map(add, out, counts(below, column)))
    return out


def _item_counts(items: _Rules, lists: list[list[Any]]) -> list[int]:
    """Each array's findings in its items."""
    if len(lists) == 1:
        return [sum(counts(items, lists[0]))]
    found = iter(counts(items, list(chain.from_iterable(lists))))
    return [sum(islice(found, len(each))) for each in lists]


def explain(
    obj: Mapping[str, Any],
    version: str,
    *,
    escaped: frozenset[str] = frozenset(),
    limit: int | None = MAX_FINDINGS,
    listed_before: int = 0,
) -> list[Finding]:
    """The schema violations of ``obj`` against ``version``: the first ``limit`` in path order, then a
    ``truncated`` finding counting the rest (``limit=None``: all of them).

    ``listed_before``: findings already listed in the same report; they take their share of ``limit`` and
    the ``truncated`` finding counts them too. ``escaped`` names the top-level members of
    :data:`cmp._intake.RAW_TEXT_MEMBERS` written with an escape.
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
    """Why a raw-text member written with an escape is refused, or None when another finding refuses it."""
    if not isinstance(value, str) or not _timestamps.is_valid(value):
        return None
    return (
        f"{quote(value)} is written with a JSON escape; {name} must be plain text "
        "(the reference reads it without unescaping)"
    )
