"""Redaction pre-flight: the reference's ten RE2 patterns over the packet's visible text.

The two tables below are the whole rule set; the walk, the CLI and the docs read
them from here. Adding a scanned field is one more line in SCANNED_FIELDS.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, is_dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import re2

from cmp._matcher import compile_set
from cmp.findings import ECHO_LIMIT, BoundedPath

if TYPE_CHECKING:
    from cmp.model import Packet

# Finding names, in scan order. `name[]` is each item of an array of strings;
# `name[].member` is that member of each item of an array of objects. Members of
# one array are scanned item by item (decisions[0].what, .why, ..., decisions[1]...).
SCANNED_FIELDS: tuple[str, ...] = (
    "goal",
    "next_step",
    "success_criteria[]",
    "constraints[]",
    "decisions[].what",
    "decisions[].why",
    "decisions[].consequences",
    "methods[].when_applicable",
    "methods[].how",
    "attempts[].tried",
    "attempts[].learned",
    "open_questions[]",
)


@dataclass(frozen=True, slots=True)
class Pattern:
    category: str
    regex: str
    mask: str | None = None  # reported instead of the match, for key headers
    # A looser regex for the one-pass screen (see _Screen): it matches wherever
    # ``regex`` does, and its DFA stays small in a set with the others.
    screen: str | None = None
    # For a pattern whose own RE2 DFA crafted text can blow up: the same pattern over
    # UTF-8 bytes for Python's `re`, starting with a literal and spanning a fixed width,
    # so every candidate costs a bounded number of steps (see _Screen). It confirms a
    # screen's flag and finds the leftmost match; the tests hold it to ``regex``.
    fixed_width: bytes | None = None

    @property
    def screened_by(self) -> str:
        return self.screen or self.regex


# Categories and order are the reference's (docs/specification.md, clauses 8.1 to 8.6). RE2 `\b` and
# `\s` are ASCII-only, as in Go; Python's `re` would disagree on é, Å and friends.
PATTERNS: tuple[Pattern, ...] = (
    Pattern("abs-path", r"\B/(?:Users|home|opt|var|etc|root)/[A-Za-z0-9._/-]+"),
    Pattern("abs-path", r"\b[A-Za-z]:[\\/](?:[A-Za-z0-9 _.-]+[\\/]?)+"),
    Pattern("aws-key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    Pattern("gh-token", r"gh[pousr]_[A-Za-z0-9]{36,}"),
    Pattern("jwt", r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"),
    Pattern("private-key", r"-----BEGIN (?:RSA |EC |OPENSSH )?PRIVATE KEY-----", mask="-----BEGIN …"),
    Pattern(
        "google-api-key",
        r"\bAIza[0-9A-Za-z_-]{35}\b",
        screen=r"\bAIza[0-9A-Za-z_-]",
        # AIza not after a word character, 35 of the class, then a word boundary (ASCII).
        fixed_width=rb"AIza(?<![0-9A-Za-z_]AIza)[0-9A-Za-z_-]{35}"
        rb"(?:(?<=[0-9A-Za-z_])(?![0-9A-Za-z_])|(?<![0-9A-Za-z_])(?=[0-9A-Za-z_]))",
    ),
    Pattern("slack-token", r"\bxox[baprs]-[0-9A-Za-z-]{10,}\b"),
    Pattern("stripe-key", r"\b(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}|whsec_[0-9A-Za-z]{32,})\b"),
    Pattern("ssh-public-key", r"\bssh-(?:rsa|ed25519|dss|ecdsa)[ \t\n\f\r]+AAAA[0-9A-Za-z+/=]{20,}"),
)

CATEGORIES: tuple[str, ...] = tuple(dict.fromkeys(p.category for p in PATTERNS))


@dataclass(frozen=True, slots=True, repr=False)
class Redaction:
    """One (field, pattern) hit. ``found`` is the leftmost match (masked for key headers).

    ``str()``, ``repr()`` and :meth:`to_json` show at most 32 characters of it.
    """

    field: str
    category: str
    found: str
    # Which rule set found it: "default" (the reference's, clause 8) or "extended"
    # (cmp._extended, opt-in). Shown only when it is not the default, so default
    # output stays as it was.
    profile: str = "default"

    @property
    def shown(self) -> str:
        if len(self.found) > ECHO_LIMIT:
            return self.found[:ECHO_LIMIT] + "…"
        return self.found

    def __str__(self) -> str:
        return f"{self.field}/{self.category}: {self.shown}"

    def __repr__(self) -> str:
        more = "" if self.profile == "default" else f", profile={self.profile!r}"
        return f"Redaction(field={self.field!r}, category={self.category!r}, found={self.shown!r}{more})"

    def to_json(self) -> dict[str, str]:
        out = {"field": self.field, "category": self.category, "found": self.shown, "text": str(self)}
        if self.profile != "default":
            out["profile"] = self.profile
        return out


class _Screen:
    """Which patterns match somewhere in a text: one RE2 set pass, then a confirmation
    only for patterns screened loosely.

    A set runs one DFA over the product of its patterns, and google-api-key's exact
    count (``AIza`` + 35 characters, then a boundary, where ``-`` may start another
    ``AIza`` inside the count) lets crafted text keep thousands of overlapping counts
    alive: 20-80 ms for 32 KB, in a set or alone, RE2's DFA or its NFA. So the set holds
    each pattern's ``screened_by`` regex (for google-api-key only its start, which
    matches wherever the pattern does), and a loose flag is confirmed by the pattern's
    ``fixed_width`` form: Python's `re` jumps from one ``AIza`` to the next and tries
    the 39 bytes there, so crafted text costs at most 39 steps per candidate. The
    answer is exact (the tests hold it to one RE2 search per pattern).
    """

    def __init__(self) -> None:
        self._set = compile_set([p.screened_by for p in PATTERNS])
        self._confirm = {i: re.compile(p.fixed_width) for i, p in enumerate(PATTERNS) if p.fixed_width is not None}

    def hits(self, text: str | bytes) -> list[int]:
        """Indices into PATTERNS of the patterns that match somewhere in ``text``, ascending."""
        found = self._set.Match(text)
        if not found:
            return []
        confirm = self._confirm
        if confirm.keys().isdisjoint(found):
            return sorted(found)
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        return sorted(i for i in found if i not in confirm or confirm[i].search(data))

    def leftmost(self, index: int, data: bytes) -> bytes | None:
        """The leftmost match of pattern ``index`` in UTF-8 ``data``, or None."""
        search = self._confirm.get(index)
        match = search.search(data) if search is not None else _searches()[index].search(data)
        return None if match is None else bytes(match.group())


@functools.cache
def _searches() -> tuple[Any, ...]:
    """Compiled per-pattern searches, built on the first dirty packet (start-up stays lean)."""
    return tuple(re2.compile(p.regex) for p in PATTERNS)


_SCREEN = _Screen()
# Any separator that is not a word character keeps every in-field match (and its
# boundaries) a match of the joined text, so one pass can rule a packet clean.
_FIELD_JOIN = "\n"


def _groups() -> tuple[tuple[str, tuple[str, ...] | None], ...]:
    """SCANNED_FIELDS as (top-level name, members or None), adjacent members merged."""
    out: list[tuple[str, tuple[str, ...] | None]] = []
    for spec in SCANNED_FIELDS:
        top, _, member = spec.partition("[].")
        if member:
            if out and out[-1][0] == top and out[-1][1] is not None:
                out[-1] = (top, (*out[-1][1], member))
            else:
                out.append((top, (member,)))
        else:
            out.append((spec.removesuffix("[]"), None) if spec.endswith("[]") else (spec, ()))
    return tuple(out)


# () marks a plain text member, None an array of strings, a tuple of names an array of objects.
_GROUPS = _groups()


def _get(container: Any, name: str) -> Any:
    if isinstance(container, Mapping):
        return container.get(name)
    return getattr(container, name, None)


def texts(packet: Any) -> Iterator[tuple[str, str]]:
    """(finding name, text) for every scanned field that holds a string, in scan order.

    Works on a typed Packet and on raw parsed JSON alike; anything of the wrong
    shape in raw JSON is skipped, never guessed at.
    """
    for top, members in _GROUPS:
        value = _get(packet, top)
        if members == ():
            if isinstance(value, str):
                yield top, value
            continue
        if not isinstance(value, (list, tuple)):
            continue
        for index, item in enumerate(value):
            if members is None:
                if isinstance(item, str):
                    yield f"{top}[{index}]", item
                continue
            if isinstance(item, Mapping) or is_dataclass(item):
                for member in members:
                    text = _get(item, member)
                    if isinstance(text, str):
                        yield f"{top}[{index}].{member}", text


def scan(fields: list[tuple[str, str]]) -> list[Redaction]:
    """Findings for (name, text) pairs: per field, per pattern, the leftmost match."""
    if not fields:
        return []
    values = [text for _, text in fields]
    try:
        if not _SCREEN.hits(_FIELD_JOIN.join(values)):
            return []
        hit_lists = [_SCREEN.hits(text) for text in values]
    except UnicodeEncodeError:
        # Lone surrogates (only in hand-built models) cannot be UTF-8 for RE2. They are
        # not word characters and no pattern matches them, so U+FFFD stands in for them.
        fields = [(name, text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")) for name, text in fields]
        return scan(fields)
    return _extract([name for name, _ in fields], values, hit_lists)


def _extract(names: list[str], values: list[str], hit_lists: list[list[int]]) -> list[Redaction]:
    """The leftmost match of each pattern the set reported, field by field."""
    found: list[Redaction] = []
    for name, text, hits in zip(names, values, hit_lists, strict=True):
        if not hits:
            continue
        # On bytes, google-re2 skips mapping offsets back to characters (twice as fast);
        # RE2 matches whole UTF-8 characters, so every match decodes cleanly.
        data = text.encode("utf-8")
        for index in hits:
            match = _SCREEN.leftmost(index, data)
            if match is not None:
                pattern = PATTERNS[index]
                found.append(Redaction(name, pattern.category, pattern.mask or match.decode("utf-8")))
    return found


def _getter(members: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if len(members) == 1:
        return lambda item: (getattr(item, members[0]),)
    getter: Callable[[Any], tuple[Any, ...]] = attrgetter(*members)
    return getter


_ATTRS = {top: _getter(members) for top, members in _GROUPS if members}


def _plain_texts(packet: Packet) -> list[str]:
    """The scanned texts of a typed packet, without names: enough to rule it clean."""
    out: list[str] = []
    for top, members in _GROUPS:
        value = getattr(packet, top)
        if members == ():
            out.append(value)
        elif members is None:
            out.extend(value)
        else:
            get = _ATTRS[top]
            for item in value:
                out.extend(get(item))
    return out


def _plain_names(packet: Packet) -> list[str]:
    """The finding names of :func:`_plain_texts`, in the same order."""
    out: list[str] = []
    for top, members in _GROUPS:
        count = len(getattr(packet, top)) if members != () else 0
        if members == ():
            out.append(top)
        elif members is None:
            out.extend(f"{top}[{index}]" for index in range(count))
        else:
            out.extend(f"{top}[{index}].{member}" for index in range(count) for member in members)
    return out


def redact(packet: Packet) -> list[Redaction]:
    """Redaction findings for a typed :class:`cmp.Packet`, in the reference's order."""
    try:
        values = _plain_texts(packet)
        if not _SCREEN.hits(_FIELD_JOIN.join(values)):
            return []
        hit_lists = [_SCREEN.hits(text) for text in values]
    except (UnicodeEncodeError, TypeError, AttributeError):
        return scan(list(texts(packet)))  # a hand-built model with odd values: the careful walk copes
    return _extract(_plain_names(packet), values, hit_lists)


