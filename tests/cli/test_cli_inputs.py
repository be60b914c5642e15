"""``--jsonl FILE`` is opened like FILE arguments: no waiting on a FIFO, no reading a device forever."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cmp.cli import main
from tests.support.packets import encode, full

GOOD = encode(full())


def check_jsonl(*names: str) -> subprocess.CompletedProcess[bytes]:
    # A subprocess with a timeout: before the fix, both of these never returned.
    return subprocess.run(
        [sys.executable, "-m", "cmp", "check", *(arg for name in names for arg in ("--jsonl", name))],
        capture_output=True,
        timeout=60,
    )


def test_jsonl_fifo_without_writer_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = check_jsonl(str(fifo))
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr == f"cmp: {fifo}: cannot read: not a regular file\n".encode()


def test_jsonl_device_is_refused_not_read_forever(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_bytes(GOOD + b"\n")
    result = check_jsonl("/dev/zero", str(good))
    assert result.returncode == 2
    assert result.stderr == (
        b"cmp: /dev/zero: cannot read: not a regular file\ncmp: check: 1 packet, 1 accepted; 1 file not read\n"
    )
    assert result.stdout == f"{good}:1: ok\n".encode()  # the other sources are still checked


def test_jsonl_stdin_still_streams() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cmp", "check", "--jsonl", "-"], input=GOOD + b"\n", capture_output=True, timeout=60
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, b"-:1: ok\n", b"")


def test_jsonl_through_a_symlink_to_a_regular_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "target.jsonl"
    target.write_bytes(GOOD + b"\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert main(["check", "--jsonl", str(link)]) == 0
    assert capsys.readouterr().out == f"{link}:1: ok\n"
