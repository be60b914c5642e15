"""The test oracle for cmp._explain: jsonschema itself, with the library's leaf messages.

jsonschema walks the schema (properties, items) and tracks paths, independently of the
library's own rule walker; only the leaf keywords are replaced, so that patterns run on
RE2 (as the reference's do), created_at is judged by :mod:`cmp._timestamps`, and the
messages are the ones the library writes. The tests hold cmp._explain to this over the
conformance vectors and generated and mutated packets.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator

from cmp import _timestamps as timestamps
from cmp._explain import type_name
from cmp._matcher import Matcher
from cmp._messages import path_join, quote
from cmp.findings import Finding
from cmp.schema import load_schema


def _type_name(instance: Any) -> str:
    # The message's words are the library's (stated once, in cmp._explain); the walk is jsonschema's.
    return type_name(instance)


@functools.cache
def _matcher(pattern: str) -> Matcher:
    return Matcher(pattern)


def _type(validator: Validator, expected: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    if not validator.is_type(instance, expected):
        yield ValidationError(f"expected {expected}, got {_type_name(instance)}")


def _pattern(validator: Validator, pattern: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    if isinstance(instance, str) and not _matcher(pattern)(instance):
        yield ValidationError(f"{quote(instance)} does not match {pattern}")


def _format(validator: Validator, fmt: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    if fmt == "date-time" and isinstance(instance, str) and not timestamps.is_valid(instance):
        if timestamps.is_rfc3339(instance):
            reason = "is RFC 3339 but outside the subset packets use"
        else:
            reason = "is not an RFC 3339 date-time"
        yield ValidationError(f"{quote(instance)} {reason} (YYYY-MM-DDTHH:MM:SS[.1-9 digits](Z|±HH:MM))")


def _max_length(
    validator: Validator, limit: int, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if isinstance(instance, str) and len(instance) > limit:
        yield ValidationError(f"is {len(instance)} characters, longer than {limit}")


def _min_length(
    validator: Validator, limit: int, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if isinstance(instance, str) and len(instance) < limit:
        yield ValidationError(f"is {len(instance)} characters, shorter than {limit}")


def _max_items(validator: Validator, limit: int, instance: Any, schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    if isinstance(instance, list) and len(instance) > limit:
        yield ValidationError(f"has {len(instance)} items, more than {limit}")


def _enum(
    validator: Validator, allowed: list[str], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not (isinstance(instance, str) and instance in allowed):
        shown = quote(instance) if isinstance(instance, str) else _type_name(instance)
        yield ValidationError(f"{shown} is not one of {', '.join(allowed)}")


def _const(validator: Validator, const: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    if not (isinstance(instance, str) and instance == const):
        shown = quote(instance) if isinstance(instance, str) else _type_name(instance)
        yield ValidationError(f"{shown} is not {const!r}")


def _required(
    validator: Validator, names: list[str], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if isinstance(instance, dict):
        for name in names:
            if name not in instance:
                yield ValidationError(f"missing required member {name!r}", path=[name])


def _additional(
    validator: Validator, allowed: bool, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if isinstance(instance, dict) and allowed is False:
        known = schema.get("properties", {})
        for name in instance:
            if name not in known:
                yield ValidationError(f"unexpected member {quote(str(name))}", path=[name])


_Validator = validators.extend(
    Draft202012Validator,
    {
        "type": _type,
        "pattern": _pattern,
        "format": _format,
        "maxLength": _max_length,
        "minLength": _min_length,
        "maxItems": _max_items,
        "enum": _enum,
        "const": _const,
        "required": _required,
        "additionalProperties": _additional,
    },
)


@functools.cache
def _validator(version: str) -> Any:
    schema = load_schema(version)
    Draft202012Validator.check_schema(schema)
    return _Validator(schema)


def _path(error: ValidationError) -> str:
    path = "$"
    for key in error.absolute_path:
        path = path_join(path, key)
    return path


def _sort_key(finding_path: tuple[str | int, ...]) -> tuple[tuple[int, str | int], ...]:
    return tuple((0, key) if isinstance(key, int) else (1, key) for key in finding_path)


def explain(obj: Mapping[str, Any], version: str) -> list[Finding]:
    """Every schema violation of ``obj`` against ``version``, sorted by path, uncapped."""
    errors = list(_validator(version).iter_errors(obj))
    errors.sort(key=lambda e: (_sort_key(tuple(e.absolute_path)), str(e.validator)))
    return [Finding("schema", _path(e), e.message, keyword=str(e.validator)) for e in errors]
