"""Strict intake: raw bytes to a JSON object, refusing everything RFC 8259 and UTF-8 refuse.

Order matters and follows the reference: size, then encoding and syntax, then the
top-level type. Version routing lives in :mod:`cmp._validation`.
"""

from __future__ import annotations

import json
import math
import re
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate
from typing import Any

from cmp import _deepjson
from cmp._messages import BoundedPath, capped, quote
from cmp.findings import Finding

MAX_PACKET_BYTES = 32_768
MAX_DEPTH = 10_000  # the reference's (Go encoding/json) nesting limit

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
SURROGATE = re.compile("[\ud800-\udfff]")  # a lone surrogate (cmp._positions reads it too)


class _Refused(ValueError):
    """A value the JSON grammar admits but RFC 8259 interoperability rules out."""


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Refused(f"number {_clip(text)} does not fit a finite double")
    return value


def _finite_int(text: str) -> int | float:
    # float() of a long digit string is linear and never raises; int() of one
    # past 4,300 digits would, and such a number overflows a double anyway.
    if math.isinf(float(text)):
        raise _Refused(f"number {_clip(text)} does not fit a finite double")
    return int(text)


def _clip(text: str) -> str:
    return text if len(text) <= 24 else text[:24] + "…"


class _ParseState(threading.local):
    """Per-thread notes of the parse in progress, so one decoder serves every call."""

    def __init__(self) -> None:
        self.duplicates: list[tuple[dict[str, Any], str]] = []


_state = _ParseState()


def _record_duplicates(
    pairs: list[tuple[str, Any]], dict: type[dict[str, Any]] = dict, len: Any = len
) -> dict[str, Any]:
    """object_pairs_hook: build the dict and note a member name it lost to a duplicate.

    Called once per JSON object, so builtins are bound as locals.
    """
    obj = dict(pairs)
    if len(obj) != len(pairs):
        names: set[str] = set()
        for name, _ in pairs:
            if name in names:
                _state.duplicates.append((obj, name))
            names.add(name)
    return obj


# Built once: json.loads(text, **hooks) would build a new decoder and scanner per call.
_DECODER = json.JSONDecoder(
    object_pairs_hook=_record_duplicates,
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    parse_int=_finite_int,
)


# The same refusals without the duplicate bookkeeping, for the quick path (cmp._quick).
_PLAIN_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    parse_int=_finite_int,
)


def decode_plain(raw: bytes) -> Any:
    """The JSON value of ``raw`` at the C decoder's full speed, or None for anything it refuses.

    No findings and no duplicate tracking: a caller that needs either reads the bytes
    with :func:`parse_packet`. (``null`` text also gives None; no packet is ``null``.)
    """
    try:
        text = raw.decode("utf-8")
        if not text or text[0] in _JSON_SPACE:
            return _PLAIN_DECODER.decode(text)
        # What JSONDecoder.decode does, without its two Python frames and two regex
        # matches: the value from the first character on, then nothing but whitespace.
        value, end = _PLAIN_SCAN(text, 0)
    except StopIteration:  # no value starts the text
        return None
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
    if end < len(text) and text[end:].strip(_JSON_SPACE):
        return None  # more than whitespace after the value
    return value


# JSON's whitespace, which JSONDecoder.decode skips around the value (json.decoder.WHITESPACE).
_JSON_SPACE = " \t\n\r"
_PLAIN_SCAN: Callable[[str, int], tuple[Any, int]] = _PLAIN_DECODER.scan_once  # type: ignore[attr-defined]


# Members the reference reads as raw JSON text, without unescaping: written with an
# escape, they are refused even when the value they decode to is valid (specification 7.3).
RAW_TEXT_MEMBERS: frozenset[str] = frozenset({"created_at"})

# A JSON string token, or one structural character. On valid JSON text, scanning with it
# from the start never lands inside a string.
_STRING_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"')
_TOKEN = re.compile(_STRING_TOKEN.pattern + rb"|[\[\]{}:]")


def escaped_members(raw: bytes, names: frozenset[str]) -> frozenset[str]:
    """Which of the top-level members ``names`` have a string value written with an escape.

    ``raw`` must be a JSON object text that parsed. Scans tokens from the start and
    stops once every name was seen, so members written early cost almost nothing.
    """
    if b"\\" not in raw or not names:
        return frozenset()
    found: set[str] = set()
    seen = 0
    depth = 0
    name: str | None = None  # the member whose value comes next, at depth 1
    value_at = -1  # where that value starts, once its colon was read
    for match in _TOKEN.finditer(raw):
        token = match.group()
        lead = token[:1]
        if value_at >= 0:
            # The token right after the colon is the value; a number, true, false or
            # null is no token, and then the next token is already another member's.
            is_value = not raw[value_at : match.start()].strip(b" \t\n\r")
            value_at = -1
            if name in names:
                seen += 1
                if is_value and lead == b'"' and b"\\" in token:
                    found.add(name)
                if seen == len(names):
                    break
        if lead == b'"':
            if depth == 1:
                name = json.loads(token) if b"\\" in token else token[1:-1].decode("utf-8")
        elif lead in (b"{", b"["):
            depth += 1
        elif lead in (b"}", b"]"):
            depth -= 1
        elif depth == 1:  # a colon: the value of ``name`` comes next
            value_at = match.end()
    return frozenset(found)


