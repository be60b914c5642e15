"""Where the results go: a reader that stops, a non-blocking pipe, a terminal; options by full name."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cmp.cli import _runners, main
from cmp.cli._batch import InProcess
from cmp.cli._output import Output
from cmp.cli._progress import Progress
from tests.support.packets import encode, full, minimal

LINE = encode(minimal()) + b"\n"


def test_a_reader_that_stops_stops_an_endless_run() -> None:
    """`endless | core-memory-packet check --jsonl - | head -1`: once nobody reads, stop reading input."""
    feeder = subprocess.Popen(["yes", LINE.decode().strip()], stdout=subprocess.PIPE)
    checker = subprocess.Popen(
        [sys.executable, "-m", "cmp", "check", "--jsonl", "-"],
        stdin=feeder.stdout,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert feeder.stdout is not None and checker.stdout is not None and checker.stderr is not None
    feeder.stdout.close()
    try:
        assert checker.stdout.readline() == b"-:1: ok\n"
        checker.stdout.close()
        assert checker.wait(timeout=60) == 2  # before the fix: ran until killed
        assert checker.stderr.read() == b"cmp: standard output is closed; results were not all written\n"
    finally:
        for process in (checker, feeder):
            process.kill()
            process.wait()
        checker.stderr.close()


def test_a_non_blocking_pipe_loses_no_result(tmp_path: Path) -> None:
    """Some CI runners hand over a non-blocking pipe; a full one must not drop results."""
    count = 6000
    source = tmp_path / "many.jsonl"
    source.write_bytes(LINE * count)
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    received: list[bytes] = []

    def drain() -> None:
        time.sleep(1.0)  # let the pipe fill first
        with os.fdopen(read_end, "rb") as stream:
            received.append(stream.read())

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "cmp", "check", "--jsonl", str(source)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    finally:
        os.close(write_end)
        reader.join(timeout=120)
    assert result.returncode == 0, result.stderr
    assert received[0].count(b": ok\n") == count


def test_no_progress_counter_where_the_results_are_shown() -> None:
    leader, follower = pty.openpty()
    try:
        with os.fdopen(follower, "w", closefd=False) as terminal:
            assert Output(terminal).is_terminal  # type: ignore[arg-type]
            assert not Progress(10, terminal, quiet=True).enabled
            assert Progress(10, terminal).enabled
    finally:
        os.close(leader)
        os.close(follower)


class _HungUpTerminal:
    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(5, "Input/output error")

    def flush(self) -> None:
        raise OSError(5, "Input/output error")


def test_a_terminal_that_hung_up_only_silences_the_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    progress = Progress(None, _HungUpTerminal())
    monkeypatch.setattr(progress, "started", time.monotonic() - 5)
    progress.step()
    progress.step()
    progress.close()
    assert not progress.enabled


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check", "--al"], "cmp: unrecognized arguments: --al"),
        (["check", "--json", "x.json"], "cmp: unrecognized arguments: --json"),
        (["fmt", "--wr", "x.json"], "cmp: unrecognized arguments: --wr"),
    ],
)
def test_options_only_by_their_full_names(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A prefix must not switch the redaction gate off (--al) or read JSON as JSON Lines."""
    leaky = tmp_path / "leaky.json"
    leaky.write_bytes(encode({**full(), "goal": "AKIAIOSFODNN7EXAMPLE"}))
    assert main([*argv, str(leaky)]) == 2
    assert capsys.readouterr().err.splitlines()[0].startswith(message)


def test_all_cores_means_the_usable_ones_and_at_most_256(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[int] = []

    def recording(workers: int) -> Any:
        seen.append(workers)
        return InProcess()

    good = tmp_path / "good.json"
    good.write_bytes(encode(full()))
    monkeypatch.setattr(_runners, "runner_for", recording)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(1000)), raising=False)
    main(["check", "--jobs", "0", str(good)])
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    main(["check", "--jobs", "0", str(good)])
    assert seen == [256, 1]
