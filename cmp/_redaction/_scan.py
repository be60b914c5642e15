"""The format's redaction scan: the reference's ten RE2 patterns over the packet's visible text.

SCANNED_FIELDS and the patterns (:mod:`cmp._patterns`) are the whole rule set; the rule
sets are :mod:`cmp._redaction._rules`'.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from operator import attrgetter

from cmp._matcher import compile_set, without_lone_surrogates
from cmp._messages import BoundedPath, field_name
from cmp._patterns import (
    CATEGORIES,
    PATTERNS,
    SCREEN,
    Pattern,
    matches_anywhere,
    searches,
    shows_echo,
)
from cmp._redaction._hit import Redaction, make_redaction

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from cmp.model import Packet

# Finding names, in scan order: `name[]` each item of an array of strings, `name[].member`
# that member of each item (scanned item by item: decisions[0].what, .why, decisions[1]...).
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


_SCREEN = SCREEN

# The fields are searched as one UTF-8 text joined by NUL. NUL is no word character, and
# no pattern, screen or fixed-width form can match it or anchor at a text's edge (asserted
# below), so the joined text's matches are exactly the fields' (tests/unit/test_redaction.py
# holds the findings to a search of each field alone). A field holding a NUL is searched alone.
_FIELD_JOIN = "\x00"

_NUL_OR_EDGE = re.compile(r"\\[WSDCpPxQAzZ0-7]|\[\^|\[:|\x00")
_ESCAPE = re.compile(r"\\.")
_CLASS = re.compile(r"\[[^\]]*\]")


def field_local(regex: str) -> bool:
    """Conservatively, whether no match of ``regex`` can hold a NUL or need a text's edge:
    no unescaped ``.``, ``^`` or ``$``, no negated or POSIX class, no ``\\W``, ``\\S``,
    ``\\D``, ``\\C``, Unicode class, ``\\A``, ``\\z``, ``\\Z``, or NUL written in any form."""
    if _NUL_OR_EDGE.search(regex):
        return False
    bare = _CLASS.sub("", _ESCAPE.sub("", regex))  # other escapes and positive classes hold no NUL
    return not any(char in bare for char in ".^$")


_NOT_FIELD_LOCAL = [
    p.category
    for p in PATTERNS
    if not all(field_local(regex) for regex in (p.regex, p.screened_by, (p.fixed_width or b"").decode("ascii")))
]
if _NOT_FIELD_LOCAL:  # pragma: no cover - a change to the pattern table would have to cause it
    raise AssertionError(
        f"the joined scan needs patterns that match within one field; these may not: {_NOT_FIELD_LOCAL}"
    )


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


def member_of(container: Any, name: str) -> Any:
    """Member ``name`` of parsed JSON or field ``name`` of a typed object; None if it has none."""
    if isinstance(container, Mapping):
        return container.get(name)
    return getattr(container, name, None)


def is_dataclass_instance(value: Any) -> bool:
    """Whether ``value`` is a typed object (a dataclass instance, not the class itself)."""
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def texts(packet: Any) -> Iterator[tuple[str, str]]:
    """(finding name, text) for every scanned field that holds a string, in scan order, of a
    typed Packet or raw parsed JSON (anything of the wrong shape is skipped)."""
    for top, members in _GROUPS:
        value = member_of(packet, top)
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
            if isinstance(item, Mapping) or is_dataclass_instance(item):
                for member in members:
                    text = member_of(item, member)
                    if isinstance(text, str):
                        yield f"{top}[{index}].{member}", text


# The string members the format's scan leaves out, but the version and the timestamp, which the
# schema holds to a fixed form: the extended rules read them, and a writer (check's ``writer=True``)
# holds them to the credential patterns. abs-path stays on SCANNED_FIELDS.
EXTRA_FIELDS: tuple[str, ...] = (
    "id",
    "parent_id",
    "project.name",
    "project.ref",
    "methods[].name",
    "tags[]",
    "provenance.author_model",
    "provenance.author_human",
    "provenance.source_hash",
)


def extra_texts(packet: Any) -> Iterator[tuple[str, str]]:
    """(name, text) for every string in :data:`EXTRA_FIELDS`, typed packet or parsed JSON alike."""
    for spec in EXTRA_FIELDS:
        if spec.endswith("[]"):
            top = spec[:-2]
            items = member_of(packet, top)
            if isinstance(items, (list, tuple)):
                for index, item in enumerate(items):
                    if isinstance(item, str):
                        yield f"{top}[{index}]", item
            continue
        top, _, member = spec.partition("[].") if "[]." in spec else spec.partition(".")
        value = member_of(packet, top)
        if not member:  # id, parent_id
            if isinstance(value, str):
                yield spec, value
            continue
        if "[]." in spec:
            if isinstance(value, (list, tuple)):
                for index, item in enumerate(value):
                    if isinstance(item, Mapping) or is_dataclass_instance(item):
                        text = member_of(item, member)
                        if isinstance(text, str):
                            yield f"{top}[{index}].{member}", text
            continue
        if isinstance(value, Mapping) or is_dataclass_instance(value):
            text = member_of(value, member)
            if isinstance(text, str):
                yield spec, text


def unscanned_credentials(packet: Any) -> list[Redaction]:
    """The credential patterns' findings (abs-path left out) over :data:`EXTRA_FIELDS`: what a
    writer refuses beyond the format's scan. One screen pass rules a clean packet out."""
    fields = list(extra_texts(packet))
    if not _credential_anywhere([text for _, text in fields]):
        return []
    return credentials(fields)


