"""The team server under load: push, get by id and list over keep-alive connections on 127.0.0.1.

    python benchmarks/server_load.py                          # SQLite, one process
    python benchmarks/server_load.py --engine postgresql --processes 2
    python benchmarks/server_load.py --db postgresql://cmp@host/bench --packets 50000

Each run makes a new database of ``--packets`` packets (one user's, personal scope), starts a
server on it with ``--processes`` worker processes on one port (``python -m cmp server --workers N``),
and drives each scenario with wrk (``wrk -t2 -c8 -d10s --latency``; Debian's package ``wrk``): a push of a
typical 4.2 KB packet under a fresh id per request, a get by id of a random stored packet, a
list of 50. Without ``--db``, PostgreSQL is one this script starts (initdb, as the tests do).
Prints a Markdown table, with the load average over each scenario (the machine may be shared).
Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import cmp  # noqa: E402
from cmp.server import Storage  # noqa: E402
from cmp.server._schema import packets  # noqa: E402
from cmp.server._storage import created_key, reference_created_at  # noqa: E402

ID_FORMAT = "01JBENCH%018d"
_LATENCY = re.compile(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", re.MULTILINE)
_RATE = re.compile(r"Requests/sec:\s+([\d.]+)")
_ERRORS = re.compile(r"Non-2xx or 3xx responses: (\d+)")


def typical_packet() -> dict[str, object]:
    """The example packet, grown to about 4.2 KB (the size the reference's figures used)."""
    data: dict[str, object] = json.loads((ROOT / "examples" / "typical-v0.2.json").read_text(encoding="utf-8"))
    more = [f"Keep the capture path under budget {n}: " + "x" * 180 for n in range(10)]
    data["constraints"] = [*data.get("constraints", []), *more]  # type: ignore[list-item]
    return data


def fill(storage: Storage, user_id: str, count: int) -> None:
    data = typical_packet()
    rows = []
    for number in range(count):
        data["id"] = ID_FORMAT % number
        body = cmp.dumps(cmp.loads(json.dumps(data)))
        key = created_key((1_776_765_600 + number) * 1_000_000_000)
        rows.append(
            {
                "id": data["id"],
                "created_at": reference_created_at(key),
                "goal": data["goal"],
                "body": body,
                "owner_id": user_id,
                "team_id": None,
                "created_key": key,
                "flags": "",
            }
        )
        if len(rows) == 5000:
            with storage.engine.begin() as conn:
                conn.execute(packets.insert(), rows)
            rows = []
    if rows:
        with storage.engine.begin() as conn:
            conn.execute(packets.insert(), rows)


def scripts(folder: Path, count: int) -> dict[str, Path]:
    body = json.dumps(typical_packet()).replace("\\", "\\\\").replace('"', '\\"')
    push = folder / "push.lua"
    push.write_text(
        f'local body = "{body}"\n'
        "local counter = 0\n"
        "local threads = 0\n"
        "local tag = '0000'\n"
        "setup = function(thread) threads = threads + 1; thread:set('tid', threads) end\n"
        "init = function(args) tag = (args[1] or '0000') .. tostring(tid % 10) end\n"
        "request = function()\n"
        "  counter = counter + 1\n"
        "  local id = string.format('01JPUSH%s%014d', tag, counter)\n"
        "  local b = body:gsub('01J9X8K2QZ7N4M0WXYZV3R8ABC', id, 1)\n"
        "  return wrk.format('POST', '/v1/packets', nil, b)\n"
        "end\n",
        encoding="utf-8",
    )
    get = folder / "get.lua"
    get.write_text(
        "request = function()\n"
        f"  return wrk.format('GET', string.format('/v1/packets/{ID_FORMAT}', math.random(0, {count - 1})))\n"
        "end\n",
        encoding="utf-8",
    )
    return {"push": push, "get by id": get, "list of 50": Path()}


def run_wrk(base: str, token: str, script: Path, scenario: str, duration: int) -> tuple[float, float, float, int]:
    """(requests per second, p50 ms, p99 ms, non-2xx answers): ``wrk -t2 -c8`` on one server."""
    command = ["wrk", "-t2", "-c8", f"-d{duration}s", "--latency", "-H", f"Authorization: Bearer {token}"]
    if scenario != "list of 50":
        command += ["-s", str(script)]
    command += [
        base + "/v1/packets?limit=50" if scenario == "list of 50" else base,
        "--",
        f"{time.time_ns() % 10**4:04d}",
    ]
    out = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True).stdout
    rate = float(_RATE.search(out).group(1))  # type: ignore[union-attr]
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    latencies = {m.group(1): float(m.group(2)) * scale[m.group(3)] for m in _LATENCY.finditer(out)}
    found = _ERRORS.search(out)
    return rate, latencies.get("50", 0.0), latencies.get("99", 0.0), int(found.group(1)) if found else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--db", help="a PostgreSQL URL of an empty database to use (default: one started here)")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--packets", type=int, default=50_000)
    parser.add_argument("--duration", type=int, default=10)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("server_load: wrk is not installed (Debian: apt-get install wrk)", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix="cmp-server-load-"))
    postgres = None
    try:
        if args.db:
            db = args.db
        elif args.engine == "postgresql":
            from tests.server.conftest import start_postgres

            postgres = start_postgres()
            db = postgres.new_database()
        else:
            db = str(folder / "server.db")
        storage = Storage(db)
        storage.migrate()
        token = storage.init()
        user_id = storage.user_for_token(token)
        assert user_id is not None
        started = time.perf_counter()
        fill(storage, user_id, args.packets)
        storage.analyze()  # as autovacuum would, in time, on a server that grew to this size
        print(f"{args.packets:,} packets stored in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        storage.close()
        from tests.server.conftest import free_port, wait_until_up

        port = free_port()
        log = folder / "server.log"
        command = [sys.executable, "-m", "cmp", "server", "--db", db, "--addr", f"127.0.0.1:{port}"]
        with log.open("wb") as stderr:
            server = subprocess.Popen(
                [*command, "--workers", str(args.processes)], stdout=subprocess.DEVNULL, stderr=stderr, cwd=ROOT
            )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_up(base, server, log)
            print(f"| {args.engine}, {args.processes} process(es) | req/s | p50 ms | p99 ms | non-2xx | load average |")
            print("|---|---|---|---|---|---|")
            for scenario, script in scripts(folder, args.packets).items():
                before = os.getloadavg()[0]
                rate, p50, p99, errors = run_wrk(base, token, script, scenario, args.duration)
                load = f"{before:.1f} to {os.getloadavg()[0]:.1f}"
                print(f"| {scenario} | {rate:,.0f} | {p50:.2f} | {p99:.2f} | {errors} | {load} |", flush=True)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    finally:
        if postgres is not None:
            postgres.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
