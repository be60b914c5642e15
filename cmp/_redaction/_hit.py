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
        # Here, not above: the extended table loads for one of its own categories (whose
        # findings it made), never for the format's.
        from cmp._extended_patterns import EXTENDED_BY_CATEGORY

        found = EXTENDED_BY_CATEGORY.get(category)
    return found


def public_prefix(category: str, found: str) -> str:
    """The public prefix of ``found``, a match of ``category`` (``AKIA``, ``sk_live_``); "" when it has none."""
    return prefix_of(pattern_of(category), found)


# The name of the format's own rule set (the reference's ten patterns, specification 8).
# A finding of it is shown without naming its rules, so default output stays as the
# reference's; the rule sets themselves are cmp._redaction._rules'.
DEFAULT_RULES = "default"


@dataclass(frozen=True, slots=True, repr=False)
class Redaction:
    """One (field, pattern) hit.

    ``found`` is the leftmost match (masked for key headers: ``-----BEGIN …``), ``at``
    its offset in the field in code points, ``length`` its length in code points (-1
    when constructing: the length of ``found``). ``echo`` is the format's echo
    (specification 8.5): ``found`` cut after 32 code points, what the conformance
    protocol carries.

    ``str()``, ``repr()`` and :meth:`to_json` show a credential masked: its public
    prefix, its length and where it is (``constraints[0]/aws-key: AKIA… (20 chars) at
    0``); an absolute path, which is not one, shows its echo (``goal/abs-path:
    /home/me/x at 6``) unless it holds one. ``line(show_found=True)`` and ``to_json(show_found=True)``
    show the echo instead.
    """

    field: str
    category: str
    found: str
    at: int = 0
    length: int = -1

    def __post_init__(self) -> None:
        if self.length < 0:
            object.__setattr__(self, "length", len(self.found))

    # (dataclasses.field, not field: a member of this class is named field.)
    # The name of the rule set that found it (its ``rules``): DEFAULT_RULES, or "extended"
    # (cmp._redaction._extended, opt-in). Named in output only when it is not the
    # default, so default output stays as the reference's. The member is ``profile`` in
    # the JSON output too, where programs read it.
    profile: str = dataclasses.field(default=DEFAULT_RULES, kw_only=True)
    # Where the match starts in the source text, once asked for (cmp.Report.located());
    # None until then.
    position: Position | None = dataclasses.field(default=None, kw_only=True)

    @property
    def echo(self) -> str:
        """The format's echo: ``found`` cut after 32 code points, then ``…``."""
        if len(self.found) > ECHO_LIMIT:
            return self.found[:ECHO_LIMIT] + "…"
        return self.found

    @property
    def shows_echo(self) -> bool:
        """Whether the echo is shown by default: for a category that is no credential (an
        absolute path), unless what it found holds one (``/home/me/AKIA…`` is masked like
        the key: a path's characters take in most tokens)."""
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


# What the scan finds is made as the schema compiler makes the model (cmp._codegen.draft_class):
# a draft with Redaction's slots is filled in, then becomes a Redaction, for a quarter of
# what the frozen dataclass's __init__ costs. It sets every field the constructor would
# (the tests hold the two to equal objects, field by field).
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
    cmp.Store.save) unless asked to let it; ``redactions`` are the findings.

    The message names each hit as ``str(Redaction)`` does, a credential masked: the
    exception never carries the text it found.
    """

    def __init__(self, redactions: Sequence[Redaction]) -> None:
        self.redactions: tuple[Redaction, ...] = tuple(redactions)
        count = len(self.redactions)
        summary = first_of(self.redactions)
        super().__init__(f"{count} redaction finding{'s' if count != 1 else ''}: {summary}")
