"""Where each finding is in the packet's text: line and column, found only when asked for.

Checking never pays for positions: this module reads the text again (a decoded document has none)
for a report rendered or asked to. Where a finding points (specification clause 1.6):

- a member or item: the first character of its value; an unexpected or duplicated member: its name
  (its second writing, for a duplicate); a missing member: the object that lacks it;
- a redaction hit: the first character of the match in the string as written (past escapes);
- the whole packet (``$``): its first character past leading whitespace; a packet over the size
  limit: the character holding its first byte past the limit;
- text that is not JSON: where the decoder stopped (or the invalid UTF-8 byte, the refused number
  or constant, the string holding a lone surrogate).

Paths are matched as findings render them (:class:`cmp._messages.BoundedPath`); where two render
alike (a masked or cut name), the first written is taken.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from cmp import _intake
from cmp._messages import BoundedPath, member_step, member_steps
from cmp._redaction._hit import Redaction
from cmp._redaction._rules import rule_set_named
from cmp.findings import Finding, Position

if TYPE_CHECKING:
    Located = TypeVar("Located", Finding, Redaction)

_ABOUT_THE_NAME = frozenset({"additionalProperties"})
_HitKey = tuple[str, int, int]  # a redaction hit's category, offset and length


class _Node(NamedTuple):
    """One value as written: where its member name starts (None for an item or the root), where it starts,
    and its token if a string."""

    name_at: int | None
    value_at: int
    string: str | None


@dataclass(slots=True)
class _Frame:
    """An open array or object: its path, the next item's index, or the next member and the names so far."""

    path: BoundedPath
    is_object: bool
    index: int = 0
    name: str = ""
    name_at: int = 0
    seen: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _Map:
    """The document's values by rendered path: the first written; the first string (a cut path may render
    like its ancestors'); a name's second writing in one object; each object's member names and places."""

    first: dict[str, _Node] = field(default_factory=dict)
    # Every writing under a path that more than one value renders as (a cut or masked name).
    more: dict[str, list[_Node]] = field(default_factory=dict)
    strings: dict[str, _Node] = field(default_factory=dict)
    repeats: dict[str, _Node] = field(default_factory=dict)
    names: dict[str, list[tuple[str, int, str]]] = field(default_factory=dict)


def _decoded(token: str) -> str:
    if "\\" not in token:
        return token[1:-1]
    try:
        decoded: str = json.loads(token)
    except ValueError:  # text that did not parse: an unfinished string
        return token[1:]
    return decoded


def _map(text: str) -> _Map:
    """Every value of ``text`` (which parsed) by its rendered path. Iterative: documents may nest 10,000 deep."""
    found = _Map()
    stack: list[_Frame] = []
    expect_name = False
    root = BoundedPath()
    # Every member's path takes its name's step: thousands of names, in a hostile packet.
    steps = member_steps(text) if len(text) > _LONG_TEXT else member_step
    for match in _intake.text_token().finditer(text):
        token = match.group()
        lead = token[0]
        if lead == ",":
            expect_name = bool(stack) and stack[-1].is_object
            continue
        if lead == ":":
            continue
        if lead in "]}":
            if stack:  # (text that did not parse may close more than it opened)
                stack.pop()
            continue
        start = match.start()
        top = stack[-1] if stack else None
        if expect_name and top is not None:
            top.name, top.name_at = _decoded(token), start
            names = found.names.get(top.path.text)
            if names is not None:
                names.append((top.name, start, token))
            expect_name = False
            continue
        name_at: int | None = None
        repeated = False
        if top is None:
            path = root
        elif top.is_object:
            path, name_at = top.path.then(steps(top.name)), top.name_at
            repeated = top.name in top.seen
            top.seen.add(top.name)
        else:
            path = top.path.child(top.index)
            top.index += 1
        node = _Node(name_at, start, token if lead == '"' else None)
        key = path.text
        if key not in found.first:
            found.first[key] = node
            if lead == "{":
                found.names[key] = []
        else:
            found.more.setdefault(key, [found.first[key]]).append(node)
        if lead == '"' and key not in found.strings:
            found.strings[key] = node
        if repeated and key not in found.repeats:
            found.repeats[key] = node
        if lead in "[{":
            stack.append(_Frame(path, lead == "{"))
            expect_name = lead == "{"
    return found


