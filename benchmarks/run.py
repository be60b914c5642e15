"""Benchmarks: per packet and per stage, median microseconds, against json.loads and a baseline.

    python benchmarks/run.py            # everything (about two minutes)
    python benchmarks/run.py --quick    # fewer repeats, no batch or start-up runs

Prints Markdown tables. Nothing here asserts a time: the tests assert behaviour.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import baseline  # noqa: E402
import corpus  # noqa: E402

import cmp  # noqa: E402
from cmp import intake, model, versions  # noqa: E402
from cmp.redact import redact, redact_obj  # noqa: E402
from cmp.schemas import schema_findings  # noqa: E402

BUDGET = 0.05  # seconds per timing round


def median_us(func: Callable[[], object], repeat: int) -> float | None:
    """Median over ``repeat`` rounds of the mean time per call, in microseconds; None if it raises."""
    try:
        func()
    except RecursionError:
        return None
    timer = timeit.Timer(func)
    start = time.perf_counter()
    func()
    once = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(BUDGET / once))
    return statistics.median(t / number for t in timer.repeat(repeat=repeat, number=number)) * 1e6


def shown(value: float | None, fmt: str = "{:.0f}") -> str:
    return "fails" if value is None else fmt.format(value)


def ratio(top: float | None, bottom: float | None) -> str:
    return "–" if top is None or bottom is None else f"{top / bottom:.1f}x"


def stages(raw: bytes) -> dict[str, Callable[[], object]]:
    obj, _ = intake.parse_packet(raw)
    version = versions.route(obj) if obj is not None else None
    routed = isinstance(version, str)
    valid = routed and obj is not None and not schema_findings(obj, version)  # type: ignore[arg-type]
    packet = model.from_obj(obj) if valid and obj is not None else None
    out: dict[str, Callable[[], object]] = {"intake": lambda: intake.parse_packet(raw)}
    if obj is not None and routed:
        out["validate"] = lambda: model.from_obj(obj) if not schema_findings(obj, version) else None  # type: ignore[arg-type]
    if packet is not None:
        out["redact"] = lambda: redact(packet)
        out["encode"] = lambda: cmp.dumps(packet)
    elif obj is not None:
        out["redact"] = lambda: redact_obj(obj)
    return out


def full_run(raw: bytes) -> None:
    report = cmp.check(raw)
    if report.packet is not None:
        cmp.dumps(report.packet)


def table(rows: list[list[str]], header: list[str]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def per_packet(repeat: int) -> str:
    rows = []
    for name, raw in corpus.build().items():
        loads = median_us(lambda raw=raw: json.loads(raw), repeat)
        ours = median_us(lambda raw=raw: full_run(raw), repeat)
        base = median_us(lambda raw=raw: baseline.run(raw), repeat)
        parts = {stage: median_us(func, repeat) for stage, func in stages(raw).items()}
        cells = [shown(parts[s]) if s in parts else "–" for s in ("intake", "validate", "redact", "encode")]
        verdict = cmp.check(raw)
        what = "ok" if verdict.ok else ("redactions" if verdict.conforming else f"{len(verdict.errors)} errors")
        rows.append([name, f"{len(raw):,}", what, shown(loads), *cells, shown(ours), shown(base),
                     ratio(ours, loads), ratio(base, ours)])
    header = ["packet", "bytes", "verdict", "json.loads µs", "intake", "validate", "redact", "encode",
              "check+dumps µs", "baseline µs", "vs json.loads", "faster than baseline"]
    return table(rows, header)


def batch(count: int) -> str:
    typical = corpus.typical().decode()
    line = json.dumps(json.loads(typical))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "packets.jsonl"
        path.write_text("\n".join([line] * count) + "\n")
        for jobs in (1, 2):
            start = time.perf_counter()
            result = subprocess.run([sys.executable, "-m", "cmp", "check", "--jobs", str(jobs), "--jsonl", str(path)],
                                    stdout=subprocess.DEVNULL, cwd=HERE.parent, check=False)
            elapsed = time.perf_counter() - start
            assert result.returncode == 0, result
            rows.append([f"{count:,} typical packets, --jobs {jobs}", f"{elapsed:.2f}", f"{count / elapsed:,.0f}"])
    return table(rows, ["batch (cmp check --jsonl)", "seconds", "packets/s"])


def startup(runs: int) -> str:
    example = HERE.parent / "examples" / "typical-v0.2.json"
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import cmp'": [sys.executable, "-c", "import cmp"],
        "python -m cmp check one.json": [sys.executable, "-m", "cmp", "check", str(example)],
    }
    rows = []
    for label, argv in commands.items():
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, cwd=HERE.parent, check=True)
            times.append(time.perf_counter() - start)
        rows.append([label, f"{statistics.median(times) * 1000:.0f}"])
    return table(rows, ["start-up", "median ms"])


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--count", type=int, default=10_000, help="packets in the batch run")
    args = parser.parse_args()
    global BUDGET
    repeat = 5 if args.quick else 11
    BUDGET = 0.02 if args.quick else 0.1
    print(f"Machine: {machine()}\n")
    print(per_packet(repeat))
    if not args.quick:
        print()
        print(batch(args.count))
        print()
        print(startup(15))
    return 0


if __name__ == "__main__":
    sys.exit(main())
