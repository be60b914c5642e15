"""One source judged: ``check`` of what was read, reduced to what the CLI prints of it.

This is what a worker process runs (:mod:`cmp.cli._batch`), so that it hands back
strings, not reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cmp._intake import MAX_PACKET_BYTES, size_finding
from cmp._pipeline import Report, check
from cmp.cli._render import json_entry, report_lines, where
from cmp.cli._sources import Source

if TYPE_CHECKING:
    from cmp._extended import Rules


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """How ``check`` judges and renders: its --lenient, --allow-unredacted, --rules, --format json and --show-found."""

    lenient: bool
    allow_unredacted: bool
    as_json: bool = False
    show_found: bool = False
    rules: Rules = "default"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judged source, reduced to what the CLI prints.

    Only what the chosen format needs is rendered, and rendered where the source was
    judged: a worker hands back one string per line (``lines``, text output) or one
    JSON object as text (``entry``, JSON output; ``lines`` is then empty), which costs
    a fraction of the memory and pickling of the report or its dictionaries.
    """

    name: str
    accepted: bool
    lines: tuple[str, ...]
    entry: str = ""


def check_source(source: Source, *, lenient: bool, allow_unredacted: bool, rules: Rules = "default") -> Report:
    """``check`` of what was read, or the size finding for a source that was cut at the read limit."""
    if len(source.data) > MAX_PACKET_BYTES:
        return Report(
            version=None,
            errors=(size_finding(source.size),),
            redactions=(),
            packet=None,
            lenient=lenient,
            allow_unredacted=allow_unredacted,
            rules=rules,
            source=source.data,
        )
    return check(source.data, lenient=lenient, allow_unredacted=allow_unredacted, rules=rules)


def judge(source: Source, options: CheckOptions) -> Verdict:
    """One source judged and rendered for the text output, or with ``options.as_json`` for the JSON output."""
    report = check_source(
        source, lenient=options.lenient, allow_unredacted=options.allow_unredacted, rules=options.rules
    )
    if options.as_json:
        entry = {**where(source.file, source.line), **report.to_json(show_found=options.show_found), "error": None}
        return Verdict(source.name, report.accepted, (), json_entry(entry))
    lines = report_lines(source.name, report, show_found=options.show_found)
    return Verdict(source.name, report.accepted, tuple(lines))