_LONG_TEXT = 4096


def _inside(token: str, at: int) -> int:
    """The offset in a string token (quotes included) of its ``at``-th decoded code point."""
    if "\\" not in token:
        return 1 + at
    index, count = 1, 0
    while count < at and index < len(token) - 1:
        if token[index] != "\\":
            index += 1
        elif token[index + 1] != "u":
            index += 2
        elif _surrogate_pair_at(token, index):
            index += 12
        else:
            index += 6
        count += 1
    return index


def _surrogate_pair_at(token: str, index: int) -> bool:
    """Whether a ``\\uD8xx\\uDCxx`` pair, one code point, starts at ``index``."""
    try:
        high = int(token[index + 2 : index + 6], 16)
        if not 0xD800 <= high < 0xDC00 or token[index + 6 : index + 8] != "\\u":
            return False
        return 0xDC00 <= int(token[index + 8 : index + 12], 16) < 0xE000
    except ValueError:
        return False


def _parent_of(path: str, places: _Map) -> _Node | None:
    """The nearest written ancestor of ``path``: for a member that is not there."""
    for end in range(len(path) - 1, 0, -1):
        if path[end] in ".[" and path[:end] in places.first:
            return places.first[path[:end]]
    return places.first.get("$")


_UNKNOWN = object()


class _Text:
    """A packet's source as text, its map made on first use, and offsets turned into positions."""

    def __init__(self, data: bytes | str) -> None:
        self.raw: bytes | None = None
        if isinstance(data, str):
            self.text = data
        else:
            self.raw = bytes(data)
            self.text = self.raw.decode("utf-8", "replace")
        self._places: _Map | None = None
        self._name_hits: dict[tuple[str, str], dict[_HitKey, deque[tuple[int, str]]]] = {}
        self._turns: dict[tuple[str, str, str | None], int] = {}
        self._string_hits: dict[tuple[str, str], dict[_HitKey, deque[_Node]]] = {}
        self._refused_at: int | object | None = _UNKNOWN

    @property
    def places(self) -> _Map:
        if self._places is None:
            self._places = _map(self.text)
        return self._places

    def next_writing(self, finding: Finding) -> _Node | None:
        """The value ``finding`` is about: the first written at its path, or each in turn where several
        values render as that path and several findings of one kind name it."""
        places = self.places
        writings = places.more.get(finding.path)
        if writings is None:
            return places.first.get(finding.path)
        key = (finding.path, finding.code, finding.keyword)
        turn = self._turns.get(key, 0)
        self._turns[key] = turn + 1
        return writings[min(turn, len(writings) - 1)]

    def string_hits(self, path: str, rules: str) -> dict[_HitKey, deque[_Node]]:
        """The unplaced hits of a rule set in the strings at a path several values render as (each scanned once)."""
        key = (path, rules)
        if key not in self._string_hits:
            strings = [(node, node.string) for node in self.places.more[path] if node.string is not None]
            found: dict[_HitKey, deque[_Node]] = {}
            for index, hits in _hits_by_text([_decoded(token) for _, token in strings], rules):
                for hit in hits:
                    found.setdefault(hit, deque()).append(strings[index][0])
            self._string_hits[key] = found
        return self._string_hits[key]

    def name_hits(self, holder: str, rules: str) -> dict[_HitKey, deque[tuple[int, str]]]:
        """The unplaced hits of a rule set in the member names of the object at ``holder`` (each scanned once)."""
        key = (holder, rules)
        if key not in self._name_hits:
            self._name_hits[key] = _hits_in_names(self.places.names.get(holder, []), rules)
        return self._name_hits[key]

    def refused_at(self) -> int | None:
        """:func:`_refused_at`, worked out once: a report may hold 100 json findings."""
        if self._refused_at is _UNKNOWN:
            self._refused_at = _refused_at(self)
        return self._refused_at  # type: ignore[return-value]

    def position(self, offset: int) -> Position:
        text = self.text
        offset = max(0, min(offset, len(text)))
        line = text.count("\n", 0, offset) + 1
        return Position(line, offset - (text.rfind("\n", 0, offset) + 1) + 1)

    def start(self) -> int:
        """The first character of the top-level value: past leading JSON whitespace."""
        return len(self.text) - len(self.text.lstrip(" \t\n\r"))

    def of_byte(self, index: int) -> int:
        """The offset of the character holding byte ``index`` of the raw text."""
        raw = self.raw if self.raw is not None else self.text.encode("utf-8", "surrogatepass")
        return len(raw[:index].decode("utf-8", "ignore"))


