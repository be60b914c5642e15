"""``lint``: each file checked, then advised on the writing rules (docs/specification.md, clause 14).

Every format renders a file's judged check report (its results only when check refuses
it) and its located lint findings.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cmp import lint, locate
from cmp._toolkit import policy_of
from cmp.cli._judge import check_source
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, ExitStatus, Output, error_line
from cmp.cli._policy import PolicyError, ignored_lint_rules, run_policy
from cmp.cli._sources import Unreadable, read_each
from cmp.cli._summary import Summary
from cmp.cli.reporters import reporter

if TYPE_CHECKING:
    from cmp.cli._render import Tone

# What lint's JSON result of a file that could not be read holds beyond check's: no advice.
_UNREAD_MEMBERS: dict[str, object] = {"lint": []}


def run_lint(args: argparse.Namespace, out: Output) -> int:
    """Check each file, then lint the packet: check's failures fail (1); lint findings fail only with --strict."""
    try:
        policy = run_policy(args, baseline=False, lint=True)
        disabled = ignored_lint_rules(policy)
    except PolicyError as exc:
        error_line(str(exc))
        return EXIT_USAGE
    run = ExitStatus()
    summary = Summary("lint", "file", ("ok", "with advice", "failed"))
    format = reporter(args.format)
    sink = format.begin(out)
    advice: Tone = "fail" if args.strict else "warn"
    for _, source in read_each(args.files, folders=True, walk=args.walk):
        if out.lost:  # nobody reads the results any more (`| head`)
            break
        if isinstance(source, Unreadable):
            run.file_error(source.file, source.message)
            summary.unreadable()
            sink.unreadable(source.file, None, source.message, _UNREAD_MEMBERS)
            continue
        judged = policy.judge(check_source(source, policy_of(rule_set=args.rule_set, writer=args.writer)), source.file)
        report = judged.report
        advised = [f for f in lint(report.packet) if f.keyword not in disabled] if report.packet is not None else []
        findings = [*report.warnings, *(locate(source.data, advised) if advised else [])]
        if not judged.accepted or (findings and args.strict):
            run.fail(EXIT_FAIL)
        summary.add("failed" if not judged.accepted else "with advice" if findings else "ok")
        pieces = format.lint(source.file, judged, findings, advice, show_found=args.show_found)
        sink.add(*format.fragment(pieces, colour=out.colour))
    sink.close({})
    summary.say(args, out)
    return run.final(exit_zero=args.exit_zero)
