"""``--format github``: each finding as a GitHub Actions workflow command, which the run's
page shows as an annotation on the file, line and column. A packet that passes prints nothing.
"""

from __future__ import annotations

from cmp import Report
from cmp.cli._policy import Judged, as_judged
from cmp.cli._render import file_line, hit_reading, redaction_text, tones
from cmp.cli.reporters import LineReporter
from cmp.findings import Finding, Position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.cli._render import Line, Tone
    from cmp.cli.reporters import Audited, Reporter

_COMMAND: dict[Tone, str] = {"fail": "error", "warn": "warning", "ok": "notice"}
_IN_MESSAGE = str.maketrans({"%": "%25", "\r": "%0D", "\n": "%0A"})
_IN_PROPERTY = str.maketrans({"%": "%25", "\r": "%0D", "\n": "%0A", ":": "%3A", ",": "%2C"})


def command(
    tone: Tone, message: str, *, file: str, line: int | None = None, column: int | None = None, title: str
) -> str:
    """One workflow command: ``::error file=…,line=…,col=…,title=…::message``, escaped."""
    properties = [f"file={file.translate(_IN_PROPERTY)}"]
    if line is not None:
        properties.append(f"line={line}")
    if column is not None:
        properties.append(f"col={column}")
    properties.append(f"title={title.translate(_IN_PROPERTY)}")
    return f"::{_COMMAND[tone]} {','.join(properties)}::{message.translate(_IN_MESSAGE)}"


def finding_title(finding: Finding) -> str:
    """``cmp schema (maxLength)``, ``cmp duplicate-key``: the annotation's title."""
    return f"cmp {finding.code}" + (f" ({finding.keyword})" if finding.keyword else "")


def _placed(tone: Tone, message: str, title: str, file: str, jsonl_line: int | None, position: Position | None) -> Line:
    column = None if position is None else position.column
    at_line = file_line(file, jsonl_line, position)
    return tone, command(tone, message, file=file, line=at_line, column=column, title=title)


def report_commands(
    file: str, jsonl_line: int | None, report: Report | Judged, *, show_found: bool = False
) -> list[Line]:
    """One workflow command per finding and redaction hit of ``report`` (none for a packet that passes)."""
    judged = as_judged(report)
    report = judged.report
    lines: list[Line] = []
    error_tone, hit_tone = tones(report)
    for finding in report.errors:
        lines.append(_placed(error_tone, str(finding), finding_title(finding), file, jsonl_line, finding.position))
    for hit in judged.hits:
        tone, _ = hit_reading(hit, hit_tone)
        marks = (", known" if hit.known else "") + (", refused packet" if hit.refused else "")
        title = f"cmp redaction ({hit.redaction.category}{marks})"
        message = redaction_text(hit.redaction, show_found=show_found)
        lines.append(_placed(tone, message, title, file, jsonl_line, hit.redaction.position))
    for finding in report.warnings:
        lines.append(_placed("warn", str(finding), finding_title(finding), file, jsonl_line, finding.position))
    return lines


def lint_commands(file: str, jsonl_line: int | None, findings: list[Finding], tone: Tone) -> list[Line]:
    """One workflow command per lint finding (located), titled by its rule: ``cmp lint (sentences)``."""
    return [
        _placed(tone, str(finding), finding_title(finding), file, jsonl_line, finding.position) for finding in findings
    ]


class GitHub(LineReporter):
    def check(self, file: str, jsonl_line: int | None, judged: Judged, *, show_found: bool) -> list[Line]:
        return report_commands(file, jsonl_line, judged, show_found=show_found)

    def lint(self, file: str, judged: Judged, findings: list[Finding], advice: Tone, *, show_found: bool) -> list[Line]:
        checked = report_commands(file, None, judged, show_found=show_found) if not judged.accepted else []
        return checked + lint_commands(file, None, findings, advice)

    def audit(self, item: Audited, *, show_found: bool) -> list[Line]:
        raise NotImplementedError("audit does not offer github: an audited row has no file or line to annotate")

    def unreadable_line(self, file: str, jsonl_line: int | None, message: str) -> str | None:
        """A source that could not be read or checked, as an error on the file: the run's page shows it too."""
        return command("fail", message, file=file, line=jsonl_line, title="cmp: not checked")


REPORTER: Reporter = GitHub()
