"""``audit``: re-check every packet a deployed store holds (the reference server's SQLite).

The format lets a deployment scan again what it stores, for defence in depth; packets
pushed with the override, or by writers that skip the pre-flight, sit in a store
unchecked. The audit reads the store and never writes it: the database is opened
read-only (SQLite's ``mode=ro``), so it can run while the server writes (WAL mode), and
the file's bytes are left as they were.

The store's table is ``packets(id TEXT PRIMARY KEY, created_at TEXT NOT NULL, goal TEXT
NOT NULL, body BLOB NOT NULL, deleted_at TEXT, owner_id TEXT, team_id TEXT)``; ``body``
holds the canonical bytes the server wrote. For each packet (deleted ones only with
--include-deleted) the audit reports what ``check`` finds in its body (schema findings,
redaction hits, with --rules extended the extended ones too), a body that is not
canonical, and a row whose ``id``, ``goal`` or ``created_at`` (the same instant, in UTC)
disagrees with its body. Rows are read in rowid order (the order the server stored
them in), a share of rows at a time: memory stays flat however large the store. With
--jobs, each worker opens the store itself and reads its own shares of rows; the parent
only steps through the rowids to cut the shares, and writes their results in order.

A folder is audited as an export: every ``*.json`` below it (a packet file, canonical
bytes and a final newline as fmt writes it) and every ``*.jsonl`` (a packet per line,
checked only).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import closing, nullcontext
from dataclasses import dataclass
from typing import Any, Literal

from cmp import Report, dumps
from cmp._canonical import file_bytes
from cmp._display import describe, display_name
from cmp._messages import unquoted
from cmp._pipeline import DEFAULT_POLICY, Policy, judge, policy_of
from cmp._store import StoreError, audit_finding, open_store, row_findings, rows
from cmp.cli._batch import Runner, Share, WorkersFailed, jsonl_file_shares, merged
from cmp.cli._judge import ShareReading, Verdict, check_source, jsonl_sources, render_verdicts, verdict_size
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, ExitStatus, Output, error_line
from cmp.cli._progress import Progress
from cmp.cli._render import Block, Line, json_entry, redaction_text
from cmp.cli._results import Results
from cmp.cli._runners import chosen_runner
from cmp.cli._signals import StopSignals
from cmp.cli._sources import (
    SHARE_BYTES,
    SHARE_PACKETS,
    JsonlShare,
    SourceError,
    Unreadable,
    files_below,
    packet_in_file,
    read_source,
)
from cmp.findings import Finding

# Rows in one share of a store: about 40 ms of work for typical packets, so opening the
# store and running the share's query cost little next to it.
SHARE_ROWS = 1000

# How much of a row's id, owner or team a line shows (after the redaction screen).
NAME_LIMIT = 128


def label(value: str | None) -> str | None:
    """A row's id, owner or team as output shows it: withheld when a redaction pattern matches
    in it (``(not shown: …)``), cut at NAME_LIMIT code points."""
    if value is None:
        return None
    shown = unquoted(value)
    return shown if len(shown) <= NAME_LIMIT else shown[:NAME_LIMIT] + "…"


@dataclass(frozen=True, slots=True)
class AuditOptions:
    """How ``audit`` judges (its --rules, as a policy) and renders: its --format, --show-found, --by, and
    whether text lines are coloured."""

    policy: Policy = DEFAULT_POLICY
    format: Literal["text", "json", "sarif"] = "text"
    show_found: bool = False
    by: Literal["owner", "team"] | None = None
    colour: bool = False


@dataclass(frozen=True, slots=True)
class StoreShare:
    """The rows of a store whose rowid is in ``[first, last]`` (None: no bound), read by
    whoever audits them, in rowid order (the order the server stored them in)."""

    path: str
    name: str
    first: int | None
    last: int | None
    include_deleted: bool
    rows: int = SHARE_ROWS  # the most rows read before the rest is left for later

    def first_packet(self, resume: tuple[str, int | None] | None) -> tuple[str, int | None]:
        return self.name, None


@dataclass(frozen=True, slots=True)
class FilesShare:
    """Packet files of an export, read by whoever audits them: ``paths`` as the user named
    them (and as they are printed), relative to ``base``."""

    paths: tuple[str, ...]
    base: str

    def first_packet(self, resume: tuple[str, int | None] | None) -> tuple[str, int | None]:
        return display_name(self.paths[0]), None


def store_shares(
    connection: sqlite3.Connection, share: StoreShare, runner: Runner
) -> Iterator[StoreShare | Unreadable]:
    """The store as shares of rows for workers, or one share that auditing cuts as it goes.

    A share holds SHARE_ROWS rows, scaled as ``runner.share_bytes`` scales a file's
    shares (a cluster's are 16 times larger: its scheduler spends about a millisecond
    per task).

    The audit ends at the last row stored when it starts: a writer faster than the audit
    would otherwise keep it going for ever. The bounds come from stepping through the
    rowids, which SQLite walks without reading a body into Python. If stepping fails (a
    malformed page), the rest goes out as one share, whose reading then fails where one
    process reading the store would: both audit the same rows.
    """
    try:
        last = connection.execute("SELECT max(rowid) FROM packets").fetchone()[0]
    except sqlite3.Error:
        last = None  # reading the rows will say what is wrong
    whole = dataclasses.replace(share, last=last)
    if not runner.parallel:
        yield whole
        return
    rows = SHARE_ROWS * max(1, runner.share_bytes // SHARE_BYTES)
    whole = dataclasses.replace(whole, rows=rows)
    step = "SELECT rowid FROM packets WHERE rowid >= ? AND rowid <= ? ORDER BY rowid LIMIT 1 OFFSET ?"
    first = None
    try:
        first = connection.execute("SELECT min(rowid) FROM packets").fetchone()[0]
        while first is not None:
            found = connection.execute(step, (first, last, rows)).fetchone()
            if found is None:
                break
            yield dataclasses.replace(whole, first=first, last=found[0] - 1)
            first = found[0]
    except sqlite3.Error:
        pass
    yield dataclasses.replace(whole, first=first)


def audit_share(share: StoreShare | FilesShare | JsonlShare, options: AuditOptions) -> Block:
    """One share of a store or an export audited and rendered, with its tallies."""
    reading = ShareReading()
    kinds: Counter[str] = Counter()
    groups: Counter[str | None] = Counter()
    verdicts: list[Verdict] = []
    packets = 0
    problems: list[tuple[str, str]] = []
    try:
        for item in _audited(share, options, reading):
            if isinstance(item, Unreadable):
                problems.append((item.file, item.message))
                continue
            packets += 1
            report, found = item.report, item.found
            if report.ok and not found:
                continue
            kinds.update(f.keyword or f.code for f in (*report.errors, *found))
            kinds.update(f"redaction {hit.category}" for hit in report.redactions)
            if options.by:
                groups[item.group[options.by]] += 1
            verdicts.append(_verdict(item, options))
            reading.rendered += verdict_size(verdicts[-1])
    except sqlite3.Error as exc:
        problems.append((share.name if isinstance(share, StoreShare) else "-", f"cannot read on ({describe(exc)})"))
    except StoreError as exc:
        problems.append((share.name if isinstance(share, StoreShare) else "-", str(exc)))
    output, entries = render_verdicts(verdicts, options.format, colour=options.colour)
    return Block(
        output,
        entries,
        packets,
        len(verdicts),
        tally=tuple(kinds.items()),
        groups=tuple(groups.items()),
        problems=(*problems, *reading.problems),
        rest=reading.rest,
        resume=reading.resume,
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
    (from the next row there is: no rowid arithmetic, no empty share) is left for later."""
    read = rows(share.path, share.first, share.last, include_deleted=share.include_deleted)
    for count, (rowid, row) in enumerate(read):
        if count >= share.rows or reading.rendered >= SHARE_BYTES:
            reading.rest = dataclasses.replace(share, first=rowid)
            return
        ident, owner, team = label(row.id), label(row.owner_id), label(row.team_id)
        about = {"id": ident, "owner_id": owner, "team_id": team, "deleted": row.deleted}
        group = {"owner": owner, "team": team}
        if row.body is None:
            message = f"the body is {row.body_kind}, not the packet's bytes"
            found = [audit_finding("row-body", "$", message)]
            yield Audited(f"{share.name}[{ident}]", share.name, None, _no_report(options), found, about, group)
            continue
        report = judge(row.body, options.policy).located()
        yield Audited(f"{share.name}[{ident}]", share.name, None, report, row_findings(row, report), about, group)