def scan(fields: list[tuple[str, str]]) -> list[Redaction]:
    """Findings for (name, text) pairs: per field, per pattern, the leftmost match."""
    if not fields:
        return []
    try:
        return _findings([name for name, _ in fields], [text for _, text in fields])
    except UnicodeEncodeError:
        # Lone surrogates (hand-built models only) cannot be UTF-8; no pattern matches them.
        fields = [(name, without_lone_surrogates(text)) for name, text in fields]
        return scan(fields)


def _findings(names: Sequence[str] | Callable[[], Sequence[str]], values: list[str]) -> list[Redaction]:
    """The leftmost match of each pattern in each field, in field order, then pattern order.
    ``names`` may be a function, called only when something is found."""
    joined = _FIELD_JOIN.join(values)
    data = joined.encode("utf-8")
    if len(data) <= _REPEATS_SCREENED:
        flagged = _field_screen().Match(data) or []
    else:  # every pattern found may repeat: searched for from field to field
        flagged = _SCREEN.screened(data)
        flagged += [index + _REPEATED for index in flagged]
    if not flagged:
        return []
    hits = _SCREEN.confirmed([index for index in flagged if index < _REPEATED], data)
    if not hits:
        return []
    if callable(names):
        names = names()
    many = len(values) > 1
    if many and data.count(b"\x00") != len(values) - 1:  # a field holds a NUL: field by field
        return [found for name, text in zip(names, values, strict=True) for found in _findings([name], [text])]
    first_matchers = _SCREEN.first_matchers()
    spans: list[tuple[int, int, int]] = []  # (start, end, pattern) of each field's leftmost match
    for index in hits:
        first_match = first_matchers[index]
        span = first_match(data, 0)
        while span is not None:
            spans.append((*span, index))
            if not many or index + _REPEATED not in flagged:
                break  # one field at most holds a match: this one
            pos = data.find(b"\x00", span[1]) + 1  # the next field's leftmost match is all that is left
            if pos == 0:
                break  # the last field: done
            span = first_match(data, pos)
    spans.sort()
    # Each match's field and its start: the NULs between one match and the next count the
    # fields between, and the last of them starts the field.
    placed: list[tuple[int, int, int, int, int]] = []  # (field, pattern, start, end, field start)
    field = field_start = before = 0
    for start, end, index in spans:
        if many and (separators := data.count(b"\x00", before, start)):
            field += separators
            field_start = data.rfind(b"\x00", before, start) + 1
        before = start
        placed.append((field, index, start, end, field_start))
    placed.sort()  # field, then pattern: (field, pattern) pairs are unique
    ascii_only = joined.isascii()
    found: list[Redaction] = []
    for field, index, start, end, field_start in placed:
        if ascii_only:
            at, text = start - field_start, joined[start:end]
        else:
            # RE2 matches whole UTF-8 characters, so a match and what precedes it decode.
            at, text = len(data[field_start:start].decode("utf-8")), data[start:end].decode("utf-8")
        pattern = PATTERNS[index]
        found.append(make_redaction(names[field], pattern.category, pattern.mask or text, at, len(text)))
    return found


