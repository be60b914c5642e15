"""Boolean RE2 matching through a one-pattern ``re2.Set``, which answers "does it match"
without building the match object ``search`` does. Short texts, such as tags that repeat
from packet to packet, remember their answer (cmp._memo).
"""

from __future__ import annotations

import re

import re2

from cmp._memo import remembered

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def without_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, for RE2, which reads UTF-8.
    Neither is a word character and no CMP pattern names one, so no answer changes."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def compile_set(regexes: list[str]) -> Any:
    """One RE2 set searching for all of ``regexes`` at once; ``Match(text)`` lists the indices that match."""
    pattern_set = re2.Set.SearchSet(re2.Options())
    for regex in regexes:
        if pattern_set.Add(regex) < 0:
            raise ValueError(f"bad RE2 pattern {regex!r}")
    pattern_set.Compile()
    return pattern_set


# Escaped characters and character classes anchor nothing (`[^a]`, `\$`), so they are
# removed before looking for an anchor; the escapes that are anchors are kept.
_ESCAPE_OR_CLASS = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]")
_AN_ANCHOR = re.compile(r"[\^$]|\\[AzZ]|\(\?[a-zA-Z]*m")


def anchored(regex: str) -> bool:
    """Whether an RE2 regex can match only at a text's start or end (or at line ends)."""
    bare = _ESCAPE_OR_CLASS.sub(_keep_anchor_escapes, regex)
    return _AN_ANCHOR.search(bare) is not None


# A \b or \B written in a regex (not an escaped backslash followed by a letter b).
_WORD_ASSERTION = re.compile(r"(?<!\\)((?:\\\\)*)\\[bB]")


def without_word_assertions(regex: str) -> str:
    """``regex`` with its ``\\b`` and ``\\B`` assertions taken out: it matches wherever ``regex``
    does, and also where a word character touches the match (``AKIAIOSFODNN7EXAMPLE_v2``)."""
    return _WORD_ASSERTION.sub(r"\1", regex)


def _keep_anchor_escapes(match: re.Match[str]) -> str:
    """Drop a class or an escaped character, but keep the escapes that are anchors."""
    text = match.group()
    return text if text[0] == "\\" and text[1] in "AzZ" else ""


class Matcher:
    """Whether RE2 ``pattern`` matches somewhere in a string (``search`` semantics).

    ``matches`` is the same test as a plain function, for generated code to call directly.
    """

    __slots__ = ("matches", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        found = compile_set([pattern]).Match

        def matches(text: str) -> bool:
            try:
                return found(text) is not None
            except UnicodeEncodeError:
                return False  # a lone surrogate: no CMP pattern matches one

        self.matches = remembered(matches)

    def __call__(self, text: str) -> bool:
        return self.matches(text)


# google-re2's compiled regexp wraps a C++ object whose Match(anchor, text, pos, endpos)
# gives a match's spans without the match object search() builds around them. Without it
# (another google-re2 version), Spans falls back to search().
_ANCHOR = getattr(re2, "_Anchor", None)
_UNANCHORED = getattr(_ANCHOR, "UNANCHORED", None)
_ANCHOR_START = getattr(_ANCHOR, "ANCHOR_START", None)


class Spans:
    """The span of RE2 ``pattern``'s leftmost match in UTF-8 bytes, from a byte offset on.

    As ``re2.compile(pattern).search(data, pos).span()``: the bytes before ``pos`` are
    context (``\\b`` looks at them), the match starts at ``pos`` or later.
    """

    __slots__ = ("_compiled", "_match", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled = re2.compile(pattern)
        regexp: Any = getattr(self._compiled, "_regexp", None)
        self._match: Any = regexp.Match if _ANCHOR is not None and hasattr(regexp, "Match") else None

    def search(self, data: bytes, pos: int = 0) -> tuple[int, int] | None:
        """(start, end) of the leftmost match starting at ``pos`` or later, or None."""
        end = len(data)
        if pos > end:
            return None  # (RE2 would log the bad offsets)
        if self._match is None:
            found = self._compiled.search(data, pos)
            return None if found is None else found.span()
        span: tuple[int, int] = self._match(_UNANCHORED, data, pos, end)[0]
        return None if span[0] < 0 else span

    def match(self, data: bytes, pos: int = 0) -> tuple[int, int] | None:
        """(start, end) of the match starting exactly at ``pos``, or None."""
        end = len(data)
        if pos > end:
            return None
        if self._match is None:
            found = self._compiled.match(data, pos)
            return None if found is None else found.span()
        span: tuple[int, int] = self._match(_ANCHOR_START, data, pos, end)[0]
        return None if span[0] < 0 else span
