"""The reference server's SQLite store, read and never written: its rows, one at a time in
rowid order, so memory stays flat however large the store (:mod:`cmp._audit.rules` judges them).

The table is ``packets(id TEXT PRIMARY KEY, created_at TEXT NOT NULL, goal TEXT NOT NULL,
body BLOB NOT NULL, deleted_at TEXT, owner_id TEXT, team_id TEXT)``; ``body`` holds the
canonical bytes the server wrote.

A store may come from anywhere, so SQLite's work is bounded: ``packets`` must be a table of
stored columns (a view or generated column would run a query of the store's choosing) and
``trusted_schema`` is off; a progress handler cuts a statement short on a stop or the deadline
(a malformed b-tree can make SQLite walk rows forever); a body is read only when it fits a
packet, other columns are capped, and everything is read as bytes. The store is opened
read-only, nothing is written beside it, and every reader checks that the path still names
the same file (:class:`Identity`).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote as url_quote

from cmp._display import describe, one_line
from cmp._intake import MAX_PACKET_BYTES
from cmp._messages import credential_in

# How long to wait for a lock another connection holds before giving up on the store.
LOCK_SECONDS = 5

COLUMNS = ("id", "created_at", "goal", "body", "deleted_at", "owner_id", "team_id")

# The most bytes of a column other than ``body`` that reach Python: one past the packet
# limit, enough to know that the column cannot be what a packet holds.
READ_LIMIT = MAX_PACKET_BYTES + 1

# Steps of SQLite's virtual machine between two calls of the progress handler: a stop or
# the deadline is seen within a fraction of a millisecond, at no cost worth measuring.
PROGRESS_STEPS = 10_000

# The SQLite header's write and read versions (bytes 18 and 19): 2 is write-ahead logging.
_WAL_VERSION = 2
# A write-ahead log shorter than its header and one frame holds no transaction.
_WAL_HEADER, _FRAME_HEADER = 32, 24

CHANGED_NAME = "changed while it was read: another file took its name"
CHANGED_GONE = "changed while it was read: it was removed"
CHANGED_WRITTEN = (
    "changed while it was read: it was written while the audit read it without locks "
    "(no writer had it open when the audit began)"
)


class DatabaseError(Exception):
    """A store that cannot be audited, or read on; the message is one line and quotes no row data."""


class DatabaseStopped(DatabaseError):
    """A stop signal arrived while SQLite worked: the statement was cut short (the caller raises the stop)."""


class DatabaseDeadline(DatabaseError):
    """The deadline passed: the statement under way was cut short."""


class DatabaseChanged(DatabaseError):
    """The path no longer names the file the audit began with, or a file read without locks
    was written meanwhile (``retry``: read it again, now with locks)."""

    def __init__(self, message: str, *, retry: bool = False) -> None:
        super().__init__(message)
        self.retry = retry


@dataclass(frozen=True, slots=True)
class Identity:
    """Which file a store's path names: its inode, and its device where devices can be
    compared (None on a cluster, whose machines number their devices each their own way)."""

    inode: int
    device: int | None

    @classmethod
    def of(cls, info: os.stat_result) -> Identity:
        return cls(info.st_ino, info.st_dev)

    def matches(self, info: os.stat_result) -> bool:
        return info.st_ino == self.inode and (self.device is None or info.st_dev == self.device)


@dataclass(frozen=True, slots=True)
class Limits:
    """What may cut a statement short: ``deadline`` (a ``time.time()``), and ``stopping``,
    asked every PROGRESS_STEPS steps whether a stop signal is pending."""

    deadline: float | None = None
    stopping: Callable[[], bool] | None = None

    def passed(self) -> bool:
        return self.deadline is not None and time.time() >= self.deadline


# No deadline and no stop signal: the default of every reader (a record is frozen, so one serves all).
NO_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Row:
    """A row as text and bytes; ``body`` None when the column holds no bytes to check
    (``body_kind`` says what it holds, ``body_size`` the size of one too large to read).
    ``not_text`` names the text columns whose bytes are not UTF-8."""

    id: str
    created_at: str
    goal: str
    body: bytes | None
    deleted: bool
    owner_id: str | None
    team_id: str | None
    body_kind: str = "bytes"
    body_size: int | None = None
    not_text: tuple[str, ...] = ()


# What SQLite holds in a body that is not the packet's bytes: named in the finding.
_KINDS = {"integer": "an integer", "real": "a real number", "null": "NULL"}


def _stat(path: str) -> os.stat_result:
    """The file ``path`` names, or DatabaseError saying why there is none to read."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise DatabaseError("a symbolic link to nothing" if os.path.islink(path) else "no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DatabaseError("a symbolic link loop (or a chain of links too long to follow)") from None
        raise DatabaseError(f"cannot open: {describe(exc)}") from None
    if not stat.S_ISREG(info.st_mode):
        raise DatabaseError("not a file")
    return info