# Set member i is pattern i's screen; member _REPEATED + i is that screen, a NUL, and the
# screen again: does the pattern match in two fields or more? (A loose screen matches
# wherever its pattern does, so "no" is exact.) A pattern found in one field only is
# searched for once.
_REPEATED = len(PATTERNS)
# Past this many bytes the extra members build more DFA states on crafted text
# (benchmarks/hostile.py) than the searches they save are worth.
_REPEATS_SCREENED = 8192


@functools.cache
def _field_screen() -> Any:
    """The set above, compiled on the first scan (start-up stays lean)."""
    screens = [pattern.screened_by for pattern in PATTERNS]
    return compile_set([*screens, *(f"(?:{screen})[^\\x00]*\\x00(?s:.*)(?:{screen})" for screen in screens)])


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


def _plain_names(packet: Packet) -> Sequence[str]:
    """The finding names of :func:`_plain_texts`, in the same order."""
    return _names_for(tuple(map(len, _ARRAYS(packet))))


# The scanned arrays of a packet, in scan order: their lengths name every field.
_ARRAYS = attrgetter(*(top for top, members in _GROUPS if members != ()))


@functools.lru_cache(maxsize=1024)
def _names_for(counts: tuple[int, ...]) -> tuple[str, ...]:
    """The finding names of a packet whose scanned arrays hold ``counts`` items."""
    out: list[str] = []
    lengths = iter(counts)
    for top, members in _GROUPS:
        if members == ():
            out.append(top)
        else:
            out += _item_names(top, members, next(lengths))
    return tuple(out)


def _item_names(top: str, members: tuple[str, ...] | None, count: int) -> tuple[str, ...]:
    """``constraints[0]`` … or ``decisions[0].what`` …: the names of an array's scanned fields."""
    if members is None:
        return tuple(f"{top}[{index}]" for index in range(count))
    return tuple(f"{top}[{index}].{member}" for index in range(count) for member in members)


def redact(packet: Packet) -> list[Redaction]:
    """Redaction findings for a typed :class:`cmp.Packet`, in the reference's order."""
    try:
        return _findings(functools.partial(_plain_names, packet), _plain_texts(packet))
    except (UnicodeEncodeError, TypeError, AttributeError):
        return scan(list(texts(packet)))  # a hand-built model with odd values: the careful walk copes


def replace_matches(text: str, replacement: Callable[[Pattern, str, int], str]) -> str:
    """``text`` with every match, pattern by pattern in table order, replaced by
    ``replacement(pattern, match, offset)`` (offset in code points): one pass. A replacement
    can join its neighbours into a new match, which only another pass finds."""
    for index in _SCREEN.hits(text):
        text = searches()[index].sub(functools.partial(_replace_one, replacement, PATTERNS[index]), text)
    return text


def _replace_one(replacement: Callable[[Pattern, str, int], str], pattern: Pattern, match: Any) -> str:
    return replacement(pattern, match.group(), match.start())


def redact_obj(obj: Mapping[str, Any]) -> list[Redaction]:
    """The scan for lenient mode, over raw parsed JSON stored as it came: strings under a
    scanned member with every pattern, every other string and name with the credential ones."""
    found = scan(list(lenient_texts(obj)))
    if _credential_anywhere(list(other_values(obj))):  # paths are written only for a text that may hold one
        found += credentials(list(other_texts(obj)))
    return found


def _credential_anywhere(values: list[str]) -> bool:
    """Whether a credential pattern may match in one of ``values`` (one screen pass over them
    joined by NUL, see _FIELD_JOIN); False rules every one clean."""
    if not values:
        return False
    joined = without_lone_surrogates(_FIELD_JOIN.join(values))
    return any(not shows_echo(PATTERNS[index].category) for index in _SCREEN.hits(joined))


