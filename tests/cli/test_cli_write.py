"""``fmt --write``: owner kept, no temporary file left on a signal, no lost edits, no split links."""

from __future__ import annotations

import os
import select
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import cmp
from cmp.cli import main
from tests.support.packets import encode, full
from tests.support.signals import default_stop_signals


@pytest.fixture
def packet(tmp_path: Path) -> Path:
    path = tmp_path / "packet.json"
    path.write_bytes(encode(full()))  # conforming, not canonical
    return path


def canonical(path: Path) -> bytes:
    """The file fmt --write makes of ``path``: the canonical bytes and one final newline."""
    return cmp.dumps(cmp.loads(path.read_bytes())) + b"\n"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".cmp-"))


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another owner")
def test_owner_and_group_are_kept(packet: Path) -> None:
    os.chown(packet, 4321, 4322)
    assert main(["fmt", "--write", str(packet)]) == 0
    info = packet.stat()
    assert (info.st_uid, info.st_gid) == (4321, 4322)
    assert packet.read_bytes() == canonical(packet)


def test_owner_that_cannot_be_kept_does_not_stop_the_rewrite(
    packet: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "chown", refuse)
    assert main(["fmt", "--write", str(packet)]) == 0
    assert packet.read_bytes() == canonical(packet)
    assert capsys.readouterr().out == f"{packet}: rewritten\n"


# The child makes the write slow (fsync of the temporary file waits), says so on stdout,
# and is then sent a signal by the test.
SLOW_WRITER = """
import os, sys, time
real_fsync, calls = os.fsync, []
def slow_fsync(fd):
    calls.append(fd)
    if len(calls) == 1:
        os.write(1, b"writing\\n")
        time.sleep(120)
    real_fsync(fd)
os.fsync = slow_fsync
from cmp.cli import main
sys.exit(main(["fmt", "--write", sys.argv[1]]))
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_during_the_write_leaves_no_temporary_file(packet: Path, signum: signal.Signals) -> None:
    before = packet.read_bytes()
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITER, str(packet)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=default_stop_signals,  # SIGHUP's and SIGINT's defaults even under nohup or in the background
    )
    assert process.stdout is not None
    try:
        ready, _, _ = select.select([process.stdout.fileno()], [], [], 60)
        assert ready and os.read(process.stdout.fileno(), 100) == b"writing\n"
        assert leftovers(packet.parent)  # the temporary file exists while it is written
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait(timeout=60)
    assert process.returncode == 128 + signum
    assert leftovers(packet.parent) == []
    assert packet.read_bytes() == before
    assert out == b""
    assert err == (b"cmp: interrupted\n" if signum == signal.SIGINT else f"cmp: stopped by {signum.name}\n".encode())


# The child sends itself SIGTERM right after the temporary file is created, before it
# has a name the cleanup could use (a child: without a handler, the signal kills it).
SIGNAL_AT_CREATION = """
import os, signal, sys, tempfile
real_mkstemp = tempfile.mkstemp
def mkstemp_then_signal(*args, **kwargs):
    made = real_mkstemp(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGTERM)
    return made
