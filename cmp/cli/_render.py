"""What every format says of a result alike (place, tone, a hit's text), check's text lines,
and a share's rendered block; each format's own rendering is in :mod:`cmp.cli.reporters`."""

from __future__ import annotations

from dataclasses import dataclass

from cmp import Redaction, Report
from cmp._toolkit import finder
from cmp.cli._policy import Hit, Judged, as_judged
from cmp.findings import Position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    # A warning is reported but does not fail the run. Colour only repeats what the text says.
    Tone = Literal["fail", "warn", "ok"]
    Line = tuple[Tone, str]


def where(file: str, line: int | None) -> dict[str, Any]:
    """The members that say which source a result is for: file, and line for --jsonl."""
    return {"file": file} if line is None else {"file": file, "line": line}


def redaction_text(redaction: Redaction, *, show_found: bool = False) -> str:
    """A redaction hit as text: masked unless ``show_found``, marked ``(extended)`` if those rules found it."""
    named = finder(redaction).named
    mark = "" if named is None else f"({named}) "
    return mark + redaction.line(show_found=show_found)


def tones(report: Report) -> tuple[Tone, Tone]:
    """The tones of ``report``'s findings and of its hits: a warning when they do not fail the run."""
    errors: Tone = "warn" if report.policy.lenient and report.schema_only else "fail"
    hits: Tone = "warn" if report.policy.allow_unredacted else "fail"
    return errors, hits


def place(file: str, jsonl_line: int | None, position: Position | None) -> str:
    """``file:LINE:COLUMN`` (clickable in editors and terminals) with a position, else the
    source's name (``file``, or ``file:N`` in JSON Lines, where lines are the file's own)."""
    if position is None:
        return file if jsonl_line is None else f"{file}:{jsonl_line}"
    line = position.line if jsonl_line is None else jsonl_line + position.line - 1
    return f"{file}:{line}:{position.column}"


def file_line(file: str, jsonl_line: int | None, position: Position | None) -> int | None:
    """The line of ``file`` that a position is on (see :func:`place`)."""
    if position is None:
        return jsonl_line
    return position.line if jsonl_line is None else jsonl_line + position.line - 1


def hit_reading(hit: Hit, hit_tone: Tone) -> tuple[Tone, str]:
    """A hit's tone and label in text; one the baseline holds is a ``known redaction`` and does not fail."""
    if hit.known:
        tone: Tone = "warn"
        label = "known redaction"
    else:
        tone = hit_tone
        label = "warning: redaction" if hit_tone == "warn" else "redaction"
    return tone, label + (" (refused packet)" if hit.refused else "")


def report_lines(file: str, jsonl_line: int | None, report: Report | Judged, *, show_found: bool = False) -> list[Line]:
    """The text output of one report, one result per line; hits masked unless ``show_found``."""
    judged = as_judged(report)
    report = judged.report
    lines: list[Line] = []
    error_tone, hit_tone = tones(report)
    error_prefix = "warning: " if error_tone == "warn" else ""
    for finding in report.errors:
        lines.append((error_tone, f"{place(file, jsonl_line, finding.position)}: {error_prefix}{finding}"))
    for hit in judged.hits:
        tone, label = hit_reading(hit, hit_tone)
        text = redaction_text(hit.redaction, show_found=show_found)
        lines.append((tone, f"{place(file, jsonl_line, hit.redaction.position)}: {label} {text}"))
    for finding in report.warnings:
        lines.append(("warn", f"{place(file, jsonl_line, finding.position)}: warning: {finding} [{finding.code}]"))
    if judged.accepted:
        name = place(file, jsonl_line, None)
        lines.append(("ok", f"{name}: ok") if report.conforming else ("warn", f"{name}: accepted (not conforming)"))
    return lines


@dataclass(frozen=True, slots=True)
class Block:
    """One share of a run's input judged and rendered where it was read (a worker, or this process).

    ``output`` is the rendered bytes holding ``entries`` entries, which the parent writes as
    they are; ``failed`` of ``packets`` were not accepted (in an audit: had findings);
    ``tally`` and ``groups`` are what a command sums over the run. ``problems`` are sources
    that could not be read. ``rest`` is what is left of the share when it stopped early to
    keep a block small, judged next; ``resume`` names its first packet, ``(file, line)``.
    """

    output: bytes = b""
    entries: int = 0
    packets: int = 0
    failed: int = 0
    tally: tuple[tuple[str, int], ...] = ()
    groups: tuple[tuple[str | None, int], ...] = ()
    problems: tuple[tuple[str, str], ...] = ()
    rest: object | None = None
    resume: tuple[str, int | None] | None = None
    matched: tuple[tuple[str, str, str], ...] = ()  # with a baseline: the entries its hits matched
    seen: tuple[str, ...] = ()  # with a baseline: the files judged, as the baseline names them
