"""One source judged: ``check`` of what was read, reduced to what the CLI prints of it.

This is what a worker process runs (:mod:`cmp.cli._batch`), so that it hands back
strings, not reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cmp._intake import MAX_PACKET_BYTES, size_finding
from cmp._pipeline import Report, check
from cmp.cli._render import Format, Line, file_line, json_entry, report_lines, where
from cmp.cli._sources import Source
from cmp.findings import Position

if TYPE_CHECKING:
    from cmp._extended import Rules


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """How ``check`` judges and renders: its --lenient, --allow-unredacted, --rules, --format,
    --show-found and --quiet (a source that is accepted prints nothing)."""

    lenient: bool
    allow_unredacted: bool
    format: Format = "text"
    show_found: bool = False
    rules: Rules = "default"
    quiet: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judged source, reduced to what the CLI prints.

    Only what the chosen format needs is rendered, and rendered where the source was
    judged: a worker hands back text (``lines``, for the line formats: text, github;
    each with its tone) or JSON texts (``entries``, for the document formats: the JSON
    output's one result object, SARIF's results), which costs a fraction of the memory
    and pickling of the report or its dictionaries.
    """

    name: str
    accepted: bool
    lines: tuple[Line, ...] = ()
    entries: tuple[str, ...] = ()


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
    """One source judged and rendered in ``options.format``."""
    report = check_source(
        source, lenient=options.lenient, allow_unredacted=options.allow_unredacted, rules=options.rules
    )
    if options.quiet and report.accepted:
        return Verdict(source.name, True)
    file, line, show_found = source.file, source.line, options.show_found
    if options.format == "json":
        result = report.located().to_json(show_found=show_found)
        if line is not None:  # a JSON Lines packet: its positions on the file's own lines
            for item in (*result["errors"], *result["redactions"]):
                if "line" in item:
                    item["line"] = file_line(file, line, Position(item["line"], item["column"]))
        entry = {**where(file, line), **result, "error": None}
        return Verdict(source.name, report.accepted, entries=(json_entry(entry),))
    if options.format == "sarif":
        from cmp.cli._sarif import report_results  # the formats CI uses are imported when used

        return Verdict(
            source.name, report.accepted, entries=tuple(report_results(file, line, report, show_found=show_found))
        )
    if options.format == "github":
        from cmp.cli._github import report_commands

        return Verdict(source.name, report.accepted, tuple(report_commands(file, line, report, show_found=show_found)))
    return Verdict(source.name, report.accepted, tuple(report_lines(file, line, report, show_found=show_found)))