def _header(path: str) -> bytes:
    """The first 100 bytes of the file: the SQLite header, if it is a database."""
    try:
        with open(path, "rb") as stream:
            return stream.read(100)
    except OSError as exc:
        raise DatabaseError(f"cannot open: {describe(exc)}") from None


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DatabaseError(f"cannot look at {os.path.basename(path)} beside it: {describe(exc)}") from None


def _without_locks(real: str, header: bytes) -> bool:
    """Whether a store in WAL mode is to be read as immutable, without locks or new files. Every
    connection to a WAL database keeps its ``-wal`` file while open, so with none there no writer
    has the store open and the file holds every transaction. A writer that opens it later reaches
    the file only at a checkpoint, which :meth:`ReferenceDatabase.verify` notices (size and mtime),
    and the store is read again with locks. A ``-wal`` and ``-shm`` are read as they are; a ``-wal``
    with frames but no ``-shm`` (readable only by creating it), or either as a symbolic link, is
    refused."""
    name = os.path.basename(real)
    wal, shm = _lstat(real + "-wal"), _lstat(real + "-shm")
    for suffix, info in (("-wal", wal), ("-shm", shm)):
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise DatabaseError(
                f"{name}{suffix} beside it is a symbolic link, which SQLite refuses to open (it could point "
                "anywhere); the store was not read"
            )
    if wal is None:
        return True
    if shm is not None:
        return False
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    if wal.st_size < _WAL_HEADER + _FRAME_HEADER + page:
        return True  # a log with no frame in it: the file holds every transaction
    raise DatabaseError(
        f"its write-ahead log ({name}-wal) holds transactions not yet in the database file, and without "
        f"{name}-shm SQLite reads them only by creating that file beside the store, which the audit does not "
        f"do; let a process that may write the folder checkpoint it first (sqlite3 {name} 'PRAGMA wal_checkpoint')"
    )


def sqlite_words(exc: sqlite3.Error) -> str:
    """What SQLite said, on one line, when it cannot quote row data: a message holding a quote
    mark or matching a credential pattern shows only its result code's name."""
    text = one_line(str(exc))
    if "'" in text or '"' in text or credential_in(text) is not None:
        return getattr(exc, "sqlite_errorname", None) or type(exc).__name__
    return text


# What a read-only connection cannot do, by SQLite's extended result code name.
_READ_ONLY_WHY = {
    "SQLITE_READONLY_RECOVERY": "its WAL index ({name}-shm) must be rebuilt after a crash, which only a "
    "connection that may write it can do",
    "SQLITE_READONLY_CANTINIT": "its WAL index ({name}-shm) is not set up, and this process may not write it",
    "SQLITE_READONLY_CANTLOCK": "SQLite cannot lock its WAL index ({name}-shm) read-only",
    "SQLITE_READONLY_DIRECTORY": "SQLite would have to create a file in its folder, which is read-only",
}