def _no_report(options: AuditOptions) -> Report:
    """The report of a body that holds no bytes to check: nothing found, nothing conforming."""
    return Report.refused(options.policy, b"", ())


def _jsonl_items(share: JsonlShare, options: AuditOptions, reading: ShareReading) -> Iterator[Audited]:
    for source in jsonl_sources(share, reading):
        report = check_source(source, options.policy).located()
        about: dict[str, Any] = {"file": source.file, "line": source.line}
        yield Audited(source.name, source.file, source.line, report, [], about, _NO_GROUP)


def _file_items(share: FilesShare, options: AuditOptions) -> Iterator[Audited | Unreadable]:
    for path in share.paths:
        name = display_name(path)
        try:
            read = read_source(os.path.join(share.base, path))
        except SourceError as exc:
            yield Unreadable(name, str(exc))
            continue
        source = packet_in_file(dataclasses.replace(read, file=name))
        report = check_source(source, options.policy).located()
        found = []
        if report.packet is not None and file_bytes(dumps(report.packet)) != read.data:
            found.append(audit_finding("not-canonical", "$", "the file is not the packet's canonical bytes"))
        yield Audited(source.file, source.file, None, report, found, {"file": source.file}, _NO_GROUP)


_NO_GROUP: dict[str, str | None] = {"owner": None, "team": None}


