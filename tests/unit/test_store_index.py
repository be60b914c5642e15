"""The store's index: a cache of what each packet file held, never trusted over the files.

The differential test holds every answer of an indexed store (a fresh one, which reads the
index file, and a long-lived one, which keeps it in memory) to a plain read of the files,
through hand edits that keep a file's size and mtime, deletions, renames, corrupt files and
an index that is stale, cut short or garbage.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cmp
from cmp._store_index import SETTLE_NS
from cmp._timestamps import instant

KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key: synthetic
PACKET_FILE = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}\.json")
SETTLE = SETTLE_NS / 1e9 + 0.1


def ulid(number: int) -> str:
    return f"01J9X8K2QZ7N4M0WXY{number:08d}"


def packet(number: int, **members: object) -> cmp.Packet:
    values: dict[str, object] = {
        "ltm_version": "0.2",
        "id": ulid(number),
        "created_at": f"2026-04-21T10:{number // 60 % 60:02d}:{number % 60:02d}Z",
        "goal": f"Ship export fix {number}.",
        "next_step": "Time it on a snapshot.",
    }
    values.update(members)
    tags = values.get("tags")
    if isinstance(tags, tuple):
        values["tags"] = [*tags]  # the model takes a JSON array
    return cmp.Packet.from_dict(values)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's cache folder, this test's own."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder


def index_files(cache: Path) -> list[Path]:
    folder = cache / "core-memory-packet" / "stores"
    return sorted(folder.iterdir()) if folder.exists() else []


def the_index(cache: Path) -> Path:
    (path,) = index_files(cache)
    return path


# The plain answers, read from the files by the public API alone.


def served_by_the_files(folder: Path) -> dict[str, cmp.Packet]:
    served = {}
    for name in os.listdir(folder):
        path = folder / name
        if not PACKET_FILE.fullmatch(name) or path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        report = cmp.check(data, allow_unredacted=True)
        if report.packet is None or report.errors or report.packet.id != name[:-5]:
            continue
        if data in (cmp.dumps(report.packet), cmp.dumps(report.packet) + b"\n"):
            served[report.packet.id] = report.packet
    return served


def newest_first(packets: Any) -> list[cmp.Packet]:
    return sorted(packets, key=lambda p: (instant(p.created_at) or 0, p.id), reverse=True)


@contextlib.contextmanager
def no_index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Within: a cache folder that cannot be made (its parent is a file), so no index is read or written."""
    blocker = tmp_path / "no-cache"
    blocker.write_text("a file, so no folder can be made in it\n")
    with monkeypatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))
        yield