def _json_offset(finding: Finding, source: _Text) -> int | None:
    """Where text that is not a packet's JSON went wrong, found the way intake found it."""
    offset = source.refused_at()
    if offset is not None:
        return offset
    return _surrogate_offset(finding, source)


def _refused_at(source: _Text) -> int | None:
    """Where the text stops being JSON (encoding, syntax, a refused number), or None when it parses."""
    if source.raw is None:
        try:
            raw = source.text.encode("utf-8")
        except UnicodeEncodeError as exc:
            return exc.start
    else:
        raw = source.raw
    if raw.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw[:4]:
        return 0
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return source.of_byte(exc.start)
    return _intake.refused_at(text, raw)


def _surrogate_offset(finding: Finding, source: _Text) -> int | None:
    """A lone surrogate's finding names the string's path in its message (``… in $.goal``)."""
    _, marker, rest = finding.message.partition(" in $")
    if not marker:
        return None
    path = "$" + rest
    places = source.places
    if "member name" in finding.message:
        for name, at, _ in places.names.get(path, ()):
            if _intake.surrogate().search(name):
                return at
        return None
    node = places.first.get(path)
    return None if node is None else node.value_at


def _finding_offset(finding: Finding, source: _Text) -> int | None:
    code = finding.code
    if code == "json":
        return _json_offset(finding, source)
    if code == "size":
        size = len(source.raw) if source.raw is not None else len(source.text.encode("utf-8", "surrogatepass"))
        return source.of_byte(_intake.MAX_PACKET_BYTES) if size > _intake.MAX_PACKET_BYTES else source.start()
    if finding.path == "$":
        return source.start()
    places = source.places
    if code == "duplicate-key":
        node = places.repeats.get(finding.path) or places.first.get(finding.path)
        return None if node is None else node.name_at
    node = source.next_writing(finding)
    if node is None:  # a missing member: the object that lacks it
        parent = _parent_of(finding.path, places)
        return None if parent is None else parent.value_at
    if finding.keyword in _ABOUT_THE_NAME and node.name_at is not None:
        return node.name_at
    return node.value_at


_MEMBER_NAME = "(member name)"


def _redaction_offset(redaction: Redaction, source: _Text) -> int | None:
    places = source.places
    field = redaction.field
    if field == _MEMBER_NAME or field.endswith("." + _MEMBER_NAME):
        return _member_name_offset(redaction, source)
    path = _field_path(field)
    if path in places.more:  # several strings render as this path: the one that holds the hit
        pending = source.string_hits(path, redaction.profile).get((redaction.category, redaction.at, redaction.length))
        node = pending.popleft() if pending else None
    else:
        node = places.strings.get(path)
    if node is None or node.string is None:
        return None
    return node.value_at + _inside(node.string, redaction.at)