def matches_anywhere(text: str | bytes) -> bool:
    """Whether any pattern matches somewhere in ``text`` (one pass over all of it).

    The quick path (cmp._quick, fact 2) uses it to rule a whole packet's text clean.
    """
    return bool(_SCREEN.hits(text))


def replace_matches(text: str, replacement: Callable[[Pattern, str], str]) -> str:
    """``text`` with every match of every pattern that matches it, pattern by pattern in
    table order, replaced by ``replacement(pattern, match)``: one pass. A replacement can
    join its neighbours into a new match, which only another pass finds.
    """
    for index in _SCREEN.hits(text):
        text = _searches()[index].sub(functools.partial(_replace_one, replacement, PATTERNS[index]), text)
    return text


def _replace_one(replacement: Callable[[Pattern, str], str], pattern: Pattern, match: Any) -> str:
    return replacement(pattern, match.group())


def redact_obj(obj: Mapping[str, Any]) -> list[Redaction]:
    """The same scan over raw parsed JSON, for packets that did not reach the typed model.

    A server in lenient mode stores such a packet as it came, so every string under a
    scanned member name is scanned, whatever its shape (see :func:`lenient_texts`).
    """
    return scan(list(lenient_texts(obj)))


_ROOT = BoundedPath()


def lenient_texts(obj: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(name, text) for every string anywhere under a scanned top-level member.

    Where the value has the schema's shape, names and order are the reference's
    (``constraints[0]``, ``decisions[1].why``); inside an object item, the scanned
    members come first, then every other member in document order. Anything else is
    named by its path: ``constraints`` for a string where an array belongs,
    ``decisions[0][0]``, ``decisions.what``. The member names of every object below
    are scanned too, as ``decisions[0].(member name)``, ahead of its values. No
    recursion: values may nest 10,000 deep.
    """
    for top, members in _GROUPS:
        if top not in obj:
            continue
        root = obj[top]
        # The scanned members lead inside the items of a top-level array of objects.
        item_first = members if members else ()
        # Entries are (value, its parent's path, its key): a path is made only for a
        # string or a container with something in it, so 10,000 empty items cost little.
        stack: list[tuple[Any, BoundedPath, str | int, tuple[str, ...]]] = [(root, _ROOT, top, ())]
        while stack:
            value, parent, key, first = stack.pop()
            if type(value) is str:
                yield parent.child(key).text[2:], value
            elif type(value) is dict and value:
                path = parent.child(key)
                names = [*(n for n in first if n in value), *(n for n in value if n not in first)]
                # A member name is stored as it came too; its finding names the object,
                # never the name itself (which is what may hold the secret).
                for name in names:
                    yield f"{path.text[2:]}.(member name)", name
                stack.extend((value[n], path, n, ()) for n in reversed(names))
            elif type(value) is list and value:
                path = parent.child(key)
                lead = item_first if value is root else ()
                stack.extend((value[i], path, i, lead) for i in range(len(value) - 1, -1, -1))
