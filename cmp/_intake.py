"""Strict intake: raw bytes to a JSON object, refusing everything RFC 8259 and UTF-8 refuse.

Checks run in the reference's order: size, encoding and syntax, top-level type.
"""

from __future__ import annotations

import functools
import json
import math
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate, compress, repeat
from operator import itemgetter

from cmp._messages import BoundedPath, member_step, member_steps, quote, truncated
from cmp.findings import MAX_FINDINGS, Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_PACKET_BYTES = 32_768
MAX_DEPTH = 10_000  # the reference's (Go encoding/json) nesting limit


# Patterns are compiled on first use: a packet the quick path reads needs none of them.
# An escape that writes a surrogate, lone or not (the text screen below looks for it too).
_SURROGATE_ESCAPE = r"\\u[dD][89abcdefABCDEF]"


@functools.cache
def _surrogate_escape() -> re.Pattern[bytes]:
    return re.compile(_SURROGATE_ESCAPE.encode())


@functools.cache
def surrogate() -> re.Pattern[str]:
    """A lone surrogate (cmp._positions looks for one too)."""
    return re.compile("[\ud800-\udfff]")


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


# threading.local without loading threading (about 1.5 ms of start-up); a test holds them one class.
try:
    from _thread import _local as thread_local
except ImportError:  # pragma: no cover - an interpreter whose _thread has none
    from threading import local as thread_local


class _ParseState(thread_local):
    """Per-thread notes of the parse in progress, so one decoder serves every call."""

    def __init__(self) -> None:
        self.duplicates: list[tuple[dict[str, Any], set[str]]] = []


_state = _ParseState()


