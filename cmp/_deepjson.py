"""An iterative JSON parser for documents that may nest deeper than Python's recursion limit.

The C decoder in :mod:`json` recurses once per level and raises RecursionError near
1,000 levels, while the reference accepts up to 10,000. Documents with many brackets
come here instead. Values are read by the decoder the caller passes (its C scanner and
its hooks, so both parsers agree on every value), and the work stays in proportion to
the text, not to its depth times its width:

- a run of ``[`` opens its arrays at once, and a run of ``]`` closes as many as it holds;
- strings, numbers and literals are read by the C scanner, one call each;
- a whole container is handed to the C scanner when the text cannot nest deeper than
  ``C_LEVELS`` below it (``depth_bound``, an upper bound on the nesting the caller
  measured, says so): the C scanner then cannot run out of recursion, and cannot pass
  ``max_depth`` either.

Where the C scanner refuses a value, the same value is read again the slow way
(:func:`_slow_value`, this parser's own reading), which says why in this parser's
words: messages and positions never depend on which of the two read the text. A
container the C scanner refused is opened here instead, and no container is handed to
it again (so one failing deep container costs one extra reading, never one per level).
"""

from __future__ import annotations

import functools
import json
import json.decoder
import json.scanner
import re
from collections.abc import Callable
from typing import Any

_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
# JSON's number grammar, and the constants the strict decoders refuse (cmp._intake reads both too).
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
CONSTANTS = ("NaN", "Infinity", "-Infinity")

# How many levels below a container the C scanner is trusted to recurse. Python's
# default recursion limit is 1,000 and a check runs a few dozen frames deep; a caller
# that runs deeper still only makes the scanner raise RecursionError, which is handled.
C_LEVELS = 200

_SPACE = " \t\n\r"
_SPACES = re.compile(r"[ \t\n\r]*")
_OPENERS = re.compile(r"\[(?:[ \t\n\r]*\[)*")
_CLOSERS = re.compile(r"\](?:[ \t\n\r]*\])*")
# The C string scanner (the pure-Python one where there is no C): typeshed names neither.
_scanstring: Callable[[str, int, bool], tuple[str, int]] = getattr(json.decoder, "scanstring")  # noqa: B009
_C_SCANNER: type | None = getattr(json.scanner, "c_make_scanner", None)


