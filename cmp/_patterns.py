"""The redaction patterns, what each shows of a match, and the one-pass screen over them.

The low-level half of the redaction pre-flight (:mod:`cmp._redaction` walks the packet).
It sits at the bottom of the import layers so that no message, path or exception ever
shows a credential a redaction finding would mask (:func:`cmp._messages.quote`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, dataclass, replace

import re2

from cmp._matcher import Spans, compile_set, without_lone_surrogates, without_word_assertions
from cmp._memo import remembered

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# Whether a match counts: (the text searched, the match's start, its end) -> bool.
Check = Callable[[str, int, int], bool]


@dataclass(frozen=True, slots=True)
class Pattern:
    """One rule of a redaction table: its category, its RE2 regex, what a finding shows,
    and the category's facts (the catalog's description, the public prefix, a check).
    Several patterns of one category state the same facts (abs-path)."""

    category: str
    regex: str
    _: KW_ONLY
    # What a match is, as a reader names it: the rule catalog's description
    # (``core-memory-packet rules``, docs/rules.md).
    description: str
    # What a finding shows of a credential by default: the prefix its format publishes (the
    # same for every key of that kind), as a regex matched at the start of the match.
    # None: not a credential, the echo is shown (absolute paths).
    prefix: str | None
    # The extended rules only: a match counts only if this says yes (a checksum, a
    # random-looking value, a password that is no placeholder).
    check: Check | None = None
    mask: str | None = None  # reported instead of the match, for key headers
    # A looser regex for the one-pass screen (see _Screen): it matches wherever
    # ``regex`` does, and its DFA stays small in a set with the others.
    screen: str | None = None
    # For a pattern whose RE2 DFA crafted text can blow up: the same pattern over UTF-8 bytes
    # for `re`, starting with a literal, of fixed width, so each candidate costs bounded steps
    # (see _Screen). It confirms a screen's flag; the tests hold it to ``regex``.
    fixed_width: bytes | None = None
    # A regex RE2 finds at memchr speed (it starts with a literal), and how far into a match
    # it starts: wherever ``regex`` matches from offset s, ``seek`` matches from s +
    # ``seek_back``. ``regex`` itself, starting with ``\b`` or a class, cannot skip ahead
    # (about a fifth of the dirty packet's scan: its check+dumps within its floor, 8x
    # json.loads). When ``regex`` is ``seek`` behind a ``\b`` or ``\B``, the byte before a
    # place decides the assertion; else the pattern is matched anchored there. The tests
    # hold every match of ``regex`` to this (see _first_matcher).
    seek: str | None = None
    seek_back: int = 0

    @property
    def screened_by(self) -> str:
        return self.screen or self.regex


def by_category(patterns: tuple[Pattern, ...]) -> dict[str, Pattern]:
    """Each category of a table, in table order, with its first pattern, which states the
    category's facts; a later pattern of the category must state the same ones."""
    out: dict[str, Pattern] = {}
    for pattern in patterns:
        first = out.setdefault(pattern.category, pattern)
        if (pattern.description, pattern.prefix, pattern.check) != (first.description, first.prefix, first.check):
            raise AssertionError(f"the patterns of {pattern.category} state different facts")
    return out


# The ten four-letter prefixes of AWS access key ids: the pattern and its public prefix
# both read them from here.
_AWS_PREFIXES = "AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA"

_ABS_PATH = Pattern(
    "abs-path",
    r"\B/(?:Users|home|opt|var|etc|root)/[A-Za-z0-9._/-]+",
    seek=r"/(?:Users|home|opt|var|etc|root)/[A-Za-z0-9._/-]+",
    description="an absolute path under a home or system folder (/home, /Users, /root, /opt, /var, /etc) "
    "or a Windows drive path",
    prefix=None,
)

