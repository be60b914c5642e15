"""The redaction rule sets by name: the one place that knows which exist and what each runs.

``"default"`` is the format's pre-flight (specification 8); ``"extended"`` is the default
rules, then more patterns over more fields, marked ``profile="extended"``. Everything that
differs between them is a method of :class:`RuleSet`, so no other module compares names.
The extended table is loaded on first use. Each table's invariants are checked when it
loads: no pattern or screen is anchored (the quick path's fact 3, :mod:`cmp._quick`), and
no scrub placeholder matches a pattern of either table (so scrub's passes end).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import ModuleType

from cmp._matcher import anchored, without_lone_surrogates
from cmp._messages import quote
from cmp._patterns import CATEGORIES, PATTERNS, Pattern, shows_echo
from cmp._redaction import _scan
from cmp._redaction._hit import DEFAULT_RULES, Redaction

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from cmp.model import Packet

    RuleSetName = Literal["default", "extended"]

RULE_SETS: tuple[RuleSetName, ...] = ("default", "extended")
assert RULE_SETS[0] == DEFAULT_RULES, "the default rule set comes first"

# One pass of replacements over a text, each written by ``replacement(pattern, match, offset)``.
Replacer = Callable[[str, Callable[[Pattern, str, int], str]], str]
# What scrub replaces: fields, and the rule sets' replacers to run over them in turn.
ScrubPass = tuple[list[tuple[str, str]], list[tuple["RuleSet", Replacer]]]


def placeholder(category: str) -> str:
    """What scrub writes in place of a match of ``category``: ``[redacted:aws-key]``."""
    return f"[redacted:{category}]"


# A tag's syntax (^[a-z0-9][a-z0-9-]{0,31}$) takes no brackets and is a label, not prose:
# a tag holding a match gives way whole to a placeholder that is itself a tag.
TAG_LIMIT = 32


def placeholder_in(field: str, category: str) -> str:
    """What scrub writes for a match of ``category`` in ``field``: :func:`placeholder`, but for
    a tag (``tags[0]``) the whole tag becomes ``redacted-slack-token`` (cut to a tag's 32 characters)."""
    if field.startswith("tags["):
        return f"redacted-{category}"[:TAG_LIMIT]
    return placeholder(category)


def _unanchored(patterns: Iterable[Pattern]) -> None:
    found = [p.category for p in patterns if anchored(p.regex) or anchored(p.screened_by)]
    if found:  # pragma: no cover - a change to a pattern table would have to cause it
        raise AssertionError(f"the quick path's clean-text rule needs unanchored patterns; anchored: {found}")


def _placeholders_match_nothing(categories: Iterable[str], matches_anywhere: Iterable[Callable[[str], bool]]) -> None:
    tests = list(matches_anywhere)
    found = [c for c in categories if any(test(placeholder(c)) or test(placeholder_in("tags[0]", c)) for test in tests)]
    if found:  # pragma: no cover - a change to a pattern table would have to cause it
        raise AssertionError(f"scrub's placeholders must match no pattern; these do: {found}")


_unanchored(PATTERNS)
_placeholders_match_nothing(CATEGORIES, [_scan.matches_anywhere])


class RuleSet:
    """A rule set the pre-flight can run, by its name (``rule_set=``).

    ``name`` is what its findings carry in ``Redaction.profile``; ``named`` is the name
    output shows (None for the default rules, so output stays as the reference's);
    ``categories`` are those its own findings can name; ``tables`` the rule sets whose
    findings it reports, in order.
    """

    name: RuleSetName
    named: str | None
    categories: tuple[str, ...]
    tables: tuple[RuleSet, ...]

    def redact(self, packet: Packet) -> list[Redaction]:
        """The findings for a typed packet."""
        raise NotImplementedError

    def redact_obj(self, obj: Mapping[str, Any]) -> list[Redaction]:
        """Lenient mode's findings for parsed JSON that does not conform."""
        raise NotImplementedError

    def redact_quick(self, raw: bytes, packet: Packet, plain: bool) -> tuple[Redaction, ...]:
        """The findings for ``packet`` read from ``raw``; ``plain``: no escape, so fact 3 holds."""
        raise NotImplementedError

    def unscanned(self, packet: Packet) -> list[Redaction]:
        """The credential findings in the strings of a typed packet that this rule set does not
        read: what a writer adds (``writer=True``), and what a reader warns of."""
        raise NotImplementedError

    def scan(self, fields: list[tuple[str, str]]) -> list[Redaction]:
        """Its own table's findings for (name, text) pairs (not the tables before it)."""
        raise NotImplementedError

    def scrub_passes(self, data: Mapping[str, Any]) -> list[ScrubPass]:
        """What scrub replaces in a packet's data (see ScrubPass)."""
        raise NotImplementedError

    def replacer(self) -> Replacer:
        """Its own table's one pass of replacements over a text (every match of every pattern)."""
        raise NotImplementedError

    def every_match(self, text: str) -> list[tuple[str, str]]:
        """(category, match) for every match of its own table in ``text``, not only the leftmost."""
        found: list[tuple[str, str]] = []

        def keep(pattern: Pattern, match: str, offset: int) -> str:
            found.append((pattern.category, match))
            return match

        self.replacer()(without_lone_surrogates(text), keep)
        return found

    def __repr__(self) -> str:
        return f"<rule set {self.name!r}>"

    def __reduce__(self) -> tuple[Callable[[object], RuleSet], tuple[str]]:
        # One object per rule set, in a worker process too: it travels as its name.
        return rule_set_named, (self.name,)


class _Default(RuleSet):
    name: RuleSetName = "default"
    named = None
    categories = CATEGORIES

    def __init__(self) -> None:
        self.tables = (self,)

    def redact(self, packet: Packet) -> list[Redaction]:
        return _scan.redact(packet)

    def redact_obj(self, obj: Mapping[str, Any]) -> list[Redaction]:
        return _scan.redact_obj(obj)

    def redact_quick(self, raw: bytes, packet: Packet, plain: bool) -> tuple[Redaction, ...]:
        if plain and not _scan.matches_anywhere(raw):  # the quick path's fact 3
            return ()
        return tuple(_scan.redact(packet))

    def unscanned(self, packet: Packet) -> list[Redaction]:
        return _scan.unscanned_credentials(packet)

    def scan(self, fields: list[tuple[str, str]]) -> list[Redaction]:
        return _scan.scan(fields)

    def scrub_passes(self, data: Mapping[str, Any]) -> list[ScrubPass]:
        # The writer's rule too: the credential patterns over the strings the format does not scan.
        credentials: list[tuple[RuleSet, Replacer]] = [(self, _scan.replace_credentials)]
        return [
            (list(_scan.texts(data)), [(self, _scan.replace_matches)]),
            (list(_scan.extra_texts(data)), credentials),
        ]

    def replacer(self) -> Replacer:
        return _scan.replace_matches


class _Extended(RuleSet):
    name: RuleSetName = "extended"
    named = "extended"

    def __init__(self) -> None:
        self.tables = (DEFAULT, self)

    @property
    def categories(self) -> tuple[str, ...]:  # type: ignore[override]
        # Its own table's, then the default credentials it finds in the extra fields.
        own: tuple[str, ...] = _extended_table().patterns.EXTENDED_CATEGORIES
        return (*own, *(category for category in CATEGORIES if not shows_echo(category) and category not in own))

    def redact(self, packet: Packet) -> list[Redaction]:
        walks = _extended_table().walks
        found = _scan.redact(packet)
        found.extend(walks.redact_default_credentials(packet))
        found.extend(walks.redact_extended(packet))
        return found

    def redact_obj(self, obj: Mapping[str, Any]) -> list[Redaction]:
        found = _scan.redact_obj(obj)
        found.extend(_extended_table().walks.redact_extended_obj(obj))
        return found

    def redact_quick(self, raw: bytes, packet: Packet, plain: bool) -> tuple[Redaction, ...]:
        table = _extended_table()
        # One pass with both tables' screens rules it clean for both (fact 3).
        if plain and not table.patterns.matches_either(raw):
            return ()
        found = [*_scan.redact(packet), *table.walks.redact_default_credentials(packet)]
        # The extra fields sit in ``raw`` verbatim too: fact 3 holds for them.
        if b"\\" not in raw and not table.patterns.matches_anywhere(raw):
            return tuple(found)
        return (*found, *table.walks.redact_extended(packet))

    def unscanned(self, packet: Packet) -> list[Redaction]:
        # It reads every string a conforming packet can hold (its member names are the schema's).
        return []

    def scan(self, fields: list[tuple[str, str]]) -> list[Redaction]:
        return _extended_table().walks.scan(fields)  # type: ignore[no-any-return]

    def replacer(self) -> Replacer:
        replace: Replacer = _extended_table().walks.replace_matches
        return replace

    def scrub_passes(self, data: Mapping[str, Any]) -> list[ScrubPass]:
        walks = _extended_table().walks
        both: list[tuple[RuleSet, Replacer]] = [(DEFAULT, _scan.replace_matches), (self, walks.replace_matches)]
        # abs-path stays on the default fields: over the extra ones, the default credential patterns.
        extra: list[tuple[RuleSet, Replacer]] = [(self, _scan.replace_credentials), (self, walks.replace_matches)]
        return [(list(_scan.texts(data)), both), (list(_scan.extra_texts(data)), extra)]


@dataclass(frozen=True, slots=True)
class _Table:
    """The extended table's two modules."""

    patterns: ModuleType  # cmp._extended_patterns: the patterns, their checks and screens
    walks: ModuleType  # cmp._redaction._extended: the fields they read and the walks over them


@functools.cache
def _extended_table() -> _Table:
    """The extended table, loaded on first use, its invariants checked."""
    from cmp import _extended_patterns
    from cmp._redaction import _extended

    _unanchored(_extended_patterns.EXTENDED_PATTERNS)
    _placeholders_match_nothing(
        (*CATEGORIES, *_extended_patterns.EXTENDED_CATEGORIES),
        [_scan.matches_anywhere, _extended_patterns.matches_anywhere],
    )
    return _Table(_extended_patterns, _extended)


DEFAULT: RuleSet = _Default()
EXTENDED: RuleSet = _Extended()
_BY_NAME: dict[str, RuleSet] = {rules.name: rules for rules in (DEFAULT, EXTENDED)}
assert tuple(_BY_NAME) == RULE_SETS, "every name in RuleSetName has its rule set"


def rule_set_named(name: object) -> RuleSet:
    """The rule set ``name`` names; a ValueError for an unknown name (a TypeError for a non-string)."""
    if not isinstance(name, str):
        raise TypeError(f"rule_set must be a str, not {type(name).__name__}")
    found = _BY_NAME.get(name)
    if found is None:
        raise ValueError(f"rule_set must be one of {', '.join(map(repr, RULE_SETS))}, not {quote(name)}")
    return found


def finder(redaction: Redaction) -> RuleSet:
    """The rule set whose own table found ``redaction``."""
    return _BY_NAME[redaction.profile]


def checked_rule_set(name: object) -> RuleSetName:
    """``name`` if it names a rule set, else the error :func:`rule_set_named` raises."""
    return rule_set_named(name).name