def _field_path(field: str) -> str:
    """A redaction's field (``decisions[0].why``, ``['odd key'].k``) as a path."""
    return "$" + field if field.startswith("[") else "$." + field


def _member_name_offset(redaction: Redaction, source: _Text) -> int | None:
    """The member name that holds the match: one the same rule set finds the same hit in, each once, in order."""
    field = redaction.field
    holder = "$" if field == _MEMBER_NAME else _field_path(field[: -len("." + _MEMBER_NAME)])
    pending = source.name_hits(holder, redaction.profile).get((redaction.category, redaction.at, redaction.length))
    if not pending:
        return None
    at, token = pending.popleft()
    return at + _inside(token, redaction.at)


def _hits_in_names(names: list[tuple[str, int, str]], rules: str) -> dict[_HitKey, deque[tuple[int, str]]]:
    """Where each hit of a rule set in an object's member names is written."""
    found: dict[_HitKey, deque[tuple[int, str]]] = {}
    for index, hits in _hits_by_text([name for name, _, _ in names], rules):
        _, at, token = names[index]
        for hit in hits:
            found.setdefault(hit, deque()).append((at, token))
    return found


def _hits_by_text(texts: list[str], rules: str) -> Iterator[tuple[int, list[_HitKey]]]:
    """The hits of a rule set in each of ``texts``, by index, in one scan."""
    by_index: dict[int, list[_HitKey]] = {}
    for hit in rule_set_named(rules).scan([(str(index), text) for index, text in enumerate(texts)]):
        by_index.setdefault(int(hit.field), []).append((hit.category, hit.at, hit.length))
    yield from by_index.items()


# Where a JSON decoder says it stopped, at its message's end ("… starting at line 1 column 7").
_DECODER_PLACE = re.compile(r"(?: starting)? at line (?P<line>[0-9]+) column (?P<column>[0-9]+)\Z")


def _located(item: Located, source: _Text) -> Located:
    if isinstance(item, Finding):
        offset = _finding_offset(item, source)
    else:
        offset = _redaction_offset(item, source)
    if offset is None:
        return item
    position = source.position(offset)
    if isinstance(item, Finding) and item.code == "json":
        # The decoder's message ends in its own "at line L column C"; the CLI prints the position
        # in front, so the place said twice is dropped from the message.
        said = _DECODER_PLACE.search(item.message)
        if said is not None and (int(said["line"]), int(said["column"])) == (position.line, position.column):
            return replace(item, message=item.message[: said.start()], position=position)
    return replace(item, position=position)


def locate(data: bytes | str, items: Iterable[Located]) -> list[Located]:
    """``items`` (findings and redaction hits about the packet whose source is ``data``) with their
    :class:`~cmp.findings.Position` set; an item with no place in the text comes back as it was."""
    if not isinstance(data, (bytes, bytearray, memoryview, str)):
        raise TypeError(f"locate() takes the packet's bytes or str, not {type(data).__name__}")
    items = list(items)
    for item in items:
        if not isinstance(item, (Finding, Redaction)):
            raise TypeError(f"locate() places findings and redaction hits, not {type(item).__name__}")
    source = _Text(data)
    return [_located(item, source) for item in items]


def locate_both(
    data: bytes | str, findings: Iterable[Finding], redactions: Iterable[Redaction]
) -> tuple[list[Finding], list[Redaction]]:
    """:func:`locate` for a report's findings and hits, reading the text once for both."""
    source = _Text(data)
    return [_located(f, source) for f in findings], [_located(r, source) for r in redactions]


def located_in_text(data: bytes | str, redactions: Iterable[Redaction]) -> list[Redaction]:
    """Hits whose ``at`` is an offset in the whole source text (invalid UTF-8 read as U+FFFD), with their position."""
    source = _Text(data)
    return [replace(hit, position=source.position(hit.at)) for hit in redactions]


def source_text(data: bytes | str) -> str:
    """The source as the text that positions count in (see :func:`located_in_text`)."""
    return _Text(data).text