# Categories and order are the reference's (docs/specification.md, clauses 8.1 to 8.6). RE2 `\b` and
# `\s` are ASCII-only, as in Go; Python's `re` would disagree on é, Å and friends.
PATTERNS: tuple[Pattern, ...] = (
    _ABS_PATH,
    replace(_ABS_PATH, regex=r"\b[A-Za-z]:[\\/](?:[A-Za-z0-9 _.-]+[\\/]?)+", seek=r":[\\/]", seek_back=1),
    Pattern(
        "aws-key",
        rf"\b(?:{_AWS_PREFIXES})[0-9A-Z]{{16}}\b",
        seek=rf"(?:{_AWS_PREFIXES})[0-9A-Z]{{16}}\b",
        description="an AWS access key id (AKIA…, ASIA…)",
        prefix=f"(?:{_AWS_PREFIXES})",
    ),
    Pattern(
        "gh-token",
        r"gh[pousr]_[A-Za-z0-9]{36,}",
        description="a GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)",
        prefix=r"gh[pousr]_",
    ),
    Pattern(
        "jwt",
        r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
        description="a JSON Web Token (eyJ….….…)",
        prefix=r"eyJ",
    ),
    Pattern(
        "private-key",
        r"-----BEGIN (?:RSA |EC |OPENSSH )?PRIVATE KEY-----",
        description="a private key header (-----BEGIN … PRIVATE KEY-----)",
        prefix=r"-----BEGIN ",  # the rest is masked as the echo masks it
        mask="-----BEGIN …",
    ),
    Pattern(
        "google-api-key",
        r"\bAIza[0-9A-Za-z_-]{35}\b",
        description="a Google API key (AIza…)",
        prefix=r"AIza",
        screen=r"\bAIza[0-9A-Za-z_-]",
        # AIza not after a word character, 35 of the class, then a word boundary (ASCII).
        fixed_width=rb"AIza(?<![0-9A-Za-z_]AIza)[0-9A-Za-z_-]{35}"
        rb"(?:(?<=[0-9A-Za-z_])(?![0-9A-Za-z_])|(?<![0-9A-Za-z_])(?=[0-9A-Za-z_]))",
    ),
    Pattern(
        "slack-token",
        r"\bxox[baprs]-[0-9A-Za-z-]{10,}\b",
        seek=r"xox[baprs]-[0-9A-Za-z-]{10,}\b",
        description="a Slack token (xoxb-, xoxa-, xoxp-, xoxr-, xoxs-)",
        prefix=r"xox[baprs]-",
    ),
    Pattern(
        "stripe-key",
        r"\b(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}|whsec_[0-9A-Za-z]{32,})\b",
        description="a Stripe secret, restricted or webhook signing key (sk_live_, rk_test_, whsec_)",
        prefix=r"(?:sk|rk)_(?:live|test)_|whsec_",
    ),
    Pattern(
        "ssh-public-key",
        r"\bssh-(?:rsa|ed25519|dss|ecdsa)[ \t\n\f\r]+AAAA[0-9A-Za-z+/=]{20,}",
        seek=r"ssh-(?:rsa|ed25519|dss|ecdsa)[ \t\n\f\r]+AAAA[0-9A-Za-z+/=]{20,}",
        description="an SSH public key (ssh-rsa AAAA…)",
        prefix=r"ssh-(?:rsa|ed25519|dss|ecdsa)[ \t\n\f\r]",  # the key type and one space
    ),
)

# Each category of the format's table and the pattern stating its facts.
BY_CATEGORY: dict[str, Pattern] = by_category(PATTERNS)
CATEGORIES: tuple[str, ...] = tuple(BY_CATEGORY)
assert all(p.check is None for p in PATTERNS), "the format's patterns are the reference's: no checks"

# The public prefix of each category of this table (None: the echo is shown), for display.
PUBLIC_PREFIXES: dict[str, str | None] = {category: p.prefix for category, p in BY_CATEGORY.items()}


def shows_echo(category: str) -> bool:
    """Whether a finding of ``category`` shows its echo by default (it holds no credential).
    Every extended category is a credential (:mod:`cmp._extended_patterns` asserts it)."""
    pattern = BY_CATEGORY.get(category)
    return pattern is not None and pattern.prefix is None


