"""cmp.Store: a folder of canonical packet files, written without ever overwriting one."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp.store import (
    STALE_AFTER,
    PacketConflict,
    PacketNotFound,
    StoreError,
    UnredactedPacket,
    default_store_path,
)
from tests.support.examples import examples
from tests.support.strategies import packets

KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key: synthetic
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def ulid(number: int, prefix: str = "01J9X8K2QZ7N4M0WXY") -> str:
    return f"{prefix}{number:08d}"


def packet(number: int = 1, **members: object) -> cmp.Packet:
    values: dict[str, object] = {
        "ltm_version": "0.2",
        "id": ulid(number),
        "created_at": f"2026-04-21T10:{number // 60 % 60:02d}:{number % 60:02d}Z",
        "goal": f"Ship export fix {number}.",
        "next_step": "Time it on a snapshot.",
    }
    values.update(members)
    return cmp.Packet.from_dict(values)


def file_of(item: cmp.Packet) -> bytes:
    return cmp.dumps(item) + b"\n"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


# Where the store is.


def test_the_environment_variable_names_the_store(tmp_path: Path) -> None:
    assert default_store_path(tmp_path, {"CMP_STORE": "/x/packets"}) == Path("/x/packets")
    assert default_store_path(tmp_path, {"CMP_STORE": "rel"}) == tmp_path / "rel"
    assert default_store_path(tmp_path, {"CMP_STORE": ""}) == tmp_path / ".cmp" / "packets"


def test_the_nearest_project_holds_the_store(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert default_store_path(deep, {}) == deep / ".cmp" / "packets"  # nothing above: the folder itself
    (tmp_path / "a" / ".git").write_text("gitdir: elsewhere\n")  # a worktree's .git is a file
    assert default_store_path(deep, {}) == tmp_path / "a" / ".cmp" / "packets"
    (tmp_path / "a" / "b" / ".git").mkdir()
    assert default_store_path(deep, {}) == tmp_path / "a" / "b" / ".cmp" / "packets"
    (tmp_path / ".cmp").mkdir()  # a .cmp folder anywhere above wins over a nearer .git
    assert default_store_path(deep, {}) == tmp_path / ".cmp" / "packets"
    (deep / ".cmp").write_text("not a folder")
    assert default_store_path(deep, {}) == tmp_path / ".cmp" / "packets"


def test_no_path_means_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CMP_STORE", str(tmp_path / "here"))
    assert cmp.Store().path == tmp_path / "here"


# Reading a store that is not there yet.


def test_a_store_that_does_not_exist_is_empty_and_reading_does_not_make_it(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path / "not" / "yet")
    assert store.list() == [] and store.problems() == [] and store.heads() == []
    assert store.latest() is None
    with pytest.raises(PacketNotFound, match=ulid(1)):
        store.get(ulid(1))
    assert not (tmp_path / "not").exists()


# Saving.


def test_save_writes_the_file_form_of_the_canonical_bytes_once(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path / "deep" / "store")
    item = packet(1)
    first = store.save(item)
    assert first == cmp.store.SaveResult(item.id, tmp_path / "deep" / "store" / f"{item.id}.json", True)
    assert first.path.read_bytes() == file_of(item)
    again = store.save(item)
    assert again.written is False and again.path == first.path
    assert store.get(item.id) == item
    assert os.listdir(store.path) == [f"{item.id}.json"]  # no temporary file left


def test_save_takes_bytes_and_text_and_stores_them_canonical(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path)
    compact = json.dumps(packet(1).to_dict()).encode()
    assert store.save(compact).written
    assert (tmp_path / f"{ulid(1)}.json").read_bytes() == file_of(packet(1))
    assert store.save(json.dumps(packet(2).to_dict(), indent=7)).written
    assert store.save(cmp.dumps(packet(2))).written is False
    # A file holding the canonical bytes without the final newline is the same packet.
    (tmp_path / f"{ulid(3)}.json").write_bytes(cmp.dumps(packet(3)))
    assert store.save(packet(3)).written is False and store.problems() == []


def test_save_refuses_what_is_not_a_conforming_packet_and_writes_nothing(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path / "s")
    with pytest.raises(cmp.PacketError) as refused:
        store.save(b'{"ltm_version": "0.2", "id": "short"}')
    assert refused.value.findings and all(f.code == "schema" for f in refused.value.findings)
    with pytest.raises(cmp.PacketError):
        store.save("not json")
    with pytest.raises(TypeError):
        store.save(123)  # type: ignore[arg-type]
    assert not store.path.exists()


def test_an_id_that_is_no_ulid_is_refused_before_it_becomes_a_name(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path / "s")
    for id in ("0123456789", "01j9x8k2qz7n4m0wxy00000001", "8" * 26, "01J9X8K2QZ7N4M0WXY0000000I"):
        with pytest.raises(StoreError, match="not a ULID"):
            store.save(packet(1, id=id))
    assert not store.path.exists()


@pytest.mark.parametrize("as_bytes", [False, True])
def test_redaction_hits_refuse_the_packet_without_showing_them(tmp_path: Path, as_bytes: bool) -> None:
    store = cmp.Store(tmp_path / "s")
    leaky = packet(1, constraints=[f"use key {KEY} for the bucket"])
    with pytest.raises(UnredactedPacket) as refused:
        store.save(cmp.dumps(leaky) if as_bytes else leaky)
    message = str(refused.value)
    assert "constraints[0]" in message and "aws-key" in message
    assert KEY not in message and "AKIA" not in message and KEY not in repr(refused.value)
    assert [hit.category for hit in refused.value.redactions] == ["aws-key"]  # type: ignore[attr-defined]
    assert isinstance(refused.value, cmp.RedactionError) and isinstance(refused.value, StoreError)
    assert not store.path.exists()
    assert store.save(cmp.dumps(leaky) if as_bytes else leaky, allow_unredacted=True).written
    assert store.list() == [leaky]  # stored as it is, and served


def test_a_different_packet_under_a_stored_id_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path)
    store.save(packet(1))
    before = snapshot(tmp_path)
    with pytest.raises(PacketConflict, match=f"a different packet with id {ulid(1)} is already stored at"):
        store.save(packet(1, goal="Another goal."))
    assert snapshot(tmp_path) == before
    (tmp_path / f"{ulid(2)}.json").write_bytes(json.dumps(packet(2).to_dict()).encode())  # a hand edit
    before = snapshot(tmp_path)
    with pytest.raises(PacketConflict, match="is already there and is not served: not in canonical form"):
        store.save(packet(2))
    assert snapshot(tmp_path) == before


# Getting and listing.


@pytest.mark.parametrize("id", ["../outside", "/etc/passwd", "a/b", "", ".", "01J9X8K2QZ7N4M0WXY00000001/.."])
def test_an_id_that_is_no_ulid_never_becomes_a_path(tmp_path: Path, id: str) -> None:
    store = cmp.Store(tmp_path / "s")
    (tmp_path / "outside.json").write_bytes(file_of(packet(1)))
    with pytest.raises(PacketNotFound, match="a stored packet's id is a ULID"):
        store.get(id)


def test_list_is_newest_first_by_instant_then_id(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path)
    early = packet(1, created_at="2026-04-21T12:30:00+02:00")  # 10:30Z
    late = packet(2, created_at="2026-04-21T11:00:00Z")
    tie_low = packet(3, created_at="2026-04-21T10:45:00.000Z")
    tie_high = packet(4, created_at="2026-04-21T10:45:00Z")
    for item in (late, tie_low, early, tie_high):
        store.save(item)
    assert [item.id for item in store.list()] == [late.id, tie_high.id, tie_low.id, early.id]
    assert store.list(limit=2) == [late, tie_high]
    assert store.list(limit=0) == []
    with pytest.raises(ValueError):
        store.list(limit=-1)


def test_list_filters_by_tag_and_goal_text(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path)
    store.save(packet(1, tags=["export", "perf"], goal="Speed up the EXPORT job."))
    store.save(packet(2, tags=["perf"], goal="Cache the schema."))
    store.save(packet(3, goal="Fix the export header."))
    assert [p.id for p in store.list(tag="perf")] == [ulid(2), ulid(1)]
    assert [p.id for p in store.list(text="export")] == [ulid(3), ulid(1)]
    assert [p.id for p in store.list(tag="perf", text="Export")] == [ulid(1)]
    assert store.list(tag="none") == []


def test_heads_and_latest_follow_the_chain(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path)
    root = packet(1)
    child = packet(2, parent_id=root.id)
    other = packet(3, created_at="2026-04-21T09:00:00Z")
    for item in (child, other, root):
        store.save(item)
    assert store.heads() == [child, other]
    assert store.latest() == child
    newest_but_continued = packet(9, created_at="2027-01-01T00:00:00Z")
    store.save(newest_but_continued)
    store.save(packet(10, created_at="2027-01-02T00:00:00Z", parent_id=newest_but_continued.id))
    assert store.latest() == store.get(ulid(10))


def test_resume_renders_the_latest_head_or_the_id_given(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path / "packets")
    with pytest.raises(PacketNotFound, match="holds no packet to resume"):
        store.resume()
    root = packet(1)
    child = packet(2, parent_id=root.id, goal="Ship the child fix.")
    store.save(root)
    store.save(child)
    latest = store.resume()
    assert latest.packet_id == child.id and "Ship the child fix." in latest.text
    assert latest.text == cmp.resume_block(child).text  # the age is counted in days: the same in both
    older = store.resume(root.id, style="xml")
    assert older.style == "xml" and older.packet_id == root.id
    with pytest.raises(PacketNotFound):
        store.resume(ulid(77))


def test_resume_of_a_packet_stored_unredacted_must_be_allowed_again(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path)
    leaky = packet(1, constraints=[f"key {KEY}"])
    store.save(leaky, allow_unredacted=True)
    with pytest.raises(cmp.RedactionError) as caught:
        store.resume()
    assert KEY not in str(caught.value)
    block = store.resume(allow_unredacted=True)
    assert KEY not in block.text and "[redacted:aws-key]" in block.text


def test_what_version_control_keeps_in_a_folder_is_no_problem(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path)
    store.save(packet(1))
    for name in (".gitkeep", ".gitignore", ".gitattributes", ".keep", ".DS_Store"):
        (tmp_path / name).write_text("*.tmp\n")
    (tmp_path / ".hidden").write_text("x")
    assert [problem.path.name for problem in store.problems()] == [".hidden"]
    assert store.list() == [packet(1)]


def test_a_parent_id_cycle_is_a_problem_not_a_silent_empty_store(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path)
    itself = packet(1, parent_id=ulid(1))
    store.save(itself)
    assert store.list() == [itself] and store.heads() == [] and store.latest() is None
    (problem,) = store.problems()
    assert problem.path.name == f"{ulid(1)}.json" and "a cycle of 1 packet)" in problem.message
    store.save(packet(2, parent_id=ulid(3)))
    store.save(packet(3, parent_id=ulid(2)))
    assert [p.path.name for p in store.problems()] == [f"{ulid(n)}.json" for n in (1, 2, 3)]


def test_a_path_no_file_system_can_hold_is_a_store_error() -> None:
    with pytest.raises(StoreError, match=r"no store can be at .*: the path is no file name"):
        cmp.Store("/tmp/\ud800")


def test_store_messages_are_one_line_whatever_the_path_holds(tmp_path: Path) -> None:
    odd = tmp_path / "a\nb\u202ec"
    odd.write_text("not a folder")
    with pytest.raises(StoreError) as caught:
        cmp.Store(odd).list()
    assert "\n" not in str(caught.value) and "\u202e" not in str(caught.value)
    assert "a\\nb\\u202ec" in str(caught.value)


def test_a_folder_named_as_a_temporary_file_is_reported(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path)
    (tmp_path / f".cmp-store-{ulid(1)}-0123456789abcdef.tmp").mkdir()
    future = tmp_path / f".cmp-store-{ulid(2)}-0123456789abcdef.tmp"
    future.write_text("x")
    ahead = time.time() + 3600
    os.utime(future, (ahead, ahead))
    assert len(store.problems()) == 2


# What the store does not serve.


def test_problems_lists_every_file_it_does_not_serve_and_changes_nothing(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path)
    good = packet(1)
    store.save(good)
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "sub").mkdir()
    (tmp_path / f"{ulid(2)}.json").write_bytes(json.dumps(packet(2).to_dict()).encode())  # not canonical
    (tmp_path / f"{ulid(3)}.json").write_bytes(b'{"ltm_version": "0.2"}')  # not conforming
    (tmp_path / f"{ulid(4)}.json").write_bytes(b" " * 40_000)  # too large
    (tmp_path / f"{ulid(5)}.json").write_bytes(file_of(good))  # a duplicate of good
    (tmp_path / f"{ulid(6)}.json").write_bytes(file_of(packet(7)))  # another packet's name
    (tmp_path / f"{ulid(8)}.json").symlink_to(tmp_path / f"{ulid(1)}.json")
    stale = tmp_path / f".cmp-store-{ulid(9)}-{'0' * 16}.tmp"
    stale.write_bytes(b"{")
    os.utime(stale, (time.time() - STALE_AFTER - 60,) * 2)
    (tmp_path / f".cmp-store-{ulid(10)}-{'1' * 16}.tmp").write_bytes(b"{")  # in flight: passed over
    os.mkfifo(tmp_path / f"{ulid(11)}.json")  # never opened for reading: that could block
    before = snapshot(tmp_path)

    found = {problem.path.name: problem.message for problem in store.problems()}
    assert found == {
        "notes.txt": "not a packet file: the store holds only <ULID>.json files",
        "sub": "a folder: the store holds only <ULID>.json files",
        f"{ulid(2)}.json": "not in canonical form (a hand edit?): `fmt FILE` shows the canonical bytes",
        f"{ulid(3)}.json": found[f"{ulid(3)}.json"],
        f"{ulid(4)}.json": "over 32,768 bytes, longer than any packet",
        f"{ulid(5)}.json": f"holds the packet with id {ulid(1)}, which {ulid(1)}.json holds too: "
        "the file name is not its id",
        f"{ulid(6)}.json": f"holds the packet with id {ulid(7)}: the file name is not its id",
        f"{ulid(8)}.json": "a symbolic link: the store serves only the files in its folder",
        f"{ulid(11)}.json": "not a regular file",
        stale.name: "a temporary file left by a save that stopped (older than 15 minutes); safe to remove",
    }
    assert found[f"{ulid(3)}.json"].startswith("not a conforming packet: $")
    assert [problem.path.name for problem in store.problems()] == sorted(found)
    assert store.list() == [good] and store.heads() == [good] and store.latest() == good
    for number, why in ((2, "not in canonical form"), (3, "not a conforming packet"), (4, "over 32,768"),
                        (6, f"holds the packet with id {ulid(7)}"), (8, "a symbolic link")):  # fmt: skip
        with pytest.raises(StoreError, match=why):
            store.get(ulid(number))
    assert snapshot(tmp_path) == before


@pytest.mark.skipif(ROOT, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_a_problem(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path)
    store.save(packet(1))
    locked = store.save(packet(2)).path
    locked.chmod(0)
    try:
        assert [(p.path.name, p.message) for p in store.problems()] == [(locked.name, "cannot read: Permission denied")]
        assert store.list() == [packet(1)]
        with pytest.raises(StoreError, match="cannot read: Permission denied"):
            store.get(ulid(2))
    finally:
        locked.chmod(0o644)


# A store path that is no folder.


def test_a_store_path_that_is_a_file(tmp_path: Path) -> None:
    path = tmp_path / "store"
    path.write_bytes(b"mine")
    store = cmp.Store(path)
    for call in (store.list, store.problems, store.heads, store.latest):
        with pytest.raises(StoreError, match=r"^cannot read store .*: it is not a folder$"):
            call()
    with pytest.raises(StoreError, match="it is not a folder"):
        store.get(ulid(1))
    with pytest.raises(StoreError, match=r"^cannot save to store .*: it is not a folder$"):
        store.save(packet(1))
    assert path.read_bytes() == b"mine"


@pytest.mark.skipif(ROOT, reason="root reads folders whatever their mode")
def test_an_unreadable_store_folder(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path / "s")
    store.save(packet(1))
    store.path.chmod(0)
    try:
        with pytest.raises(StoreError, match=r"^cannot read store .*: Permission denied$"):
            store.list()
        with pytest.raises(StoreError, match="Permission denied"):
            store.get(ulid(1))
        with pytest.raises(StoreError, match="Permission denied"):
            store.save(packet(2))
    finally:
        store.path.chmod(0o755)
    assert store.list() == [packet(1)]


def test_a_symlink_loop_as_the_store(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    store = cmp.Store(loop)
    with pytest.raises(StoreError, match=r"^cannot read store .*: Too many levels of symbolic links$"):
        store.list()
    with pytest.raises(StoreError, match="symbolic links"):
        store.get(ulid(1))
    with pytest.raises(StoreError, match=r"^cannot save to store .*symbolic links"):
        store.save(packet(1))


_WRITER = """
import os, resource, signal, sys
import cmp
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
sys.dont_write_bytecode = True  # under the limit, a module imported later would leave a cut-short .pyc
store = cmp.Store(sys.argv[1])
store.save(cmp.Packet.new(goal="Small.", next_step="Fits."))
resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))
try:
    store.save(cmp.Packet.new(goal="A goal long enough. " * 20, next_step="Does not fit."))