class ReferenceDatabase:
    """An open store: its connection, which file it is, and how it was opened."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        path: str,
        identity: Identity,
        stamp: tuple[int, int] | None,
        limits: Limits = NO_LIMITS,
    ) -> None:
        self.connection = connection
        self.limits = limits
        self.path = path  # as given: a reader checks that it still names the same file
        self.identity = identity
        self.stamp = stamp  # read without locks: the file's size and mtime, which must not change
        self.cut: str | None = None  # why the progress handler cut a statement short

    @property
    def immutable(self) -> bool:
        return self.stamp is not None

    def close(self) -> None:
        self.connection.close()

    def query(self, sql: str, values: Sequence[object] = ()) -> Iterator[tuple[Any, ...]]:
        """The rows of ``sql``, one at a time; a SQLite error as the DatabaseError that says what happened."""
        try:
            yield from self.connection.execute(sql, values)
        except sqlite3.Error as exc:
            raise self.error(exc) from None

    def one(self, sql: str, values: Sequence[object] = ()) -> tuple[Any, ...] | None:
        """The first row of ``sql``, or None; a SQLite error as in :meth:`query`."""
        try:
            found: tuple[Any, ...] | None = self.connection.execute(sql, values).fetchone()
        except sqlite3.Error as exc:
            raise self.error(exc) from None
        return found

    def error(self, exc: sqlite3.Error, *, opening: bool = False) -> DatabaseError:
        """What a SQLite error means for the audit: a stop, the deadline, a store that changed, or the error.
        A statement the progress handler cut short is a stop or the deadline even if it cannot say which."""
        interrupted = self.cut is not None or _interrupted(exc)
        if interrupted and self.limits.stopping is not None and self.limits.stopping():
            return DatabaseStopped("stopped")
        if interrupted and (self.cut == "deadline" or self.limits.passed()):
            return DatabaseDeadline("the deadline passed")
        try:
            self.verify()
        except DatabaseChanged as changed:
            return changed
        if opening:
            return _opening_error(exc, os.path.realpath(self.path))
        return DatabaseError(f"cannot read on ({sqlite_words(exc)})")

    def verify(self) -> None:
        """DatabaseChanged when the path names another file now, or the file read without locks was written."""
        try:
            info = os.stat(self.path)
        except OSError:
            raise DatabaseChanged(CHANGED_GONE) from None
        if not self.identity.matches(info):
            raise DatabaseChanged(CHANGED_NAME)
        if self.stamp is not None and (info.st_size, info.st_mtime_ns) != self.stamp:
            raise DatabaseChanged(CHANGED_WRITTEN, retry=True)


def _interrupted(exc: sqlite3.Error) -> bool:
    """Whether SQLite cut the statement short (SQLITE_INTERRUPT: its progress handler said so)."""
    name = getattr(exc, "sqlite_errorname", None)  # Python 3.11 names it
    return name == "SQLITE_INTERRUPT" if name is not None else str(exc) == "interrupted"


# The first 16 bytes of every SQLite database file.
_SQLITE_MAGIC = b"SQLite format 3\x00"
_WHAT_AUDIT_READS = "audit reads the ltm server's SQLite database, or a folder of exported packets"


def _opening_error(exc: sqlite3.Error, real: str) -> DatabaseError:
    """What an error while opening the store at ``real`` (its resolved path) means."""
    name = os.path.basename(real)
    words = sqlite_words(exc)
    code = getattr(exc, "sqlite_errorname", "") or ""  # Python 3.11 names it
    if not code and "readonly" in str(exc) and os.path.exists(real + "-journal"):
        code = "SQLITE_READONLY_ROLLBACK"
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc):
        # Another connection holds it exclusively (a rollback-journal writer): not a bad file.
        return DatabaseError(f"locked by another connection for {LOCK_SECONDS} s ({words})")
    if code == "SQLITE_READONLY_ROLLBACK":
        return DatabaseError(
            f"a hot journal ({name}-journal) holds a transaction a writer did not finish; only a connection that "
            "may write the store can roll it back (its server, or sqlite3 run by a user who may write its "
            "folder), and the audit opens it read-only"
        )
    if code in _READ_ONLY_WHY:
        return DatabaseError(f"cannot be read read-only: {_READ_ONLY_WHY[code].format(name=name)} ({words})")
    if code.startswith("SQLITE_CANTOPEN"):
        return DatabaseError(f"SQLite cannot open it read-only ({words})")
    return DatabaseError(f"not a readable SQLite database ({words})")


def open_database(path: str, *, limits: Limits = NO_LIMITS, identity: Identity | None = None) -> ReferenceDatabase:
    """The store, opened read-only; :class:`DatabaseError` for anything that is not such a store.
    With ``identity``, the path must still name that file (else :class:`DatabaseChanged`),
    checked after SQLite read the schema so the file read is the one checked. Rollback-journal
    stores open with ``mode=ro``; WAL ones as :func:`_without_locks` says."""
    if limits.passed():
        raise DatabaseDeadline("the deadline passed")
    info = _stat(path)
    if identity is not None and not identity.matches(info):
        raise DatabaseChanged(CHANGED_NAME)
    real = os.path.realpath(path)
    header = _header(real)
    if header[:16] != _SQLITE_MAGIC:  # SQLite would take an empty or tiny file for an empty database
        what = "an empty file" if not header else "not an SQLite database"
        raise DatabaseError(f"{what}, so not an ltm store ({_WHAT_AUDIT_READS})")
    wal = len(header) >= 20 and header[18] == _WAL_VERSION
    immutable = wal and _without_locks(real, header)
    uri = f"file:{url_quote(os.fsencode(real))}?mode=ro" + ("&immutable=1" if immutable else "")
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=LOCK_SECONDS)
    except sqlite3.Error as exc:
        raise _opening_error(exc, real) from None
    connection.text_factory = bytes  # no decoding error can quote a column
    store = ReferenceDatabase(
        connection,
        path,
        identity or Identity.of(info),
        (info.st_size, info.st_mtime_ns) if immutable else None,
        limits,
    )

    def progress() -> int:
        if limits.stopping is not None and limits.stopping():
            store.cut = "stop"
        elif limits.passed():
            store.cut = "deadline"
        return 1 if store.cut else 0

    connection.set_progress_handler(progress, PROGRESS_STEPS)
    try:
        _check_schema(store)
    except BaseException:
        connection.close()
        raise
    return store


def _check_schema(store: ReferenceDatabase) -> None:
    """DatabaseError unless ``packets`` is a table of stored columns with a rowid, in a UTF-8 database."""
    try:
        for pragma in ("PRAGMA trusted_schema=OFF", "PRAGMA query_only=ON"):
            store.connection.execute(pragma)
        encoding = store.connection.execute("PRAGMA encoding").fetchone()[0]
        kinds = store.connection.execute(
            "SELECT type, sql FROM sqlite_master WHERE name = 'packets' COLLATE NOCASE AND type IN ('table', 'view')"
        ).fetchall()
        columns = store.connection.execute("PRAGMA table_xinfo(packets)").fetchall()
    except sqlite3.Error as exc:
        raise store.error(exc, opening=True) from None
    if encoding != b"UTF-8":
        shown = encoding.decode("ascii", "replace") if isinstance(encoding, bytes) else str(encoding)
        raise DatabaseError(f"its text encoding is {shown}, and the server's stores are UTF-8")
    if kinds:
        kind, sql = kinds[0]
        if kind == b"view":
            raise DatabaseError(
                "packets is a view, not a table: the audit reads only a table (a view runs a query of the "
                "store's choosing, which may never end)"
            )
        if isinstance(sql, bytes) and sql.lstrip()[:20].upper().startswith(b"CREATE VIRTUAL"):
            raise DatabaseError(
                "packets is a virtual table, not a table: the audit reads only a table (a virtual table runs "
                "a module's code)"
            )
    hidden = {_column_name(row[1]): row[6] for row in columns}
    if not kinds:
        raise DatabaseError(f"an SQLite database, but not an ltm store: it has no packets table ({_WHAT_AUDIT_READS})")
    missing = [name for name in COLUMNS if name not in hidden]
    if missing:
        named = f"column {missing[0]}" if len(missing) == 1 else f"columns {', '.join(missing)}"
        raise DatabaseError(f"not an ltm store: its packets table has no {named}")
    computed = [name for name in COLUMNS if hidden[name] == 2]  # GENERATED ALWAYS AS (...) VIRTUAL
    if computed:
        raise DatabaseError(
            f"the packets column {computed[0]} is computed when read (a virtual generated column), not stored: "
            "the audit reads only stored columns"
        )
    try:
        store.connection.execute("SELECT rowid FROM packets LIMIT 0")
    except sqlite3.Error:
        raise DatabaseError(
            "the packets table has no rowid (it is WITHOUT ROWID), and the audit reads rows in rowid order"
        ) from None
    store.verify()


def _column_name(name: object) -> str:
    """A column's name as SQLite compares it: ASCII letters in any case."""
    text = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
    return text.lower()


