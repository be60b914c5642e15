"""Strict intake: raw bytes to a JSON object, refusing everything RFC 8259 and UTF-8 refuse.

Order matters and follows the reference: size, then encoding and syntax, then the
top-level type. Version routing lives in :mod:`cmp.versions`.
"""

from __future__ import annotations

import json
import math
import re
import threading
from typing import Any

from cmp import deepjson
from cmp.findings import Finding, bounded_path, path_join, quote

MAX_PACKET_BYTES = 32_768
MAX_DEPTH = 10_000  # the reference's (Go encoding/json) nesting limit

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


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


# The same refusals without the duplicate bookkeeping, for parse_counted.
_COUNTING_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    parse_int=_finite_int,
)


def parse_counted(raw: bytes) -> tuple[dict[str, Any], int] | None:
    """The common case, read at the C decoder's full speed: (object, strings).

    Only text without a backslash is read this way: there, every quote opens or closes
    a string, so ``strings`` (member names plus string values) is half the quotes,
    and a caller that counts fewer in the object knows a duplicate member was
    dropped. None means "not this way": a backslash, a syntax error, a refused
    number, a non-object; :func:`parse_packet` reads those and gives the findings.
    """
    if len(raw) > MAX_PACKET_BYTES:
        return None
    if b"\\" in raw:
        return None
    quotes = raw.count(b'"')
    if quotes % 2:
        return None
    try:
        value = _COUNTING_DECODER.decode(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
    if type(value) is not dict:
        return None
    return value, quotes // 2


def _json_finding(message: str) -> Finding:
    return Finding("json", "$", f"invalid json: {message}")


class _Node:
    """A value in the document with a link to its parent, so paths are built only when needed."""

    __slots__ = ("key", "parent", "value")

    def __init__(self, value: Any, parent: _Node | None, key: str | int | None) -> None:
        self.value = value
        self.parent = parent
        self.key = key

    def path(self, last: str | None = None) -> str:
        keys: list[str | int] = [] if last is None else [last]
        node: _Node | None = self
        while node is not None and node.key is not None:
            keys.append(node.key)
            node = node.parent
        path = "$"
        for key in reversed(keys):
            path = path_join(path, key)
        return bounded_path(path)


def _walk(root: Any) -> list[_Node]:
    """Every value in the document, without recursion (documents may nest 10,000 deep)."""
    out: list[_Node] = []
    stack = [_Node(root, None, None)]
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node.value, dict):
            stack.extend(_Node(item, node, key) for key, item in node.value.items())
        elif isinstance(node.value, list):
            stack.extend(_Node(item, node, index) for index, item in enumerate(node.value))
    return out


def lone_surrogates(value: Any, nodes: list[_Node] | None = None) -> list[Finding]:
    """A ``json`` finding for each string or member name that holds a lone surrogate.

    ``nodes`` is the document's walk when the caller already has it.
    """
    found = []
    for node in _walk(value) if nodes is None else nodes:
        item = node.value
        if isinstance(item, str) and _SURROGATE.search(item):
            found.append(_json_finding(f"lone surrogate (not a Unicode character) in {node.path()}"))
        elif isinstance(item, dict):
            found.extend(
                _json_finding(f"lone surrogate in a member name in {node.path()}")
                for name in item
                if isinstance(name, str) and _SURROGATE.search(name)
            )
    return found


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
    return deepjson.loads(text, _record_duplicates, _refuse_constant, _finite_float, _finite_int, MAX_DEPTH)


def _decode(text: str, duplicates: list[tuple[dict[str, Any], str]]) -> Any:
    try:
        return _DECODER.decode(text)
    except RecursionError:
        return _decode_deep(text, duplicates)


def parse_json(text: str, raw: bytes) -> tuple[Any, list[Finding]]:
    """Parse strict JSON; return the value and the findings that refuse it (empty when fine).

    ``raw`` is ``text`` as UTF-8: the byte searches below are cheaper on it.
    """
    duplicates: list[tuple[dict[str, Any], str]] = []
    _state.duplicates = duplicates
    # Only a text with more than MAX_DEPTH brackets can nest too deep; only those pay
    # for the iterative parser, which counts levels (the C decoder's own limit differs
    # between Python versions). The C decoder's RecursionError sends the rest there too.
    deep = len(raw) > MAX_DEPTH and raw.count(b"[") + raw.count(b"{") > MAX_DEPTH
    try:
        value = _decode_deep(text, duplicates) if deep else _decode(text, duplicates)
    except _Refused as exc:
        return None, [_json_finding(str(exc))]
    except json.JSONDecodeError as exc:
        return None, [_json_finding(f"{exc.msg} at line {exc.lineno} column {exc.colno}")]
    except deepjson.DeepJSONError as exc:
        return None, [_json_finding(str(exc))]

    findings: list[Finding] = []
    # One regex pass: on text thick with backslashes a substring test first is slower.
    needs_walk = bool(duplicates) or _SURROGATE_ESCAPE.search(raw) is not None
    if needs_walk:
        lost = {(id(obj), name) for obj, name in duplicates}
        nodes = _walk(value)
        for node in nodes:
            if isinstance(node.value, dict):
                findings.extend(
                    Finding("duplicate-key", node.path(name), f"member {quote(name)} appears more than once")
                    for name in node.value
                    if (id(node.value), name) in lost
                )
        findings.extend(lone_surrogates(value, nodes))
    if findings:
        return None, sorted(findings, key=lambda f: (f.code, f.path))
    return value, []


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