def _json_finding(message: str) -> Finding:
    return Finding("json", "$", f"invalid json: {message}")


class _Node:
    """A value in the document with a link to its parent; its path is made on first use.

    Each node's path grows from its parent's (a :class:`BoundedPath`), so paths cost
    the same at any depth and a document full of findings stays linear.
    """

    __slots__ = ("_path", "key", "parent", "value")

    def __init__(self, value: Any, parent: _Node | None, key: str | int | None) -> None:
        self.value = value
        self.parent = parent
        self.key = key
        self._path: BoundedPath | None = None

    def trail(self) -> BoundedPath:
        if self._path is None:
            # Walk up to the nearest ancestor that knows its path, then down again:
            # no recursion, and every node on the way remembers its own.
            pending: list[_Node] = []
            node: _Node | None = self
            while node is not None and node._path is None:
                pending.append(node)
                node = node.parent
            path = BoundedPath() if node is None else node._path
            assert path is not None
            for node in reversed(pending):
                path = path if node.key is None else path.child(node.key)
                node._path = path
        assert self._path is not None
        return self._path

    def path(self, last: str | None = None) -> str:
        trail = self.trail()
        return (trail if last is None else trail.child(last)).text


def _walk(root: Any, python_data: bool = False) -> Iterator[_Node]:
    """Every value in the document, depth first, without recursion (documents may nest 10,000 deep).

    With ``python_data`` each container is entered once: one met again while inside
    itself is a reference cycle (only Python data can hold one), reported by yielding
    a node at that place whose value is :data:`_CYCLE`; one shared by two parents is
    walked under the first only. Decoded JSON can hold neither, and skips the bookkeeping.
    """
    entered: set[int] = set()
    open_now: set[int] = set()
    stack: list[_Node | int] = [_Node(root, None, None)]
    while stack:
        top = stack.pop()
        if type(top) is int:  # leaving a container
            open_now.discard(top)
            continue
        assert isinstance(top, _Node)
        value = top.value
        is_dict, is_list = isinstance(value, dict), isinstance(value, list)
        if python_data and (is_dict or is_list):
            ident = id(value)
            if ident in open_now:
                yield _Node(_CYCLE, top.parent, top.key)
                continue
            if ident in entered:
                continue
            entered.add(ident)
            open_now.add(ident)
            stack.append(ident)
        yield top
        if is_dict:
            stack.extend([_Node(item, top, key) for key, item in reversed(value.items())])
        elif is_list:
            stack.extend([_Node(value[i], top, i) for i in range(len(value) - 1, -1, -1)])


_CYCLE = object()


def _data_findings(nodes: Iterable[_Node]) -> Iterator[tuple[bool, Finding]]:
    """``json`` findings for what cannot be written as JSON text, each with whether it is
    structural: Python data may hold member names that are not strings and reference
    cycles (structural: nothing else can be judged), and any text a lone surrogate."""
    for node in nodes:
        item = node.value
        if item is _CYCLE:
            yield True, _json_finding(f"{node.path()} holds itself (a reference cycle)")
        elif isinstance(item, str):
            if SURROGATE.search(item):
                yield False, _json_finding(f"lone surrogate (not a Unicode character) in {node.path()}")
        elif isinstance(item, dict):
            for name in item:
                if not isinstance(name, str):
                    message = f"member name of type {type(name).__name__} in {node.path()} is not a string"
                    yield True, _json_finding(message)
                elif SURROGATE.search(name):
                    yield False, _json_finding(f"lone surrogate in a member name in {node.path()}")


def data_findings(value: Any) -> tuple[list[Finding], list[Finding]]:
    """What stops Python data from being JSON text: (structural findings, lone surrogates).

    Structural findings (member names that are not strings, reference cycles) mean the
    data cannot be judged further.
    """
    structural: list[Finding] = []
    surrogates: list[Finding] = []
    for is_structural, finding in _data_findings(_walk(value, python_data=True)):
        (structural if is_structural else surrogates).append(finding)
    return structural, surrogates


def decode_text(raw: bytes) -> str | Finding:
    """UTF-8 without a BOM, or the reason not."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return _json_finding("a UTF-8 byte order mark is not allowed")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw[:4]:
        return _json_finding("text is UTF-16 or UTF-32; only UTF-8 is accepted")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _json_finding(f"invalid UTF-8 at byte {exc.start}")


def _decode_deep(text: str, duplicates: list[tuple[dict[str, Any], str]]) -> Any:
    duplicates.clear()
    return _deepjson.loads(text, _record_duplicates, _refuse_constant, _finite_float, _finite_int, MAX_DEPTH)


def _decode(text: str, duplicates: list[tuple[dict[str, Any], str]]) -> Any:
    try:
        return _DECODER.decode(text)
    except RecursionError:
        return _decode_deep(text, duplicates)


_OPENERS_AND_CLOSERS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))


def _nests_deeper_than(raw: bytes, limit: int) -> bool:
    """Whether the brackets outside strings nest deeper than ``limit`` (exact for valid JSON).

    Only a text with more than ``limit`` opening brackets can; for those (hostile, or
    wide: ten thousand small items) the depth is measured at C speed: strings dropped,
    brackets kept as +1 and -1, the highest running sum.
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    brackets = _STRING_TOKEN.sub(b"", raw).translate(None, _NOT_BRACKETS)
    return max(accumulate(array("b", brackets.translate(_OPENERS_AND_CLOSERS))), default=0) > limit


