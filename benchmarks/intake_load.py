"""Intake load: requests per second through the example intake app under a real uvicorn.

    python benchmarks/intake_load.py                    # up to 300 requests per body, 4 connections
    python benchmarks/intake_load.py --requests 90 --connections 2
    python benchmarks/intake_load.py --only typical deep-10000

Serves examples/intake-app (``make_app``, the raw-bytes routes, application/json only) on
127.0.0.1, on a port the kernel picks, in a child process; this process is the client:
``--connections`` keep-alive connections (threads, stdlib http.client), each posting the
same body in turn. Typical packets (benchmarks/corpus.py) and the hostile inputs
(benchmarks/hostile.py, imported, not copied: a lenient case goes to /packets/lenient)
are measured side by side, in rounds in which every body takes its turn, since this
machine's speed drifts; req/s is the median of the rounds, latency the median and 95th
percentile over all of a body's requests, and server CPU the child's user + system time
per request (from /proc), which says what a body costs the server whatever the client's
share of the cores. The request count is bounded: ``--requests`` per body, fewer for a
body whose requests would take more than ``--budget`` seconds (the warm-up's first
request says; ROUNDS at least). The store's cap is raised to hold every packet a run
stores, so no answer is a 507.

Prints a Markdown table. It measures; the tests assert behaviour.
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import corpus  # noqa: E402
import hostile  # noqa: E402
from run import machine, table  # noqa: E402

ROUNDS = 3
WARM_UP = 5  # requests per body before the rounds: connections made, caches warm


@dataclass(frozen=True)
class Body:
    name: str
    raw: bytes
    route: str
    kind: str  # "typical" or "hostile"


def bodies(only: Sequence[str] | None) -> list[Body]:
    out = [
        Body("typical", corpus.typical(), "/packets", "typical"),
        Body("big", corpus.big(), "/packets", "typical"),
        Body("typical (lenient)", corpus.typical(), "/packets/lenient", "typical"),
    ]
    for case in hostile.CASES:
        if case.fresh:  # fresh inputs are about RE2's caches across many texts: hostile.py measures them
            continue
        route = "/packets/lenient" if case.lenient else "/packets"
        out.append(Body(hostile.label(case), hostile.build(case), route, "hostile"))
    if only:
        out = [body for body in out if body.name.split(" (")[0] in only]
    return out


# --- the server --------------------------------------------------------------------------


def serve(fd: int, capacity: int) -> None:
    """The child: the example app under uvicorn on the inherited listening socket."""
    import importlib.util

    import uvicorn

    spec = importlib.util.spec_from_file_location("intake_app", ROOT / "examples" / "intake-app" / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    config = uvicorn.Config(module.make_app(capacity=capacity), log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[socket.socket(fileno=fd)])


def start_server(capacity: int) -> tuple[subprocess.Popen[bytes], tuple[str, int]]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))  # loopback only
    listener.listen(128)
    command = [sys.executable, __file__, "--serve-fd", str(listener.fileno()), "--capacity", str(capacity)]
    process = subprocess.Popen(command, pass_fds=[listener.fileno()])
    address = listener.getsockname()
    listener.close()
    for _ in range(300):
        try:
            connection = http.client.HTTPConnection(address[0], address[1], timeout=30)
            connection.request("GET", "/packets/ready")
            connection.getresponse().read()
            connection.close()
            return process, address
        except OSError:
            if process.poll() is not None:
                raise SystemExit("the server ended before it answered") from None
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the server never answered")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- the client --------------------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    latencies: list[float]
    statuses: Counter[int]


def post_many(address: tuple[str, int], body: Body, count: int, connections: int) -> Run:
    """``count`` POSTs of ``body``, shared among ``connections`` keep-alive connections."""
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    shares = [count // connections + (1 if i < count % connections else 0) for i in range(connections)]
    headers = {"content-type": "application/json"}

    def worker(share: int) -> None:
        connection = http.client.HTTPConnection(address[0], address[1], timeout=60)
        mine: list[float] = []
        codes: Counter[int] = Counter()
        for _ in range(share):
            start = time.perf_counter()
            connection.request("POST", body.route, body=body.raw, headers=headers)
            response = connection.getresponse()
            response.read()
            mine.append(time.perf_counter() - start)
            codes[response.status] += 1
            if response.getheader("connection", "").lower() == "close":
                connection.close()  # the next request opens another
        connection.close()
        with lock:
            latencies.extend(mine)
            statuses.update(codes)

    threads = [threading.Thread(target=worker, args=(share,)) for share in shares if share]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Run(time.perf_counter() - start, latencies, statuses)


def counts(address: tuple[str, int], chosen: list[Body], requests: int, budget: float) -> dict[str, int]:
    """Warm up with each body and say how many requests it gets per round: ``requests``
    over the rounds, fewer (ROUNDS at least) for a body whose requests would take more
    than ``budget`` seconds of one connection's time. The first request is a cold one (the
    server's first check of a kind builds what later ones reuse): the warm ones after it
    say what a request takes, unless the first alone took a second."""
    out = {}
    for body in chosen:
        seconds = post_many(address, body, 1, 1).seconds
        if seconds < 1.0:
            seconds = post_many(address, body, WARM_UP - 1, 1).seconds / (WARM_UP - 1)
        out[body.name] = max(1, min(requests, int(budget / seconds)) // ROUNDS)
    return out


def measure(
    address: tuple[str, int], pid: int, chosen: list[Body], requests: int, connections: int, budget: float
) -> str:
    per_round = counts(address, chosen, requests, budget)
    rates: dict[str, list[float]] = {body.name: [] for body in chosen}
    latencies: dict[str, list[float]] = {body.name: [] for body in chosen}
    statuses: dict[str, Counter[int]] = {body.name: Counter() for body in chosen}
    cpu: dict[str, float] = dict.fromkeys(rates, 0.0)
    for _ in range(ROUNDS):
        for body in chosen:
            before = cpu_seconds(pid)
            run = post_many(address, body, per_round[body.name], connections)
            cpu[body.name] += cpu_seconds(pid) - before
            rates[body.name].append(per_round[body.name] / run.seconds)
            latencies[body.name] += run.latencies
            statuses[body.name] += run.statuses
    typical_rate = statistics.median(rates["typical"]) if "typical" in rates else None
    rows = []
    for body in chosen:
        rate = statistics.median(rates[body.name])
        times = sorted(latencies[body.name])
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        rows.append(
            [
                body.name,
                body.kind,
                f"{len(body.raw):,}",
                body.route,
                ", ".join(
                    f"{status}" + (f" ×{n}" if len(statuses[body.name]) > 1 else "")
                    for status, n in sorted(statuses[body.name].items())
                ),
                f"{len(times):,}",
                f"{rate:,.0f}" if rate >= 10 else f"{rate:.2f}",
                "–" if typical_rate is None else f"{rate / typical_rate:.2f}x",
                f"{statistics.median(times) * 1000:.1f}",
                f"{p95 * 1000:.1f}",
                f"{cpu[body.name] / len(times) * 1000:.2f}",
            ]
        )
    header = [
        "body",
        "kind",
        "bytes",
        "route",
        "status",
        "requests",
        "req/s",
        "vs typical",
        "median ms",
        "p95 ms",
        "server CPU ms/req",
    ]
    return table(rows, header)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="requests per body, over all rounds (default 300)")
    parser.add_argument("--connections", type=int, default=4, help="concurrent keep-alive connections (default 4)")
    parser.add_argument(
        "--budget", type=float, default=10.0, help="seconds of requests per body at most (default 10): fewer requests"
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these bodies only (typical, big, hostile names)")
    parser.add_argument("--serve-fd", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--capacity", type=int, default=1_000, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_fd is not None:
        serve(args.serve_fd, args.capacity)
        return 0
    if not 1 <= args.connections <= 64 or not 1 <= args.requests <= 100_000:
        parser.error("--connections is 1 to 64 and --requests 1 to 100,000")
    chosen = bodies(args.only)
    if not chosen:
        parser.error("no body of that name; the hostile ones are listed by python benchmarks/hostile.py --list")
    capacity = len(chosen) * (args.requests + WARM_UP + args.connections) + 1_000
    process, address = start_server(capacity)
    try:
        print(f"Machine: {machine()}\n")
        print(
            f"Up to {args.requests} requests per body (fewer when they would take more than {args.budget:g} s),"
            f" in {ROUNDS} rounds over {args.connections} keep-alive connections\n"
        )
        print(measure(address, process.pid, chosen, args.requests, args.connections, args.budget))
    finally:
        process.terminate()
        process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
