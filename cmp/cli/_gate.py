"""``gate``: check, canonical form and lint over each file in one pass, each finding said once.

The command the recommended pre-commit hook runs: ``check``, ``fmt --check`` and ``lint``
in a row would report a leaked key three times. A refused file gets check's lines alone; an
accepted one is held to its canonical bytes. Lint's advice follows either way.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from cmp import Report, dumps, lint, locate
from cmp._toolkit import file_bytes, policy_of
from cmp.cli._difference import first_difference
from cmp.cli._judge import check_source
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, ExitStatus, Output, error_line
from cmp.cli._policy import PolicyError, RunPolicy, ignored_lint_rules, run_policy
from cmp.cli._render import place, report_lines
from cmp.cli._sources import Source, Unreadable, read_each
from cmp.cli._summary import Summary
from cmp.cli.reporters.text import advice_line
from cmp.findings import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.cli._render import Line, Tone

# The outcomes of a file, worst first: the one a file counts as in the summary line.
_OUTCOMES = ("failed", "not canonical", "with advice", "ok")


def _form_lines(source: Source, report: Report) -> list[Line]:
    """What keeps an accepted packet's file from being canonical: the first place it
    differs and why, or what keeps the packet from having canonical bytes at all."""
    assert report.packet is not None  # an accepted packet is there
    try:
        data = file_bytes(dumps(report.packet))
    except ValueError as exc:  # a packet whose canonical form would pass the size limit
        findings: Sequence[Finding] = getattr(exc, "findings", ())
        return [("fail", f"{source.file}: {f}") for f in findings] or [("fail", f"{source.file}: {exc}")]
    difference = first_difference(source.data, data)
    if difference is None:
        return []
    position, why = difference
    return [("fail", f"{place(source.file, None, position)}: not canonical: {why} (fmt --write rewrites it)")]


def gate_lines(
    source: Source, args: argparse.Namespace, policy: RunPolicy, disabled: frozenset[str]
) -> tuple[str, list[Line], tuple[tuple[str, str, str], ...]]:
    """One file's outcome (one of ``_OUTCOMES``), its lines, and the baseline entries it matched;
    an accepted file's "ok" waits until its form and lint's advice are known."""
    judged = policy.judge(check_source(source, policy_of(rule_set=args.rule_set, writer=True)), source.file)
    report = judged.report
    checked = report_lines(source.file, None, judged, show_found=args.show_found)
    if judged.accepted:
        checked = checked[:-1]  # report_lines ends an accepted report with its "ok" line
    form = _form_lines(source, report) if judged.accepted else []
    advised = [f for f in lint(report.packet) if f.keyword not in disabled] if report.packet is not None else []
    tone: Tone = "fail" if args.strict else "warn"
    advice = [(tone, advice_line(source.file, finding)) for finding in locate(source.data, advised)]
    lines = checked + form + advice
    if not judged.accepted:
        outcome = "failed"
    elif form:
        outcome = "not canonical"
    else:
        outcome = "with advice" if advice else "ok"
    if outcome == "ok":
        lines.append(("ok", f"{source.file}: ok"))
    return outcome, lines, judged.matched


def run_gate(args: argparse.Namespace, out: Output) -> int:
    """Each file judged once: check's failures and a form that is not canonical fail (1);
    lint's advice fails only with --strict; a file that cannot be read is exit 2."""
    try:
        policy = run_policy(args, baseline=True, lint=True)
        disabled = ignored_lint_rules(policy)
    except PolicyError as exc:
        error_line(str(exc))
        return EXIT_USAGE
    run = ExitStatus()
    summary = Summary("gate", "file", _OUTCOMES[::-1])
    matched: set[tuple[str, str, str]] = set()
    seen: set[str] = set()
    for _, source in read_each(args.files, folders=True, walk=args.walk):
        if out.lost:  # nobody reads the results any more (`| head`)
            break
        if isinstance(source, Unreadable):
            run.file_error(source.file, source.message)
            summary.unreadable()
            continue
        outcome, lines, found = gate_lines(source, args, policy, disabled)
        matched.update(found)
        if policy.baseline is not None:
            seen.add(policy.baseline.file_name(source.file))
        if outcome in ("failed", "not canonical") or (outcome == "with advice" and args.strict):
            run.fail(EXIT_FAIL)
        summary.add(outcome)
        for tone, line in lines:
            out.line(line, tone)
    if policy.baseline is not None:  # as check lists them: the entries of these files no longer found
        for entry in policy.baseline.stale(seen, matched):
            error_line(policy.baseline.stale_line(entry))
    summary.say(args, out)
    return run.final(exit_zero=args.exit_zero)