def prefix_of(pattern: Pattern | None, found: str) -> str:
    """The public prefix of ``found``, a match of ``pattern`` (``AKIA``, ``sk_live_``); ""
    when it has none (an absolute path, no pattern)."""
    matcher = None if pattern is None else _prefix_matcher(pattern.prefix)
    match = matcher.match(found) if matcher is not None else None
    return match.group() if match is not None else ""


@functools.cache
def _prefix_matcher(regex: str | None) -> re.Pattern[str] | None:
    # Compiled on first use: a check that finds nothing never needs one (34 regexes, ~3 ms).
    return None if regex is None else re.compile(regex)


class _Screen:
    """Which patterns match somewhere in a text: one RE2 set pass, then a confirmation only for
    patterns screened loosely. google-api-key's exact count (``AIza`` + 35 characters, then a
    boundary) lets crafted text keep thousands of overlapping counts alive in RE2 (20-80 ms for
    32 KB). So the set holds only its start (``screened_by``), and a flag is confirmed by its
    ``fixed_width`` form: at most 39 steps per ``AIza`` candidate. The tests hold the answer exact.
    """

    def __init__(self) -> None:
        self._set = compile_set([p.screened_by for p in PATTERNS])
        self._confirm = {i: re.compile(p.fixed_width) for i, p in enumerate(PATTERNS) if p.fixed_width is not None}

    def hits(self, text: str | bytes) -> list[int]:
        """Indices into PATTERNS of the patterns that match somewhere in ``text``, ascending."""
        return self.confirmed(self.screened(text), text)

    def screened(self, text: str | bytes) -> list[int]:
        """Indices into PATTERNS of the patterns whose screens match somewhere in ``text``."""
        return self._set.Match(text) or []

    def confirmed(self, found: list[int] | None, text: str | bytes) -> list[int]:
        """Of the patterns ``found`` (indices into PATTERNS) whose screens match somewhere in
        ``text``, those that match there themselves, ascending."""
        if not found:
            return []
        confirm = self._confirm
        if confirm.keys().isdisjoint(found):
            return sorted(found)
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        return sorted(i for i in found if i not in confirm or confirm[i].search(data))

    def matches(self, index: int, data: bytes) -> Iterator[Any]:
        """Every match of pattern ``index`` in UTF-8 ``data``, leftmost first, not overlapping."""
        search = self._confirm.get(index)
        return search.finditer(data) if search is not None else searches()[index].finditer(data)

    def first_match(self, index: int, data: bytes, pos: int = 0) -> tuple[int, int] | None:
        """(start, end) in UTF-8 ``data`` of the leftmost match of pattern ``index`` that
        starts at byte ``pos`` or later (the bytes before ``pos`` are context), or None."""
        return _first_matchers()[index](data, pos)

    def first_matchers(self) -> tuple[FirstMatch, ...]:
        """:meth:`first_match` of each pattern, as a function of (data, pos): a scan that
        calls them again and again looks them up once."""
        return _first_matchers()


# (data, pos) -> (start, end) of a pattern's leftmost match from pos on, or None.
FirstMatch = Callable[[bytes, int], "tuple[int, int] | None"]


@functools.cache
def _first_matchers() -> tuple[FirstMatch, ...]:
    """Each pattern's first_match, with what it reads bound in (built on the first dirty text)."""
    return tuple(_first_matcher(index) for index in range(len(PATTERNS)))


