"""Batch throughput: packets per second of ``check --jsonl`` and ``audit`` in one process, in
--jobs N worker processes, and on a local Dask cluster of N worker processes; beside them,
N one-process runs side by side, what the machine allows any split of one run into N.

Run alone (``python benchmarks/scale.py --count 100000``) or from run.py. Each
configuration runs ``--rounds`` times, taking turns, and the median counts: this shared
machine's speed drifts. Every run's output is compared with the one-process run's first,
so a faster configuration that printed something else fails here instead of being timed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import logging
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402

import cmp  # noqa: E402

TABLE = (
    "CREATE TABLE packets(id TEXT PRIMARY KEY, created_at TEXT NOT NULL, goal TEXT NOT NULL, "
    "body BLOB NOT NULL, deleted_at TEXT, owner_id TEXT, team_id TEXT)"
)


def _jsonl(folder: Path, count: int) -> Path:
    line = json.dumps(json.loads(corpus.typical()))
    path = folder / "packets.jsonl"
    path.write_text("\n".join([line] * count) + "\n")
    return path


def _store(folder: Path, count: int) -> Path:
    """A store like the reference server's, in WAL mode: ``count`` typical packets, each its own id."""
    packet = cmp.loads(corpus.typical())
    path = folder / "ltm.db"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute(TABLE)
    body = cmp.dumps(packet)
    # The server's form: UTC, nine fraction digits (the same instant as the body's).
    created = packet.created_at_datetime.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")
    rows = []
    for number in range(count):
        ident = f"01J9X8K2QZ7N4M0WXY{number:08d}"
        data = body.replace(packet.id.encode(), ident.encode())
        rows.append((ident, created, packet.goal, data, None, f"owner-{number % 7}", "team-1"))
    connection.executemany("INSERT INTO packets VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    connection.commit()
    connection.close()
    return path


def _timed(argv: list[str], side_by_side: int = 1) -> tuple[float, bytes]:
    """Seconds until ``side_by_side`` copies of ``argv``, started together, have all ended, and
    what each printed (into files: a pipe read one copy after another would hold the others up)."""
    with contextlib.ExitStack() as stack:

        def temporary() -> Any:
            return stack.enter_context(tempfile.TemporaryFile())

        files = [(temporary(), temporary()) for _ in range(side_by_side)]
        start = time.perf_counter()
        processes = [subprocess.Popen(argv, stdout=out, stderr=err, cwd=HERE.parent) for out, err in files]
        codes = [process.wait() for process in processes]
        elapsed = time.perf_counter() - start
        outputs = []
        for code, (out, err) in zip(codes, files, strict=True):
            out.seek(0)
            err.seek(0)
            assert code in (0, 1), err.read().decode()
            outputs.append(out.read())
    assert all(output == outputs[0] for output in outputs), "copies of one command printed different things"
    return elapsed, outputs[0]


# The row that says what the machine itself allows: as many one-process runs as there are
# workers, side by side, each over all the packets. Its "vs one process" is the packets
# judged per second against one process alone: no split of one run over that many
# processes can go faster than independent ones (they share the same cores, caches and
# memory bandwidth, and nothing else).
SIDE_BY_SIDE = "independent one-process runs side by side"


def report(count: int, rounds: int = 3, workers: int = 2) -> str:
    """The table: seconds and packets per second per configuration, and the speed-up over one process.

    The local configurations run with no cluster up: its idle scheduler and workers
    take some of the same two cores. The cluster is started for its own rows after.
    """
    from distributed import LocalCluster

    command = [sys.executable, "-m", "cmp"]
    times: dict[str, list[float]] = {}
    expected: dict[str, bytes] = {}

    def take_turns(runs: dict[str, list[str]]) -> None:
        for _ in range(rounds):
            for label, argv in runs.items():
                elapsed, out = _timed(argv, workers if SIDE_BY_SIDE in label else 1)
                kind = label.split(",")[0].split(" --")[0]
                assert expected.setdefault(kind, out) == out, f"{label} printed something else"
                times.setdefault(label, []).append(elapsed)

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        jsonl, store = _jsonl(folder, count), _store(folder, count)
        check, audit = [*command, "check", "--jsonl", str(jsonl)], [*command, "audit", str(store)]
        take_turns(
            {
                "check --jsonl, one process": check,
                f"check --jsonl --jobs {workers}": [*check, "--jobs", str(workers)],
                f"check --jsonl, {workers} {SIDE_BY_SIDE}": check,
                "audit STORE, one process": audit,
                f"audit STORE --jobs {workers}": [*audit, "--jobs", str(workers)],
            }
        )
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.CRITICAL,
        )
        try:
            take_turns(
                {
                    f"check --jsonl --dask (local cluster, {workers} workers)": [
                        *check,
                        "--dask",
                        cluster.scheduler_address,
                    ],
                    f"audit STORE --dask (local cluster, {workers} workers)": [
                        *audit,
                        "--dask",
                        cluster.scheduler_address,
                    ],
                }
            )
        finally:
            cluster.close()
    order = ["check", "audit"]
    labels = sorted(
        times,
        key=lambda label: (order.index(label.split()[0]), "--dask" in label, "--jobs" in label, SIDE_BY_SIDE in label),
    )
    rows: list[list[str]] = []
    base: dict[str, float] = {}
    for label in labels:
        seconds = statistics.median(times[label])
        kind = label.split(",")[0].split(" --")[0]
        base.setdefault(kind, seconds)
        judged = count * (workers if SIDE_BY_SIDE in label else 1)
        speed_up = base[kind] * judged / count / seconds
        rows.append([label, f"{seconds:.2f}", f"{judged / seconds:,.0f}", f"{speed_up:.2f}x"])
    header = [f"{count:,} typical packets (audit: none with findings)", "seconds", "packets/s", "vs one process"]
    lines = ["| " + " | ".join(header) + " |", "|---|---:|---:|---:|"]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    print(report(args.count, args.rounds, args.workers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
