"""An iterative JSON parser for documents that may nest deeper than Python's recursion limit.

The C decoder in :mod:`json` raises RecursionError near 1,000 levels; the reference
accepts 10,000. Values are read by the caller's decoder (its C scanner and hooks, so both
parsers agree on every value), and the work stays linear in the text. A container is
handed whole to the C scanner only when ``depth_bound`` says it cannot nest deeper than
``C_LEVELS`` below it. Where the C scanner refuses a value, it is read again the slow way,
so messages and positions never depend on which reader read the text; no container is
handed to the C scanner again after a refusal.
"""

from __future__ import annotations

import bisect
import functools
import json
import json.decoder
import json.scanner
import re
from collections import deque
from collections.abc import Callable
from itertools import accumulate
from typing import Any

_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
# JSON's number grammar, and the constants the strict decoders refuse (cmp._intake reads both too).
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
CONSTANTS = ("NaN", "Infinity", "-Infinity")

# Levels below a container the C scanner is trusted to recurse (the default limit is 1,000;
# a RecursionError from a deeper caller is handled).
C_LEVELS = 200

_SPACE = " \t\n\r"
_SPACES = re.compile(r"[ \t\n\r]*")
_ARRAYS = re.compile(r"\[+")  # a run of openers with nothing between
_OPENERS = re.compile(r"\[(?:[ \t\n\r]*\[)*")  # ... or with whitespace between
_CLOSERS_TIGHT = re.compile(r"\]+")
_CLOSERS = re.compile(r"\](?:[ \t\n\r]*\])*")
# Where a run of arrays holding numbers and literals surely ends (cmp._deepjson._open_levels).
_NO_STRING_OR_CLOSER = re.compile(r'[^"\]{}:]*')
_SCALAR_STARTS = frozenset("-0123456789tfn")
# Objects each opened with its first member's name, written without an escape: {"a":{"b":
_NAMED_ONE = r'\{[ \t\n\r]*"[^"\\\x00-\x1f]*"[ \t\n\r]*:[ \t\n\r]*'
_NAMED = re.compile(f"(?:{_NAMED_ONE})+")
_PLAIN_NAMES = re.compile(r'"([^"\\\x00-\x1f]*)"')
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


