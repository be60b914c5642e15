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
disagrees with its body. Rows are read in ``created_at`` then ``id`` order, one at a
time: memory stays flat however large the store.

A folder is audited as an export: every ``*.json`` below it (a packet file, canonical
bytes and a final newline as fmt writes it) and every ``*.jsonl`` (a packet per line,
checked only).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote as url_quote

from cmp._canonical import dumps, file_bytes
from cmp._pipeline import Report, check
from cmp._text import describe, display_name
from cmp._timestamps import instant
from cmp.cli._judge import check_source
from cmp.cli._output import JsonResults, Output, error_line
from cmp.cli._render import json_entry, redaction_text
from cmp.cli._sources import (
    SourceError,
    Unreadable,
    files_below,
    open_file,
    packet_in_file,
    read_each,
    read_jsonl,
)
from cmp.cli._status import EXIT_FAIL, EXIT_USAGE, ExitStatus
from cmp.findings import Finding, quote

COLUMNS = ("id", "created_at", "goal", "body", "deleted_at", "owner_id", "team_id")


class StoreError(Exception):
    """A store that cannot be audited; the message is one line."""


@dataclass(frozen=True, slots=True)
class Row:
    id: str
    created_at: str
    goal: str
    body: bytes
    deleted: bool
    owner_id: str | None
    team_id: str | None


def open_store(path: str) -> sqlite3.Connection:
    """The store, opened read-only; :class:`StoreError` for anything that is not such a store."""
    if not os.path.isfile(path):
        raise StoreError("not a file" if os.path.exists(path) else "no such file")
    try:
        connection = sqlite3.connect(f"file:{url_quote(os.path.abspath(path))}?mode=ro", uri=True, timeout=5)
        columns = {row[1] for row in connection.execute("PRAGMA table_info(packets)")}
    except sqlite3.Error as exc:
        raise StoreError(f"not a readable SQLite database ({describe(exc)})") from None
    missing = [name for name in COLUMNS if name not in columns]
    if missing:
        connection.close()
        raise StoreError(f"no packets table with the columns {', '.join(COLUMNS)} (missing: {', '.join(missing)})")
    return connection


def rows(connection: sqlite3.Connection, *, include_deleted: bool) -> Iterator[Row]:
    """The packets, one at a time, in created_at then id order."""
    where = "" if include_deleted else " WHERE deleted_at IS NULL"
    query = f"SELECT {', '.join(COLUMNS)} FROM packets{where} ORDER BY created_at, id"
    for ident, created_at, goal, body, deleted_at, owner_id, team_id in connection.execute(query):
        data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else bytes(body or b"")
        yield Row(str(ident), str(created_at), str(goal), data, deleted_at is not None, owner_id, team_id)


def _audit_finding(keyword: str, path: str, message: str) -> Finding:
    return Finding("audit", path, message, keyword)


def row_findings(row: Row, report: Report) -> list[Finding]:
    """What the row and the bytes the server wrote disagree on (for a body that conforms)."""
    packet = report.packet
    if packet is None:
        return []
    found = []
    if dumps(packet) != row.body:
        found.append(_audit_finding("not-canonical", "$", "the body is not the packet's canonical bytes"))
    if row.id != packet.id:
        found.append(
            _audit_finding("row-id", "$.id", f"the row's id is {quote(row.id)}, the body's {quote(packet.id)}")
        )
    if row.goal != packet.goal:
        found.append(_audit_finding("row-goal", "$.goal", "the row's goal is not the body's"))
    if instant(row.created_at) != instant(packet.created_at):
        message = f"the row's created_at {quote(row.created_at)} is not the body's {quote(packet.created_at)}"
        found.append(_audit_finding("row-created_at", "$.created_at", message))
    return found


@dataclass(frozen=True, slots=True)
class Audited:
    """One packet judged: where it is, its report, and what its row disagrees on."""

    where: str
    report: Report
    found: list[Finding]
    about: dict[str, Any]  # what names it in JSON output (id, owner, team; or file, line)
    group: dict[str, str | None]  # what --by counts it under


