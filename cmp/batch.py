"""Checking many packets: JSON Lines input, results in input order, optional worker processes."""

from __future__ import annotations

import json
import sys
import time
from collections import deque
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from cmp._intake import MAX_PACKET_BYTES, size_finding
from cmp._pipeline import Report, check

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future
    from typing import TypeAlias

# A chunk is what one worker judges at a time: enough jobs that handing it over costs
# little next to judging it. At most IN_FLIGHT_PER_WORKER chunks per worker are out at
# once, so however long the input, only a few chunks of jobs and results are in memory.
CHUNK = 100
CHUNK_BYTES = 256 * 1024
IN_FLIGHT_PER_WORKER = 2


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
class Unreadable:
    """A source that could not be read. It travels with the jobs so that it is reported in input order."""

    file: str
    message: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judged job, reduced to what the CLI prints.

    Only what the chosen format needs is rendered, and rendered where the job was
    judged: a worker hands back one string per line (``lines``, text output) or one
    JSON object as text (``entry``, JSON output; ``lines`` is then empty), which costs
    a fraction of the memory and pickling of the report or its dictionaries.
    """

    name: str
    accepted: bool
    lines: tuple[str, ...]
    entry: str = ""


class WorkersFailed(Exception):
    """The worker processes could not start, or one died: the run cannot go on as asked.

    ``pending`` is the first job left unjudged; every result before it was yielded.
    """

    def __init__(self, message: str, pending: Job) -> None:
        super().__init__(message)
        self.pending = pending


def json_entry(result: dict[str, Any]) -> str:
    """One result as the JSON text ``--format json`` prints for it (two-space indent)."""
    return json.dumps(result, ensure_ascii=False, indent=2)


def _where(file: str, line: int | None) -> dict[str, Any]:
    return {"file": file} if line is None else {"file": file, "line": line}


def error_entry(file: str, line: int | None, message: str) -> str:
    """The JSON entry of a source or job that could not be judged.

    It has the members of a judged one (nothing conforming, accepted or found), so a
    consumer reads every result alike; ``error`` says why, where a judged one has null.
    """
    return json_entry(
        {
            **_where(file, line),
            "ok": False,
            "conforming": False,
            "accepted": False,
            "version": None,
            "errors": [],
            "redactions": [],
            "error": message,
        }
    )


def report_lines(name: str, report: Report) -> list[str]:
    """The text output of one report, one result per line (escaped for printing by the CLI)."""
    lines = []
    error_prefix = "warning: " if report.lenient and report.schema_only else ""
    for finding in report.errors:
        lines.append(f"{name}: {error_prefix}{finding}")
    redaction_prefix = "warning: redaction " if report.allow_unredacted else "redaction "
    for redaction in report.redactions:
        lines.append(f"{name}: {redaction_prefix}{redaction}")
    if report.accepted:
        lines.append(f"{name}: ok" if report.ok else f"{name}: accepted (not conforming)")
    return lines


def judge_report(data: bytes, size: int | None, lenient: bool, allow_unredacted: bool) -> Report:
    """``check`` of a source, or the size finding for one that was cut at the read limit."""
    if len(data) > MAX_PACKET_BYTES:
        return Report(None, (size_finding(size),), (), None, lenient, allow_unredacted)
    return check(data, lenient=lenient, allow_unredacted=allow_unredacted)


def judge(job: Job, lenient: bool, allow_unredacted: bool, as_json: bool = False) -> Verdict:
    """One job judged and rendered for the text output, or with ``as_json`` for the JSON output."""
    report = judge_report(job.data, job.size, lenient, allow_unredacted)
    if as_json:
        entry = {**_where(job.file, job.line), **report.to_json(), "error": None}
        return Verdict(job.name, report.accepted, (), json_entry(entry))
    return Verdict(job.name, report.accepted, tuple(report_lines(job.name, report)))


def _judge_chunk(jobs: list[Job], lenient: bool, allow_unredacted: bool, as_json: bool) -> list[Verdict]:
    return [judge(job, lenient, allow_unredacted, as_json) for job in jobs]


def _chunks(items: Iterable[Job | Unreadable]) -> Iterator[list[Job | Unreadable]]:
    """Items in lists of at most CHUNK jobs or about CHUNK_BYTES of packet bytes.

    The byte bound keeps a chunk of large packets (whose results can be large too)
    as small in memory as a chunk of typical ones.
    """
    chunk: list[Job | Unreadable] = []
    count = size = 0
    for item in items:
        chunk.append(item)
        if isinstance(item, Job):
            count += 1
            size += len(item.data)
        if count >= CHUNK or size >= CHUNK_BYTES:
            yield chunk
            chunk, count, size = [], 0, 0
    if chunk:
        yield chunk


def judge_all(
    items: Iterable[Job | Unreadable], lenient: bool, allow_unredacted: bool, workers: int, as_json: bool = False
) -> Generator[Verdict | Unreadable, None, None]:
    """Verdicts (and unreadable sources) in input order; ``workers`` > 1 spreads the work over processes.

    Raises :class:`WorkersFailed` after yielding every result it could when the
    worker processes cannot start or one of them dies.
    """
    if workers <= 1:
        for item in items:
            yield item if isinstance(item, Unreadable) else judge(item, lenient, allow_unredacted, as_json)
        return
    yield from _judge_in_workers(items, (lenient, allow_unredacted, as_json), workers)


if TYPE_CHECKING:
    # What a chunk turned into: the future of its verdicts, why it could not be handed
    # out, or nothing (a chunk of unreadable sources only).
    _Outcome: TypeAlias = "Future[list[Verdict]] | str | None"


def _judge_in_workers(
    items: Iterable[Job | Unreadable], options: tuple[bool, bool, bool], workers: int
) -> Iterator[Verdict | Unreadable]:
    """A bounded window of chunks in flight, so memory stays flat however long the input.

    Results are yielded in input order as soon as the oldest chunk is done; when the
    pool fails, everything before the first chunk it lost is still yielded.
    """
    pool: Executor | None = None
    window: deque[tuple[list[Job | Unreadable], _Outcome]] = deque()
    completed = False
    try:
        for chunk in _chunks(items):
            outcome: _Outcome = None
            if any(isinstance(item, Job) for item in chunk):
                if pool is None:
                    pool, outcome = _start_pool(workers)
                if pool is not None:
                    outcome = _submit(pool, [item for item in chunk if isinstance(item, Job)], options)
            window.append((chunk, outcome))
            if isinstance(outcome, str):
                break  # no point reading on: nothing more can be judged
            # Wait for the oldest chunk when too many are out; print any that are done anyway.
            while window and (len(window) > IN_FLIGHT_PER_WORKER * workers or _done(window[0][1])):
                yield from _in_order(*window.popleft(), pool)
        while window:
            yield from _in_order(*window.popleft(), pool)
        completed = True
    finally:
        if pool is not None:
            _stop_pool(pool, completed)


def _done(outcome: _Outcome) -> bool:
    return outcome is None or isinstance(outcome, str) or outcome.done()


def _start_pool(workers: int) -> tuple[Executor | None, str | None]:
    """A process pool, or ``(None, why not)``. Imported here: a one-file check should not pay for it."""
    try:
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(max_workers=workers), None
    except (OSError, ImportError, NotImplementedError, ValueError) as exc:
        return None, f"cannot start worker processes ({_describe(exc)})"


def _submit(pool: Executor, jobs: list[Job], options: tuple[bool, bool, bool]) -> _Outcome:
    """Hand a chunk to the pool; processes are forked on the first call, so that may fail too.

    A pool that breaks while this runs may answer with a plain RuntimeError ("after
    shutdown": it marks itself shut down right after broken) or an OSError from its
    closed wake-up pipe, so a broken pool is asked about first.
    """
    from concurrent.futures import BrokenExecutor

    try:
        return pool.submit(_judge_chunk, jobs, *options)
    except (RuntimeError, OSError) as exc:
        if isinstance(exc, BrokenExecutor) or _broken(pool):
            return _WORKER_DIED
        if isinstance(exc, OSError):
            return f"cannot start worker processes ({_describe(exc)})"
        return f"cannot hand out work ({_describe(exc)})"


_WORKER_DIED = "a worker process died"
# How often a wait for a chunk checks that the pool is still alive.
_POLL_SECONDS = 1.0


def _broken(pool: Executor) -> bool:
    # Private, read defensively: set by ProcessPoolExecutor when a worker died.
    return bool(getattr(pool, "_broken", False))


def _in_order(
    chunk: list[Job | Unreadable], outcome: _Outcome, pool: Executor | None
) -> Iterator[Verdict | Unreadable]:
    """The items of one chunk in order: unreadable sources as they are, jobs as their verdicts."""
    verdicts: Iterator[Verdict] | None = None
    for item in chunk:
        if isinstance(item, Unreadable):
            yield item
            continue
        if verdicts is None:
            verdicts = iter(_verdicts(outcome, item, pool))
        yield next(verdicts)


def _verdicts(outcome: _Outcome, first: Job, pool: Executor | None) -> list[Verdict]:
    """The verdicts of a chunk, waiting for them; WorkersFailed if they will never come.

    A future handed out in the instant its pool broke can be left pending forever
    (the pool fails the futures it knows, then stops), so the wait wakes up now and
    then to ask whether the pool is broken.
    """
    from concurrent.futures import BrokenExecutor
    from concurrent.futures import TimeoutError as StillWaiting

    if isinstance(outcome, str) or outcome is None:
        raise WorkersFailed(outcome or _WORKER_DIED, first)
    while True:
        try:
            return outcome.result(timeout=_POLL_SECONDS)
        except BrokenExecutor:
            raise WorkersFailed(_WORKER_DIED, first) from None
        except StillWaiting:
            if pool is not None and _broken(pool) and not outcome.done():
                raise WorkersFailed(_WORKER_DIED, first) from None


def _stop_pool(pool: Executor, completed: bool) -> None:
    """Shut the pool down and wait for it; after a failure or an interruption, kill its workers first.

    A worker left alive would block the interpreter's exit (it joins its children),
    and one forked just before a failed fork has no manager to stop it. The process
    table is private (Python 3.14 adds ``kill_workers()``), so it is read defensively.
    Waiting for the pool's manager thread matters even then: left running, it races
    the interpreter's exit hook, which then prints an ignored-exception traceback.
    Once the workers are dead the manager sees it at once and stops.
    """
    if not completed:
        processes = getattr(pool, "_processes", None) or {}
        for process in list(processes.values()):
            try:
                process.kill()
            except (OSError, ValueError, AttributeError):
                pass
    pool.shutdown(wait=True, cancel_futures=not completed)


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


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


class Progress:
    """A one-line counter on stderr, only on a terminal and only once a run takes a while."""

    def __init__(self, total: int | None, stream: Any = None, quiet: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.started = time.monotonic()
        self.shown_at = 0.0
        self.enabled = not quiet and bool(self.stream is not None and getattr(self.stream, "isatty", lambda: False)())
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
        self._show(f"\rcmp: {self.done}{of} packets, {rate:,.0f}/s")
        self.visible = True

    def _show(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a terminal hung up: the counter is not worth an error
            self.enabled = False

    def clear(self) -> None:
        """Erase the counter, so that an error line written next starts on a clean line."""
        if self.visible:
            self._show("\r\033[K")
            self.visible = False

    def close(self) -> None:
        self.clear()