def loads(
    text: str, decoder: json.JSONDecoder, max_depth: int, depth_bound: int | None = None, *, names_hook: bool = False
) -> Any:
    """The value of ``text``, read with ``decoder``'s scanner and hooks, nesting at most
    ``max_depth`` deep; :class:`DeepJSONError` says where it is refused. ``depth_bound``: at
    least the deepest nesting before any error (None: unknown). ``names_hook``: the object
    hook only watches for a name written twice, so a one-member object is built without it."""
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
            whole = False
            if depth >= whole_from:
                try:
                    value, pos = scan(text, pos)
                    whole = True
                except (StopIteration, ValueError, RecursionError):
                    whole_from = never  # read here; the error, if any, is found here
            if not whole:
                if char == "[":
                    first = _skip(text, _ARRAYS.match(text, pos).end())  # type: ignore[union-attr]
                    if text[first : first + 1] in _SCALAR_STARTS:  # arrays holding scalars first: at once
                        opened = _open_levels(text, pos, stack, depth, max_depth, whole_from, decoder)
                    else:
                        opened = _open_arrays(text, pos, stack, depth, max_depth, whole_from)
                    pos, empty = opened
                    if not empty:
                        continue
                    value = stack.pop()
                    pos += 1
                else:
                    run = _NAMED.match(text, pos)
                    if run is not None:  # objects each opened with a name written plainly: at once
                        pos = _open_objects(text, pos, run.end(), stack, objects, depth, max_depth, whole_from)
                        continue
                    if depth >= max_depth:
                        raise _fail(text, pos, f"nesting deeper than {max_depth}")
                    stack.append([])
                    objects.append(depth)
                    pos = _skip(text, pos + 1)
                    if pos >= n or text[pos] != "}":
                        pos = _member_name(text, pos, stack[-1])
                        continue
                    stack.pop()
                    objects.pop()
                    value = pairs_hook([])
                    pos += 1
        elif char == '"':
            try:
                value, pos = _scanstring(text, pos + 1, True)
            except ValueError:
                value, pos = _slow_value(text, pos, decoder)
        elif char in "NI" or (char == "-" and text.startswith("-I", pos)):
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
            if pos < n and text[pos] in _SPACE:
                pos = _SPACES.match(text, pos).end()  # type: ignore[union-attr]
            if pos >= n:
                raise _fail(text, pos, "Unterminated container")
            char = text[pos]
            in_object = bool(objects) and objects[-1] == len(stack) - 1
            if char == ",":
                pos += 1
                if pos < n and text[pos] in _SPACE:
                    pos = _SPACES.match(text, pos).end()  # type: ignore[union-attr]
                if in_object:
                    pos = _member_name(text, pos, frame)
                break
            if in_object:
                if char != "}":
                    raise _fail(text, pos, "Expecting ',' or '}'")
                # Each "}" right after closes the object open innermost, while objects
                # are; any other closer is then judged at the top of this loop.
                stack.pop()
                objects.pop()
                if len(frame) != 2:
                    value = pairs_hook(_pairs(frame))
                else:
                    value = {frame[0]: frame[1]} if names_hook else pairs_hook([(frame[0], frame[1])])
                pos += 1
                while pos < n and text[pos] == "}" and objects and objects[-1] == len(stack) - 1:
                    frame = stack.pop()
                    objects.pop()
                    if len(frame) != 1:
                        frame.append(value)
                        value = pairs_hook(_pairs(frame))
                    else:
                        value = {frame[0]: value} if names_hook else pairs_hook([(frame[0], value)])
                    pos += 1
                continue
            if char != "]":
                raise _fail(text, pos, "Expecting ',' or ']'")
            # A run of closers closes the arrays open above the innermost object, as many
            # as it holds; a closer past those is then judged at the top of this loop.
            run_end = _CLOSERS_TIGHT.match(text, pos).end()  # type: ignore[union-attr]
            if run_end < n and text[run_end] in _SPACE:
                run_end = _CLOSERS.match(text, pos).end()  # type: ignore[union-attr]
                count = text.count("]", pos, run_end)
            else:
                count = run_end - pos
            arrays = len(stack) - (objects[-1] + 1 if objects else 0)
            closing = min(count, arrays)
            value = stack.pop()
            for _ in range(closing - 1):
                parent = stack.pop()
                parent.append(value)
                value = parent
            pos = run_end if closing == count else _after(text, pos, "]", closing)


def _pairs(frame: list[Any]) -> list[tuple[str, Any]]:
    """An object's members from its frame (name, value, name, value, ...)."""
    return list(zip(frame[0::2], frame[1::2], strict=True))


def _open_arrays(
    text: str, pos: int, stack: list[list[Any]], depth: int, max_depth: int, whole_from: int
) -> tuple[int, bool]:
    """Open the run of arrays at ``pos``, up to the depth the C scanner takes over from:
    where the next value starts, and whether the innermost array is empty (its ``]`` there)."""
    run_end = _ARRAYS.match(text, pos).end()  # type: ignore[union-attr]
    if run_end < len(text) and text[run_end] in _SPACE:
        run_end = _OPENERS.match(text, pos).end()  # type: ignore[union-attr]
        count = text.count("[", pos, run_end)
    else:
        count = run_end - pos
    if depth + count > max_depth:
        # Each opener checks the depth before it opens: the first too deep is refused.
        at = _skip(text, _after(text, pos, "[", max_depth - depth))
        raise _fail(text, at, f"nesting deeper than {max_depth}")
    if depth < whole_from < depth + count:
        count = whole_from - depth
        run_end = _after(text, pos, "[", count)
    stack.extend([[] for _ in range(count)])
    pos = _skip(text, run_end)
    # Only a run read to its end can close empty: a shortened one has "[" next.
    return pos, pos < len(text) and text[pos] == "]"