def credentials(fields: list[tuple[str, str]]) -> list[Redaction]:
    """:func:`scan`'s findings of the credential patterns alone (abs-path left out)."""
    return [hit for hit in scan(fields) if not shows_echo(hit.category)]


def replace_credentials(text: str, replacement: Callable[[Pattern, str, int], str]) -> str:
    """:func:`replace_matches` with the credential patterns alone (abs-path left out)."""
    for index in _SCREEN.hits(text):
        pattern = PATTERNS[index]
        if not shows_echo(pattern.category):
            text = searches()[index].sub(functools.partial(_replace_one, replacement, pattern), text)
    return text


_ROOT = BoundedPath()


def lenient_texts(obj: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(name, text) for every string and member name (``decisions[0].(member name)``) anywhere
    under a scanned top-level member; named and ordered as the reference where the value has
    the schema's shape, else by path. No recursion: values may nest 10,000 deep."""
    for top, members in _GROUPS:
        if top not in obj:
            continue
        root = obj[top]
        # The scanned members lead inside the items of a top-level array of objects.
        item_first = members if members else ()
        # (value, parent's path, key): a path is made only for a string or a non-empty container.
        stack: list[tuple[Any, BoundedPath, str | int, tuple[str, ...]]] = [(root, _ROOT, top, ())]
        while stack:
            value, parent, key, first = stack.pop()
            if type(value) is str:
                yield field_name(parent.child(key)), value
            elif type(value) is dict and value:
                path = parent.child(key)
                names = [*(n for n in first if n in value), *(n for n in value if n not in first)]
                # A member name is stored as it came too; its finding names the object,
                # never the name itself (which is what may hold the secret).
                for name in names:
                    yield f"{field_name(path)}.(member name)", name
                stack.extend((value[n], path, n, ()) for n in reversed(names))
            elif type(value) is list and value:
                path = parent.child(key)
                lead = item_first if value is root else ()
                stack.extend((value[i], path, i, lead) for i in range(len(value) - 1, -1, -1))


# The top-level members the scanned fields are under: lenient_texts reads them.
SCANNED_TOPS = frozenset(top for top, _ in _GROUPS)


def other_values(obj: Mapping[str, Any]) -> Iterator[str]:
    """The texts of :func:`other_texts`, in its order, without their names (no path is made)."""
    for top in obj:
        if top in SCANNED_TOPS:
            continue
        yield top
        stack: list[Any] = [obj[top]]
        while stack:
            value = stack.pop()
            if type(value) is str:
                yield value
            elif type(value) is dict:
                yield from value
                stack.extend(reversed(list(value.values())))
            elif type(value) is list:
                stack.extend(reversed(value))


def other_texts(obj: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(name, text) for every string and member name outside the scanned members, in document
    order, each top-level name first as ``(member name)``. No recursion."""
    for top in obj:
        if top in SCANNED_TOPS:
            continue
        yield "(member name)", top
        stack: list[tuple[Any, BoundedPath, str | int]] = [(obj[top], _ROOT, top)]
        while stack:
            value, parent, key = stack.pop()
            if type(value) is str:
                yield field_name(parent.child(key)), value
            elif type(value) is dict and value:
                path = parent.child(key)
                for name in value:
                    yield f"{field_name(path)}.(member name)", name
                stack.extend((value[n], path, n) for n in reversed(list(value)))
            elif type(value) is list and value:
                path = parent.child(key)
                stack.extend((value[i], path, i) for i in range(len(value) - 1, -1, -1))


__all__ = [
    "CATEGORIES",
    "EXTRA_FIELDS",
    "PATTERNS",
    "SCANNED_FIELDS",
    "SCANNED_TOPS",
    "Pattern",
    "credentials",
    "extra_texts",
    "is_dataclass_instance",
    "lenient_texts",
    "matches_anywhere",
    "member_of",
    "other_texts",
    "redact",
    "redact_obj",
    "replace_credentials",
    "replace_matches",
    "scan",
    "texts",
    "unscanned_credentials",
]