except cmp.StoreError as exc:
    print(exc)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="RLIMIT_FSIZE is POSIX")
def test_a_file_too_large_for_the_disk_stores_nothing_and_leaves_nothing(tmp_path: Path) -> None:
    store = tmp_path / "s"
    done = subprocess.run([sys.executable, "-c", _WRITER, str(store)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(": File too large; nothing was stored")
    assert done.stdout.count("\n") == 1
    assert len(os.listdir(store)) == 1  # the small one; no temporary file left
    assert [p.goal for p in cmp.Store(store).list()] == ["Small."]


# Two writers at once.

_RACER = """
import json, sys
import cmp
store = cmp.Store(sys.argv[1])
items = [line.encode() for line in json.load(sys.stdin)]
print("ready", flush=True)
sys.stdin.close()
import os
while not os.path.exists(sys.argv[2]):
    pass
written = refused = 0
for data in items:
    try:
        written += store.save(data).written
    except cmp.StoreError:
        refused += 1
print(written, refused)
"""


def _race(tmp_path: Path, first: list[bytes], second: list[bytes]) -> list[tuple[int, int]]:
    """Two processes saving ``first`` and ``second`` into one store from the same instant:
    each one's (written, refused)."""
    go = tmp_path / "go"
    store = tmp_path / "store"
    racers = []
    for items in (first, second):
        racer = subprocess.Popen(
            [sys.executable, "-c", _RACER, str(store), str(go)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert racer.stdin is not None and racer.stdout is not None
        racer.stdin.write(json.dumps([data.decode() for data in items]))
        racer.stdin.close()
        racers.append(racer)
    for racer in racers:
        assert racer.stdout is not None and racer.stdout.readline() == "ready\n"
    go.touch()
    results = []
    for racer in racers:
        assert racer.stdout is not None
        out = racer.stdout.read()
        assert racer.wait(timeout=120) == 0
        written, refused = out.split()
        results.append((int(written), int(refused)))
    return results


def test_two_writers_of_distinct_packets_lose_none(tmp_path: Path) -> None:
    first = [cmp.dumps(packet(n)) for n in range(100)]
    second = [cmp.dumps(packet(n)) for n in range(100, 200)]
    assert _race(tmp_path, first, second) == [(100, 0), (100, 0)]
    store = cmp.Store(tmp_path / "store")
    assert len(os.listdir(store.path)) == 200 and store.problems() == []
    assert sorted(p.id for p in store.list()) == [ulid(n) for n in range(200)]
    for path in store.path.iterdir():
        assert path.read_bytes() == file_of(cmp.loads(path.read_bytes()))


def test_two_writers_of_the_same_packets_both_succeed(tmp_path: Path) -> None:
    same = [cmp.dumps(packet(n)) for n in range(50)]
    (a_written, a_refused), (b_written, b_refused) = _race(tmp_path, same, same)
    assert a_refused == b_refused == 0 and a_written + b_written == 50
    store = cmp.Store(tmp_path / "store")
    assert len(os.listdir(store.path)) == 50 and len(store.list()) == 50 and store.problems() == []


def test_two_writers_of_different_packets_under_the_same_ids_store_one_of_each(tmp_path: Path) -> None:
    mine = [cmp.dumps(packet(n, goal="Mine.")) for n in range(50)]
    theirs = [cmp.dumps(packet(n, goal="Theirs.")) for n in range(50)]
    (a_written, a_refused), (b_written, b_refused) = _race(tmp_path, mine, theirs)
    assert (a_written + a_refused, b_written + b_refused) == (50, 50)
    assert a_written + b_written == 50  # each id stored once, the other packet refused
    store = cmp.Store(tmp_path / "store")
    goals = [p.goal for p in store.list()]
    assert len(goals) == 50 and goals.count("Mine.") == a_written and store.problems() == []


# Round trip.


@settings(max_examples=examples(40))
@given(packets(), st.integers(min_value=0, max_value=10**8 - 1))
def test_what_is_saved_is_what_get_gives(tmp_path_factory: pytest.TempPathFactory, item: cmp.Packet, n: int) -> None:
    item = dataclasses.replace(item, id=ulid(n))
    read_back = cmp.loads(cmp.dumps(item))  # created_at as the canonical form writes it
    store = cmp.Store(tmp_path_factory.mktemp("s"))
    result = store.save(item, allow_unredacted=True)
    assert store.get(item.id) == read_back
    assert result.path.read_bytes() == file_of(item)
    assert store.list() == [read_back] and store.problems() == []
