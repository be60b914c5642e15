"""A redaction finding: what one rule found in one field, and what output shows of it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from cmp._codegen import draft_class
from cmp._messages import credential_in
from cmp._patterns import BY_CATEGORY, Pattern, prefix_of, shows_echo
from cmp.findings import ECHO_LIMIT, Position, first_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def pattern_of(category: str) -> Pattern | None:
    """The pattern that states ``category``'s facts (its description, public prefix and
    check), from the format's table or the extended one; None for a category of neither."""
    found = BY_CATEGORY.get(category)
    if found is None:
        # Here, not above: the extended table loads only for one of its own categories.
        from cmp._extended_patterns import EXTENDED_BY_CATEGORY

        found = EXTENDED_BY_CATEGORY.get(category)
    return found


def public_prefix(category: str, found: str) -> str:
    """The public prefix of ``found``, a match of ``category`` (``AKIA``, ``sk_live_``); "" when it has none."""
    return prefix_of(pattern_of(category), found)


# The format's own rule set (specification 8): its findings are shown without naming it,
# so default output stays as the reference's.
DEFAULT_RULES = "default"


@dataclass(frozen=True, slots=True, repr=False)
class Redaction:
    """One (field, pattern) hit: ``found`` is the leftmost match (masked for key headers),
    ``at`` and ``length`` in code points (-1: the length of ``found``). Output shows a credential
    masked (``AKIA… (20 chars) at 0``), an absolute path its echo; ``show_found=True`` the echo."""

    field: str
    category: str
    found: str
    at: int = 0
    length: int = -1

    def __post_init__(self) -> None:
        if self.length < 0:
            object.__setattr__(self, "length", len(self.found))

    # (dataclasses.field, not field: a member of this class is named field.)
    # The rule set that found it: DEFAULT_RULES or "extended"; ``profile`` in JSON output too.
    profile: str = dataclasses.field(default=DEFAULT_RULES, kw_only=True)
    # Where the match starts in the source text, once cmp.Report.located() asked.
    position: Position | None = dataclasses.field(default=None, kw_only=True)

    @property
    def echo(self) -> str:
        """The format's echo: ``found`` cut after 32 code points, then ``…``."""
        if len(self.found) > ECHO_LIMIT:
            return self.found[:ECHO_LIMIT] + "…"
        return self.found

    @property
    def shows_echo(self) -> bool:
        """Whether the echo is shown by default: for a category that is no credential, unless
        what it found holds one (a path's characters take in most tokens)."""
        return shows_echo(self.category) and credential_in(self.found) is None

    @property
    def prefix(self) -> str:
        """What the category's format publishes of every key (``AKIA``, ``ghp_``); "" for none."""
        return public_prefix(self.category, self.found)

    @property
    def masked(self) -> str:
        """What is shown by default: ``AKIA… (20 chars) at 0``, or an absolute path's echo and offset."""
        if self.shows_echo:
            return f"{self.echo} at {self.at}"
        return f"{self.prefix}… ({self.length} chars) at {self.at}"

    def line(self, *, show_found: bool = False) -> str:
        """``field/category: <masked>``; with ``show_found`` the format's finding, ``field/category: <echo>``."""
        return f"{self.field}/{self.category}: {self.echo if show_found else self.masked}"

    def __str__(self) -> str:
        return self.line()

    def __repr__(self) -> str:
        shown = self.echo if self.shows_echo else self.prefix + "…"
        more = "" if self.profile == DEFAULT_RULES else f", profile={self.profile!r}"
        return (
            f"Redaction(field={self.field!r}, category={self.category!r}, found={shown!r}, "
            f"at={self.at}, length={self.length}{more})"
        )

    def to_json(self, *, show_found: bool = False) -> dict[str, str | int]:
        """``field``, ``category``, ``found`` (the public prefix and ``…``, an absolute path's echo,
        or with ``show_found`` the echo), ``at``, ``length``, ``text`` (:meth:`line`),
        ``profile`` for a finding of the extended rules, and ``line`` and ``column`` once located."""
        if show_found or self.shows_echo:
            found = self.echo
        else:
            found = self.prefix + "…"
        out: dict[str, str | int] = {
            "field": self.field,
            "category": self.category,
            "found": found,
            "at": self.at,
            "length": self.length,
            "text": self.line(show_found=show_found),
        }
        if self.profile != DEFAULT_RULES:
            out["profile"] = self.profile
        if self.position is not None:
            out["line"] = self.position.line
            out["column"] = self.position.column
        return out


# A draft with Redaction's slots, filled in, then made a Redaction (cmp._codegen.draft_class).
# It sets every field the constructor would (the tests hold the two equal, field by field).
_DRAFT = draft_class(Redaction)
_new = object.__new__


def make_redaction(field: str, category: str, found: str, at: int, length: int) -> Redaction:
    """``Redaction(field, category, found, at, length)``, made the quick way."""
    made: Any = _new(_DRAFT)
    made.field, made.category, made.found, made.at, made.length = field, category, found, at, length
    made.profile, made.position = DEFAULT_RULES, None
    made.__class__ = Redaction
    redaction: Redaction = made
    return redaction


class RedactionError(ValueError):
    """Raised where a packet with redaction findings would leave the library (cmp.render,
    cmp.Store.save); ``redactions`` are the findings. The message masks credentials."""

    def __init__(self, redactions: Sequence[Redaction]) -> None:
        self.redactions: tuple[Redaction, ...] = tuple(redactions)
        count = len(self.redactions)
        summary = first_of(self.redactions)
        super().__init__(f"{count} redaction finding{'s' if count != 1 else ''}: {summary}")