def _open_levels(
    text: str,
    pos: int,
    stack: list[list[Any]],
    depth: int,
    max_depth: int,
    whole_from: int,
    decoder: json.JSONDecoder,
) -> tuple[int, bool]:
    """Open the arrays at ``pos`` that each hold numbers or literals before their next
    array (``[0,[1, true,[``) with one C reading of all their items (as one array of
    arrays, each ending in a null that is taken off). Where the next value starts, and
    whether the innermost array is empty. Where the C scanner refuses an array's items,
    the arrays before it are opened, and that one is read item by item.
    """
    end = _NO_STRING_OR_CLOSER.match(text, pos).end()  # type: ignore[union-attr]
    pieces = text[pos:end].split("[")[1:]  # each array's items, each with its comma
    # The innermost array's items up to its last comma; what follows is the next value.
    last = pieces[-1]
    pieces[-1] = last[: last.rfind(",") + 1]
    too_deep = depth + len(pieces) > max_depth
    opening = max_depth - depth if too_deep else len(pieces)  # past those, an opener is refused
    if depth < whole_from < depth + opening:
        opening = whole_from - depth
    del pieces[opening:]
    try:
        levels: list[list[Any]] = decoder.decode("[[" + "null],[".join(pieces) + "null]]") if pieces else []
    except json.JSONDecodeError as exc:
        # The first array whose items are refused: the ones before it are read again.
        starts = list(accumulate(len(piece) + len("null],[") for piece in pieces))
        opening = bisect.bisect_right(starts, exc.pos - len("[["))
        del pieces[opening:]
        too_deep = False  # that array's items come first, read one by one
        levels = decoder.decode("[[" + "null],[".join(pieces) + "null]]") if pieces else []
    deque(map(list.pop, levels), maxlen=0)
    stack.extend(levels)
    end = _skip(text, pos + opening + sum(map(len, pieces)))
    if too_deep:  # their items are read (one may be refused first), then the next opener is
        raise _fail(text, end, f"nesting deeper than {max_depth}")
    if not pieces:  # the first array's items are refused: read them one by one
        stack.append([])
        return _skip(text, pos + 1), False
    return end, not pieces[-1].strip(_SPACE) and text[end : end + 1] == "]"


def _open_objects(
    text: str,
    pos: int,
    run_end: int,
    stack: list[list[Any]],
    objects: list[int],
    depth: int,
    max_depth: int,
    whole_from: int,
) -> int:
    """Open the run of objects at ``pos`` (each written ``{"name":``, the name plain), up
    to the depth the C scanner takes over from: where the innermost name's value starts."""
    names = _PLAIN_NAMES.findall(text, pos, run_end)
    count = len(names)
    if depth + count > max_depth:
        at = _run_of(_NAMED_ONE, max_depth - depth).match(text, pos)
        assert at is not None
        raise _fail(text, at.end(), f"nesting deeper than {max_depth}")
    if depth < whole_from < depth + count:
        count = whole_from - depth
        names = names[:count]
        after = _run_of(_NAMED_ONE, count).match(text, pos)
        assert after is not None
        run_end = after.end()
    stack.extend([[name] for name in names])
    objects.extend(range(depth, depth + count))
    return run_end


def _skip(text: str, pos: int) -> int:
    if pos < len(text) and text[pos] in _SPACE:
        return _SPACES.match(text, pos).end()  # type: ignore[union-attr]
    return pos


def _after(text: str, pos: int, bracket: str, count: int) -> int:
    """Where the ``count`` brackets of the run at ``pos`` end (whitespace may separate them)."""
    if text.count(bracket, pos, pos + count) == count:
        return pos + count
    end = _run_of(r"[ \t\n\r]*" + re.escape(bracket), count).match(text, pos)
    assert end is not None
    return end.end()


@functools.lru_cache(maxsize=16)
def _run_of(piece: str, count: int) -> re.Pattern[str]:
    """``piece`` ``count`` times over (asked for by a refusal, or the turn to the C scanner)."""
    return re.compile(f"(?:{piece}){{{count}}}")


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
