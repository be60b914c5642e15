"""``check``: sources read, judged (in worker processes with --jobs), results printed in input order."""

from __future__ import annotations

from contextlib import closing, nullcontext

from cmp._toolkit import policy_of
from cmp.cli._batch import WorkersFailed, input_shares, merged
from cmp.cli._judge import CheckOptions, check_share
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, ExitStatus, Output, error_line
from cmp.cli._policy import PolicyError, run_policy
from cmp.cli._progress import Progress
from cmp.cli._results import Results
from cmp.cli._runners import chosen_runner
from cmp.cli._signals import StopSignals
from cmp.cli._sources import Unreadable
from cmp.cli._summary import Summary

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run_check(args: argparse.Namespace, out: Output) -> int:
    if not args.files and not args.jsonl:
        error_line("check needs a FILE or --jsonl FILE; - reads stdin (check - < packet.json)")
        return EXIT_USAGE
    runner = chosen_runner(args.jobs, args.dask)
    if isinstance(runner, str):
        error_line(runner)
        return EXIT_USAGE
    try:
        policy = run_policy(args, baseline=True)
    except PolicyError as exc:
        error_line(str(exc))
        return EXIT_USAGE
    run = ExitStatus()
    summary = Summary("check", "packet", ("accepted", "failed"))
    matched: set[tuple[str, str, str]] = set()
    seen: set[str] = set()
    # A counter on the terminal that also shows the results would break their lines.
    progress = Progress(None if args.jsonl else len(args.files), quiet=out.is_terminal)
    results = Results(out, progress, format=args.format)
    options = CheckOptions(
        policy_of(args.lenient, args.allow_unredacted, args.rule_set, args.writer),
        format=args.format,
        show_found=args.show_found,
        quiet=args.quiet,
        colour=out.colour,
        run=policy,
    )
    shares = input_shares(args.files, args.jsonl or (), runner, args.walk)
    blocks = merged(shares, check_share, options, runner)
    # With workers, a stop signal must unwind through merged, which then kills them.
    stop = StopSignals() if runner.parallel else nullcontext()
    try:
        with stop, closing(shares), closing(blocks):  # on any exit: workers stopped, files closed, now
            for item in blocks:
                if out.lost:  # nobody reads the results any more (`| head`): stop reading input
                    break
                if isinstance(item, Unreadable):
                    run.fail(EXIT_USAGE)
                    summary.unreadable()
                    results.error(item.file, None, item.message)
                    continue
                progress.step(item.packets)
                matched.update(item.matched)
                seen.update(item.seen)
                summary.add("accepted", item.packets - item.failed)
                summary.add("failed", item.failed)
                summary.unreadable(len(item.problems))
                if item.failed:
                    run.fail(EXIT_FAIL)
                results.block(item)
                for file, message in item.problems:
                    run.fail(EXIT_USAGE)
                    results.error(file, None, message)
    except WorkersFailed as exc:
        run.fail(EXIT_USAGE)
        summary.complete = False
        file = exc.file if exc.file is not None else "-"
        results.error(file, exc.line, f"not checked: {exc}; nothing after it was checked either")
    finally:
        progress.close()
    after = {}
    if policy.baseline is not None:
        stale = policy.baseline.stale(seen, matched)
        for entry in stale:
            error_line(policy.baseline.stale_line(entry))
        after["baseline"] = {"path": policy.baseline.path, "stale": [entry.to_json() for entry in stale]}
    results.close(**after)
    summary.say(args, out)
    return run.final(exit_zero=args.exit_zero)