def assert_answers_hold(store: cmp.Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    served = served_by_the_files(store.path)
    order = newest_first(served.values())
    assert store.list() == order
    assert store.list(limit=3) == order[:3]
    assert store.list(tag="perf") == [p for p in order if "perf" in p.tags]
    assert store.list(text="EXPORT fix 1") == [p for p in order if "export fix 1" in p.goal.casefold()]
    assert list(store.packets(tag="gpu", text="ship")) == [
        p for p in order if "gpu" in p.tags and "ship" in p.goal.casefold()
    ]
    report = cmp.chain(order)
    heads = newest_first(order[index] for index in report.heads)
    assert store.heads() == heads
    assert store.latest() == (heads[0] if heads else None)
    problems = [(p.path.name, p.message) for p in store.problems()]
    with no_index(monkeypatch, tmp_path):  # the same code, reading every file
        unindexed = cmp.Store(store.path)
        assert [(p.path.name, p.message) for p in unindexed.problems()] == problems
        assert unindexed.list() == order
    cycles = {store.path / f"{order[index].id}.json" for cycle in report.cycles for index in cycle}
    assert cycles <= {p.path for p in store.problems()}


# Generated stores, changed by hand.


class Editor:
    """Changes a store's folder and its index the ways people, other programs and crashes do."""

    def __init__(self, folder: Path, cache: Path, rng: random.Random) -> None:
        self.folder, self.cache, self.rng = folder, cache, rng
        self.saved_index: bytes | None = None
        self.next = 500

    def packet_files(self) -> list[Path]:
        return sorted(p for p in self.folder.iterdir() if PACKET_FILE.fullmatch(p.name) and not p.is_symlink())

    def any_packet(self) -> tuple[Path, cmp.Packet] | None:
        for path in self.rng.sample(self.packet_files(), len(self.packet_files())):
            try:
                return path, cmp.loads(path.read_bytes())
            except (cmp.PacketError, OSError, ValueError):
                continue
        return None

    def save(self) -> None:
        ids = [p.name[:-5] for p in self.packet_files()]
        number, self.next = self.next, self.next + 1
        members: dict[str, object] = {"created_at": self.rng.choice(CREATED), "tags": self.rng.choice(TAGS)}
        if ids and self.rng.random() < 0.6:
            members["parent_id"] = self.rng.choice(ids)
        cmp.Store(self.folder).save(packet(number, **members))

    def edit_in_place(self) -> None:
        """Another packet under the same id, the same number of bytes, the old mtime put back:
        only the ctime tells."""
        found = self.any_packet()
        if found is None:
            return
        path, old = found
        changes: list[dict[str, Any]] = [
            {"created_at": self.rng.choice(CREATED)},
            {"goal": old.goal.swapcase()},
            {"parent_id": self.rng.choice([ulid(n) for n in range(10, 99)])},
            {"tags": self.rng.choice([t for t in TAGS if len(",".join(t)) == len(",".join(old.tags))] or [old.tags])},
        ]
        new = old.replace(**self.rng.choice(changes))
        data = cmp.dumps(new) + b"\n"
        before = path.stat()
        if len(data) != before.st_size:
            return
        with open(path, "r+b") as stream:
            stream.write(data)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    def replace_by_rename(self) -> None:
        found = self.any_packet()
        if found is None:
            return
        path, old = found
        temporary = self.folder / "incoming.tmp"
        temporary.write_bytes(cmp.dumps(old.replace(goal="Replaced by a rename.")) + b"\n")
        os.replace(temporary, path)

    def delete(self) -> None:
        files = self.packet_files()
        if files:
            self.rng.choice(files).unlink()

    def corrupt(self) -> None:
        files = self.packet_files()
        if files:
            path = self.rng.choice(files)
            data = path.read_bytes()
            path.write_bytes(self.rng.choice([data[: len(data) // 2], json.dumps(json.loads(data)).encode(), b"{"]))

    def misname(self) -> None:
        found = self.any_packet()
        if found is not None:
            number, self.next = self.next, self.next + 1
            shutil.copyfile(found[0], self.folder / f"{ulid(number)}.json")

    def add_foreign(self) -> None:
        files = self.packet_files()
        kind = self.rng.randrange(3)
        name = f"other-{self.rng.randrange(10**6)}"
        if kind == 0:
            (self.folder / f"{name}.txt").write_text("notes\n")
        elif kind == 1 and files:
            number, self.next = self.next, self.next + 1
            (self.folder / f"{ulid(number)}.json").symlink_to(self.rng.choice(files))
        else:
            (self.folder / name).mkdir()

    def index(self) -> None:
        """Garbage, a file cut short (mid-line or at a line's end), an older copy put back, none at all."""
        files = index_files(self.cache)
        if not files:
            return
        path = files[0]
        data = path.read_bytes()
        choice = self.rng.randrange(6)
        if choice == 0:
            self.saved_index = data
        elif choice == 1 and self.saved_index is not None:
            path.write_bytes(self.saved_index)  # stale: what the files held some edits ago
        elif choice == 2:
            path.write_bytes(data[: self.rng.randrange(len(data))])
        elif choice == 3:
            lines = data.splitlines(keepends=True)
            path.write_bytes(b"".join(lines[: self.rng.randrange(len(lines) + 1)]))
        elif choice == 4:
            path.write_bytes(self.rng.randbytes(self.rng.randrange(1, 400)))
        else:
            path.unlink()


CREATED = ["2026-04-21T10:00:00Z", "2026-04-21T11:00:00Z", "2026-04-21T12:00:00+02:00", "2026-04-22T10:00:00Z"]
TAGS: list[tuple[str, ...]] = [(), ("perf",), ("gpu",), ("perf", "gpu"), ("gpu", "perf"), ("ui",)]


def base_store(folder: Path, rng: random.Random, count: int) -> None:
    """``count`` packets in chains, ties of created_at, a cycle, one goal a redaction pattern matches."""
    store = cmp.Store(folder)
    for number in range(count):
        members: dict[str, object] = {"tags": rng.choice(TAGS)}
        if rng.random() < 0.3:
            members["created_at"] = rng.choice(CREATED)
        if number and rng.random() < 0.5:
            members["parent_id"] = ulid(rng.randrange(number))
        store.save(packet(number, **members))
    store.save(packet(count, parent_id=ulid(count + 1)))
    store.save(packet(count + 1, parent_id=ulid(count)))
    store.save(packet(count + 2, goal=f"Ship export fix 1 with {KEY}."), allow_unredacted=True)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_indexed_answers_are_the_plain_read_of_the_files(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    folder = tmp_path / "store"
    base_store(folder, rng, 40)
    time.sleep(SETTLE)  # the files settle: the index records them from now on
    lasting = cmp.Store(folder)
    assert_answers_hold(lasting, monkeypatch, tmp_path)
    assert len(the_index(cache).read_bytes().splitlines()) == 1 + len(served_by_the_files(folder))
    editor = Editor(folder, cache, rng)
    steps = [
        editor.save,
        editor.edit_in_place,
        editor.edit_in_place,
        editor.replace_by_rename,
        editor.delete,
        editor.corrupt,
        editor.misname,
        editor.add_foreign,
        editor.index,
        editor.index,
    ]
    for _ in range(30):
        for _ in range(rng.randrange(1, 4)):
            rng.choice(steps)()
        assert_answers_hold(cmp.Store(folder), monkeypatch, tmp_path)
        assert_answers_hold(lasting, monkeypatch, tmp_path)
    assert KEY not in the_index(cache).read_text()


# What the index holds, and where it is: one store, settled once, that these tests only read.

LEAKY = packet(5, goal=f"Rotate {KEY} today.", tags=["perf"])
SETTLED = [packet(number, tags=["perf"]) for number in range(5)]


@pytest.fixture(scope="module")
def settled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of five packets, one a redaction pattern matches, and a corrupt file, all settled."""
    store = cmp.Store(tmp_path_factory.mktemp("settled") / "store")
    for item in SETTLED:
        store.save(item)
    store.save(LEAKY, allow_unredacted=True)
    (store.path / f"{ulid(9)}.json").write_bytes(b"{")
    time.sleep(SETTLE)
    return store.path


def folder_state(folder: Path) -> list[tuple[str, int, int]]:
    return sorted((entry.name, entry.stat().st_ino, entry.stat().st_ctime_ns) for entry in os.scandir(folder))


def test_reading_writes_the_index_to_the_cache_folder_and_nothing_to_the_store(settled: Path, cache: Path) -> None:
    before = folder_state(settled)
    assert cmp.Store(settled).list() == newest_first([*SETTLED, LEAKY])
    assert folder_state(settled) == before  # reading changes nothing in the folder
    index = the_index(cache)
    assert oct(index.stat().st_mode & 0o777) == "0o600" and str(settled) not in index.name
    assert sorted(line.split()[0] for line in index.read_text().splitlines()[1:]) == [ulid(n) for n in range(6)]
    again = index.stat().st_mtime_ns
    assert cmp.Store(settled).latest() == LEAKY and index.stat().st_mtime_ns == again  # nothing new: not rewritten


def test_a_goal_or_tag_a_redaction_pattern_matches_never_reaches_the_index(settled: Path, cache: Path) -> None:
    assert cmp.Store(settled).list(text="ship") == newest_first(SETTLED)
    text = the_index(cache).read_text()
    assert KEY not in text and "AKIA" not in text and "Ship export fix 4." in text
    assert cmp.Store(settled).list(text=KEY.lower()) == [LEAKY]  # the search reads that one file


def test_problems_are_never_taken_from_the_index(settled: Path, cache: Path) -> None:
    for _ in range(2):
        assert [p.path.name for p in cmp.Store(settled).problems()] == [f"{ulid(9)}.json"]
    assert ulid(9) not in the_index(cache).read_text()


_FULL_DISK = """
import resource, signal, sys
import cmp
sys.dont_write_bytecode = True
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))  # no index fits
store = cmp.Store(sys.argv[1])
print(" ".join(p.id for p in store.list(limit=2)), store.latest().id, len(store.problems()))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="RLIMIT_FSIZE is POSIX")
def test_an_index_that_does_not_fit_on_the_disk_leaves_nothing_and_reading_works(settled: Path, cache: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _FULL_DISK, str(settled)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{ulid(5)} {ulid(4)} {ulid(5)} 1\n"
    assert index_files(cache) == []  # the part-written index was removed
    unlimited = subprocess.run([sys.executable, "-c", _FULL_DISK.replace("(64, 64)", "(-1, -1)"), str(settled)])
    assert unlimited.returncode == 0 and len(index_files(cache)) == 1  # with room, the same read writes it


def test_a_temporary_index_left_by_a_stopped_reader_is_removed_later(settled: Path, cache: Path) -> None:
    cmp.Store(settled).list()
    index = the_index(cache)
    left = index.with_name(index.name + ".0123456789abcdef.tmp")
    left.write_text("core-memory-packet store index 1\n")
    os.utime(left, (time.time() - 3600,) * 2)
    index.unlink()
    assert cmp.Store(settled).list(limit=1) == [LEAKY]
    assert index_files(cache) == [index]


def test_without_a_cache_folder_to_write_the_store_reads_its_files(
    settled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))  # under a file: no folder can be made
    store = cmp.Store(settled)
    assert store.list() == newest_first([*SETTLED, LEAKY]) and store.latest() == LEAKY
    assert [p.path.name for p in store.problems()] == [f"{ulid(9)}.json"]
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # not absolute: ~/.cache, as the XDG rules say
    monkeypatch.setenv("HOME", str(blocker))
    assert cmp.Store(settled).list(limit=1) == [LEAKY]
    monkeypatch.setenv("HOME", str(tmp_path))  # a home folder: the same read writes the index there
    assert cmp.Store(settled).list(limit=1) == [LEAKY] and len(index_files(tmp_path / ".cache")) == 1


# Stores of their own.


def test_an_entry_counts_only_while_its_file_is_unchanged(tmp_path: Path, cache: Path) -> None:
    """The index decides for a file only while its inode, size and time stamps are the ones
    recorded: an index that says otherwise about a file changed since is passed over."""
    store = cmp.Store(tmp_path / "store")
    older, newer = packet(1), packet(2)
    store.save(older)
    store.save(newer)
    assert store.latest() == newer
    assert index_files(cache) == []  # both too new to be recorded: no index is written
    time.sleep(SETTLE)
    assert store.latest() == newer
    index = the_index(cache)
    lines = index.read_text().splitlines(keepends=True)
    # The index says the older packet is the newest: believed while the file stays as it was ...
    older_at, newer_at = (str(instant(item.created_at)) for item in (older, newer))
    swapped = [line.replace(f" {older_at} ", f" {int(newer_at) + 1} ") for line in lines]
    assert swapped != lines
    index.write_text("".join(swapped))
    assert cmp.Store(store.path).list() == [older, newer]
    # ... and no longer once the file changes, even to the same bytes, size and mtime.
    path = store.path / f"{older.id}.json"
    before = path.stat()
    path.write_bytes(path.read_bytes())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cmp.Store(store.path).list() == [newer, older]


def test_packets_reads_the_files_as_they_are_asked_for(tmp_path: Path, cache: Path) -> None:
    store = cmp.Store(tmp_path / "store")
    for number in range(4):
        store.save(packet(number))
    newest = store.packets()
    assert next(newest) == packet(3)
    (store.path / f"{ulid(2)}.json").unlink()  # gone before its turn: passed over
    (store.path / f"{ulid(1)}.json").write_bytes(b"{")  # no longer served: passed over
    assert list(newest) == [packet(0)]
    with pytest.raises(cmp.StoreError, match="it is not a folder"):
        cmp.Store(store.path / f"{ulid(0)}.json").packets()  # the folder is listed at the call
