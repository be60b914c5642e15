"""``--dask SCHEDULER``: the same shares judged on a real Dask cluster (a ``distributed.LocalCluster``
with two worker processes) print what a local run prints, byte for byte, also when a worker is
killed mid-run."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from cmp.cli._dask import CONNECT_SECONDS, DASK_SHARE_BYTES
from cmp.cli._sources import SHARE_BYTES
from tests.support.cli import run_cli
from tests.support.extras import require
from tests.support.packets import encode, full, put
from tests.support.running import under_way

distributed = require("distributed")

GOOD = encode(full())
BAD = encode(put(full(), "tags[0]", "Bad"))
LEAKY = encode(put(full(), "goal", "AKIAIOSFODNN7EXAMPLE"))


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.CRITICAL
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three JSON Lines shards of several shares each: 12,000 packets, some failing, some leaky."""
    folder = tmp_path_factory.mktemp("shards")
    for number in range(3):
        lines = [GOOD, BAD, GOOD, LEAKY, b"", b"{"] * 800 if number != 1 else [GOOD] * 4000
        (folder / f"part-{number}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    assert (folder / "part-0.jsonl").stat().st_size > 3 * SHARE_BYTES
    return folder


def _repeated_shard(shards: Path, name: str, size: int) -> Path:
    """The first shard written again and again into ``name``, until the file is over ``size`` bytes."""
    part = (shards / "part-0.jsonl").read_bytes()
    path = shards.parent / name
    path.write_bytes(part * (size // len(part) + 1))
    return path


_cli = partial(run_cli, timeout=300)

# `python -m cmp` with the cluster's shares SMALL_SHARE_BYTES long, not DASK_SHARE_BYTES: a
# file of several shares is then 4 MiB, not 48, and judging it twice takes seconds, not a
# minute. The share size is the client's alone; the workers judge the ranges they are sent.
# The launcher also sets how long the client waits for a scheduler or a worker: the tests of
# a cluster that never answers wait SHORT_WAIT_SECONDS for it, not CONNECT_SECONDS.
SMALL_SHARE_BYTES = SHARE_BYTES
SHORT_WAIT_SECONDS = 2.0
LAUNCHER = (
    "import sys\n"
    "from cmp.cli import _dask\n"
    "_dask.DaskCluster.share_bytes = int(sys.argv.pop(1))\n"
    "_dask.CONNECT_SECONDS = float(sys.argv.pop(1))\n"
    "from cmp.cli import module_exit\n"
    "module_exit()\n"
)


def _launcher(share_bytes: int, wait_seconds: float) -> tuple[str, ...]:
    return ("-c", LAUNCHER, str(share_bytes), str(wait_seconds))


SMALL_SHARES_LAUNCHER = _launcher(SMALL_SHARE_BYTES, CONNECT_SECONDS)
SHORT_WAIT_LAUNCHER = _launcher(DASK_SHARE_BYTES, SHORT_WAIT_SECONDS)


def _cli_launched(launcher: tuple[str, ...], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, *launcher, *args], capture_output=True, timeout=300)


_cli_small_shares = partial(_cli_launched, SMALL_SHARES_LAUNCHER)
_cli_short_wait = partial(_cli_launched, SHORT_WAIT_LAUNCHER)


@pytest.fixture(scope="module")
def several(shards: Path) -> Path:
    """A file of several small cluster shares (SMALL_SHARE_BYTES each)."""
    return _repeated_shard(shards, "several.jsonl", 4 * SMALL_SHARE_BYTES)


@pytest.fixture(scope="module")
def big(shards: Path) -> Path:
    """A file of many small cluster shares, long enough to kill a worker in the middle of: its
    results fill the pipe of a run left unread many times over (tests.support.running)."""
    return _repeated_shard(shards, "big.jsonl", 12 * SMALL_SHARE_BYTES)


@pytest.mark.parametrize("format", ["text", "json", "sarif"])
def test_check_on_a_cluster_prints_what_a_local_run_prints(
    scheduler: str, shards: Path, several: Path, format: str
) -> None:
    # Several cluster shares of one file in text; the documents over the smaller shards.
    paths = [*sorted(shards.glob("*.jsonl")), *([several] if format == "text" else [])]
    files = [arg for path in paths for arg in ("--jsonl", str(path))]
    local = _cli("check", "--format", format, *files)
    cluster = _cli_small_shares("check", "--format", format, "--dask", scheduler, *files)
    assert local.returncode == 1
    assert (cluster.returncode, cluster.stdout, cluster.stderr) == (1, local.stdout, local.stderr)


def test_the_small_shares_are_shares_of_the_cluster(scheduler: str, several: Path) -> None:
    """The launcher above changes the share size and the wait and nothing else: a cluster run
    through it prints what ``python -m cmp`` prints, and its file is several of its shares."""
    assert several.stat().st_size > 3 * SMALL_SHARE_BYTES
    assert DASK_SHARE_BYTES > SMALL_SHARE_BYTES and CONNECT_SECONDS > SHORT_WAIT_SECONDS
    argv = ("check", "--format", "json", "--dask", scheduler, "--jsonl", str(several))
    expected = _cli(*argv).stdout
    assert _cli_small_shares(*argv).stdout == expected
    assert _cli_short_wait(*argv).stdout == expected


def test_audit_on_a_cluster_over_json_lines_shards(scheduler: str, shards: Path) -> None:
    local = _cli("audit", str(shards), "--format", "json")
    cluster = _cli("audit", str(shards), "--format", "json", "--dask", scheduler)
    assert (cluster.returncode, cluster.stdout, cluster.stderr) == (1, local.stdout, local.stderr)
    summary = _cli("audit", str(shards), "--dask", scheduler).stderr.decode()
    assert summary.startswith("cmp: audit: 12000 packets, 4800 with findings: ")


def _worker_pids(scheduler: str) -> list[int]:
    with distributed.Client(scheduler, set_as_default=False) as client:
        return sorted(client.run(os.getpid).values())


def test_a_worker_killed_mid_run_leaves_the_results_whole(scheduler: str, big: Path) -> None:
    local = _cli("check", "--jsonl", str(big))
    process, first = under_way("check", "--dask", scheduler, "--jsonl", str(big), launcher=SMALL_SHARES_LAUNCHER)
    try:
        victim = _worker_pids(scheduler)[0]
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        assert process.poll() is None, "the run ended before the worker was killed"
        rest, err = process.communicate(timeout=300)
    finally:
        process.kill()
        process.wait()
    out = first + rest
    # Dask runs the dead worker's shares again elsewhere: the run completes with every result.
    assert (process.returncode, out, err) == (1, local.stdout, local.stderr), time.monotonic() - killed_at
    deadline = time.monotonic() + 60  # the nanny starts a new worker, for the tests after this one
    while len(_worker_pids(scheduler)) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)


def test_an_unreachable_scheduler_is_one_line_exit_2(shards: Path) -> None:
    result = _cli_short_wait("check", "--dask", "tcp://127.0.0.1:9", "--jsonl", str(shards / "part-1.jsonl"))
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.decode().startswith("cmp: cannot reach the Dask scheduler at tcp://127.0.0.1:9 (")
    assert result.stderr.count(b"\n") == 1


def test_dask_and_jobs_together_are_a_usage_error(shards: Path) -> None:
    result = _cli("check", "--dask", "tcp://127.0.0.1:9", "--jobs", "2", "--jsonl", str(shards / "part-1.jsonl"))
    assert result.returncode == 2
    assert result.stderr == b"cmp: --jobs and --dask cannot be used together: the cluster's workers judge the shares\n"


def test_an_address_that_is_no_scheduler_is_one_line_at_once(shards: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def answer() -> None:  # a web server's reply on the port, as from a proxy or a wrong port
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=answer, daemon=True).start()
    try:
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        # A hang guard, not a timing: the run once hung for the 20 s a half-built client
        # waited when collected at exit; a run that still waits is stopped and fails.
        result = run_cli("check", "--dask", address, "--jsonl", str(shards / "part-1.jsonl"), timeout=15)
    finally:
        server.close()
    assert result.returncode == 2 and result.stdout == b""
    assert (
        result.stderr.decode()
        == f"cmp: cannot reach the Dask scheduler at {address} (it does not answer as a Dask scheduler)\n"
    )


def test_a_cluster_with_no_workers_is_one_line(shards: Path) -> None:
    cluster = distributed.LocalCluster(n_workers=0, dashboard_address=":0", silence_logs=logging.CRITICAL)
    try:
        result = _cli_short_wait("check", "--dask", cluster.scheduler_address, "--jsonl", str(shards / "part-1.jsonl"))
    finally:
        cluster.close()
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.decode() == f"cmp: the Dask cluster at {cluster.scheduler_address} has no workers\n"


CLUSTER = """
import logging, sys, time
from distributed import LocalCluster
if __name__ == "__main__":
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0", silence_logs=logging.CRITICAL)
    print(cluster.scheduler_address, flush=True)
    time.sleep(600)
"""


@pytest.mark.parametrize("format", ["text", "json"])
def test_losing_the_scheduler_mid_run_is_one_line_and_a_whole_document(big: Path, tmp_path: Path, format: str) -> None:
    script = tmp_path / "cluster.py"
    script.write_text(CLUSTER)
    cluster = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
    )
    assert cluster.stdout is not None
    try:
        address = cluster.stdout.readline().decode().strip()
        run, first = under_way(
            "check",
            "--format",
            format,
            "--dask",
            address,
            "--jsonl",
            str(big),
            launcher=_launcher(SMALL_SHARE_BYTES, SHORT_WAIT_SECONDS),  # the client waits no longer for it
        )
        os.killpg(cluster.pid, signal.SIGKILL)  # the scheduler and its workers, at once
        rest, err = run.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(cluster.pid, signal.SIGKILL)
        cluster.wait()
    out = first + rest
    assert run.returncode == 2
    line = err.decode()
    assert line.count("\n") == 1 and " not checked: lost the Dask scheduler at " in line, line
    if format == "json":
        results = json.loads(out)["results"]  # the document is closed
        assert results[-1]["error"].startswith("not checked: lost the Dask scheduler at ")
