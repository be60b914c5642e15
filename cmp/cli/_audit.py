"""``audit``: re-check every packet a deployed store holds (the reference server's SQLite).

Packets pushed with the override, or by writers that skip the pre-flight, sit in a store
unchecked. The audit never writes the store (see cmp._audit.reference_db), so it can run
while the server writes. For each row (deleted ones with --include-deleted) it reports what ``check`` finds in the
body, a body that is not canonical, and an ``id``, ``goal`` or ``created_at`` column that
disagrees with the body. Rows are read in rowid order a share at a time, so memory stays
flat; with --jobs each worker opens the store and reads its own shares. A folder is
audited as an export of ``*.json`` and ``*.jsonl`` files.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, NoReturn

from cmp._toolkit import (
    DEFAULT_POLICY,
    Audited,
    DatabaseChanged,
    DatabaseDeadline,
    DatabaseError,
    DatabaseStopped,
    Identity,
    Limits,
    Policy,
    ReferenceDatabase,
    audited_row,
    database_rows,
    display_name,
    exported_file,
    exported_line,
    open_database,
    policy_of,
)
from cmp.cli._batch import WorkersFailed, jsonl_file_shares, merged
from cmp.cli._judge import ShareReading, Verdict, check_source, jsonl_sources, render_verdicts, verdict_size
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, ExitStatus, Output, error_line
from cmp.cli._progress import Progress
from cmp.cli._render import Block
from cmp.cli._results import Results
from cmp.cli._runners import chosen_runner
from cmp.cli._signals import Stopped, StopSignals, pending_stop
from cmp.cli._sources import (
    SHARE_BYTES,
    SHARE_PACKETS,
    SHARE_ROWS,
    JsonlShare,
    SourceError,
    Unreadable,
    files_below,
    packet_in_file,
    read_source,
)
from cmp.cli.reporters import is_document, reporter

if TYPE_CHECKING:
    from cmp.cli._batch import Runner, Share


# How often a share is read when a writer changes the file under it (cmp._audit.reference_db).
READ_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class AuditOptions:
    """How ``audit`` judges (--rule-set as a policy) and renders its findings."""

    policy: Policy = DEFAULT_POLICY
    format: str = "text"  # a name in cmp.cli.reporters.REPORTERS that audit offers
    show_found: bool = False
    by: Literal["owner", "team"] | None = None
    colour: bool = False
    deadline: float | None = None  # --deadline as a time.time(): past it, reading stops
    deadline_seconds: float | None = None  # --deadline as given, for the message

    def limits(self) -> Limits:
        """What cuts a statement short: this process's stop signals and the deadline."""
        return Limits(self.deadline, _stop_pending)

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.time() >= self.deadline

    def deadline_message(self) -> str:
        return f"stopped at the deadline: --deadline {self.deadline_seconds or 0:g} s passed"


def _stop_pending() -> bool:
    return pending_stop() is not None


def _stop_now() -> NoReturn:
    """The stop signal that cut SQLite short, raised where the code is (:class:`Stopped`)."""
    raise Stopped(pending_stop() or signal.SIGINT)


@dataclass(frozen=True, slots=True)
class StoreShare:
    """The rows of a store whose rowid is in ``[first, last]`` (None: no bound)."""

    path: str
    name: str
    first: int | None
    last: int | None
    include_deleted: bool
    rows: int = SHARE_ROWS  # the most rows read before the rest is left for later
    identity: Identity | None = None  # the store's file when the shares were cut; None: not checked

    def first_packet(self, resume: tuple[str, int | None] | None) -> tuple[str, int | None]:
        return self.name, None


@dataclass(frozen=True, slots=True)
class FilesShare:
    """Packet files of an export: ``paths`` as the user named them, relative to ``base``."""

    paths: tuple[str, ...]
    base: str

    def first_packet(self, resume: tuple[str, int | None] | None) -> tuple[str, int | None]:
        return display_name(self.paths[0]), None


def store_shares(
    store: ReferenceDatabase, share: StoreShare, runner: Runner, options: AuditOptions
) -> Iterator[StoreShare | Unreadable]:
    """The store as shares of ``runner.share_rows`` rows for workers, or one share.

    The audit ends at the last row stored when it starts, or a faster writer would keep it
    going for ever. If stepping through the rowids fails or they do not increase (a
    malformed file), the rest goes out as one share, whose reading fails where one process
    reading the store would.
    """
    try:
        yield from _cut(store, share, runner)
    except DatabaseStopped:
        _stop_now()
    except DatabaseDeadline:
        yield Unreadable(share.name, options.deadline_message())


