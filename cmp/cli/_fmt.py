"""``fmt``: a packet printed in canonical form, listed or diffed if it is not (--check, --diff), or rewritten."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cmp import dumps
from cmp._toolkit import file_bytes, policy_of
from cmp.cli._difference import first_difference, unified_diff
from cmp.cli._judge import check_source
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, ExitStatus, Output, error_line
from cmp.cli._render import place, redaction_text
from cmp.cli._rewrite import bad_write_options, rewrite
from cmp.cli._sources import Source, Unreadable, packet_in_file, read_each
from cmp.cli._summary import Summary
from cmp.findings import Finding, Position, first_of

if TYPE_CHECKING:
    from cmp._toolkit import RuleSetName


def _canonical(
    source: Source, *, allow_unredacted: bool, show_found: bool, rule_set: RuleSetName, diff: bool = False
) -> tuple[bytes | None, list[tuple[Position | None, str]]]:
    """Canonical bytes of a source, or the one-line reasons it has none, each with where it is.
    For a ``diff``, any redaction finding means none: a diff shows the packet's text, secrets and all."""
    report = check_source(
        source, policy_of(allow_unredacted=allow_unredacted, rule_set="extended" if diff else rule_set, writer=True)
    )
    if report.packet is None:
        return None, [(f.position, str(f)) for f in report.located().errors]
    if diff and report.redactions:
        hits = report.located().redactions
        found = first_of([redaction_text(hit, show_found=show_found) for hit in hits])
        return None, [(hits[0].position, f"not diffed: a diff would show what a redaction rule found: {found}")]
    if report.blocked:
        hits = report.located().redactions
        return None, [
            (
                hit.position,
                f"redaction {redaction_text(hit, show_found=show_found)} (use --allow-unredacted to format anyway)",
            )
            for hit in hits
        ]
    try:
        return dumps(report.packet), []
    except ValueError as exc:
        findings: Sequence[Finding] = getattr(exc, "findings", ())
        return None, [(None, str(f)) for f in findings] or [(None, str(exc))]


def run_fmt(args: argparse.Namespace, out: Output) -> int:
    if not (args.check or args.write or args.diff) and len(args.files) != 1:
        error_line("fmt prints one file; use --check, --diff or --write for several")
        return EXIT_USAGE
    if bad_write_options("fmt", args):
        return EXIT_USAGE
    run = ExitStatus()
    summary = Summary("fmt", "file", ("canonical", "rewritten", "not canonical", "not rewritten", "not formatted"))
    for raw_name, source in read_each(args.files, folders=bool(args.check or args.write or args.diff), walk=args.walk):
        if isinstance(source, Unreadable):
            run.file_error(source.file, source.message)
            summary.unreadable()
            continue
        name = source.file
        canonical, problems = _canonical(
            packet_in_file(source),
            allow_unredacted=args.allow_unredacted,
            show_found=args.show_found,
            rule_set=args.rule_set,
            diff=args.diff,
        )
        if canonical is None:
            for position, problem in problems:
                out.line(f"{place(name, None, position)}: {problem}", "fail")
            run.fail(EXIT_FAIL)
            summary.add("not formatted")
            continue
        data = file_bytes(canonical)
        if args.check or args.diff:
            difference = first_difference(source.data, data)
            if difference is not None:
                run.fail(EXIT_FAIL)
                if args.check:
                    position, why = difference
                    out.line(f"{place(name, None, position)}: not canonical: {why}")
                for line, tone in unified_diff(name, source.data, data) if args.diff else ():
                    out.line(line, tone)
            summary.add("canonical" if difference is None else "not canonical")
        elif args.write:
            if data == source.data:
                summary.add("canonical")
            else:
                done = rewrite(raw_name, source, data, force=args.force, run=run, out=out)
                summary.add("rewritten" if done else "not rewritten")
        else:
            out.write(data)
    if args.check or args.write or args.diff:  # printing one packet, its bytes are all there is to say
        summary.say(args, out)
    return run.status