def parse_json(text: str, raw: bytes) -> tuple[Any, list[Finding]]:
    """Parse strict JSON; return the value and the findings that refuse it (empty when fine).

    ``raw`` is ``text`` as UTF-8: the byte searches below are cheaper on it.
    """
    duplicates: list[tuple[dict[str, Any], str]] = []
    _state.duplicates = duplicates
    # Only a text nesting deeper than MAX_DEPTH goes straight to the iterative parser,
    # which counts levels (the C decoder's own limit differs between Python versions and
    # follows the process's recursion limit). Its RecursionError sends the rest there too.
    deep = _nests_deeper_than(raw, MAX_DEPTH)
    try:
        value = _decode_deep(text, duplicates) if deep else _decode(text, duplicates)
    except _Refused as exc:
        return None, [_json_finding(str(exc))]
    except json.JSONDecodeError as exc:
        # Some of the decoder's messages end in "at" themselves ("Unterminated string starting at").
        return None, [_json_finding(f"{exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}")]
    except _deepjson.DeepJSONError as exc:
        return None, [_json_finding(str(exc))]

    # One regex pass: on text thick with backslashes a substring test first is slower.
    if duplicates or _SURROGATE_ESCAPE.search(raw) is not None:
        findings = sorted(_decoded_findings(value, duplicates), key=lambda f: (f.code, f.path))
        if findings:
            return None, capped(findings)
    return value, []


# JSON text as tokens: a string (its closing quote missing only at the end of text that
# did not parse), one structural character, or the run of characters of a number or a
# literal. From the start of the text it never lands inside a string. (cmp._positions
# walks documents with it too.)
TEXT_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{},:]|[^\s\[\]{},:"]+')


def refused_at(text: str, raw: bytes) -> int | None:
    """Where :func:`parse_json` refuses ``text`` as JSON, in code points: the decoder's
    error offset, or where the first refused number or constant is written; None when
    the text parses. (Only a report asked for positions calls this: cmp._positions.)
    """
    try:
        if _nests_deeper_than(raw, MAX_DEPTH):
            raise RecursionError
        _PLAIN_DECODER.decode(text)
    except RecursionError:
        try:
            _deepjson.loads(text, dict, _refuse_constant, _finite_float, _finite_int, MAX_DEPTH)
        except _deepjson.DeepJSONError as exc:
            return exc.pos
        except _Refused:
            return _first_refused_value(text)
    except json.JSONDecodeError as exc:
        return exc.pos
    except _Refused:
        return _first_refused_value(text)
    return None


def _first_refused_value(text: str) -> int | None:
    """The first number or constant the decoder refuses, in the order it reads them (it
    reads one before whatever follows it, ``1e999x`` included)."""
    for match in TEXT_TOKEN.finditer(text):
        token = match.group()
        if token.startswith(_deepjson.CONSTANTS):
            return match.start()
        number = _deepjson.NUMBER.match(token)
        if number is not None and math.isinf(float(number.group())):
            return match.start()
    return None


def _decoded_findings(value: Any, duplicates: list[tuple[dict[str, Any], str]]) -> Iterator[Finding]:
    """Duplicate members and lone surrogates of a decoded document, in one walk."""
    lost = {(id(obj), name) for obj, name in duplicates}
    nodes = list(_walk(value))
    if lost:
        for node in nodes:
            if isinstance(node.value, dict):
                for name in node.value:
                    if (id(node.value), name) in lost:
                        yield Finding("duplicate-key", node.path(name), f"member {quote(name)} appears more than once")
    yield from (finding for _, finding in _data_findings(nodes))


def parse_packet(data: bytes | str) -> tuple[dict[str, Any] | None, list[Finding]]:
    """Size, encoding, syntax and top-level type checks, in the reference's order."""
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            return None, [_json_finding(f"text holds a lone surrogate at index {exc.start}")]
    else:
        raw = bytes(data)
    if len(raw) > MAX_PACKET_BYTES:
        return None, [size_finding(len(raw))]
    text = decode_text(raw)
    if isinstance(text, Finding):
        return None, [text]
    value, findings = parse_json(text, raw)
    if findings:
        return None, findings
    if not isinstance(value, dict):
        return None, [Finding("not-object", "$", "packet must be a JSON object")]
    return value, []


def size_finding(size: int | None) -> Finding:
    shown = f"{size}" if size is not None else f"more than {MAX_PACKET_BYTES}"
    return Finding("size", "$", f"packet is {shown} bytes, max is {MAX_PACKET_BYTES}")