tempfile.mkstemp = mkstemp_then_signal
from cmp.cli import main
sys.exit(main(["fmt", "--write", sys.argv[1]]))
"""


def test_a_signal_while_the_temporary_file_is_created_waits_then_cleans_up(packet: Path) -> None:
    before = packet.read_bytes()
    result = subprocess.run([sys.executable, "-c", SIGNAL_AT_CREATION, str(packet)], capture_output=True, timeout=60)
    assert result.returncode == 128 + signal.SIGTERM
    assert packet.read_bytes() == before
    assert leftovers(packet.parent) == []
    assert (result.stdout, result.stderr) == (b"", b"cmp: stopped by SIGTERM\n")


def test_a_file_changed_while_formatting_is_left_alone(
    packet: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    edited = packet.read_bytes().replace(b'"goal": "', b'"goal": "edited meanwhile, ')
    real_fsync = os.fsync

    def someone_saves(fd: int) -> None:
        real_fsync(fd)
        packet.write_bytes(edited)  # another editor saves between our read and our rename

    monkeypatch.setattr(os, "fsync", someone_saves)
    assert main(["fmt", "--write", str(packet)]) == 2
    monkeypatch.undo()
    assert packet.read_bytes() == edited
    assert leftovers(packet.parent) == []
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"cmp: {packet}: not rewritten: it changed since it was read; run fmt again\n"


def test_a_change_that_keeps_size_and_mtime_is_still_seen(packet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = packet.read_bytes()
    same_size = original[:20] + bytes([original[20] ^ 1]) + original[21:]  # one byte differs
    assert len(same_size) == len(original) and same_size != original
    stamp = packet.stat()
    real_fsync = os.fsync

    def someone_saves(fd: int) -> None:
        real_fsync(fd)
        packet.write_bytes(same_size)
        os.utime(packet, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))

    monkeypatch.setattr(os, "fsync", someone_saves)
    assert main(["fmt", "--write", str(packet)]) == 2
    monkeypatch.undo()
    assert packet.read_bytes() == same_size


def test_a_file_replaced_while_formatting_is_left_alone(packet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_fsync = os.fsync
    other = packet.parent / "other.json"
    other.write_bytes(packet.read_bytes())  # same bytes, another file

    def someone_replaces(fd: int) -> None:
        real_fsync(fd)
        os.replace(other, packet)

    monkeypatch.setattr(os, "fsync", someone_replaces)
    before = packet.read_bytes()
    assert main(["fmt", "--write", str(packet)]) == 2
    monkeypatch.undo()
    assert packet.read_bytes() == before
    assert leftovers(packet.parent) == []


def test_hard_links_are_not_split_without_force(packet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    twin = packet.parent / "twin.json"
    os.link(packet, twin)
    before = packet.read_bytes()
    assert main(["fmt", "--write", str(packet)]) == 2
    assert packet.read_bytes() == before and packet.stat().st_ino == twin.stat().st_ino
    assert capsys.readouterr().err == (
        f"cmp: {packet}: not rewritten: it has 2 hard links, which rewriting would split (--force to rewrite anyway)\n"
    )
    assert main(["fmt", "--write", "--force", str(packet)]) == 0
    assert packet.read_bytes() == canonical(packet)
    assert twin.read_bytes() == before  # the other name keeps the old bytes: that is what --force accepts


def test_read_only_files_are_not_rewritten_without_force(packet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    packet.chmod(0o444)
    before = packet.read_bytes()
    assert main(["fmt", "--write", str(packet)]) == 2
    assert packet.read_bytes() == before
    assert capsys.readouterr().err == f"cmp: {packet}: not rewritten: it is read-only (--force to rewrite anyway)\n"
    assert main(["fmt", "--write", "--force", str(packet)]) == 0
    assert packet.read_bytes() == canonical(packet)
    assert packet.stat().st_mode & 0o777 == 0o444
    assert leftovers(packet.parent) == []


def test_force_goes_with_write_only(packet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fmt", "--force", str(packet)]) == 2
    assert capsys.readouterr().err == "cmp: fmt --force only applies to --write\n"
    help_text = subprocess.run(
        [sys.executable, "-m", "cmp", "fmt", "--help"], capture_output=True, timeout=60, text=True
    ).stdout
    assert "--force" in help_text


# --- only regular files are written (issue #26, A1) ---------------------------------------------


def _special_files(folder: Path) -> dict[str, Path]:
    made = {"fifo": folder / "fifo"}
    os.mkfifo(made["fifo"])
    if os.geteuid() == 0:  # mknod of a device needs root (CAP_MKNOD)
        made["device"] = folder / "null"
        os.mknod(made["device"], 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    return made


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "force"])
def test_new_never_replaces_a_device_or_a_fifo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], force: list[str]
) -> None:
    for kind, special in _special_files(tmp_path).items():
        before = special.lstat()
        link = tmp_path / f"link-to-{kind}"
        link.symlink_to(special)
        for target in (special, link):
            assert main(["new", "--goal", "g", "--next-step", "n", "-o", str(target), *force]) == 2
            err = capsys.readouterr().err
            said = "a FIFO" if kind == "fifo" else "a character device"
            assert err == f"cmp: {target}: cannot write: it is {said}, and only a regular file is written\n"
            assert "--force" not in err, "no flag makes it writable"
        after = special.lstat()
        assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
        assert link.is_symlink()
    assert leftovers(tmp_path) == []


def test_a_rewrite_refuses_a_link_to_a_fifo_even_with_force(tmp_path: Path) -> None:
    from cmp.cli._rewrite import WriteRefused, write_atomically

    fifo = _special_files(tmp_path)["fifo"]
    with pytest.raises(WriteRefused, match="it is a FIFO"):
        write_atomically(str(fifo), b"{}", force=True)
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and leftovers(tmp_path) == []


def test_new_force_still_replaces_a_regular_file_and_a_link_to_one(tmp_path: Path) -> None:
    target = tmp_path / "p.json"
    target.write_bytes(b"old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert main(["new", "--goal", "g", "--next-step", "n", "-o", str(link), "--force"]) == 0
    assert link.is_symlink() and cmp.check(target.read_bytes()).ok


# --- temporary files left by a killed writer (issue #26, C18) -----------------------------------


def _left_by_a_killed_writer(packet: Path, age: float) -> Path:
    """A temporary file as a write of ``packet`` makes it, left as SIGKILL would leave it, ``age`` seconds old."""
    from cmp.cli._rewrite import _temporary
    from cmp.cli._signals import StopSignals

    with StopSignals() as stop:
        left = Path(_temporary(str(packet.parent), packet.name, b"half", stop))
    os.utime(left, (left.stat().st_atime - age, left.stat().st_mtime - age))
    return left


def test_a_later_write_removes_its_own_stale_temporary_files(packet: Path) -> None:
    from cmp.cli._rewrite import STALE_AFTER

    young = _left_by_a_killed_writer(packet, 5)  # may be another writer's, still in flight
    stale = _left_by_a_killed_writer(packet, STALE_AFTER + 60)
    other = packet.parent / "other.json"
    other.write_bytes(packet.read_bytes())
    others = _left_by_a_killed_writer(other, STALE_AFTER + 60)  # another file's: not this write's business
    assert {stale.name, young.name, others.name} <= set(leftovers(packet.parent))
    assert main(["fmt", "--write", str(packet)]) == 0
    assert leftovers(packet.parent) == sorted([young.name, others.name])
    assert packet.read_bytes() == canonical(packet)