def _record_duplicates(
    pairs: list[tuple[str, Any]], dict: type[dict[str, Any]] = dict, len: Any = len
) -> dict[str, Any]:
    """object_pairs_hook: build the dict and note the names it lost to a duplicate (builtins are locals)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        # Each name once (a finding names each lost name once), counted in C.
        seen = Counter(map(itemgetter(0), pairs))
        _state.duplicates.append((obj, {name for name, times in seen.items() if times > 1}))
    return obj


# Built once: json.loads(text, **hooks) would build a new decoder and scanner per call.
_DECODER = json.JSONDecoder(
    object_pairs_hook=_record_duplicates,
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    parse_int=_finite_int,
)

# A text of more than _MANY_OBJECTS objects is first read with no object hook, and its
# members counted as written (one colon outside strings each) and as read (a dict keeps one
# of two same-named members). Only a text whose counts differ is read again with the hooks.
_MANY_OBJECTS = 256
# Bounds a hostile case: ten thousand empty attempts cost 80x json.loads (150x with the hook).
_UNCOUNTED = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_finite_int)
# Writes each member's name and value with a NUL between them, and a NUL inside a string
# as an escape: the NULs it writes are the members of every dict in the value.
_MEMBERS_READ = json.JSONEncoder(ensure_ascii=True, check_circular=False, separators=(",", "\x00")).encode


@functools.cache
def _escapes() -> re.Pattern[bytes]:
    return re.compile(rb"\\.", re.DOTALL)


def _members_written(raw: bytes) -> int:
    """How many members the objects of parsed JSON text ``raw`` hold as written: one colon
    outside strings each. With escapes taken out, the quotes left are exactly those that open
    and close strings (cmp._quick, fact 1)."""
    if b"\\" in raw:
        raw = _escapes().sub(b"", raw)
    return b"".join(raw.split(b'"')[0::2]).count(b":")


def _decode_uncounted(text: str, raw: bytes) -> Any:
    """The value of a text of many objects that holds no duplicate member, read with no
    hook on objects; _NOT_READ for any other text (the hooks read that)."""
    try:
        value = _UNCOUNTED.decode(text)
        read = _MEMBERS_READ(value).count("\x00")
    except (ValueError, RecursionError):  # refused, or too deep: the hooks say how
        return _NOT_READ
    return value if read == _members_written(raw) else _NOT_READ


_NOT_READ = object()


# The same refusals without the duplicate bookkeeping (where a refusal is, for positions).
_PLAIN_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    parse_int=_finite_int,
)

# No hooks, for the quick path (cmp._quick): it answers only for a conforming packet and no
# schema admits a number, so reading NaN or 1e999 as floats changes no answer. A hook per
# number would cost up to 100x json.loads.
_QUICK_DECODER = json.JSONDecoder()


def decode_plain(raw: bytes) -> Any:
    """The JSON value of ``raw`` read by the C decoder alone, or None for anything it refuses. No
    findings, duplicate tracking or refusal of numbers: :func:`parse_packet` does those."""
    try:
        text = raw.decode("utf-8")
        if not text or text[0] in _JSON_SPACE:
            return _QUICK_DECODER.decode(text)
        # JSONDecoder.decode without its Python frames (0.5 us that keep a typical check
        # within its floor, 5x json.loads): the value, then nothing but whitespace.
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
_PLAIN_SCAN: Callable[[str, int], tuple[Any, int]] = _QUICK_DECODER.scan_once  # type: ignore[attr-defined]


# Members the reference reads as raw JSON text, without unescaping: written with an
# escape, they are refused even when the value they decode to is valid (specification 7.3).
RAW_TEXT_MEMBERS: frozenset[str] = frozenset({"created_at"})

# A JSON string token, or one structural character; from the start of valid JSON text it
# never lands inside a string. Runs of plain bytes between escapes let re take a run per step.
_STRING_TOKEN = rb'"[^"\\]*(?:\\.[^"\\]*)*"'


@functools.cache
def _string_token() -> re.Pattern[bytes]:
    return re.compile(_STRING_TOKEN)


@functools.cache
def _token() -> re.Pattern[bytes]:
    return re.compile(_STRING_TOKEN + rb"|[\[\]{}:]")


def escaped_members(raw: bytes, names: frozenset[str]) -> frozenset[str]:
    """Which top-level members ``names`` of parsed JSON object text ``raw`` have a string value
    written with an escape (tokens are scanned only until every name was seen)."""
    if b"\\" not in raw or not names:
        return frozenset()
    found: set[str] = set()
    seen = 0
    depth = 0
    name: str | None = None  # the member whose value comes next, at depth 1
    value_at = -1  # where that value starts, once its colon was read
    for match in _token().finditer(raw):
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
    """A value in the document with a link to its parent; its path, grown from the parent's
    :class:`BoundedPath` on first use, costs the same at any depth."""

    __slots__ = ("_path", "key", "parent", "value")

    def __init__(self, value: Any, parent: _Node | None, key: str | int | None) -> None:
        self.value = value
        self.parent = parent
        self.key = key
        self._path: BoundedPath | None = None

    def trail(self) -> BoundedPath:
        if self._path is None:
            # Up to the nearest ancestor with a path, then down, each node keeping its own.
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
    With ``python_data`` each container is entered once: one met again inside itself is a reference
    cycle, yielded as a node whose value is :data:`_CYCLE`; one shared by two parents is walked
    under the first only."""
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
    """``json`` findings for what cannot be written as JSON text, each with whether it is structural
    (a member name that is not a string, a reference cycle) or not (a lone surrogate)."""
    search = surrogate().search
    for node in nodes:
        item = node.value
        if item is _CYCLE:
            yield True, _json_finding(f"{node.path()} holds itself (a reference cycle)")
        elif isinstance(item, str):
            if search(item):
                yield False, _json_finding(f"lone surrogate (not a Unicode character) in {node.path()}")
        elif isinstance(item, dict):
            for name in item:
                if not isinstance(name, str):
                    message = f"member name of type {type(name).__name__} in {node.path()} is not a string"
                    yield True, _json_finding(message)
                elif search(name):
                    yield False, _json_finding(f"lone surrogate in a member name in {node.path()}")


def data_findings(value: Any) -> tuple[list[Finding], list[Finding]]:
    """What stops Python data from being JSON text: (structural findings, lone surrogates).
    Structural ones (names that are not strings, cycles) stop any further judgement."""
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