def _bounded(column: str) -> str:
    """A text column as SQL: at most READ_LIMIT of its bytes, whatever SQLite holds in it (a
    number stays a number, NULL stays NULL)."""
    return (
        f"CASE WHEN typeof({column}) IN ('text', 'blob') THEN substr(CAST({column} AS BLOB), 1, {READ_LIMIT}) "
        f"ELSE {column} END"
    )


# Of the body, its type and (for a BLOB, known without reading it) its length; its bytes only
# when they fit a packet. A TEXT body is read by :func:`_text_body`.
_SELECT = (
    f"SELECT rowid, {_bounded('id')}, {_bounded('created_at')}, {_bounded('goal')}, typeof(body), "
    "CASE WHEN typeof(body) = 'blob' THEN length(body) END, "
    f"CASE WHEN typeof(body) = 'blob' AND length(body) <= {MAX_PACKET_BYTES} THEN body END, "
    f"deleted_at IS NOT NULL, {_bounded('owner_id')}, {_bounded('team_id')} FROM packets"
)


def database_rows(
    store: str | ReferenceDatabase,
    first: int | None = None,
    last: int | None = None,
    *,
    include_deleted: bool = False,
    limits: Limits = NO_LIMITS,
) -> Generator[tuple[int, Row], None, None]:
    """The rows whose rowid is in ``[first, last]`` (None: no bound), one at a time in rowid
    order, each with its rowid; deleted ones only with ``include_deleted``. A path is opened
    for the rows and closed after; a store given stays open. Raises DatabaseError."""
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
    opened = open_database(store, limits=limits) if isinstance(store, str) else store
    try:
        for rowid, *columns in opened.query(f"{_SELECT}{where} ORDER BY rowid", values):
            if limits.passed():
                raise DatabaseDeadline("the deadline passed")
            yield rowid, _row(opened, rowid, *columns)
    finally:
        if opened is not store:
            opened.close()


