"""What every format says of one result alike: where it is, how it reads (its tone), a hit's
text; check's text lines; a share's rendered block. Each format's own rendering is its
reporter's (:mod:`cmp.cli.reporters`)."""

from __future__ import annotations

from dataclasses import dataclass

from cmp import Redaction, Report
from cmp._toolkit import finder
from cmp.cli._policy import Hit, Judged, as_judged
from cmp.findings import Position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    # How a line reads: a failure, a warning (reported, but it does not fail the run), or
    # a success. The CLI colours lines by it on a terminal; the text itself says as much.
    Tone = Literal["fail", "warn", "ok"]
    Line = tuple[Tone, str]


def where(file: str, line: int | None) -> dict[str, Any]:
    """The members that say which source a result is for: file, and line for --jsonl."""
    return {"file": file} if line is None else {"file": file, "line": line}


def redaction_text(redaction: Redaction, *, show_found: bool = False) -> str:
    """A redaction hit as text lines show it: masked unless ``show_found``, and marked
    ``(extended)`` when the extended rules found it."""
    named = finder(redaction).named
    mark = "" if named is None else f"({named}) "
    return mark + redaction.line(show_found=show_found)


def tones(report: Report) -> tuple[Tone, Tone]:
    """How ``report``'s findings and its redaction hits read, in every format: a warning
    when they do not fail the run (schema findings in lenient mode, hits with
    --allow-unredacted), else a failure."""
    errors: Tone = "warn" if report.policy.lenient and report.schema_only else "fail"
    hits: Tone = "warn" if report.policy.allow_unredacted else "fail"
    return errors, hits


def place(file: str, jsonl_line: int | None, position: Position | None) -> str:
    """Where a result line is about: ``file:LINE:COLUMN`` (the form editors and terminals
    make clickable) when it has a position, else the source's name (``file``, or
    ``file:N`` for line N of a JSON Lines file). In a JSON Lines file the line is the
    file's own."""
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
    """How a hit reads in text: its tone, and its label (``redaction``; ``known redaction``
    for one the baseline holds, which does not fail the run; ``(refused packet)`` after it
    for one found in a packet refused at intake or schema)."""
    if hit.known:
        tone: Tone = "warn"
        label = "known redaction"
    else:
        tone = hit_tone
        label = "warning: redaction" if hit_tone == "warn" else "redaction"
    return tone, label + (" (refused packet)" if hit.refused else "")


def report_lines(file: str, jsonl_line: int | None, report: Report | Judged, *, show_found: bool = False) -> list[Line]:
    """The text output of one report, one result per line (escaped for printing by the CLI),
    each finding and hit placed where it is (``file:12:9: $.tags[0]: …``).

    Redaction hits are masked (``AKIA… (20 chars) at 0``) unless ``show_found`` (--show-found).
    """
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
    if judged.accepted:
        name = place(file, jsonl_line, None)
        lines.append(("ok", f"{name}: ok") if report.conforming else ("warn", f"{name}: accepted (not conforming)"))
    return lines


@dataclass(frozen=True, slots=True)
class Block:
    """One share of a run's input judged and rendered where it was read (a worker, or this process).

    ``output`` is the share's results as the output's bytes: escaped (and coloured) text
    lines, or a fragment of the JSON document or SARIF log holding ``entries`` entries,
    which the parent writes as they are (:meth:`cmp.cli.reporters.Sink.add`). ``packets`` were judged, of
    which ``failed`` were not accepted (or, in an audit, had findings); ``tally`` counts
    what a command sums over the run (the audit's finding kinds and groups).

    ``problems`` are sources that could not be read (each its file and message), after
    the results: a JSON Lines file that could not be read on (nothing of the share after
    it was judged), or files of the share that could not be read. ``rest`` is what is
    left of the share when it stopped early to keep a block small: it is judged next,
    before any later share. ``resume`` names the first packet after the block, ``(file,
    line)``, for the message when that rest is lost.
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