def _cut(store: ReferenceDatabase, share: StoreShare, runner: Runner) -> Iterator[StoreShare]:
    try:
        found = store.one("SELECT max(rowid) FROM packets")
        last = None if found is None else found[0]
    except (DatabaseStopped, DatabaseDeadline):
        raise
    except DatabaseError:
        last = None  # reading the rows will say what is wrong
    whole = replace(share, last=last)
    if not runner.parallel:
        yield whole
        return
    rows = runner.share_rows
    whole = replace(whole, rows=rows)
    step = "SELECT rowid FROM packets WHERE rowid >= ? AND rowid <= ? ORDER BY rowid LIMIT 1 OFFSET ?"
    first = None
    try:
        found = store.one("SELECT min(rowid) FROM packets")
        first = None if found is None else found[0]
        while first is not None:
            found = store.one(step, (first, last, rows))
            if found is None or found[0] <= first:
                break
            yield replace(whole, first=first, last=found[0] - 1)
            first = found[0]
    except (DatabaseStopped, DatabaseDeadline):
        raise
    except DatabaseError:
        pass
    yield replace(whole, first=first)


def audit_share(share: StoreShare | FilesShare | JsonlShare, options: AuditOptions) -> Block:
    """One share audited and rendered; a store share a writer changed meanwhile is read again."""
    attempts = READ_ATTEMPTS if isinstance(share, StoreShare) else 1
    for attempt in range(1, attempts + 1):
        tally = _Tally()
        try:
            tally.read(share, options)
        except DatabaseChanged as exc:
            if exc.retry and attempt < attempts:
                continue
            tally = _Tally()
            tally.problems.append((share.name if isinstance(share, StoreShare) else "-", str(exc)))
        break
    return tally.block(options)


@dataclass(slots=True)
class _Tally:
    """What auditing a share found so far: its verdicts, counts and problems."""

    reading: ShareReading = field(default_factory=ShareReading)
    kinds: Counter[str] = field(default_factory=Counter)
    groups: Counter[str | None] = field(default_factory=Counter)
    verdicts: list[Verdict] = field(default_factory=list)
    packets: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)

    def read(self, share: StoreShare | FilesShare | JsonlShare, options: AuditOptions) -> None:
        """Audit the share; DatabaseChanged when its store changed under it."""
        name = share.name if isinstance(share, StoreShare) else "-"
        try:
            for item in _audited(share, options, self.reading):
                if isinstance(item, Unreadable):
                    self.problems.append((item.file, item.message))
                    continue
                self.packets += 1
                if item.flagged:
                    self.kinds.update(item.kinds())
                    if options.by:
                        self.groups[item.group[options.by]] += 1
                    self.verdicts.append(_verdict(item, options))
                    self.reading.rendered += verdict_size(self.verdicts[-1])
                if not isinstance(share, StoreShare) and options.past_deadline():
                    self.problems.append((item.file, options.deadline_message()))
                    break
        except DatabaseStopped:
            _stop_now()
        except DatabaseDeadline:
            self.problems.append((name, options.deadline_message()))
        except DatabaseChanged:
            raise
        except DatabaseError as exc:
            self.problems.append((name, str(exc)))

    def block(self, options: AuditOptions) -> Block:
        output, entries = render_verdicts(self.verdicts, options.format, colour=options.colour)
        return Block(
            output,
            entries,
            self.packets,
            len(self.verdicts),
            tally=tuple(self.kinds.items()),
            groups=tuple(self.groups.items()),
            problems=(*self.problems, *self.reading.problems),
            rest=self.reading.rest,
            resume=self.reading.resume,
        )


def _audited(
    share: StoreShare | FilesShare | JsonlShare, options: AuditOptions, reading: ShareReading
) -> Iterator[Audited | Unreadable]:
    if isinstance(share, StoreShare):
        return _store_items(share, options, reading)
    if isinstance(share, JsonlShare):
        return _jsonl_items(share, options, reading)
    return _file_items(share, options)


def _store_items(share: StoreShare, options: AuditOptions, reading: ShareReading) -> Iterator[Audited]:
    """The share's rows audited; past ``share.rows`` rows or SHARE_BYTES of output, the rest
    (from the next row there is: no empty share) is left for later. DatabaseChanged when the
    store is no longer the file the shares were cut from."""
    store = open_database(share.path, limits=options.limits(), identity=share.identity)
    try:
        read = database_rows(
            store, share.first, share.last, include_deleted=share.include_deleted, limits=options.limits()
        )
        with closing(read):
            for count, (rowid, row) in enumerate(read):
                if count >= share.rows or reading.rendered >= SHARE_BYTES:
                    reading.rest = replace(share, first=rowid)
                    break
                yield audited_row(share.name, row, options.policy)
        store.verify()
    finally:
        store.close()


def _jsonl_items(share: JsonlShare, options: AuditOptions, reading: ShareReading) -> Iterator[Audited]:
    for source in jsonl_sources(share, reading):
        yield exported_line(source.name, source.file, source.line, check_source(source, options.policy).located())


def _file_items(share: FilesShare, options: AuditOptions) -> Iterator[Audited | Unreadable]:
    for path in share.paths:
        name = display_name(path)
        try:
            read = read_source(os.path.join(share.base, path))
        except SourceError as exc:
            yield Unreadable(name, str(exc))
            continue
        source = packet_in_file(replace(read, file=name))
        yield exported_file(source.file, check_source(source, options.policy).located(), read.data)


def _verdict(item: Audited, options: AuditOptions) -> Verdict:
    """What the audit prints of a packet with findings, in the chosen format."""
    output = reporter(options.format).audit(item, show_found=options.show_found)
    return Verdict(item.where, False, tuple(output))