def _row(
    store: ReferenceDatabase,
    rowid: int,
    ident: Any,  # each text column: bytes, or what else SQLite holds in it (a number, NULL)
    created_at: Any,
    goal: Any,
    kind: bytes,
    size: int | None,
    body: bytes | None,
    deleted: int,
    owner_id: Any,
    team_id: Any,
) -> Row:
    """A row of :data:`_SELECT` as a Row (a TEXT body read here)."""
    if kind == b"blob" and body is not None:
        try:  # the server's rows: every text column UTF-8, the body a BLOB that fits
            return Row(
                ident.decode(),
                created_at.decode(),
                goal.decode(),
                body,
                bool(deleted),
                None if owner_id is None else owner_id.decode(),
                None if team_id is None else team_id.decode(),
            )
        except (AttributeError, UnicodeDecodeError):
            pass  # a number, a NULL, bytes that are not UTF-8 or cut inside a character: the long way
    if kind == b"text":
        size, body = _text_body(store, rowid)
    names = ("id", "created_at", "goal", "owner_id", "team_id")
    read = [_text(value) for value in (ident, created_at, goal, owner_id, team_id)]
    bytes_kind = kind in (b"blob", b"text")
    return Row(
        read[0][0],
        read[1][0],
        read[2][0],
        body,
        bool(deleted),
        None if owner_id is None else read[3][0],
        None if team_id is None else read[4][0],
        "bytes" if bytes_kind else _KINDS.get(kind.decode("ascii", "replace"), "?"),
        size if bytes_kind and body is None else None,
        tuple(name for name, (_, utf8) in zip(names, read, strict=True) if not utf8),
    )


def _text_body(store: ReferenceDatabase, rowid: int) -> tuple[int | None, bytes | None]:
    """A TEXT body's size in bytes (None: only known to be too large), and its bytes when they fit a packet.
    Read incrementally where Python has blob reads (3.11); before, SQLite reads the value whole."""
    try:
        opener = getattr(store.connection, "blobopen", None)
        if opener is not None:
            with opener("packets", "body", rowid, readonly=True) as blob:
                size = len(blob)
                return size, blob.read() if size <= MAX_PACKET_BYTES else None
        found = store.one(f"SELECT substr(CAST(body AS BLOB), 1, {READ_LIMIT}) FROM packets WHERE rowid = ?", (rowid,))
    except sqlite3.Error as exc:
        raise store.error(exc) from None
    data = found[0] if found is not None and isinstance(found[0], bytes) else b""
    return (len(data), data) if len(data) <= MAX_PACKET_BYTES else (None, None)


def _text(value: object) -> tuple[str, bool]:
    """A column as text, and whether its bytes were UTF-8 (a TEXT column may hold a BLOB or a
    number; bytes that are not UTF-8 are shown escaped). A value cut at READ_LIMIT may end
    inside a character: that is no fault of its bytes."""
    if not isinstance(value, bytes):
        return ("" if value is None else str(value)), True
    try:
        return value.decode("utf-8"), True
    except UnicodeDecodeError as exc:
        if len(value) == READ_LIMIT and exc.reason == "unexpected end of data":
            return _text(value[: exc.start])
        return value.decode("utf-8", "backslashreplace"), False
