"""``gate``: check, canonical form and lint over each file in one pass, each finding said once.

The command the recommended pre-commit hook runs: ``check``, ``fmt --check`` and ``lint``
in a row would report a leaked key three times. A refused file gets check's results alone; an
accepted one is held to its canonical bytes. Lint's advice follows either way. Every format
of check renders it (cmp.cli.reporters).
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
from cmp.cli._sources import Source, Unreadable, read_each
from cmp.cli._summary import Summary
from cmp.cli.reporters import reporter
from cmp.findings import Finding, Position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.cli._render import Line, Tone

# The outcomes of a file, worst first: the one a file counts as in the summary line.
_OUTCOMES = ("failed", "not canonical", "with advice", "ok")
# What gate's JSON result of a file that could not be read holds beyond check's.
_UNREAD_MEMBERS: dict[str, object] = {"lint": [], "canonical": None}


def _form(source: Source, report: Report) -> list[tuple[Position | None, str]]:
    """What keeps an accepted packet's file from being canonical: the first place it
    differs and why, or what keeps the packet from having canonical bytes at all."""
    assert report.packet is not None  # an accepted packet is there
    try:
        data = file_bytes(dumps(report.packet))
    except ValueError as exc:  # a packet whose canonical form would pass the size limit
        findings: Sequence[Finding] = getattr(exc, "findings", ())
        return [(None, str(f)) for f in findings] or [(None, str(exc))]
    difference = first_difference(source.data, data)
    if difference is None:
        return []
    position, why = difference
    return [(position, f"not canonical: {why} (fmt --write rewrites it)")]


def gate_lines(
    source: Source, args: argparse.Namespace, policy: RunPolicy, disabled: frozenset[str]
) -> tuple[str, list[Line], tuple[tuple[str, str, str], ...]]:
    """One file's outcome (one of ``_OUTCOMES``), its results in the run's format, and the
    baseline entries it matched."""
    judged = policy.judge(check_source(source, policy_of(rule_set=args.rule_set, writer=True)), source.file)
    report = judged.report
    form = _form(source, report) if judged.accepted else []
    advised = [f for f in lint(report.packet) if f.keyword not in disabled] if report.packet is not None else []
    findings = locate(source.data, advised) if advised else []
    advice: Tone = "fail" if args.strict else "warn"
    lines = reporter(args.format).gate(source.file, judged, form, findings, advice, show_found=args.show_found)
    if not judged.accepted:
        outcome = "failed"
    elif form:
        outcome = "not canonical"
    else:
        outcome = "with advice" if findings else "ok"
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
    format = reporter(args.format)
    sink = format.begin(out)
    matched: set[tuple[str, str, str]] = set()
    seen: set[str] = set()
    for _, source in read_each(args.files, folders=True, walk=args.walk):
        if out.lost:  # nobody reads the results any more (`| head`)
            break
        if isinstance(source, Unreadable):
            run.file_error(source.file, source.message)
            summary.unreadable()
            sink.unreadable(source.file, None, source.message, _UNREAD_MEMBERS)
            continue
        outcome, lines, found = gate_lines(source, args, policy, disabled)
        matched.update(found)
        if policy.baseline is not None:
            seen.add(policy.baseline.file_name(source.file))
        if outcome in ("failed", "not canonical") or (outcome == "with advice" and args.strict):
            run.fail(EXIT_FAIL)
        summary.add(outcome)
        sink.add(*format.fragment(lines, colour=out.colour))
    after: dict[str, object] = {}
    if policy.baseline is not None:  # as check lists them: the entries of these files no longer found
        stale = policy.baseline.stale(seen, matched)
        for entry in stale:
            error_line(policy.baseline.stale_line(entry))
        after["baseline"] = {"path": policy.baseline.path, "stale": [entry.to_json() for entry in stale]}
    sink.close(after)
    summary.say(args, out)
    return run.final(exit_zero=args.exit_zero)
