"""The local store at scale: wall time and peak memory of ``ls``, ``ls --limit 20``, ``latest``
and ``resume`` over a store of 10 typical, 1,500 big and 10,000 small packets.

    python benchmarks/store_scale.py              # every store, 5 rounds
    python benchmarks/store_scale.py --rounds 3 --stores 10,10000
    python benchmarks/store_scale.py --before ../old   # and an older checkout's, taking turns

Each command runs as its own process (``python -m cmp``; ``latest`` is ``cmp.Store(S).latest()``
under ``python -c``), the commands taking turns in every round; the median time and the
largest peak resident memory count. "first" is one run with no index in the cache: the full
read a changed store costs once. The stores are written as files directly (the canonical
bytes of generated packets), in chains of ten, so that ``latest`` has heads to find.
Nothing here asserts a time: the tests assert behaviour.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
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

STORES = {
    10: ("typical", corpus.typical),
    1_500: ("big", corpus.big),
    10_000: ("small", None),
}
SMALL = {"ltm_version": "0.2", "goal": "Ship the export fix.", "next_step": "Time it on a snapshot.", "tags": ["perf"]}
# A store's files are trusted by the index once they are older than this (cmp/store.py's slack).
SETTLE = 2.1


def ulid(number: int) -> str:
    return f"01J9X8K2QZ7N4M0WXY{number:08d}"


def write_store(folder: Path, count: int, template: dict[str, Any]) -> int:
    """``count`` packets made from ``template``, in chains of ten; the size of one file."""
    folder.mkdir(parents=True)
    size = 0
    for number in range(count):
        obj = dict(template)
        obj["id"] = ulid(number)
        minutes = number % 1_000_000
        obj["created_at"] = f"2026-{1 + minutes // 43_200 % 12:02d}-{1 + minutes // 1440 % 28:02d}T" + (
            f"{minutes // 60 % 24:02d}:{minutes % 60:02d}:{number % 60:02d}Z"
        )
        if number % 10:
            obj["parent_id"] = ulid(number - 1)
        else:
            obj.pop("parent_id", None)
        data = cmp.dumps(cmp.Packet.from_dict(obj)) + b"\n"
        (folder / f"{obj['id']}.json").write_bytes(data)
        size = len(data)
    return size


def run(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Seconds and peak resident KiB of one run of ``argv`` (its output thrown away), in the
    checkout ``env`` names: ``python -m`` and ``-c`` look in the working folder first."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=env["PYTHONPATH"])
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, errors.decode()
    return elapsed, usage.ru_maxrss


def commands(store: Path) -> dict[str, list[str]]:
    python = [sys.executable]
    return {
        "ls": [*python, "-m", "cmp", "ls", "--store", str(store)],
        "ls --limit 20": [*python, "-m", "cmp", "ls", "--limit", "20", "--store", str(store)],
        "latest": [*python, "-c", "import sys, cmp; print(cmp.Store(sys.argv[1]).latest().id)", str(store)],
        "resume": [*python, "-m", "cmp", "resume", "--quiet", "--store", str(store)],
    }


def report(counts: list[int], rounds: int, before: Path | None) -> str:
    """The table; with ``before`` (another checkout of this project), its columns beside, the two
    taking turns in every round so that a machine whose speed drifts moves both alike."""
    rows = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        cache = folder / "cache"
        env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(HERE.parent)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # both checkouts start from their bytecode, as installed ones do
        sides = {"after": env} if before is None else {"before": {**env, "PYTHONPATH": str(before)}, "after": env}
        stores: dict[int, tuple[Path, str]] = {}
        for count in counts:
            kind, make = STORES[count]
            template = SMALL if make is None else json.loads(make())
            started = time.perf_counter()
            size = write_store(folder / str(count), count, template)
            print(f"wrote {count:,} {kind} packets in {time.perf_counter() - started:.1f} s", file=sys.stderr)
            stores[count] = (folder / str(count), f"{count:,} {kind} ({size / 1000:.1f} KB)")
        time.sleep(SETTLE)
        start_up = [run([sys.executable, "-m", "cmp", "--version"], env)[0] for _ in range(rounds)]
        for store, label in stores.values():
            runs = commands(store)
            first = {}
            for command, argv in runs.items():
                shutil.rmtree(cache, ignore_errors=True)
                first[command] = run(argv, env)[0]
            times: dict[tuple[str, str], list[float]] = {(side, command): [] for side in sides for command in runs}
            peaks: dict[tuple[str, str], int] = dict.fromkeys(times, 0)
            for _ in range(rounds):
                for command, argv in runs.items():
                    for side, side_env in sides.items():
                        elapsed, peak = run(argv, side_env)
                        times[side, command].append(elapsed)
                        peaks[side, command] = max(peaks[side, command], peak)
            for command in runs:
                cells = [
                    f"{statistics.median(times[side, command]) * 1000:,.0f} | {peaks[side, command] / 1024:,.0f}"
                    for side in sides
                ]
                rows.append(f"| {label} | {command} | {' | '.join(cells)} | {first[command] * 1000:,.0f} |")
    machine = (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    header = "".join(f" {side} ms | {side} peak RSS MB |" for side in sides)
    return "\n".join(
        [
            f"{machine}; `core-memory-packet --version` takes {statistics.median(start_up) * 1000:.0f} ms.",
            "",
            f"| store | command |{header} first run (no index) ms |",
            "|---|---|" + "---:|---:|" * len(sides) + "---:|",
            *rows,
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--stores", default=",".join(map(str, STORES)), help="packet counts, of " + ", ".join(map(str, STORES))
    )
    parser.add_argument(
        "--before", type=Path, metavar="CHECKOUT", help="another checkout to time beside this one (e.g. git archive)"
    )
    args = parser.parse_args()
    print(report([int(count) for count in args.stores.split(",")], args.rounds, args.before))
    return 0


if __name__ == "__main__":
    sys.exit(main())
