"""The test oracle for cmp._intake's shortcuts: strict JSON read the long way.

This is how the intake read a text before it learnt its shortcuts, kept as the yardstick
they are held to: every number and every object through a Python hook, deep text one
token at a time, every value of a refused document visited node by node with a path
each, every finding written and sorted, then capped. The tests hold the intake's
findings, values and refusals to this over generated, mutated and hostile texts.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from cmp import _intake
from cmp._messages import capped, quote
from cmp.findings import Finding

_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_CONSTANTS = ("NaN", "Infinity", "-Infinity")


class TokenError(ValueError):
    """Where :func:`token_by_token` refuses a text (its message and offset)."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def _fail(text: str, pos: int, what: str) -> TokenError:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return TokenError(f"{what} at line {line} column {column}", pos)


def token_by_token(
    text: str,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any],
    parse_constant: Callable[[str], Any],
    parse_float: Callable[[str], Any],
    parse_int: Callable[[str], Any],
    max_depth: int,
) -> Any:
    """The iterative parser cmp._deepjson was: one token at a time, one frame per level."""
    stack: list[list[Any]] = []  # [pairs-or-items, is_object, pending member name]
    pos = _skip(text, 0)
    while True:
        if pos >= len(text):
            raise _fail(text, pos, "Expecting value")
        char = text[pos]
        value: Any
        if char in "[{":
            if len(stack) >= max_depth:
                raise _fail(text, pos, f"nesting deeper than {max_depth}")
            is_object = char == "{"
            stack.append([[], is_object, None])
            pos = _skip(text, pos + 1)
            closer = "}" if is_object else "]"
            if pos < len(text) and text[pos] == closer:
                stack.pop()
                value = object_pairs_hook([]) if is_object else []
                pos += 1
            elif is_object:
                pos = _member_name(text, pos, stack[-1])
                continue
            else:
                continue
        elif char == '"':
            match = _STRING.match(text, pos)
            if match is None:
                raise _fail(text, pos, "Invalid string")
            value = json.loads(match.group())
            pos = match.end()
        else:
            match = _NUMBER.match(text, pos)
            if match is not None:
                token = match.group()
                value = parse_float(token) if match.group(1) or match.group(2) else parse_int(token)
                pos = match.end()
            else:
                for word, literal in _LITERALS.items():
                    if text.startswith(word, pos):
                        value = literal
                        pos += len(word)
                        break
                else:
                    for constant in _CONSTANTS:
                        if text.startswith(constant, pos):
                            parse_constant(constant)
                    raise _fail(text, pos, "Expecting value")
        while True:
            if not stack:
                pos = _skip(text, pos)
                if pos != len(text):
                    raise _fail(text, pos, "Extra data")
                return value
            frame = stack[-1]
            if frame[1]:
                frame[0].append((frame[2], value))
            else:
                frame[0].append(value)
            pos = _skip(text, pos)
            if pos >= len(text):
                raise _fail(text, pos, "Unterminated container")
            char = text[pos]
            closer = "}" if frame[1] else "]"
            if char == ",":
                pos = _skip(text, pos + 1)
                if frame[1]:
                    pos = _member_name(text, pos, frame)
                break
            if char != closer:
                raise _fail(text, pos, f"Expecting ',' or '{closer}'")
            stack.pop()
            value = object_pairs_hook(frame[0]) if frame[1] else frame[0]
            pos += 1


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def _member_name(text: str, pos: int, frame: list[Any]) -> int:
    match = _STRING.match(text, pos)
    if match is None:
        raise _fail(text, pos, "Expecting property name enclosed in double quotes")
    frame[2] = json.loads(match.group())
    pos = _skip(text, match.end())
    if pos >= len(text) or text[pos] != ":":
        raise _fail(text, pos, "Expecting ':' delimiter")
    return _skip(text, pos + 1)


def nests_deeper_than(raw: bytes, limit: int) -> bool:
    """Whether the brackets outside strings nest deeper than ``limit``: the running sum."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    brackets = (
        _intake._string_token()
        .sub(b"", raw)
        .translate(None, b"".join(bytes([i]) for i in range(256) if i not in b"[]{}"))
    )
    steps = brackets.translate(bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff"))
    return max(accumulate(array("b", steps)), default=0) > limit


class _Duplicates:
    """The object hook as it was: each lost name noted once per repetition."""

    def __init__(self) -> None:
        self.found: list[tuple[dict[str, Any], str]] = []

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            names: set[str] = set()
            for name, _ in pairs:
                if name in names:
                    self.found.append((obj, name))
                names.add(name)
        return obj


def parse_json(text: str, raw: bytes, max_depth: int = _intake.MAX_DEPTH) -> tuple[Any, list[Finding]]:
    """:func:`cmp._intake.parse_json` the long way."""
    duplicates = _Duplicates()
    hooks = (duplicates, _intake._refuse_constant, _intake._finite_float, _intake._finite_int)
    decoder = json.JSONDecoder(
        object_pairs_hook=duplicates,
        parse_constant=_intake._refuse_constant,
        parse_float=_intake._finite_float,
        parse_int=_intake._finite_int,
    )
    try:
        if nests_deeper_than(raw, max_depth):
            value = token_by_token(text, *hooks, max_depth)
        else:
            try:
                value = decoder.decode(text)
            except RecursionError:
                duplicates.found.clear()
                value = token_by_token(text, *hooks, max_depth)
    except _intake._Refused as exc:
        return None, [_intake._json_finding(str(exc))]
    except json.JSONDecodeError as exc:
        return None, [_intake._json_finding(f"{exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}")]
    except TokenError as exc:
        return None, [_intake._json_finding(str(exc))]
    if duplicates.found or _intake._surrogate_escape().search(raw) is not None:
        findings = sorted(_decoded_findings(value, duplicates.found), key=lambda f: (f.code, f.path))
        if findings:
            return None, capped(findings)
    return value, []


def _decoded_findings(value: Any, duplicates: list[tuple[dict[str, Any], str]]) -> list[Finding]:
    """Every duplicate member and lone surrogate, visiting every value with its path."""
    lost = {(id(obj), name) for obj, name in duplicates}
    nodes = list(_intake._walk(value))
    found: list[Finding] = []
    if lost:
        for node in nodes:
            if isinstance(node.value, dict):
                for name in node.value:
                    if (id(node.value), name) in lost:
                        found.append(
                            Finding("duplicate-key", node.path(name), f"member {quote(name)} appears more than once")
                        )
    found.extend(finding for _, finding in _intake._data_findings(nodes))
    return found


def parse_packet(data: bytes) -> tuple[dict[str, Any] | None, list[Finding]]:
    """:func:`cmp._intake.parse_packet` the long way (for bytes)."""
    if len(data) > _intake.MAX_PACKET_BYTES:
        return None, [_intake.size_finding(len(data))]
    text = _intake.decode_text(data)
    if isinstance(text, Finding):
        return None, [text]
    value, findings = parse_json(text, data)
    if findings:
        return None, findings
    if not isinstance(value, dict):
        return None, [Finding("not-object", "$", "packet must be a JSON object")]
    return value, []
