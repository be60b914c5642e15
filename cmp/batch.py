"""Checking many packets: JSON Lines input, results in input order, optional worker processes."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from cmp.check import Report, check
from cmp.inputs import InputError
from cmp.intake import MAX_PACKET_BYTES, size_finding

# Jobs handed to the workers at a time: enough to keep both cores busy, few enough
# that an endless stream never piles up in memory.
BATCH = 2000
CHUNK = 100


@dataclass(frozen=True, slots=True)
class Job:
    """One packet to judge: where it came from, its bytes, its true size when known."""

    file: str
    line: int | None
    data: bytes
    size: int | None

    @property
    def name(self) -> str:
        return self.file if self.line is None else f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judged job, reduced to what the CLI prints (small and picklable for workers)."""

    name: str
    accepted: bool
    result: dict[str, Any]
    lines: tuple[str, ...]


def report_lines(name: str, report: Report) -> list[str]:
    lines = []
    schema_only = all(f.code == "schema" for f in report.errors)
    error_prefix = "warning: " if report.lenient and schema_only else ""
    for finding in report.errors:
        lines.append(f"{name}: {error_prefix}{finding}")
    redaction_prefix = "warning: redaction " if report.allow_unredacted else "redaction "
    for redaction in report.redactions:
        lines.append(f"{name}: {redaction_prefix}{redaction}")
    if report.accepted:
        lines.append(f"{name}: ok" if report.ok else f"{name}: accepted (not conforming)")
    return lines


def judge_report(data: bytes, size: int | None, lenient: bool, allow_unredacted: bool) -> Report:
    if len(data) > MAX_PACKET_BYTES:
        return Report(None, (size_finding(size),), (), None, lenient, allow_unredacted)
    return check(data, lenient=lenient, allow_unredacted=allow_unredacted)


def judge(job: Job, lenient: bool, allow_unredacted: bool) -> Verdict:
    report = judge_report(job.data, job.size, lenient, allow_unredacted)
    where: dict[str, Any] = {"file": job.file} if job.line is None else {"file": job.file, "line": job.line}
    return Verdict(job.name, report.accepted, {**where, **report.to_json()}, tuple(report_lines(job.name, report)))


def _judge_packed(args: tuple[Job, bool, bool]) -> Verdict:
    return judge(*args)


def _batches(jobs: Iterable[Job]) -> Iterator[list[Job]]:
    batch: list[Job] = []
    for job in jobs:
        batch.append(job)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def judge_all(jobs: Iterable[Job], lenient: bool, allow_unredacted: bool, workers: int) -> Iterator[Verdict]:
    """Verdicts in input order; ``workers`` > 1 spreads the work over processes."""
    if workers <= 1:
        for job in jobs:
            yield judge(job, lenient, allow_unredacted)
        return
    from concurrent.futures import ProcessPoolExecutor  # a one-file check should not pay for it

    with ProcessPoolExecutor(max_workers=workers) as pool:
        for batch in _batches(jobs):
            packed = [(job, lenient, allow_unredacted) for job in batch]
            yield from pool.map(_judge_packed, packed, chunksize=CHUNK)


def read_jsonl(stream: BinaryIO, file: str) -> Iterator[Job]:
    """One job per non-blank line (LF or CRLF); a line is never held past 32,769 bytes."""
    number = 0
    size: int
    while True:
        line = stream.readline(MAX_PACKET_BYTES + 2)
        if not line:
            return
        number += 1
        if line.endswith(b"\n"):
            body = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            size = len(body)
        elif len(line) > MAX_PACKET_BYTES:
            body, size = line, len(line)
            while True:  # skip the rest of the over-long line, counting it
                more = stream.readline(65536)
                size += len(more)
                if not more or more.endswith(b"\n"):
                    size -= 1 if more.endswith(b"\n") else 0
                    break
        else:
            body, size = line, len(line)
        if size > MAX_PACKET_BYTES or body.strip(b" \t\r\n"):
            yield Job(file, number, body, size)


def open_jsonl(name: str) -> BinaryIO:
    if name == "-":
        if sys.stdin is None or sys.stdin.closed:
            raise InputError("cannot read stdin: it is closed")
        return sys.stdin.buffer
    if os.path.isdir(name):
        raise InputError("cannot read: is a directory")
    try:
        return open(name, "rb")
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}") from None


class Progress:
    """A one-line counter on stderr, only on a terminal and only once a run takes a while."""

    def __init__(self, total: int | None, stream: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.started = time.monotonic()
        self.shown_at = 0.0
        self.enabled = bool(self.stream is not None and getattr(self.stream, "isatty", lambda: False)())
        self.visible = False

    def step(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < 1.0 or now - self.shown_at < 0.1:
            return
        self.shown_at = now
        rate = self.done / (now - self.started)
        of = f"/{self.total}" if self.total else ""
        self.stream.write(f"\rcmp: {self.done}{of} packets, {rate:,.0f}/s")
        self.stream.flush()
        self.visible = True

    def close(self) -> None:
        if self.visible:
            self.stream.write("\r\033[K")
            self.stream.flush()