def _decode_deep(
    text: str, decoder: json.JSONDecoder, duplicates: list[tuple[dict[str, Any], set[str]]], nesting: int
) -> Any:
    from cmp import _deepjson  # see _deep_json_error

    duplicates.clear()
    # Both decoders' object hook is _record_duplicates (it builds the dict, and notes names).
    return _deepjson.loads(text, decoder, MAX_DEPTH, nesting, names_hook=True)


def _deep_json_error() -> type[ValueError]:
    """The iterative parser's error, imported only when an except clause reaches it
    (cmp._deepjson costs about 2 ms of start-up)."""
    from cmp._deepjson import DeepJSONError

    return DeepJSONError


def _decode(
    text: str, raw: bytes, decoder: json.JSONDecoder, duplicates: list[tuple[dict[str, Any], set[str]]], nesting: int
) -> Any:
    if raw.count(b"{") > _MANY_OBJECTS:
        value = _decode_uncounted(text, raw)
        if value is not _NOT_READ:
            return value
    try:
        return decoder.decode(text)
    except RecursionError:
        return _decode_deep(text, decoder, duplicates, nesting)


_OPENERS_AND_CLOSERS = bytes.maketrans(b"[]", b"\x01\xff")
_ONE_KIND = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))


@functools.cache
def _runs() -> re.Pattern[bytes]:
    return re.compile(rb"\[+|\]+")


_FEW_RUNS = 64
_PASSES = 4


def nesting(raw: bytes, limit: int) -> int:
    """How deep the brackets outside strings nest (exact for valid JSON), or a bound no higher than
    ``limit`` when it surely is at most ``limit``: ``nesting(raw, limit) > limit`` says exactly
    whether it nests deeper. It is never below the depth a reading from the start reaches before its
    first error (:mod:`cmp._deepjson` relies on that). A text with more than ``limit`` openers is
    measured at C speed, strings dropped: run by run when brackets form few runs, else bounded after
    taking out innermost pairs, else summed."""
    openers = raw.count(b"[") + raw.count(b"{")
    if openers <= limit:
        return openers
    brackets = _string_token().sub(b"", raw).translate(_ONE_KIND, _NOT_BRACKETS)
    if brackets.count(b"[]") + brackets.count(b"][") < _FEW_RUNS:
        level = deepest = 0
        for run in _runs().findall(brackets):
            if run[0] == 0x5B:  # [
                level += len(run)
                deepest = max(deepest, level)
            else:
                level -= len(run)
        return deepest
    # Each pass takes out every "[]": a running count's highest falls by one at most
    # (the "[" of a pair that goes leaves the count before it, one lower, standing),
    # and no count is higher than the openers left.
    rest = brackets
    for passes in range(1, _PASSES + 1):
        rest = rest.replace(b"[]", b"")
        bound = rest.count(b"[") + passes
        if bound <= limit:
            return bound
    return max(0, max(accumulate(array("b", brackets.translate(_OPENERS_AND_CLOSERS))), default=0))


def parse_json(text: str, raw: bytes) -> tuple[Any, list[Finding]]:
    """Parse strict JSON: the value and the findings that refuse it. ``raw`` is ``text`` as UTF-8."""
    duplicates: list[tuple[dict[str, Any], set[str]]] = []
    _state.duplicates = duplicates
    # A text nesting deeper than MAX_DEPTH goes to the iterative parser, which counts levels (the
    # C decoder's limit follows the recursion limit); its RecursionError sends the rest there too.
    depth = nesting(raw, MAX_DEPTH)
    decoder = _DECODER
    surrogates = _surrogate_escape().search(raw) is not None
    try:
        if depth > MAX_DEPTH:
            value = _decode_deep(text, decoder, duplicates, depth)
        else:
            value = _decode(text, raw, decoder, duplicates, depth)
    except _Refused as exc:
        return None, [_json_finding(str(exc))]
    except json.JSONDecodeError as exc:
        # Some of the decoder's messages end in "at" themselves ("Unterminated string starting at").
        return None, [_json_finding(f"{exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}")]
    except _deep_json_error() as exc:
        return None, [_json_finding(str(exc))]

    if duplicates or surrogates:
        # Each duplicated name's path is written (to sort them): thousands, in a hostile packet.
        many = sum(len(names) for _, names in duplicates) > _MANY_NAMES
        steps = member_steps(raw) if many else member_step
        findings = _decoded_findings(value, duplicates, surrogates, steps)
        if findings:
            return None, findings
    return value, []


