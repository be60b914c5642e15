"""Benchmarks: per packet and per stage, median microseconds, against json.loads and a baseline.

    python benchmarks/run.py            # everything (about two minutes)
    python benchmarks/run.py --quick    # fewer repeats, no batch or start-up runs
    python benchmarks/run.py --hostile  # also the hostile inputs' table (benchmarks/hostile.py)

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
from operator import truediv
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import baseline  # noqa: E402
import corpus  # noqa: E402

import cmp  # noqa: E402
from cmp import _intake as intake  # noqa: E402
from cmp import _validation as schemas  # noqa: E402
from cmp._quick import parse_counted  # noqa: E402
from cmp._redaction._scan import matches_anywhere, redact, redact_obj  # noqa: E402

BUDGET = 0.05  # seconds per timing round


def rounds_us(funcs: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float] | None]:
    """Per-call microseconds of each function in each of ``repeat`` rounds; None if it raises.

    The functions take turns within every round, so a machine whose speed drifts during
    the run (shared cores, frequency scaling) moves them alike and their ratios hold.
    """
    numbers: dict[str, int] = {}
    for name, func in funcs.items():
        try:
            func()
        except RecursionError:
            continue
        start = time.perf_counter()
        func()
        numbers[name] = max(1, int(BUDGET / max(time.perf_counter() - start, 1e-7)))
    out: dict[str, list[float] | None] = {name: None if name not in numbers else [] for name in funcs}
    for _ in range(repeat):
        for name, number in numbers.items():
            elapsed = timeit.Timer(funcs[name]).timeit(number)
            times = out[name]
            assert times is not None
            times.append(elapsed / number * 1e6)
    return out


def median(times: list[float] | None) -> float | None:
    return None if times is None else statistics.median(times)


def paired_ratio(top: list[float] | None, bottom: list[float] | None) -> str:
    """Median over rounds of top/bottom, both timed in the same round."""
    if top is None or bottom is None:
        return "–"
    return f"{statistics.median(t / b for t, b in zip(top, bottom, strict=True)):.1f}x"


def shown(value: float | None, fmt: str = "{:.0f}") -> str:
    return "fails" if value is None else fmt.format(value)


def stages(raw: bytes) -> tuple[str, dict[str, Callable[[], object]]]:
    """Which way check() goes with this packet, and each of its stages as check() runs them."""
    report = cmp.check(raw)
    packet = report.packet
    out: dict[str, Callable[[], object]] = {}
    counted = parse_counted(raw)
    if counted is not None and report.version is not None:
        obj, strings = counted
        build = schemas.builder(report.version)
        built = build(obj)
        if built is not None and built[1] == strings and packet is not None:
            out["intake"] = lambda: parse_counted(raw)
            out["validate"] = lambda: build(obj)
            clean = not matches_anywhere(raw)
            out["redact"] = (lambda: matches_anywhere(raw)) if clean else (lambda: redact(packet))
            out["encode"] = lambda: cmp.dumps(packet)
            return "quick", out
    parsed, _ = intake.parse_packet(raw)
    out["intake"] = lambda: intake.parse_packet(raw)
    if parsed is not None and report.version is not None:
        version = report.version
        out["validate"] = lambda: schemas.builder(version)(parsed) or schemas.schema_findings(parsed, version)
    if packet is not None:
        out["redact"] = lambda: redact(packet)
        out["encode"] = lambda: cmp.dumps(packet)
    elif parsed is not None:
        out["redact"] = lambda: redact_obj(parsed)
    return "long", out


def full_run(raw: bytes, rules: str = "default") -> None:
    report = cmp.check(raw, rule_set=rules)  # type: ignore[arg-type]
    if report.packet is not None:
        cmp.dumps(report.packet)


def table(rows: list[list[str]], header: list[str]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def per_packet(repeat: int) -> str:
    rows = []
    for name, raw in corpus.build().items():
        path, funcs = stages(raw)
        timed = rounds_us(
            {
                "loads": lambda raw=raw: json.loads(raw),
                "ours": lambda raw=raw: full_run(raw),
                "base": lambda raw=raw: baseline.run(raw),
                **funcs,
            },
            repeat,
        )
        loads, ours, base = timed["loads"], timed["ours"], timed["base"]
        cells = [shown(median(timed[s])) if s in funcs else "–" for s in ("intake", "validate", "redact", "encode")]
        verdict = cmp.check(raw)
        what = "ok" if verdict.ok else ("redactions" if verdict.conforming else f"{len(verdict.errors)} errors")
        rows.append(
            [
                name,
                f"{len(raw):,}",
                what,
                path,
                shown(median(loads)),
                *cells,
                shown(median(ours)),
                shown(median(base)),
                paired_ratio(ours, loads),
                paired_ratio(base, ours),
            ]
        )
    header = [
        "packet",
        "bytes",
        "verdict",
        "path",
        "json.loads µs",
        "intake",
        "validate",
        "redact",
        "encode",
        "check+dumps µs",
        "baseline µs",
        "vs json.loads",
        "faster than baseline",
    ]
    return table(rows, header)


EXTENDED_PACKETS = ("typical", "quoted", "big", "dirty", "near-miss")


def extended_costs(repeat: int) -> str:
    """check + dumps with --rule-set extended against the default rules and json.loads (goal: typical within 5x).

    Every default verdict and finding is the same under both (asserted here, before timing).
    """
    rows = []
    packets = corpus.build()
    for name in EXTENDED_PACKETS:
        raw = packets[name]
        default, extended = cmp.check(raw), cmp.check(raw, rule_set="extended")
        assert [r for r in extended.redactions if r.profile == "default"] == list(default.redactions), name
        assert extended.errors == default.errors, name
        timed = rounds_us(
            {
                "loads": lambda raw=raw: json.loads(raw),
                "default": lambda raw=raw: full_run(raw),
                "extended": lambda raw=raw: full_run(raw, "extended"),
            },
            repeat,
        )
        added = [r.category for r in extended.redactions if r.profile == "extended"]
        rows.append(
            [
                name,
                f"{len(raw):,}",
                f"{len(default.redactions)} + {len(added)}" + (f" ({', '.join(added)})" if added else ""),
                shown(median(timed["loads"])),
                shown(median(timed["default"])),
                shown(median(timed["extended"])),
                paired_ratio(timed["default"], timed["loads"]),
                paired_ratio(timed["extended"], timed["loads"]),
            ]
        )
    header = [
        "packet",
        "bytes",
        "redactions (default + extended)",
        "json.loads µs",
        "check+dumps µs",
        "--rule-set extended µs",
        "default vs json.loads",
        "extended vs json.loads",
    ]
    return table(rows, header)


def lint_costs(repeat: int) -> str:
    """cmp.lint on each corpus packet that check accepts, against json.loads of its bytes (target: 1x on typical)."""
    rows = []
    for name, raw in corpus.build().items():
        packet = cmp.check(raw).packet
        if packet is None:
            continue
        timed = rounds_us({"loads": lambda raw=raw: json.loads(raw), "lint": lambda p=packet: cmp.lint(p)}, repeat)
        found = len(cmp.lint(packet))
        rows.append(
            [
                name,
                f"{found} findings",
                shown(median(timed["loads"])),
                shown(median(timed["lint"])),
                paired_ratio(timed["lint"], timed["loads"]),
            ]
        )
    return table(rows, ["packet", "lint", "json.loads µs", "lint µs", "lint vs json.loads"])


# What the console script pip writes runs (a pre-commit hook's command), as ``python -c``.
_CONSOLE_SCRIPT = "import re, sys; from cmp.cli import main_exit; sys.argv[0] = 'core-memory-packet'; main_exit()"


def startup(runs: int) -> str:
    """Whole-process start-up, the commands taking turns each round (so drift moves them
    alike), and each one's time over ``python -c pass`` in the same round, paired.

    The first three run in this environment, from the repository (whose pyproject.toml
    check reads); the last two without site (``-S``), the package and its dependencies on
    the path, from a folder with no pyproject.toml: as where the package is installed, not
    editable, whose finder and .pth files load typing and more into every process here.
    Their base imports os, as site does in every process.
    """
    example = HERE.parent / "examples" / "typical-v0.2.json"
    import site

    no_site = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), *site.getsitepackages()])}
    elsewhere = tempfile.mkdtemp()
    commands: dict[str, tuple[list[str], str | Path, dict[str, str] | None, str]] = {
        "python -c pass": ([sys.executable, "-c", "pass"], HERE.parent, None, "python -c pass"),
        "python -c 'import cmp'": ([sys.executable, "-c", "import cmp"], HERE.parent, None, "python -c pass"),
        "python -m cmp check one.json": (
            [sys.executable, "-m", "cmp", "check", str(example)],
            HERE.parent,
            None,
            "python -c pass",
        ),
        "python -S -c 'import os' (no site)": ([sys.executable, "-S", "-c", "import os"], elsewhere, no_site, ""),
        "core-memory-packet check one.json (no site)": (
            [sys.executable, "-S", "-c", _CONSOLE_SCRIPT, "check", str(example)],
            elsewhere,
            no_site,
            "python -S -c 'import os' (no site)",
        ),
    }
    for argv, cwd, env, _ in commands.values():  # once each first: bytecode written, files in the page cache
        subprocess.run(argv, stdout=subprocess.DEVNULL, cwd=cwd, env=env, check=True)
    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, (argv, cwd, env, _) in commands.items():
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, cwd=cwd, env=env, check=True)
            times[label].append(time.perf_counter() - start)
    rows = []
    for label, taken in times.items():
        base = commands[label][3] or label
        over = [a - b for a, b in zip(taken, times[base], strict=True)]
        rows.append([label, f"{statistics.median(taken) * 1000:.0f}", f"{statistics.median(over) * 1000:.0f}"])
    return table(rows, ["start-up", "median ms", "over its python -c pass, paired"])


def versus_check_jsonschema(runs: int) -> str:
    """A one-file check as a whole process beside ``check-jsonschema --schemafile`` on the
    same file, both console scripts of this environment, taking turns (the floor: at most
    0.6x). Run it where the package is installed (pip install .), not editable: an
    editable install's finder loads more into every process."""
    bin_dir = Path(sys.executable).parent
    ours, theirs = bin_dir / "core-memory-packet", bin_dir / "check-jsonschema"
    if not (ours.exists() and theirs.exists()):
        return "(check-jsonschema is not installed beside this Python: pip install check-jsonschema)"
    example = HERE.parent / "examples" / "typical-v0.2.json"
    schema = HERE.parent / "cmp" / "schema" / "core-memory.v0.2.json"
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "core-memory-packet check one.json": [str(ours), "check", str(example)],
        "check-jsonschema --schemafile SCHEMA one.json": [str(theirs), "--schemafile", str(schema), str(example)],
    }
    for argv in commands.values():
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, argv in commands.items():
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
            times[label].append(time.perf_counter() - start)
    yardstick = times["check-jsonschema --schemafile SCHEMA one.json"]
    rows = [
        [label, f"{statistics.median(taken) * 1000:.0f}", f"{statistics.median(map(truediv, taken, yardstick)):.2f}x"]
        for label, taken in times.items()
    ]
    return table(rows, ["one file, whole process", "median ms", "vs check-jsonschema"])


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
    parser.add_argument("--count", type=int, default=100_000, help="packets in the batch runs (scale.py)")
    parser.add_argument("--hostile", action="store_true", help="also time the hostile inputs (hostile.py)")
    args = parser.parse_args()
    global BUDGET
    repeat = 5 if args.quick else 11
    BUDGET = 0.02 if args.quick else 0.1
    print(f"Machine: {machine()}\n")
    print(per_packet(repeat))
    print()
    print(extended_costs(repeat))
    print()
    print(lint_costs(repeat))
    if not args.quick:
        print()
        import scale

        print(scale.report(args.count))
        print()
        print(startup(15))
        print()
        print(versus_check_jsonschema(15))
    if args.hostile:
        import hostile

        print()
        print(hostile.report(quick=args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
