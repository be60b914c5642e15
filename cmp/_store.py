"""The reference server's SQLite store, read and never written: its rows, and what a row
and the body it holds disagree on.

The store's table is ``packets(id TEXT PRIMARY KEY, created_at TEXT NOT NULL, goal TEXT
NOT NULL, body BLOB NOT NULL, deleted_at TEXT, owner_id TEXT, team_id TEXT)``; ``body``
holds the canonical bytes the server wrote. The database is opened read-only (SQLite's
``mode=ro``), so it can be read while the server writes (WAL mode), and the file's bytes
are left as they were. Rows come one at a time in rowid order (the order the server
stored them in): memory stays flat however large the store.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote as url_quote

from cmp._canonical import dumps
from cmp._display import describe
from cmp._messages import quote
from cmp._timestamps import instant
from cmp.findings import Finding

if TYPE_CHECKING:
    from cmp._pipeline import Report

# How long to wait for a lock another connection holds before giving up on the store.
LOCK_SECONDS = 5

COLUMNS = ("id", "created_at", "goal", "body", "deleted_at", "owner_id", "team_id")


class StoreError(Exception):
    """A store that cannot be audited; the message is one line."""


@dataclass(frozen=True, slots=True)
class Row:
    """A row as text and bytes; ``body`` None when the column holds neither (``body_kind`` says what)."""

    id: str
    created_at: str
    goal: str
    body: bytes | None
    deleted: bool
    owner_id: str | None
    team_id: str | None
    body_kind: str = "bytes"


# What SQLite holds in a column that is not the packet's bytes: named in the finding.
_KINDS = {int: "an integer", float: "a real number", type(None): "NULL"}


def _text(value: object) -> str:
    """A column as text, whatever SQLite holds in it (a TEXT column may hold a BLOB or a number)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return "" if value is None else str(value)


def open_store(path: str) -> sqlite3.Connection:
    """The store, opened read-only; :class:`StoreError` for anything that is not such a store."""
    if not os.path.isfile(path):
        raise StoreError("not a file" if os.path.exists(path) else "no such file")
    try:
        connection = sqlite3.connect(f"file:{url_quote(os.path.abspath(path))}?mode=ro", uri=True, timeout=LOCK_SECONDS)
        columns = {row[1] for row in connection.execute("PRAGMA table_info(packets)")}
    except sqlite3.Error as exc:
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            # Another connection holds it exclusively (a rollback-journal writer): not a bad file.
            raise StoreError(f"locked by another connection for {LOCK_SECONDS} s ({describe(exc)})") from None
        raise StoreError(f"not a readable SQLite database ({describe(exc)})") from None
    missing = [name for name in COLUMNS if name not in columns]
    if missing:
        connection.close()
        raise StoreError(f"no packets table with the columns {', '.join(COLUMNS)} (missing: {', '.join(missing)})")
    try:
        connection.execute("SELECT rowid FROM packets LIMIT 0")
    except sqlite3.Error:
        connection.close()
        raise StoreError(
            "the packets table has no rowid (it is WITHOUT ROWID), and the audit reads rows in rowid order"
        ) from None
    return connection


def rows(
    store: str | sqlite3.Connection,
    first: int | None = None,
    last: int | None = None,
    *,
    include_deleted: bool = False,
) -> Iterator[tuple[int, Row]]:
    """The rows whose rowid is in ``[first, last]`` (None: no bound), one at a time in
    rowid order, each with its rowid; deleted ones only with ``include_deleted``.

    A path is opened (:func:`open_store`) when the first row is asked for and closed
    when the rows end; a connection given stays open.
    """
    bounds, values = [], []
    if not include_deleted:
        bounds.append("deleted_at IS NULL")
    if first is not None:
        bounds.append("rowid >= ?")
        values.append(first)
    if last is not None:
        bounds.append("rowid <= ?")
        values.append(last)
    where = f" WHERE {' AND '.join(bounds)}" if bounds else ""
    query = f"SELECT rowid, {', '.join(COLUMNS)} FROM packets{where} ORDER BY rowid"
    connection = open_store(store) if isinstance(store, str) else store
    try:
        for rowid, ident, created_at, goal, body, deleted_at, owner_id, team_id in connection.execute(query, values):
            data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
            owner, team = (None if v is None else _text(v) for v in (owner_id, team_id))
            kind = "bytes" if isinstance(data, bytes) else _KINDS.get(type(data), type(data).__name__)
            yield (
                rowid,
                Row(
                    _text(ident),
                    _text(created_at),
                    _text(goal),
                    data if isinstance(data, bytes) else None,
                    deleted_at is not None,
                    owner,
                    team,
                    kind,
                ),
            )
    finally:
        if connection is not store:
            connection.close()


def audit_finding(keyword: str, path: str, message: str) -> Finding:
    """A finding of the audit's own (code ``audit``); ``keyword`` says which."""
    return Finding("audit", path, message, keyword)


def row_findings(row: Row, report: Report) -> list[Finding]:
    """What the row and the bytes the server wrote disagree on (for a body that conforms)."""
    packet = report.packet
    if packet is None:
        return []
    found = []
    if dumps(packet) != row.body:
        found.append(audit_finding("not-canonical", "$", "the body is not the packet's canonical bytes"))
    if row.id != packet.id:
        found.append(audit_finding("row-id", "$.id", f"the row's id is {quote(row.id)}, the body's {quote(packet.id)}"))
    if row.goal != packet.goal:
        found.append(audit_finding("row-goal", "$.goal", "the row's goal is not the body's"))
    if instant(row.created_at) != instant(packet.created_at):
        message = f"the row's created_at {quote(row.created_at)} is not the body's {quote(packet.created_at)}"
        found.append(audit_finding("row-created_at", "$.created_at", message))
    return found
