"""Prometheus metrics, when the operator asks (``--metrics``): requests by route and status, and
their durations, in the text exposition format. Labels are route templates, never paths: no id,
invite code or team name becomes a label (nor a time series per packet)."""

from __future__ import annotations

from collections import defaultdict

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "DELETE"))
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """Counts kept by the event loop's one thread: no lock needed."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, str, int], int] = defaultdict(int)
        self.buckets: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * len(BUCKETS))
        self.sums: dict[tuple[str, str], float] = defaultdict(float)
        self.counts: dict[tuple[str, str], int] = defaultdict(int)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        if method not in _METHODS:  # a client's made-up method is no new series
            method = "other"
        self.requests[method, route, status] += 1
        key = (method, route)
        counts = self.buckets[key]
        for index, bound in enumerate(BUCKETS):
            if seconds <= bound:
                counts[index] += 1
        self.sums[key] += seconds
        self.counts[key] += 1

    def render(self) -> str:
        lines = [
            "# HELP cmp_server_requests_total Requests answered, by method, route and status.",
            "# TYPE cmp_server_requests_total counter",
        ]
        for (method, route, status), count in sorted(self.requests.items()):
            lines.append(f'cmp_server_requests_total{{method="{method}",route="{route}",status="{status}"}} {count}')
        lines += [
            "# HELP cmp_server_request_duration_seconds How long requests took to answer, by method and route.",
            "# TYPE cmp_server_request_duration_seconds histogram",
        ]
        for (method, route), counts in sorted(self.buckets.items()):
            labels = f'method="{method}",route="{route}"'
            for bound, count in zip(BUCKETS, counts, strict=True):
                lines.append(f'cmp_server_request_duration_seconds_bucket{{{labels},le="{bound}"}} {count}')
            total = self.counts[method, route]
            lines.append(f'cmp_server_request_duration_seconds_bucket{{{labels},le="+Inf"}} {total}')
            lines.append(f"cmp_server_request_duration_seconds_sum{{{labels}}} {self.sums[method, route]:.6f}")
            lines.append(f"cmp_server_request_duration_seconds_count{{{labels}}} {total}")
        return "\n".join(lines) + "\n"
