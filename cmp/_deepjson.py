"""An iterative JSON parser for documents that may nest deeper than Python's recursion limit.

The C decoder in :mod:`json` recurses once per level and raises RecursionError near
1,000 levels, while the reference accepts up to 10,000. Documents with many brackets
come here instead; strings and numbers are decoded by the same functions as the fast
path, so both parsers agree on every value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
# JSON's number grammar, and the constants the strict decoders refuse (cmp._intake reads both too).
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
CONSTANTS = ("NaN", "Infinity", "-Infinity")


class DeepJSONError(ValueError):
    """Text this parser refuses; ``pos`` is where, in code points (like JSONDecodeError's)."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def _fail(text: str, pos: int, what: str) -> DeepJSONError:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return DeepJSONError(f"{what} at line {line} column {column}", pos)


def loads(
    text: str,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], dict[str, Any]],
    parse_constant: Callable[[str], Any],
    parse_float: Callable[[str], Any],
    parse_int: Callable[[str], Any],
    max_depth: int,
) -> Any:
    # Each frame is [pairs-or-items, is_object, pending member name].
    stack: list[list[Any]] = []
    pos = _skip(text, 0)
    result: Any = None
    done = False
    while True:
        # Expect a value at pos.
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
            match = NUMBER.match(text, pos)
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
                    for constant in CONSTANTS:
                        if text.startswith(constant, pos):
                            parse_constant(constant)
                    raise _fail(text, pos, "Expecting value")
        # A complete value: attach it and close containers as far as the text says.
        while True:
            if not stack:
                result = value
                done = True
                break
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
        if done:
            break
    pos = _skip(text, pos)
    if pos != len(text):
        raise _fail(text, pos, "Extra data")
    return result


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
