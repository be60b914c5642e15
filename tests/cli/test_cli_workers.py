"""``--jobs N`` when the worker processes die or cannot start: one line, exit 2, no hang, no lost results."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cmp.cli._sources import SHARE_BYTES, SHARE_PACKETS
from tests.cli.test_cli_streaming import unreadable_result
from tests.support.packets import encode, minimal
from tests.support.signals import default_stop_signals

# Run in a child process: patches what the workers will run (they are forked from it,
# so they inherit the patch; "fork" is asked for because Python 3.14 defaults to
# forkserver), or makes fork itself fail, then runs the CLI on the remaining arguments.
CHILD = """
import multiprocessing, os, signal, sys
multiprocessing.set_start_method("fork")
import cmp.cli._judge as judging
how, at = sys.argv[1], int(sys.argv[2])
if how == "fork-fails":
    real_fork, forks = os.fork, []
    def fork():
        forks.append(1)
        if len(forks) >= at:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real_fork()
    os.fork = fork
else:
    real_judge = judging.judge
    def judge(source, *args, **kwargs):
        if source.line == at:
            if how == "exit":
                os._exit(3)
            os.kill(os.getpid(), signal.SIGKILL)
        return real_judge(source, *args, **kwargs)
    judging.judge = judge
from cmp.cli import main
sys.exit(main(sys.argv[3:]))
"""

LINE = encode(minimal())
# Lines in one share of a JSON Lines file that workers read themselves.
PER_SHARE = SHARE_BYTES // (len(LINE) + 1)
LINES = 6 * PER_SHARE


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "many.jsonl"
    path.write_bytes(b"\n".join([LINE] * LINES))
    return path


def run_child(how: str, at: int, *args: str, stdin: Path | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", CHILD, how, str(at), "check", "--jobs", "2", *args]
    with open(stdin or os.devnull, "rb") as source:
        return subprocess.run(argv, capture_output=True, timeout=120, text=True, stdin=source)


# The file read by the workers in shares of SHARE_BYTES; stdin read by the parent, in
# shares of SHARE_PACKETS. The fatal packet is in the last share but one, so shares
# before it are done and printed first.
WAYS = {"file": PER_SHARE, "stdin": SHARE_PACKETS}


def jsonl_args(jsonl: Path, way: str) -> tuple[list[str], Path | None, str]:
    """The arguments, stdin and the printed name for reading ``jsonl`` one way."""
    return (["--jsonl", str(jsonl)], None, str(jsonl)) if way == "file" else (["--jsonl", "-"], jsonl, "-")


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("how", ["exit", "signal"])
def test_a_dying_worker_gives_one_line_exit_2_and_the_results_before_it(jsonl: Path, how: str, way: str) -> None:
    fatal = LINES - WAYS[way] - WAYS[way] // 2
    args, stdin, name = jsonl_args(jsonl, way)
    result = run_child(how, fatal, *args, stdin=stdin)
    assert result.returncode == 2
    died = "not checked: a worker process died; nothing after it was checked either"
    match = re.fullmatch(rf"cmp: {re.escape(name)}:(\d+): {died}\n", result.stderr)
    assert match, result.stderr
    first_lost = int(match.group(1))
    assert first_lost <= fatal
    # Every result before the first lost packet is printed, in order; nothing after it.
    assert result.stdout.splitlines() == [f"{name}:{line}: ok" for line in range(1, first_lost)]
    assert first_lost > WAYS[way]


@pytest.mark.parametrize("way", WAYS)
def test_a_dying_worker_still_ends_the_json_document(jsonl: Path, way: str) -> None:
    args, stdin, name = jsonl_args(jsonl, way)
    result = run_child("exit", LINES - WAYS[way] - WAYS[way] // 2, "--format", "json", *args, stdin=stdin)
    assert result.returncode == 2
    results = json.loads(result.stdout)["results"]
    *checked, lost = results
    assert [r["line"] for r in checked] == list(range(1, len(checked) + 1))
    assert all(r["ok"] for r in checked)
    assert lost == unreadable_result(
        "not checked: a worker process died; nothing after it was checked either",
        file=name,
        line=len(checked) + 1,
    )
    assert all(list(r) == list(lost) and r["error"] is None for r in checked)
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("failing_fork", [1, 2], ids=["first-fork", "second-fork"])
def test_workers_that_cannot_start_give_one_line_and_exit_2(jsonl: Path, tmp_path: Path, failing_fork: int) -> None:
    # With the second fork refused, one worker was already running: it must not keep the process alive.
    missing = tmp_path / "missing.json"
    result = run_child("fork-fails", failing_fork, str(missing), "--jsonl", str(jsonl))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"cmp: {missing}: cannot open: No such file or directory\n"
        f"cmp: {jsonl}:1: not checked: cannot start worker processes (Resource temporarily unavailable);"
        " nothing after it was checked either\n"
    )


def read_to_end(fd: int) -> bytes:
    """Everything until every writer has closed ``fd``; fails (not hangs) if one never does."""
    data = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 60)
        if not ready:
            pytest.fail(f"still open after 60 s (a process outlived the run?): {data[-200:]!r}")
        chunk = os.read(fd, 65536)
        if not chunk:
            return data
        data += chunk


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stopped_run_takes_its_workers_with_it(signum: signal.Signals) -> None:
    # Killed on the spot, the parent used to leave its workers waiting for work forever,
    # holding its stdout and stderr open: a pipeline reading them never ended.
    process = subprocess.Popen(
        [sys.executable, "-m", "cmp", "check", "--jobs", "2", "--jsonl", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=default_stop_signals,  # SIGHUP's default even under nohup
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    try:
        # More chunks than may be out at once, so results must be printed before more input comes.
        process.stdin.write(b"\n".join([encode(minimal())] * (20 * SHARE_PACKETS)) + b"\n")
        process.stdin.flush()  # and stdin stays open: the run is waiting for more when stopped
        ready, _, _ = select.select([process.stdout.fileno()], [], [], 60)
        assert ready  # the workers are running and results are coming
        process.send_signal(signum)
        assert process.wait(timeout=60) == 128 + signum
        err = read_to_end(process.stderr.fileno())
        out = read_to_end(process.stdout.fileno())
    finally:
        process.stdin.close()
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=60)
    assert err == f"cmp: stopped by {signum.name}\n".encode()
    assert out.startswith(b"-:1: ok\n")