def _store_packets(connection: sqlite3.Connection, name: str, args: argparse.Namespace) -> Iterator[Audited]:
    for row in rows(connection, include_deleted=args.include_deleted):
        report = check(row.body, rules=args.rules).located()
        about = {"id": row.id, "owner_id": row.owner_id, "team_id": row.team_id, "deleted": row.deleted}
        group = {"owner": row.owner_id, "team": row.team_id}
        yield Audited(f"{name}[{row.id}]", report, row_findings(row, report), about, group)


def _export_packets(folder: str, args: argparse.Namespace) -> Iterator[Audited | Unreadable]:
    """An export: every ``*.json`` below the folder (a packet each, which should be its
    canonical bytes and a final newline, as fmt writes it) and every ``*.jsonl`` (a packet
    per line, which no canonical form fits on: only checked)."""
    paths, problems = files_below(folder, (".json", ".jsonl"))
    no_group: dict[str, str | None] = {"owner": None, "team": None}
    for path in paths:
        if path.endswith(".jsonl"):
            try:
                with open_file(path) as stream:
                    for source in read_jsonl(stream, display_name(path)):
                        report = check_source(source, lenient=False, allow_unredacted=False, rules=args.rules)
                        yield Audited(
                            source.name, report.located(), [], {"file": source.file, "line": source.line}, no_group
                        )
            except (SourceError, OSError) as exc:
                yield Unreadable(display_name(path), str(exc) if isinstance(exc, SourceError) else describe(exc))
            continue
        for _, read in read_each([path]):
            if isinstance(read, Unreadable):
                yield read
                continue
            source = packet_in_file(read)
            report = check_source(source, lenient=False, allow_unredacted=False, rules=args.rules).located()
            found = []
            if report.packet is not None and file_bytes(dumps(report.packet)) != read.data:
                found.append(_audit_finding("not-canonical", "$", "the file is not the packet's canonical bytes"))
            yield Audited(source.file, report, found, {"file": source.file}, no_group)
    yield from problems


def run_audit(args: argparse.Namespace, out: Output) -> int:
    name = display_name(args.store)
    connection = None
    if os.path.isdir(args.store):
        audited_items: Iterator[Audited | Unreadable] = _export_packets(args.store, args)
    else:
        try:
            connection = open_store(args.store)
        except StoreError as exc:
            error_line(f"{name}: {exc}")
            return EXIT_USAGE
        audited_items = _store_packets(connection, name, args)
    run = ExitStatus()
    kinds: Counter[str] = Counter()
    groups: Counter[str | None] = Counter()
    audited = flagged = 0
    document = JsonResults(out) if args.format == "json" else None
    try:
        for item in audited_items:
            if out.lost:
                break
            if isinstance(item, Unreadable):
                run.file_error(item.file, item.message)
                continue
            audited += 1
            report, found = item.report, item.found
            if report.ok and not found:
                continue
            flagged += 1
            run.fail(EXIT_FAIL)
            kinds.update(f.keyword or f.code for f in (*report.errors, *found))
            kinds.update(f"redaction {hit.category}" for hit in report.redactions)
            if args.by:
                groups[item.group[args.by]] += 1
            if document is not None:
                entry = {
                    **item.about,
                    **report.to_json(show_found=args.show_found),
                    "audit": [f.to_json() for f in found],
                }
                document.add(json_entry(entry))
                continue
            for finding in report.errors:
                out.line(f"{item.where}: {finding}", "fail")
            for hit in report.redactions:
                out.line(f"{item.where}: redaction {redaction_text(hit, show_found=args.show_found)}", "fail")
            for finding in found:
                out.line(f"{item.where}: {finding} [{finding.keyword}]", "fail")
    except sqlite3.Error as exc:
        error_line(f"{name}: cannot read on ({describe(exc)}); {audited} packets were audited")
        run.fail(EXIT_USAGE)
    finally:
        if connection is not None:
            connection.close()
    if document is not None:
        document.close()
        return run.status
    counts = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items())) or "nothing to report"
    out.line(f"audit: {audited} packets, {flagged} with findings: {counts}")
    if args.by:
        for group, count in sorted(groups.items(), key=lambda item: (item[0] is None, item[0] or "")):
            out.line(f"audit: {args.by} {group if group is not None else '(none)'}: {count} packets with findings")
    return run.status
