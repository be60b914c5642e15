"""The local store's index: what each served packet file held when the store last read it,
so that ``latest`` and ``ls --limit`` need not read every file of a large store.

A cache, never the truth. It lives in the user's cache folder, not in the store's (reading a
store changes nothing in it). The store lists its folder on every read and takes an entry
only while the file's inode, size, mtime and ctime are the ones recorded; every other file
it reads. A file changed less than :data:`SETTLE_NS` before it was read is not recorded: a
second change within the same tick of the file system's clock would leave its time stamps
as they were. An index that cannot be read, holds anything unexpected or cannot be written
is passed over: nothing here raises, and the store then reads its files.

What the index keeps of a packet is its created_at instant, its parent_id when that is a
store id, and its tags and goal unless a redaction pattern matches them (``None``: the store
reads the file to filter on them); never a text the withholding policy would hide.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

_HEADER = b"core-memory-packet store index 1\n"
# Longer than any file system's time stamp tick (FAT's two seconds at worst).
SETTLE_NS = 2_000_000_000
# An index not rewritten for this long most likely belongs to a store that is gone.
_UNUSED_AFTER = 30 * 24 * 3600
_TEMPORARY_AFTER = 15 * 60
# More bytes than a line takes: a 1,024-character goal all \uXXXX escapes, 16 tags, the numbers.
_ENTRY_BYTES = 16_384
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
_OPEN = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)

Key = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class Entry:
    """What a served packet file held: ``key`` (inode, size, mtime_ns, ctime_ns when read), its
    created_at ``order`` (an instant in ns), ``parent_id`` (a store id or ""), ``tags``, and ``goal``
    as a JSON string (decoded only for a search: :func:`goal_of`); None: not kept."""

    key: Key
    order: int
    parent_id: str
    tags: tuple[str, ...] | None
    goal: str | None


def key_of(info: os.stat_result) -> Key:
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def settled(info: os.stat_result, read_after_ns: int) -> bool:
    """Whether a file with these time stamps, read after ``read_after_ns``, may be recorded."""
    return max(info.st_mtime_ns, info.st_ctime_ns) + SETTLE_NS <= read_after_ns


def _cache_folder() -> Path | None:
    """``$XDG_CACHE_HOME`` (or ``~/.cache``)/core-memory-packet/stores; None where there is no
    index: on Windows, whose ctime is the creation time, an edit that kept the size and put
    the mtime back would go unseen."""
    if os.name == "nt":
        return None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):  # no home folder to be found
            return None
    return Path(base) / "core-memory-packet" / "stores"


def _name(folder: os.stat_result) -> str:
    """The index's file name: the store folder's device and inode, so no path shows in it."""
    return f"{folder.st_dev:x}-{folder.st_ino:x}.json"


def load(folder: os.stat_result) -> dict[str, Entry]:
    """The index of the store folder ``folder``: packet id -> entry; empty when there is none or
    it is not one this module wrote. Read a line at a time, no line longer than an entry."""
    cache = _cache_folder()
    if cache is None:
        return {}
    try:
        fd = os.open(cache / _name(folder), _OPEN)
    except OSError:
        return {}
    try:
        with os.fdopen(fd, "rb") as stream:
            if stream.readline(len(_HEADER)) != _HEADER:
                return {}
            entries: dict[str, Entry] = {}
            while line := stream.readline(_ENTRY_BYTES):
                id, entry = _entry(line)
                entries[id] = entry
            return entries
    except (OSError, ValueError):
        return {}


def _entry(line: bytes) -> tuple[str, Entry]:
    """An id and its entry from an index line; ValueError for a line this module did not write."""
    id, ino, size, mtime, ctime, order, parent_id, tags, goal = line.decode().split(" ", 8)
    if not goal.endswith("\n"):
        raise ValueError("an index line cut short")
    return id, Entry(
        (int(ino), int(size), int(mtime), int(ctime)),
        int(order),
        "" if parent_id == "-" else parent_id,
        None if tags == "?" else tuple(tags.split(",")[1:]),
        None if goal == "?\n" else goal[:-1],
    )


def goal_of(entry: Entry) -> str | None:
    """The goal an entry keeps (JSON in the index, read when a search needs it), or None."""
    if entry.goal is None:
        return None
    try:
        goal = json.loads(entry.goal)
    except (ValueError, RecursionError):  # an index this module did not write
        return None
    return goal if type(goal) is str else None


def save(folder: os.stat_result, entries: dict[str, Entry]) -> None:
    """Write the index of ``folder``: a new file put in place of the old one, or nothing at all."""
    cache = _cache_folder()
    if cache is None:
        return
    lines = [_HEADER]
    for id, entry in entries.items():
        tags = "?" if entry.tags is None else "".join("," + tag for tag in entry.tags)
        goal = "?" if entry.goal is None else entry.goal
        lines.append(
            f"{id} {' '.join(map(str, entry.key))} {entry.order} {entry.parent_id or '-'} {tags} {goal}\n".encode()
        )
    temporary = cache / f"{_name(folder)}.{secrets.token_hex(8)}.tmp"
    try:
        os.makedirs(cache, mode=0o700, exist_ok=True)
        _prune(cache)
        # No fsync: an index cut short by a crash is a shorter one (each line is checked on its own),
        # or ends in a line cut short, which makes it none; either way it is written again.
        with os.fdopen(os.open(temporary, _CREATE, 0o600), "wb") as stream:
            stream.writelines(lines)
        os.replace(temporary, cache / _name(folder))
    except OSError:  # a full disk, a read-only home, no inodes left: the store reads its files
        try:
            os.unlink(temporary)
        except OSError:
            pass


def _prune(cache: Path) -> None:
    """Remove the indexes not rewritten for 30 days, and temporary files a stopped writer left."""
    now = time.time()
    with os.scandir(cache) as listing:
        for entry in listing:
            try:
                age = now - entry.stat(follow_symlinks=False).st_mtime
                if age > _UNUSED_AFTER or (entry.name.endswith(".tmp") and age > _TEMPORARY_AFTER):
                    os.unlink(entry.path)
            except OSError:
                pass


__all__ = ["SETTLE_NS", "Entry", "Key", "key_of", "load", "save", "settled"]