class DeepJSONError(ValueError):
    """Text this parser refuses; ``pos`` is where, in code points (like JSONDecodeError's)."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def _fail(text: str, pos: int, what: str) -> DeepJSONError:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return DeepJSONError(f"{what} at line {line} column {column}", pos)


def decoder_of(
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None,
    parse_constant: Callable[[str], Any],
    parse_float: Callable[[str], Any],
    parse_int: Callable[[str], Any],
) -> json.JSONDecoder:
    """A strict decoder with these hooks, for :func:`loads`."""
    return json.JSONDecoder(
        object_pairs_hook=object_pairs_hook,
        parse_constant=parse_constant,
        parse_float=parse_float,
        parse_int=parse_int,
    )


def loads(text: str, decoder: json.JSONDecoder, max_depth: int, depth_bound: int | None = None) -> Any:
    """The value of ``text``, read with ``decoder``'s scanner and hooks, nesting at most
    ``max_depth`` deep; a :class:`DeepJSONError` says where the text is refused.

    ``depth_bound``: at least the deepest nesting the text reaches before any error
    (None when unknown); only with it are whole containers handed to the C scanner.
    """
    scan: Callable[[str, int], tuple[Any, int]] = decoder.scan_once  # type: ignore[attr-defined]
    hook: Callable[[list[tuple[str, Any]]], Any] | None = decoder.object_pairs_hook
    pairs_hook = dict if hook is None else hook
    in_c = _C_SCANNER is not None and isinstance(scan, _C_SCANNER)
    n = len(text)
    never = n + max_depth + 1
    # Containers opened at this depth or deeper are read whole by the C scanner.
    whole_from = never
    if in_c and depth_bound is not None and depth_bound <= max_depth:
        whole_from = max(0, depth_bound - C_LEVELS)
    stack: list[list[Any]] = []  # the items of each open container (an object's: name, value, name, ...)
    objects: list[int] = []  # the places in ``stack`` of the open objects
    pos = _skip(text, 0)
    value: Any
    while True:
        # A value starts at pos.
        if pos >= n:
            raise _fail(text, pos, "Expecting value")
        char = text[pos]
        if char == "[" or char == "{":
            depth = len(stack)
            opened = False
            if depth >= whole_from:
                try:
                    value, pos = scan(text, pos)
                except (StopIteration, ValueError, RecursionError):
                    whole_from = never  # read here; the error, if any, is found here
                    opened = True
            else:
                opened = True
            if opened:
                if char == "{":
                    if depth >= max_depth:
                        raise _fail(text, pos, f"nesting deeper than {max_depth}")
                    stack.append([])
                    objects.append(depth)
                    pos = _skip(text, pos + 1)
                    if pos < n and text[pos] == "}":
                        stack.pop()
                        objects.pop()
                        value = pairs_hook([])
                        pos += 1
                    else:
                        pos = _member_name(text, pos, stack[-1])
                        continue
                else:
                    run_end = _OPENERS.match(text, pos).end()  # type: ignore[union-attr]
                    count = text.count("[", pos, run_end)
                    if depth + count > max_depth:
                        # Each opener checks the depth before it opens: the first too deep is refused.
                        at = _skip(text, _after(text, pos, "[", max_depth - depth))
                        raise _fail(text, at, f"nesting deeper than {max_depth}")
                    # Up to the depth the C scanner takes over from, then one more turn.
                    if depth < whole_from < depth + count:
                        count = whole_from - depth
                        run_end = _after(text, pos, "[", count)
                    stack.extend([[] for _ in range(count)])
                    pos = _skip(text, run_end)
                    if pos < n and text[pos] == "]":
                        value = stack.pop()  # the innermost array is empty
                        pos += 1
                    else:
                        continue
        elif char == '"':
            try:
                value, pos = _scanstring(text, pos + 1, True)
            except ValueError:
                value, pos = _slow_value(text, pos, decoder)
        elif char in "NI" or text.startswith("-I", pos):
            value, pos = _slow_value(text, pos, decoder)  # a constant: refused, or Expecting value
        else:
            try:
                value, pos = scan(text, pos)
            except (StopIteration, ValueError):
                value, pos = _slow_value(text, pos, decoder)
        # A complete value: attach it and close containers as far as the text says.
        while True:
            if not stack:
                pos = _skip(text, pos)
                if pos != n:
                    raise _fail(text, pos, "Extra data")
                return value
            frame = stack[-1]
            frame.append(value)
            pos = _skip(text, pos)
            if pos >= n:
                raise _fail(text, pos, "Unterminated container")
            char = text[pos]
            in_object = bool(objects) and objects[-1] == len(stack) - 1
            if char == ",":
                pos = _skip(text, pos + 1)
                if in_object:
                    pos = _member_name(text, pos, frame)
                break
            if in_object:
                if char != "}":
                    raise _fail(text, pos, "Expecting ',' or '}'")
                stack.pop()
                objects.pop()
                value = pairs_hook(list(zip(frame[0::2], frame[1::2], strict=True)))
                pos += 1
                continue
            if char != "]":
                raise _fail(text, pos, "Expecting ',' or ']'")
            # A run of closers closes the arrays open above the innermost object, as many
            # as it holds; a closer past those is then refused at the top of this loop.
            run_end = _CLOSERS.match(text, pos).end()  # type: ignore[union-attr]
            count = text.count("]", pos, run_end)
            arrays = len(stack) - (objects[-1] + 1 if objects else 0)
            closing = min(count, arrays)
            value = stack.pop()
            for _ in range(closing - 1):
                parent = stack.pop()
                parent.append(value)
                value = parent
            pos = run_end if closing == count else _after(text, pos, "]", closing)


def _skip(text: str, pos: int) -> int:
    if pos < len(text) and text[pos] in _SPACE:
        return _SPACES.match(text, pos).end()  # type: ignore[union-attr]
    return pos


def _after(text: str, pos: int, bracket: str, count: int) -> int:
    """Where the ``count`` brackets of the run at ``pos`` end (whitespace may separate them)."""
    if text.count(bracket, pos, pos + count) == count:
        return pos + count
    end = _run_of(bracket, count).match(text, pos)
    assert end is not None
    return end.end()


@functools.lru_cache(maxsize=16)
def _run_of(bracket: str, count: int) -> re.Pattern[str]:
    return re.compile(r"(?:[ \t\n\r]*" + re.escape(bracket) + r"){" + str(count) + "}")


def _member_name(text: str, pos: int, frame: list[Any]) -> int:
    if pos < len(text) and text[pos] == '"':
        try:
            name, end = _scanstring(text, pos + 1, True)
        except ValueError:
            name, end = _slow_name(text, pos)
    else:
        name, end = _slow_name(text, pos)
    frame.append(name)
    pos = _skip(text, end)
    if pos >= len(text) or text[pos] != ":":
        raise _fail(text, pos, "Expecting ':' delimiter")
    return _skip(text, pos + 1)


def _slow_name(text: str, pos: int) -> tuple[str, int]:
    match = _STRING.match(text, pos)
    if match is None:
        raise _fail(text, pos, "Expecting property name enclosed in double quotes")
    name: str = json.loads(match.group())
    return name, match.end()


def _slow_value(text: str, pos: int, decoder: json.JSONDecoder) -> tuple[Any, int]:
    """The scalar at ``pos`` read token by token: where the C scanner refused it, this
    says why (or, for a number, the decoder's hook does)."""
    char = text[pos]
    if char == '"':
        match = _STRING.match(text, pos)
        if match is None:
            raise _fail(text, pos, "Invalid string")
        return json.loads(match.group()), match.end()
    match = NUMBER.match(text, pos)
    if match is not None:
        token = match.group()
        value = decoder.parse_float(token) if match.group(1) or match.group(2) else decoder.parse_int(token)
        return value, match.end()
    for word, literal in _LITERALS.items():
        if text.startswith(word, pos):
            return literal, pos + len(word)
    for constant in CONSTANTS:
        if text.startswith(constant, pos):
            decoder.parse_constant(constant)
    raise _fail(text, pos, "Expecting value")
