"""``lint``: each file checked, then advised on the writing rules (docs/specification.md, clause 14)."""

from __future__ import annotations

import argparse

from cmp import lint, locate
from cmp._lint import RULE_IDS
from cmp._pipeline import policy_of
from cmp.cli._config import origin
from cmp.cli._judge import check_source
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, ExitStatus, JsonResults, Output, error_line
from cmp.cli._policy import PolicyError, run_policy
from cmp.cli._render import Tone, error_result, json_entry, place, report_json, report_lines, where
from cmp.cli._sources import Unreadable, read_each
from cmp.cli._summary import Summary
from cmp.findings import Finding


def _line(file: str, finding: Finding) -> str:
    """``file:LINE:COLUMN: $.path: message [rule-id]``: check's line for a finding, with the rule at its end."""
    return f"{place(file, None, finding.position)}: {finding}" + (f" [{finding.keyword}]" if finding.keyword else "")


def run_lint(args: argparse.Namespace, out: Output) -> int:
    """Check each file, then lint the packet: check's failures fail (1); lint findings fail only with --strict."""
    disabled = frozenset(args.lint_disable)
    for rule in sorted(disabled - frozenset(RULE_IDS)):
        error_line(f"{origin(args, 'lint_disable')}: no lint rule {rule!r} (the rules: {', '.join(RULE_IDS)})")
        return EXIT_USAGE
    try:
        policy = run_policy(args, baseline=False)
    except PolicyError as exc:
        error_line(str(exc))
        return EXIT_USAGE
    run = ExitStatus()
    summary = Summary("lint", "file", ("ok", "with advice", "failed"))
    document = JsonResults(out) if args.format == "json" else None
    for _, source in read_each(args.files, folders=True, walk=args.walk):
        if out.lost:  # nobody reads the results any more (`| head`)
            break
        if isinstance(source, Unreadable):
            run.file_error(source.file, source.message)
            summary.unreadable()
            if document is not None:
                document.add(json_entry(error_result(source.file, None, source.message, lint=[])))
            continue
        judged = policy.judge(check_source(source, policy_of(rules=args.rules)), source.file)
        report = judged.report
        advised = [f for f in lint(report.packet) if f.keyword not in disabled] if report.packet is not None else []
        findings = locate(source.data, advised) if advised else []
        if not judged.accepted or (findings and args.strict):
            run.fail(EXIT_FAIL)
        summary.add("failed" if not judged.accepted else "with advice" if findings else "ok")
        if document is not None:
            lint_json = [finding.to_json() for finding in findings]
            result = report_json(judged, show_found=args.show_found)
            document.add(json_entry({**where(source.file, None), **result, "lint": lint_json, "error": None}))
            continue
        # A file check refuses gets check's own lines first (its findings, redaction hits).
        lines = [] if judged.accepted else report_lines(source.file, None, judged, show_found=args.show_found)
        advice: Tone = "fail" if args.strict else "warn"
        lines += [(advice, _line(source.file, finding)) for finding in findings]
        if judged.accepted and not findings:
            lines.append(("ok", f"{source.file}: ok"))
        for tone, line in lines:
            out.line(line, tone)
    if document is not None:
        document.close()
    summary.say(args, out)
    return run.final(exit_zero=args.exit_zero)
