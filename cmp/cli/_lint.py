"""``lint``: each file checked, then advised on the writing rules (docs/specification.md, clause 14).

Every format renders the same objects: a file's judged check report (its results only
when check refuses it) and its lint findings, located. Text and GitHub print lines, JSON
and SARIF one document; a file that cannot be read is one line on stderr and, in a
document or on GitHub, its own entry in its place.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cmp import lint, locate
from cmp._pipeline import policy_of
from cmp.cli._judge import check_source
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, ExitStatus, JsonResults, Output, error_line
from cmp.cli._policy import Judged, PolicyError, disabled_lint_rules, run_policy
from cmp.cli._render import error_result, json_entry, place, report_json, report_lines, where
from cmp.cli._sources import Unreadable, read_each
from cmp.cli._summary import Summary
from cmp.findings import Finding

if TYPE_CHECKING:
    from cmp.cli._render import Line, Tone
    from cmp.cli._sarif import SarifLog


def _line(file: str, finding: Finding) -> str:
    """``file:LINE:COLUMN: $.path: message [rule-id]``: check's line for a finding, with the rule at its end."""
    return f"{place(file, None, finding.position)}: {finding}" + (f" [{finding.keyword}]" if finding.keyword else "")


class _Sink:
    """Where lint's results go, in its format: lines, the JSON document, or the SARIF log."""

    def __init__(self, out: Output, format: str, *, show_found: bool) -> None:
        self.out, self.format, self.show_found = out, format, show_found
        self.document = JsonResults(out) if format == "json" else None
        self.log: SarifLog | None = None
        if format == "sarif":
            from cmp.cli._sarif import SarifLog  # the formats CI uses are imported when used

            self.log = SarifLog(out)

    def unreadable(self, file: str, message: str) -> None:
        """A file that could not be read (its line on stderr is the caller's): an entry of its own."""
        if self.document is not None:
            self.document.add(json_entry(error_result(file, None, message, lint=[])))
        elif self.log is not None:
            self.log.not_checked(file, None, message)
        elif self.format == "github":
            from cmp.cli._github import unreadable_command

            self.out.line(unreadable_command(file, None, message))

    def result(self, file: str, judged: Judged, findings: list[Finding], advice: Tone) -> None:
        """One file's results: check's (only when check refuses it), then its lint findings at ``advice``."""
        refused = not judged.accepted
        if self.document is not None:
            result = report_json(judged, show_found=self.show_found)
            lint_json = [finding.to_json() for finding in findings]
            self.document.add(json_entry({**where(file, None), **result, "lint": lint_json, "error": None}))
            return
        if self.log is not None:
            from cmp.cli._sarif import lint_results, report_results

            checked = report_results(file, None, judged, show_found=self.show_found) if refused else []
            for entry in (*checked, *lint_results(file, None, findings, advice)):
                self.log.add(entry)
            return
        lines: list[Line] = []
        if self.format == "github":
            from cmp.cli._github import lint_commands, report_commands

            if refused:
                lines += report_commands(file, None, judged, show_found=self.show_found)
            lines += lint_commands(file, None, findings, advice)
        else:
            # A file check refuses gets check's own lines first (its findings, redaction hits).
            if refused:
                lines += report_lines(file, None, judged, show_found=self.show_found)
            lines += [(advice, _line(file, finding)) for finding in findings]
            if judged.accepted and not findings:
                lines.append(("ok", f"{file}: ok"))
        for tone, line in lines:
            self.out.line(line, tone if self.format == "text" else None)

    def close(self) -> None:
        if self.document is not None:
            self.document.close()
        if self.log is not None:
            self.log.close()


def run_lint(args: argparse.Namespace, out: Output) -> int:
    """Check each file, then lint the packet: check's failures fail (1); lint findings fail only with --strict."""
    try:
        disabled = disabled_lint_rules(args)
        policy = run_policy(args, baseline=False)
    except PolicyError as exc:
        error_line(str(exc))
        return EXIT_USAGE
    run = ExitStatus()
    summary = Summary("lint", "file", ("ok", "with advice", "failed"))
    sink = _Sink(out, args.format, show_found=args.show_found)
    advice: Tone = "fail" if args.strict else "warn"
    for _, source in read_each(args.files, folders=True, walk=args.walk):
        if out.lost:  # nobody reads the results any more (`| head`)
            break
        if isinstance(source, Unreadable):
            run.file_error(source.file, source.message)
            summary.unreadable()
            sink.unreadable(source.file, source.message)
            continue
        judged = policy.judge(check_source(source, policy_of(rules=args.rules)), source.file)
        report = judged.report
        advised = [f for f in lint(report.packet) if f.keyword not in disabled] if report.packet is not None else []
        findings = locate(source.data, advised) if advised else []
        if not judged.accepted or (findings and args.strict):
            run.fail(EXIT_FAIL)
        summary.add("failed" if not judged.accepted else "with advice" if findings else "ok")
        sink.result(source.file, judged, findings, advice)
    sink.close()
    summary.say(args, out)
    return run.final(exit_zero=args.exit_zero)