def _first_matcher(index: int) -> FirstMatch:
    """How pattern ``index`` finds its leftmost match from a byte offset on: a pattern
    screened loosely by its ``fixed_width`` form (see _Screen), one with a ``seek`` by
    trying the places its seek matches in order (the first that holds is the leftmost
    match; after _SEEK_TRIES that do not, one plain search goes on), any other by a search
    for the pattern itself."""
    confirm = SCREEN._confirm.get(index)
    if confirm is not None:
        search = confirm.search

        def confirmed(data: bytes, pos: int) -> tuple[int, int] | None:
            found = search(data, pos)
            return None if found is None else found.span()

        return confirmed
    exact = _exact_spans()[index]
    pattern = PATTERNS[index]
    if pattern.seek is None:
        return exact.search
    seek_search, exact_match, exact_search = Spans(pattern.seek).search, exact.match, exact.search
    back = pattern.seek_back
    behind = back == 0 and pattern.regex in (r"\b" + pattern.seek, r"\B" + pattern.seek)

    def seeking(data: bytes, pos: int) -> tuple[int, int] | None:
        candidate, tries = seek_search(data, pos + back), _SEEK_TRIES
        while candidate is not None:
            start = candidate[0] - back
            if behind:
                # The seek starts with a word character after \b, or another after \B:
                # the assertion holds where the byte before is no word character.
                if start == 0 or data[start - 1] not in _WORD_BYTES:
                    return candidate
            else:
                span = exact_match(data, start)
                if span is not None:
                    return span
            tries -= 1
            if not tries:
                return exact_search(data, start + 1)
            candidate = seek_search(data, start + 1 + back)
        return None

    return seeking


# RE2's \b and \B read ASCII word characters; every other byte, UTF-8 included, is not one.
_WORD_BYTES = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
# Places a seek may match without a match of its pattern before a plain search takes over.
_SEEK_TRIES = 4


@functools.cache
def searches() -> tuple[Any, ...]:
    """Compiled per-pattern searches, built on the first dirty text (start-up stays lean)."""
    return tuple(re2.compile(p.regex) for p in PATTERNS)


@functools.cache
def _exact_spans() -> tuple[Spans, ...]:
    """Each pattern as a span search (see first_match), built on the first dirty text."""
    return tuple(Spans(p.regex) for p in PATTERNS)


SCREEN = _Screen()


def matches_anywhere(text: str | bytes) -> bool:
    """Whether any pattern matches somewhere in ``text``, in one pass (cmp._quick, fact 2)."""
    return bool(SCREEN.hits(text))


@remembered
def categories_in(text: str) -> tuple[str, ...]:
    """The categories of the patterns that match somewhere in ``text``, in table order
    (a lone surrogate, which no pattern matches, reads as U+FFFD)."""
    try:
        hits = SCREEN.hits(text)
    except UnicodeEncodeError:
        hits = SCREEN.hits(without_lone_surrogates(text))
    return tuple(dict.fromkeys(PATTERNS[i].category for i in hits))


def first_category(text: str) -> str | None:
    """The category of the first pattern (in table order) that matches somewhere in ``text``, or None."""
    found = categories_in(text)
    return found[0] if found else None


def first_credential(text: str) -> str | None:
    """The first category matching somewhere in ``text`` that masks what it finds (not abs-path), or None."""
    return next((category for category in categories_in(text) if not shows_echo(category)), None)


# --- what masking reads -----------------------------------------------------------------------
# Whether a message may show a text is decided more loosely than verdicts: a key glued to
# a word character (``AKIAIOSFODNN7EXAMPLE_v2``) is no finding but as much a key. So each
# credential pattern has a credential-like form without its ``\b`` and ``\B``
# (:func:`cmp._matcher.without_word_assertions`). No check's answer reads it.


def credential_like_forms(patterns: tuple[Pattern, ...]) -> list[tuple[str, str]]:
    """(category, credential-like regex) of each credential pattern (not an absolute path) of ``patterns``."""
    return [(p.category, without_word_assertions(p.regex)) for p in patterns if not shows_echo(p.category)]


@functools.cache
def _credential_like() -> tuple[Any, tuple[str, ...]]:
    """One RE2 set of the default table's credential-like forms, and their categories (built on first use)."""
    forms = credential_like_forms(PATTERNS)
    return compile_set([regex for _, regex in forms]), tuple(category for category, _ in forms)


@remembered
def credential_like(text: str) -> str | None:
    """The first default credential category (in table order) whose credential-like form
    matches somewhere in ``text``, or None. Any text: U+FFFD stands in for a lone surrogate."""
    found_in, categories = _credential_like()
    try:
        found = found_in.Match(text)
    except UnicodeEncodeError:
        found = found_in.Match(without_lone_surrogates(text))
    return categories[min(found)] if found else None
