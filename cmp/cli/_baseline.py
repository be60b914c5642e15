"""``baseline``: the redaction findings a repository's packets hold now, written as fingerprints
(:mod:`cmp.cli._policy`), so that ``check --baseline`` fails only on new ones. Written whole or not at
all: a baseline missing a file's findings would fail every run after it, or, worse, look complete.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import tempfile

from cmp._toolkit import display_name, policy_of
from cmp.cli._judge import check_source
from cmp.cli._output import EXIT_OK, EXIT_USAGE, Output, error_line
from cmp.cli._policy import Baseline, Entry, PolicyError, new_baseline, run_policy
from cmp.cli._sources import Unreadable, packets


def run_baseline(args: argparse.Namespace, out: Output) -> int:
    if not args.files and not args.jsonl:
        error_line("baseline needs a FILE, a FOLDER or --jsonl FILE")
        return EXIT_USAGE
    try:
        run = run_policy(args, baseline=False)
    except PolicyError as exc:
        error_line(str(exc))
        return EXIT_USAGE
    path = None if args.baseline == "-" else args.baseline  # -: stdout, as everywhere
    try:
        baseline = new_baseline(path if path is not None else "-")
    except PolicyError as exc:
        error_line(str(exc))
        return EXIT_USAGE
    judge_policy = policy_of(rule_set=args.rule_set)
    entries: dict[Entry, None] = {}  # in the order found, each once
    files: set[str] = set()
    failed = False
    for source in packets(args.files, args.jsonl or (), args.walk):
        if isinstance(source, Unreadable):
            error_line(f"{source.file}: {source.message}")
            failed = True
            continue
        judged = run.judge(check_source(source, judge_policy), source.file)
        files.add(source.file)
        for entry in baseline.entries_of(source.file, judged):
            entries[entry] = None
    if failed:
        error_line("no baseline written: every source must be read for it to be whole")
        return EXIT_USAGE
    written = Baseline(baseline.location, baseline.salt, tuple(entries))
    text = json.dumps(written.to_json(), ensure_ascii=False, indent=2) + "\n"
    if path is None:
        out.write(text.encode("utf-8"))
    else:
        try:
            _write_whole(path, text)
        except OSError as exc:
            error_line(f"{display_name(path)}: cannot write: {exc.strerror or exc}")
            return EXIT_USAGE
    if not args.quiet:
        where = "stdout" if path is None else display_name(path)
        count = len(written.entries)
        error_line(
            f"baseline: {count} finding{'s' if count != 1 else ''} in {len(files)} "
            f"source{'s' if len(files) != 1 else ''}, written to {where}"
        )
    return EXIT_OK


def _write_whole(path: str, text: str) -> None:
    """``text`` into ``path`` through a file beside it, renamed over it: never half a baseline. A symbolic
    link is written through; a file there keeps its permissions, a new one gets what ``open`` gives."""
    target = os.path.realpath(path)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    handle, temporary = tempfile.mkstemp(prefix=".baseline-", dir=os.path.dirname(target))
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