# JSON text as tokens: a string (maybe unclosed at the end of text that did not parse), a
# structural character, or a number or literal; from the start it never lands inside a string.
@functools.cache
def text_token() -> re.Pattern[str]:
    return re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{},:]|[^\s\[\]{},:"]+')  # strings as _STRING_TOKEN


def refused_at(text: str, raw: bytes) -> int | None:
    """Where :func:`parse_json` refuses ``text``, in code points (the decoder's error offset, or
    the first refused number or constant); None when the text parses."""
    depth = nesting(raw, MAX_DEPTH)
    try:
        if depth > MAX_DEPTH:
            raise RecursionError
        _PLAIN_DECODER.decode(text)
    except RecursionError:
        from cmp import _deepjson

        try:
            _deepjson.loads(text, _PLAIN_DECODER, MAX_DEPTH, depth)
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
    from cmp import _deepjson

    for match in text_token().finditer(text):
        token = match.group()
        if token.startswith(_deepjson.CONSTANTS):
            return match.start()
        number = _deepjson.NUMBER.match(token)
        if number is not None and math.isinf(float(number.group())):
            return match.start()
    return None


def _decoded_findings(
    value: Any, duplicates: list[tuple[dict[str, Any], set[str]]], surrogates: bool, steps: Callable[[str], str]
) -> list[Finding]:
    """Duplicate members and (with ``surrogates``) lone surrogates of a decoded document, capped, in
    (code, path) order: duplicates by path, then lone surrogates in walk order. One walk from the
    root. A container's place (parent's place and key) is noted and its path written only when a
    finding needs it; a chain of links (:func:`_down`) is one step. Past MAX_FINDINGS findings are
    only counted. ``steps`` writes a duplicated name's step."""
    lost = {id(obj): names for obj, names in duplicates}
    visited = (list, dict, str) if surrogates else (list, dict)
    search = surrogate().search
    doubled: list[tuple[str, int, str]] = []  # (path, order, name)
    # The first lone surrogates: (holder's place, key; None for a member name, _NO_KEY for the
    # document itself); ``unpaired`` counts them all.
    placed: list[tuple[_Place, Any]] = []
    unpaired = 0
    # Entries: (value, its parent's place, its key); the root's parent is None.
    stack: list[tuple[Any, _Place | None, str | int]] = [(value, None, 0)]
    while stack:
        item, parent, key = stack.pop()
        if type(item) is str:
            if search(item):
                unpaired += 1
                if len(placed) < MAX_FINDINGS:
                    placed.append((_root_place(), _NO_KEY) if parent is None else (parent, key))
            continue
        place: _Place = _root_place() if parent is None else [parent, key, "", None]
        if len(item) == 1:
            item, chain = _down(item, lost, surrogates)
            if chain:
                place = [place, _NO_KEY, chain, None]
        if type(item) is list:
            kinds = set(map(type, item))
            if kinds & _CONTAINERS:
                stack.extend(
                    [(item[i], place, i) for i in range(len(item) - 1, -1, -1) if item[i] and type(item[i]) in visited]
                )
            elif surrogates and str in kinds:  # only texts below: they come next, in order
                found = list(compress(range(len(item)), map(search if kinds == _TEXT else _search_text, item)))
                unpaired += len(found)
                placed.extend((place, index) for index in found[: MAX_FINDINGS - len(placed)])
            continue
        names = lost.get(id(item))
        if names is not None:
            twice = list(filter(names.__contains__, item))  # in the order they are written
            texts = _path_of(place).then_texts(map(steps, twice))
            doubled.extend(zip(texts, range(len(doubled), len(doubled) + len(twice)), twice, strict=True))
        if surrogates:
            in_names = sum(1 for name in item if search(name))
            unpaired += in_names
            placed.extend(repeat((place, None), min(in_names, MAX_FINDINGS - len(placed))))
        kinds = set(map(type, item.values()))
        if kinds & _CONTAINERS:
            members = list(item.items())
            stack.extend(
                [(member, place, name) for name, member in reversed(members) if member and type(member) in visited]
            )
        elif surrogates and str in kinds:  # only texts below: they come next, in order
            holding = [name for name, member in item.items() if type(member) is str and search(member)]
            unpaired += len(holding)
            placed.extend((place, name) for name in holding[: MAX_FINDINGS - len(placed)])
    listed: list[Finding] = []
    for path_text, _, name in sorted(doubled)[:MAX_FINDINGS]:
        listed.append(Finding("duplicate-key", path_text, f"member {quote(name)} appears more than once"))
    for holder, member in placed[: MAX_FINDINGS - len(listed)]:
        if member is None:
            message = f"lone surrogate in a member name in {_path_of(holder).text}"
        else:
            where = _path_of(holder).text if member is _NO_KEY else _path_of(holder).child_text(member)
            message = f"lone surrogate (not a Unicode character) in {where}"
        listed.append(_json_finding(message))
    more = len(doubled) + unpaired - len(listed)
    if more:
        listed.append(truncated(more))
    return listed


# A container's place in the walk of _decoded_findings: [its parent's place, its key
# there (_NO_KEY: the end of a chain below it), the steps of a chain after that key, its
# path once written]. Lists, not objects: a place is made for every container met.
if TYPE_CHECKING:
    _Place = list[Any]
_NO_KEY = object()


def _root_place() -> _Place:
    """The document's own place; a string that is the whole document is its own holder."""
    return [None, _NO_KEY, "", _ROOT]


def _path_of(place: _Place) -> BoundedPath:
    """A place's path, written from the nearest known one; each place on the way keeps its own."""
    pending: list[_Place] = []
    while place[3] is None:
        pending.append(place)
        place = place[0]
    path: BoundedPath = place[3]
    for each in reversed(pending):
        if each[1] is not _NO_KEY:
            path = path.child(each[1])
        if each[2]:
            path = path.then(each[2])
        each[3] = path
    return path


def _down(item: Any, lost: dict[int, set[str]], surrogates: bool) -> tuple[Any, str]:
    """Down a chain of links (arrays of one container, objects of one plain member whose value
    is a container), which hold no finding: the first container that is no link, and the
    chain's steps written in one go."""
    pieces: list[str] = []
    shown: dict[str, str] = {}  # each name's step, written once per chain
    while True:
        if type(item) is list:
            # A run of one-item arrays; the loop's own count is the run's length.
            for links in _COUNTING:  # noqa: B007
                try:
                    [inner] = item
                except ValueError:
                    break
                if type(inner) is not list:
                    break
                item = inner
            if links:
                pieces.append("[0]" * links)
            if len(item) != 1 or type(item[0]) is not dict:
                break
            pieces.append("[0]")
            item = item[0]
        if len(item) != 1 or id(item) in lost:
            break
        [(name, inner)] = item.items()
        if (type(inner) is not list and type(inner) is not dict) or (surrogates and surrogate().search(name)):
            break
        step = shown.get(name)
        if step is None:
            step = shown[name] = member_step(name)
        pieces.append(step)
        item = inner
    return item, "".join(pieces)


_ROOT = BoundedPath()
_MANY_NAMES = 64
_CONTAINERS = frozenset({list, dict})
_TEXT = {str}


def _search_text(value: Any) -> bool:
    return type(value) is str and surrogate().search(value) is not None


_COUNTING = range(MAX_PACKET_BYTES)  # more links than any chain has


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