def _export_shares(folder: str, runner: Runner) -> Iterator[Share | Unreadable]:
    """An export's ``*.json`` files (canonical bytes and a newline each) and ``*.jsonl`` files
    (only checked: no canonical form fits a line), as shares. Paths go to the workers
    absolute: a cluster's workers have another working directory."""
    paths, problems = files_below(folder, (".json", ".jsonl"))
    batch: list[str] = []
    size = SHARE_PACKETS if runner.parallel else 1
    here = os.getcwd()
    for path in paths:
        if path.endswith(".json"):
            batch.append(path)
            if len(batch) >= size:
                yield FilesShare(tuple(batch), here)
                batch = []
            continue
        if batch:
            yield FilesShare(tuple(batch), here)
            batch = []
        yield from jsonl_file_shares(path, runner)
    if batch:
        yield FilesShare(tuple(batch), here)
    yield from problems


def _deadline(seconds: float | None) -> tuple[float | None, str | None]:
    """--deadline as a time.time() from now, or why it cannot be one (a usage error)."""
    if seconds is None:
        return None, None
    if not math.isfinite(seconds) or seconds <= 0:
        return None, "--deadline must be a number of seconds above 0"
    return time.time() + seconds, None


def run_audit(args: argparse.Namespace, out: Output) -> int:
    deadline, wrong = _deadline(args.deadline)
    if wrong is not None:
        error_line(wrong)
        return EXIT_USAGE
    runner = chosen_runner(args.jobs, args.dask)
    if isinstance(runner, str):
        error_line(runner)
        return EXIT_USAGE
    options = AuditOptions(
        policy_of(rule_set=args.rule_set), args.format, args.show_found, args.by, out.colour, deadline, args.deadline
    )
    # A stop signal raises Stopped, or cuts SQLite short through its progress handler.
    with StopSignals():
        return _run(args, out, runner, options)


def _run(args: argparse.Namespace, out: Output, runner: Runner, options: AuditOptions) -> int:
    name = display_name(args.store)
    store = None
    if os.path.isdir(args.store):
        shares: Iterator[Share | Unreadable] = _export_shares(args.store, runner)
    else:
        try:
            store = open_database(args.store, limits=options.limits())
        except DatabaseStopped:
            runner.close(completed=False)
            _stop_now()
        except DatabaseError as exc:
            runner.close(completed=False)
            error_line(f"{name}: {options.deadline_message() if isinstance(exc, DatabaseDeadline) else exc}")
            return EXIT_USAGE
        # Each reader checks that the path still names this file; a cluster's machines number
        # their devices each their own way, so there only the inode is compared.
        identity = store.identity if args.dask is None else replace(store.identity, device=None)
        whole = StoreShare(os.path.abspath(args.store), name, None, None, args.include_deleted, identity=identity)
        shares = store_shares(store, whole, runner, options)
    run = ExitStatus()
    kinds: Counter[str] = Counter()
    groups: Counter[str | None] = Counter()
    audited = flagged = 0
    progress = Progress(None, quiet=out.is_terminal)
    results = Results(out, progress, format=args.format)
    blocks = merged(shares, audit_share, options, runner)
    cut_short = False  # the run stopped early, and its last line says so and how far it got

    def problem(file: str, message: str) -> bool:
        """Report what could not be read; True when the store itself failed or the deadline passed."""
        nonlocal cut_short
        last = store is not None or (options.deadline is not None and message == options.deadline_message())
        if store is not None:
            message = f"{message}; {audited} packets were audited"
        run.fail(EXIT_USAGE)
        results.error(file, None, message)
        cut_short = cut_short or last
        return last

    try:
        with closing(blocks):
            for block in blocks:
                if out.lost:
                    break
                if isinstance(block, Unreadable):
                    if problem(block.file, block.message):
                        break
                    continue
                progress.step(block.packets)
                audited += block.packets
                flagged += block.failed
                kinds.update(dict(block.tally))
                groups.update(dict(block.groups))
                if block.failed:
                    run.fail(EXIT_FAIL)
                results.block(block)
                if any([problem(file, message) for file, message in block.problems]):
                    break
    except WorkersFailed as exc:
        cut_short = True
        run.fail(EXIT_USAGE)
        where = exc.file if exc.file is not None else name
        results.error(where, None, f"not audited: {exc}; nothing after it was audited either")
    finally:
        progress.close()
        if store is not None:
            store.close()
    results.close()
    # On stderr, as check's: for a reader of text output, and not after a run cut short or one
    # that read nothing, whose error lines say it all.
    if is_document(args.format) or out.lost or cut_short or (audited == 0 and run.status == EXIT_USAGE):
        return run.status
    counts = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items())) or "nothing to report"
    error_line(f"audit: {audited} packets, {flagged} with findings: {counts}")
    if args.by:
        for group, count in sorted(groups.items(), key=lambda item: (item[0] is None, item[0] or "")):
            error_line(f"audit: {args.by} {group if group is not None else '(none)'}: {count} packets with findings")
    return run.status
