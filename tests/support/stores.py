"""SQLite stores with the reference server's table, for the audit's tests: rows of packets,
a store SQLite reads for ever, and a CLI run watched until it reads its store."""

from __future__ import annotations

import ctypes
import json
import os
import sqlite3
import struct
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.support.packets import full

TABLE = (
    "CREATE TABLE packets(id TEXT PRIMARY KEY, created_at TEXT NOT NULL, goal TEXT NOT NULL, "
    "body BLOB NOT NULL, deleted_at TEXT, owner_id TEXT, team_id TEXT)"
)
INSERT = "INSERT INTO packets VALUES (?, ?, ?, ?, ?, ?, ?)"


def packet(number: int, prefix: str = "01J9X8K2QZ7N4M0WXY") -> dict[str, Any]:
    """A full, valid packet whose id ends in ``number`` (a ULID: ``prefix`` is 18 characters)."""
    obj = full()
    obj["id"] = f"{prefix}{number:08d}"
    obj["created_at"] = f"2026-04-21T10:{number // 60 % 60:02d}:{number % 60:02d}Z"
    return obj


def packet_row(obj: dict[str, Any], body: bytes | None = None) -> tuple[Any, ...]:
    """The server's row of ``obj``, its body ``body`` (default: JSON that is not the canonical bytes)."""
    data = json.dumps(obj).encode() if body is None else body
    return (obj["id"], obj["created_at"], obj["goal"], data, None, "owner-1", "team-1")


def store_of(path: Path, rows: Iterable[tuple[Any, ...]], *, wal: bool = False, table: str = TABLE) -> Path:
    """A store at ``path`` holding ``rows``; closed, so that no -wal or -shm is left beside it."""
    connection = sqlite3.connect(path)
    if wal:
        connection.execute("PRAGMA journal_mode=WAL")
    connection.execute(table)
    connection.executemany(INSERT, rows)
    connection.commit()
    connection.close()
    return path


# A b-tree's interior page: a flag, no free block, its cells, where they start, no
# fragments, its right-most child; then the cells' offsets, and the cells (a child page
# and a rowid key) at the page's end.
_INTERIOR = ">BHHHBI"
_PAGE = 512
_LEVELS = 8


def endless_store(path: Path) -> Path:
    """A store whose packets table SQLite reads for ever: a b-tree of _LEVELS interior pages,
    each of whose 72 children is the next page (the last's, the one leaf, whose one row is
    deleted). Reading the live rows visits that row 72 ** 8 times, and finds none: a
    store of 8.5 KiB that no statement finishes reading (PRAGMA integrity_check finds
    the second reference to each page)."""
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA page_size={_PAGE}")
    connection.execute(TABLE)
    connection.execute("INSERT INTO packets VALUES ('gone', '', '', x'00', 'deleted', NULL, NULL)")
    connection.execute("CREATE TABLE pad(x)")  # pages to overwrite: one row a page
    connection.executemany("INSERT INTO pad VALUES (zeroblob(400))", [()] * (_LEVELS + 4))
    connection.commit()
    (leaf,) = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'packets'").fetchone()
    connection.close()
    data = bytearray(path.read_bytes())
    pages = len(data) // _PAGE
    first = pages - _LEVELS + 1
    cells = (_PAGE - 12) // 7
    start = _PAGE - cells * 5
    for level in range(_LEVELS):
        number = first + level
        child = number + 1 if level < _LEVELS - 1 else leaf
        page = bytearray(_PAGE)
        struct.pack_into(_INTERIOR, page, 0, 0x05, 0, cells, start, 0, child)
        for cell in range(cells):
            struct.pack_into(">H", page, 12 + 2 * cell, start + 5 * cell)
            struct.pack_into(">IB", page, start + 5 * cell, child, 1)
        data[(number - 1) * _PAGE : number * _PAGE] = page
    path.write_bytes(bytes(data))
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA writable_schema=ON")
    connection.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = 'packets'", (first,))
    connection.execute("DELETE FROM sqlite_master WHERE name = 'pad'")
    connection.commit()
    connection.close()
    return path


def _has_open(pid: int, path: Path) -> bool:
    folder = Path(f"/proc/{pid}/fd")
    try:
        return any(os.path.realpath(folder / fd) == str(path.resolve()) for fd in os.listdir(folder))
    except OSError:
        return False


def _cpu_ticks(pid: int) -> int:
    """The process's user and system time, in clock ticks (/proc/PID/stat's 14th and 15th fields)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_until_reading(process: subprocess.Popen[bytes], path: Path, ticks: int = 20) -> None:
    """Once ``process`` has ``path`` open and has worked ``ticks`` clock ticks of CPU time
    more (a store read for ever takes all of it: it is inside the endless read by then).
    Waits on the process's own progress, not on the clock; 120 s only bounds a run that
    never gets there."""
    give_up = time.monotonic() + 120
    while not _has_open(process.pid, path):
        if process.poll() is not None or time.monotonic() > give_up:
            raise AssertionError(f"the run never opened {path} (exit status {process.poll()})")
        time.sleep(0.01)
    start = _cpu_ticks(process.pid)
    while _cpu_ticks(process.pid) - start < ticks:
        if process.poll() is not None or time.monotonic() > give_up:
            raise AssertionError(f"the run stopped reading {path} (exit status {process.poll()})")
        time.sleep(0.01)


_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def without_override() -> None:
    """In a child, before it runs: a root process gives up overriding file permissions, so
    that a read-only folder is read-only to it too (nothing changes for another user)."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)
