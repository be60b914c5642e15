"""``--format text``: one line per result, ``FILE:LINE:COLUMN: …`` (what editors and terminals
make clickable), coloured by tone on a terminal that takes colour."""

from __future__ import annotations

from cmp.cli._render import place, redaction_text, report_lines
from cmp.cli.reporters import LineReporter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.cli._policy import Judged
    from cmp.cli._render import Line, Tone
    from cmp.cli.reporters import Audited, Reporter
    from cmp.findings import Finding


def advice_line(file: str, finding: Finding) -> str:
    """``file:LINE:COLUMN: $.path: message [rule-id]``: check's line for a finding, with the rule at its end
    (a lint finding's keyword, else its code: ``[credential]``)."""
    rule = finding.keyword if finding.code == "lint" else finding.code
    return f"{place(file, None, finding.position)}: {finding}" + (f" [{rule}]" if rule else "")


class Text(LineReporter):
    coloured = True

    def check(self, file: str, jsonl_line: int | None, judged: Judged, *, show_found: bool) -> list[Line]:
        return report_lines(file, jsonl_line, judged, show_found=show_found)

    def lint(self, file: str, judged: Judged, findings: list[Finding], advice: Tone, *, show_found: bool) -> list[Line]:
        # A file check refuses gets check's own lines first.
        lines = report_lines(file, None, judged, show_found=show_found) if not judged.accepted else []
        lines += [(advice, advice_line(file, finding)) for finding in findings]
        if judged.accepted and not findings:
            lines.append(("ok", f"{file}: ok"))
        return lines

    def audit(self, item: Audited, *, show_found: bool) -> list[Line]:
        # Every line fails: the audit prints nothing of a packet without findings. A row's own
        # error (row-body) is named by its keyword, as the audit's findings are.
        where, report = item.where, item.report
        lines: list[Line] = [
            ("fail", f"{where}: {finding}" + (f" [{finding.keyword}]" if finding.code == "audit" else ""))
            for finding in report.errors
        ]
        lines += [
            ("fail", f"{where}: redaction {redaction_text(hit, show_found=show_found)}") for hit in report.redactions
        ]
        lines += [("fail", f"{where}: {finding} [{finding.keyword}]") for finding in item.found]
        return lines


REPORTER: Reporter = Text()