def _verdict(item: Audited, options: AuditOptions) -> Verdict:
    """What the audit prints of a packet with findings, in the chosen format."""
    report, found = item.report, item.found
    if options.format == "json":
        entry = {**item.about, **report.to_json(show_found=options.show_found), "audit": [f.to_json() for f in found]}
        return Verdict(item.where, False, entries=(json_entry(entry),))
    if options.format == "sarif":
        from cmp.cli._sarif import audit_results

        logical = None if item.file_line is not None or "id" not in item.about else item.about["id"]
        results = audit_results(item.file, item.file_line, report, found, logical, show_found=options.show_found)
        return Verdict(item.where, False, entries=tuple(results))
    lines: list[Line] = [("fail", f"{item.where}: {finding}") for finding in report.errors]
    lines += [
        ("fail", f"{item.where}: redaction {redaction_text(hit, show_found=options.show_found)}")
        for hit in report.redactions
    ]
    lines += [("fail", f"{item.where}: {finding} [{finding.keyword}]") for finding in found]
    return Verdict(item.where, False, lines=tuple(lines))


@dataclass(frozen=True, slots=True)
class Audited:
    """One packet judged: where it is, its report, and what its row disagrees on."""

    where: str  # how a text line names it: store[id], file, file:line
    file: str  # the store or file it is in
    file_line: int | None  # its line in a JSON Lines export
    report: Report
    found: list[Finding]
    about: dict[str, Any]  # what names it in JSON output (id, owner, team; or file, line)
    group: dict[str, str | None]  # what --by counts it under


def _export_shares(folder: str, runner: Runner) -> Iterator[Share | Unreadable]:
    """An export: every ``*.json`` below the folder (a packet each, which should be its
    canonical bytes and a final newline, as fmt writes it) and every ``*.jsonl`` (a packet
    per line, which no canonical form fits on: only checked), as shares. Paths go to the
    workers absolute (a cluster's workers have another working directory)."""
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


def run_audit(args: argparse.Namespace, out: Output) -> int:
    name = display_name(args.store)
    runner = chosen_runner(args.jobs, args.dask)
    if isinstance(runner, str):
        error_line(runner)
        return EXIT_USAGE
    connection = None
    if os.path.isdir(args.store):
        shares: Iterator[Share | Unreadable] = _export_shares(args.store, runner)
    else:
        try:
            connection = open_store(args.store)
        except StoreError as exc:
            error_line(f"{name}: {exc}")
            return EXIT_USAGE
        whole = StoreShare(os.path.abspath(args.store), name, None, None, args.include_deleted)
        shares = store_shares(connection, whole, runner)
    options = AuditOptions(policy_of(rules=args.rules), args.format, args.show_found, args.by, out.colour)
    run = ExitStatus()
    kinds: Counter[str] = Counter()
    groups: Counter[str | None] = Counter()
    audited = flagged = 0
    progress = Progress(None, quiet=out.is_terminal)
    results = Results(out, progress, format=args.format)
    blocks = merged(shares, audit_share, options, runner)

    def problem(file: str, message: str) -> bool:
        """Report what could not be read; True when it is the store itself, of which nothing more can be read."""
        store_lost = connection is not None
        if store_lost:
            message = f"{message}; {audited} packets were audited"
        run.fail(EXIT_USAGE)
        results.error(file, None, message)
        return store_lost

    stop = StopSignals() if runner.parallel else nullcontext()
    try:
        with stop, closing(blocks):
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
        run.fail(EXIT_USAGE)
        where = exc.file if exc.file is not None else name
        results.error(where, None, f"not audited: {exc}; nothing after it was audited either")
    finally:
        progress.close()
        if connection is not None:
            connection.close()
    results.close()
    if args.format != "text":
        return run.status
    counts = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items())) or "nothing to report"
    out.line(f"audit: {audited} packets, {flagged} with findings: {counts}")
    if args.by:
        for group, count in sorted(groups.items(), key=lambda item: (item[0] is None, item[0] or "")):
            out.line(f"audit: {args.by} {group if group is not None else '(none)'}: {count} packets with findings")
    return run.status
