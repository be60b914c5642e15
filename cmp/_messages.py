"""What a message may show of a packet: quotes, withheld text, paths, and the findings cap.

Every message and path that names packet text goes through here: at most QUOTE_LIMIT code points of a
text and NAME_LIMIT of a member name, and nothing of a text that a redaction pattern of either rule set
matches (:func:`withheld`), so no message, path or log shows what a redaction finding masks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

from cmp._matcher import anchored
from cmp._memo import remembered
from cmp._patterns import credential_like, first_category, first_credential
from cmp.findings import ECHO_LIMIT, MAX_FINDINGS, Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

QUOTE_LIMIT = ECHO_LIMIT


@remembered
def _withholding_category(text: str) -> str | None:
    """The category a message names in place of ``text``: the first default pattern that
    matches it, else the first extended one, else the first credential-like form of either
    (:func:`_resembled`), whatever rule set a check runs with. Memoized: every path step asks."""
    return first_category(text) or _in_extended(text) or _resembled(text)


def _in_extended(text: str) -> str | None:
    """The first extended category matching somewhere in ``text``."""
    # Imported here: a default check that writes no message never loads the extended table.
    from cmp._extended_patterns import first_category as first_extended

    return first_extended(text)


def _resembled(text: str) -> str | None:
    """The first category of either rule set whose credential-like form (its pattern without
    word-boundary assertions) matches somewhere in ``text``: a key glued to a word character,
    which no pattern finds, is withheld all the same."""
    from cmp._extended_patterns import credential_like as extended_like  # as in _in_extended

    return credential_like(text) or extended_like(text)


def credential_in(text: str) -> str | None:
    """The first credential category (not abs-path) of either rule set, or credential-like form, in ``text``."""
    return first_credential(text) or _in_extended(text) or _resembled(text)


def withheld(text: str) -> str | None:
    """What a message says in place of ``text`` when a redaction pattern of either rule set matches
    somewhere in it (``not shown: 20 characters matching aws-key``), else None."""
    category = _withholding_category(text)
    if category is None:
        return None
    return f"not shown: {_characters(len(text))} matching {category}"


def withheld_credential(text: str) -> str | None:
    """:func:`withheld` for the credential patterns and credential-like forms alone
    (:func:`credential_in`): where an absolute path may be shown, it is."""
    category = credential_in(text)
    if category is None:
        return None
    return f"not shown: {_characters(len(text))} matching {category}"


def _characters(count: int) -> str:
    return "1 character" if count == 1 else f"{count:,} characters"


def unquoted(text: str) -> str:
    """``text`` as it is (an id a program prints whole), or ``(not shown: …)`` when a pattern matches in it."""
    hidden = withheld(text)
    return text if hidden is None else f"({hidden})"


def quote(text: str, limit: int = QUOTE_LIMIT, *, within: str | None = None) -> str:
    """Quote user text for a one-line message, showing at most ``limit`` code points; not at all when a
    redaction pattern of either rule set matches it, nor a snippet of a longer text (``within``) in which
    a credential pattern matches (the snippet may hold part of the credential)."""
    hidden = withheld(text)
    if hidden is not None:
        return f"({hidden})"
    if within is not None:
        category = credential_in(within)
        if category is not None:
            return f"(not shown: {_characters(len(text))} of a text matching {category})"
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + "…"


# Paths are compared across implementations, so member steps follow one rule any language can
# reproduce (docs/specification.md, clause 1.4): ``.name`` for a name of at most NAME_LIMIT code
# points matching _PLAIN_NAME (ASCII only); otherwise ``['name']`` with ``\`` and ``'`` backslashed,
# the characters of _ESCAPED_IN_NAME written ``\u`` + four lowercase hex digits, and a name longer
# than NAME_LIMIT cut there, ``…`` following inside the quotes. A name a redaction pattern matches
# is not written: its step is ``[<not shown: …>]``, which no name's step can be.
NAME_LIMIT = ECHO_LIMIT


@functools.cache  # on first use: a packet with no finding writes no step
def _name_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """_PLAIN_NAME and _ESCAPED_IN_NAME."""
    return re.compile(r"[A-Za-z_][A-Za-z0-9_]*"), re.compile(r"[\\'\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape_in_name(match: re.Match[str]) -> str:
    char = match.group()
    return "\\" + char if char in "\\'" else f"\\u{ord(char):04x}"


@remembered
def member_step(name: str) -> str:
    """One member's step in a path: ``.goal``, ``['odd key']``, ``['it\\'s']``, ``['aaaa…']``,
    ``[<not shown: 20 characters matching aws-key>]``. Memoized: every path takes a step per member."""
    hidden = withheld(name)
    if hidden is not None:
        return f"[<{hidden}>]"
    return _shown_step(name)


def _shown_step(name: str) -> str:
    """The step of a name that no redaction pattern matches."""
    plain_name, escaped_in_name = _name_patterns()
    if len(name) <= NAME_LIMIT and plain_name.fullmatch(name):
        return "." + name
    shown = escaped_in_name.sub(_escape_in_name, name[:NAME_LIMIT])
    return "['" + shown + ("…" if len(name) > NAME_LIMIT else "") + "']"


def member_steps(text: str | bytes) -> Callable[[str], str]:
    """:func:`member_step` for the member names of one JSON text, read once to spare asking the redaction
    screens about each name.

    Where the text holds no backslash, each name is written in it as it is, between quotes (no word
    characters); no pattern is anchored (checked below); and a screen matches wherever its pattern does.
    So if no screen matches anywhere in the text, no pattern matches a name (the quick path's fact 3).
    Otherwise it is :func:`member_step` itself. The tests hold the two to the same steps.
    """
    if (b"\\" in text) if isinstance(text, bytes) else ("\\" in text):
        return member_step
    from cmp._extended_patterns import EXTENDED_PATTERNS, matches_either
    from cmp._patterns import PATTERNS

    if _ANCHORED_SCREENS is None:
        _check_unanchored([*PATTERNS, *EXTENDED_PATTERNS])
    try:
        if matches_either(text):
            return member_step
    except UnicodeEncodeError:  # a lone surrogate: name by name
        return member_step
    return _shown_step


_ANCHORED_SCREENS: list[str] | None = None


def _check_unanchored(patterns: list[Any]) -> None:
    global _ANCHORED_SCREENS
    _ANCHORED_SCREENS = [p.category for p in patterns if anchored(p.screened_by) or anchored(p.regex)]
    if _ANCHORED_SCREENS:  # pragma: no cover - a change to a pattern table would have to cause it
        raise AssertionError(f"member_steps needs unanchored patterns; these are not: {_ANCHORED_SCREENS}")


def path_join(parent: str, key: str | int) -> str:
    """Path of a member or item: ``$.goal``, ``$.tags[0]``, ``$['odd key']`` (see :func:`member_step`)."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return parent + member_step(key)


PATH_LIMIT = 200
_HALF = PATH_LIMIT // 2


def bounded_path(path: str) -> str:
    """A path short enough for one line: its start and end around a ``…``."""
    if len(path) <= PATH_LIMIT:
        return path
    return path[:_HALF] + "…" + path[-_HALF:]


class BoundedPath:
    """A JSONPath grown one key at a time, holding no more than :func:`bounded_path` shows: ``child``
    costs the same at any depth, and ``text`` always equals ``bounded_path`` of the full path."""

    __slots__ = ("_head", "_tail", "_whole", "length")

    def __init__(self, whole: str = "$") -> None:
        self._whole: str | None = whole
        self._head = self._tail = ""
        self.length = len(whole)

    @property
    def text(self) -> str:
        return self._whole if self._whole is not None else self._head + "…" + self._tail

    def child(self, key: str | int) -> BoundedPath:
        return self.then(f"[{key}]" if isinstance(key, int) else member_step(key))

    def then(self, step: str) -> BoundedPath:
        """This path and one more step, written already (:func:`member_step`, ``[3]``)."""
        child = BoundedPath.__new__(BoundedPath)
        child.length = self.length + len(step)
        if self._whole is not None:
            whole = self._whole + step
            if child.length <= PATH_LIMIT:
                child._whole = whole
                child._head = child._tail = ""
                return child
            child._head, child._tail = whole[:_HALF], whole[-_HALF:]
        else:
            child._head, child._tail = self._head, (self._tail + step)[-_HALF:]
        child._whole = None
        return child

    def child_text(self, key: str | int) -> str:
        """``child(key).text``, without the child (for a path no finding grows further)."""
        return self.then_text(f"[{key}]" if isinstance(key, int) else member_step(key))

    def then_texts(self, steps: Iterable[str]) -> list[str]:
        """``then_text`` of each of ``steps``, in one go (many members of one object)."""
        if self._whole is None:
            head, tail = self._head + "…", self._tail
            return [head + (tail + step)[-_HALF:] for step in steps]
        whole = self._whole
        texts = [whole + step for step in steps]
        return [text if len(text) <= PATH_LIMIT else text[:_HALF] + "…" + text[-_HALF:] for text in texts]

    def then_text(self, step: str) -> str:
        """``then(step).text``, without the path."""
        if self._whole is not None:
            whole = self._whole + step
            if len(whole) <= PATH_LIMIT:
                return whole
            return whole[:_HALF] + "…" + whole[-_HALF:]
        return self._head + "…" + (self._tail + step)[-_HALF:]

    def repeated(self, index: int, times: int) -> BoundedPath:
        """``child(index)`` taken ``times`` times, in one step (a chain of one-item arrays however long)."""
        if times <= 0:
            return self
        step = f"[{index}]"
        # A step is three characters at least: _HALF of them fill either half.
        steps = step * min(times, _HALF)
        child = BoundedPath.__new__(BoundedPath)
        child.length = self.length + len(step) * times
        if self._whole is not None:
            if child.length <= PATH_LIMIT:
                child._whole = self._whole + step * times
                child._head = child._tail = ""
                return child
            child._head, child._tail = (self._whole + steps)[:_HALF], (self._whole + steps)[-_HALF:]
        else:
            child._head, child._tail = self._head, (self._tail + steps)[-_HALF:]
        child._whole = None
        return child


def field_name(path: BoundedPath) -> str:
    """A redaction finding's field for a value at ``path``: ``decisions[0].why``, ``['odd key'].k``."""
    text = path.text
    return text[2:] if text.startswith("$.") else text[1:]


def capped(findings: Iterable[Finding]) -> list[Finding]:
    """The first :data:`MAX_FINDINGS` findings, then one ``truncated`` finding counting the rest (never kept)."""
    listed: list[Finding] = []
    more = 0
    for finding in findings:
        if len(listed) < MAX_FINDINGS:
            listed.append(finding)
        else:
            more += 1
    if more:
        listed.append(truncated(more))
    return listed


def truncated(more: int) -> Finding:
    return Finding("truncated", "$", f"{more:,} more findings not listed (a report lists the first {MAX_FINDINGS})")
