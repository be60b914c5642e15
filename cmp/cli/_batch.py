"""Many packets judged in shares, the results merged in input order: in this process, over
worker processes, or on a Dask cluster. A share is a part of the input that its judge reads
by itself (sources the parent read, a byte range of a JSON Lines file, a range of a store's
rows); judging it yields a :class:`~cmp.cli._render.Block` of rendered output and counts,
which the parent writes in order. At most ``in_flight`` shares are out at once.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from cmp._toolkit import describe, display_name
from cmp.cli._render import Block
from cmp.cli._sources import (
    EVERY_JSON,
    SHARE_BYTES,
    SHARE_ROWS,
    JsonlShare,
    SourceError,
    Unreadable,
    Walk,
    newline_counts,
    open_file,
    packets,
    shares_of,
    unreadable,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from concurrent.futures import Executor
    from typing import Any, Protocol, TypeVar

    T = TypeVar("T")
    T_co = TypeVar("T_co", covariant=True)

# More worker processes than this only exhaust the machine (each is a Python interpreter).
MAX_JOBS = 256
# Shares out at once per worker: one being judged, one waiting, so no worker idles
# while the parent writes.
IN_FLIGHT_PER_WORKER = 2
# The largest share of a JSON Lines file that this machine's worker processes read: about
# 1,200 typical packets, 40 ms of work, against a task's cost of about 0.3 ms of the parent's
# CPU (taken from the workers on a machine with no spare core) and 0.1 ms of a worker's wait.
POOL_SHARE_BYTES = 4 << 20
# The smallest share of a file that workers read (see share_starts).
SMALLEST_SHARE_BYTES = SHARE_BYTES // 4
# Shares whose newlines one task counts: counting a 4 MiB share takes about 0.9 ms (a
# fortieth of judging it), and a task of its own would cost about 0.4 ms more.
COUNTED_TOGETHER = 4


class WorkersFailed(Exception):
    """The workers could not start, or one died. ``share`` is the first share left unjudged
    (unless the one waited for); from :func:`merged`, ``file`` and ``line`` name its first packet."""

    def __init__(self, message: str, share: Share | None = None) -> None:
        super().__init__(message)
        self.share = share
        self.file: str | None = None
        self.line: int | None = None


# The types shares and runners are held to (mypy reads them; nothing checks them at run time).
if TYPE_CHECKING:

    class Pending(Protocol[T_co]):
        """A result on its way: a local future, or a Dask cluster's."""

        def done(self) -> bool: ...

        def result(self, timeout: float | None = None) -> T_co: ...

    class Share(Protocol):
        """A part of a run's input that whoever judges it reads by itself (see the module's docstring)."""

        def first_packet(self, resume: tuple[str, int | None] | None) -> tuple[str, int | None]:
            """The file and line of its first packet, for the message when the share is lost;
            ``resume`` is where the block before it stopped."""

    class Runner(Protocol):
        """Where shares are judged: this process, a process pool, a Dask cluster (cmp.cli._dask)."""

        parallel: bool  # shares run elsewhere, at the same time: plan them ahead (counted line numbers)
        in_flight: int  # how many shares may be out at once
        share_bytes: int  # how much of a JSON Lines file one share covers, at most (share_starts)
        share_rows: int  # how many of a store's rows one share covers

        def submit(self, fn: Callable[..., T], *args: Any) -> Pending[T]:
            """Hand out ``fn(*args)``; :class:`WorkersFailed` if that cannot be done."""

        def result(self, future: Pending[T]) -> T:
            """Wait for a result; :class:`WorkersFailed` if it will never come."""

        def close(self, *, completed: bool) -> None:
            """Stop the workers (at once, if the run did not complete)."""


def _rest_of(block: Block) -> Share | None:
    """What of a block's share its judge left unread: a Share (cmp.cli._render, below this
    module, holds it as an object)."""
    return block.rest  # type: ignore[return-value]


class _Judged:
    """A share judged in this process, its result there at once. Not a concurrent.futures.Future,
    whose import would cost every one-process run about 9 ms of start-up."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def done(self) -> bool:
        return True

    def result(self, timeout: float | None = None) -> Any:
        return self.value


class InProcess:
    """Shares judged here, one at a time, as they are handed out."""

    parallel = False
    in_flight = 1
    share_bytes = SHARE_BYTES
    share_rows = SHARE_ROWS

    def submit(self, fn: Callable[..., T], *args: Any) -> Pending[T]:
        return _Judged(fn(*args))

    def result(self, future: Pending[T]) -> T:
        return future.result()

    def close(self, *, completed: bool) -> None:
        pass


_WORKER_DIED = "a worker process died"
# How often a wait for a share checks that the pool is still alive.
_POLL_SECONDS = 1.0


class ProcessPool:
    """Shares judged by a pool of worker processes on this machine, started on the first share."""

    parallel = True
    share_bytes = POOL_SHARE_BYTES
    share_rows = SHARE_ROWS

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.in_flight = IN_FLIGHT_PER_WORKER * workers
        self.pool: Executor | None = None

    def submit(self, fn: Callable[..., T], *args: Any) -> Pending[T]:
        """Hand a share to the pool (forked on the first call, so that may fail too). A pool breaking
        meanwhile may raise RuntimeError or OSError, so a broken pool is asked about first."""
        from concurrent.futures import BrokenExecutor

        try:
            if self.pool is None:
                # Imported here: a one-file check should not pay for it.
                from concurrent.futures import ProcessPoolExecutor

                self.pool = ProcessPoolExecutor(max_workers=self.workers)
            return self.pool.submit(fn, *args)
        except (RuntimeError, OSError, ImportError, NotImplementedError, ValueError) as exc:
            if isinstance(exc, BrokenExecutor) or self._broken():
                raise WorkersFailed(_WORKER_DIED) from None
            if isinstance(exc, RuntimeError):
                raise WorkersFailed(f"cannot hand out work ({describe(exc)})") from None
            raise WorkersFailed(f"cannot start worker processes ({describe(exc)})") from None

    def _broken(self) -> bool:
        # Private, read defensively: set by ProcessPoolExecutor when a worker died.
        return bool(getattr(self.pool, "_broken", False))

    def result(self, future: Pending[T]) -> T:
        """Wait for a share; WorkersFailed if it will never come. A future handed out as its pool
        broke can stay pending forever, so the wait wakes now and then to ask."""
        from concurrent.futures import BrokenExecutor
        from concurrent.futures import TimeoutError as StillWaiting

        while True:
            try:
                return future.result(timeout=_POLL_SECONDS)
            except BrokenExecutor:
                raise WorkersFailed(_WORKER_DIED) from None
            except StillWaiting:
                if self._broken() and not future.done():
                    raise WorkersFailed(_WORKER_DIED) from None

    def close(self, *, completed: bool) -> None:
        """Shut the pool down and wait for it; after a failure or an interruption, kill its workers first.

        A worker left alive would block the interpreter's exit. The process table is private, so
        it is read defensively. The manager thread is waited for: left running, it races the exit
        hook, which prints an ignored-exception traceback.
        """
        pool = self.pool
        if pool is None:
            return
        if not completed:
            processes = getattr(pool, "_processes", None) or {}
            for process in list(processes.values()):
                try:
                    process.kill()
                except (OSError, ValueError, AttributeError):
                    pass
        pool.shutdown(wait=True, cancel_futures=not completed)


def usable_cores() -> int:
    """The cores this process may run on (its affinity), not all the machine has; at most MAX_JOBS."""
    try:
        cores = len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return min(cores, MAX_JOBS)


JOBS_RANGE = f"--jobs must be 0 (all cores) to {MAX_JOBS}"


def workers_for(jobs: int) -> int | None:
    """The worker processes --jobs asks for (0: one per usable core); None when out of range (JOBS_RANGE)."""
    if not 0 <= jobs <= MAX_JOBS:
        return None
    return jobs or usable_cores()


def runner_for(workers: int) -> Runner:
    """This process for one worker, else a pool of ``workers`` processes."""
    return InProcess() if workers <= 1 else ProcessPool(workers)


def merged(
    shares: Iterable[Share | Unreadable],
    work: Callable[[Any, Any], Block],
    options: object,
    runner: Runner,
) -> Generator[Block | Unreadable, None, None]:
    """Each share's Block (and each Unreadable) in input order; a block's ``rest`` is judged
    before any later share. A problem repeated from an earlier block is said once. Raises
    :class:`WorkersFailed` when the workers cannot start or one dies, after yielding every
    block before it. The runner is closed on any exit."""
    window: deque[_Out] = deque()
    resume: tuple[str, int | None] | None = None
    completed = False
    said: set[tuple[str, str]] = set()
    broken: set[str] = set()  # the JSON Lines files a share could not read on

    def hand_out(share: Share) -> _Out:
        try:
            return _Out(share, runner.submit(work, share, options))
        except WorkersFailed as exc:
            return _Out(share, exc)

    def oldest() -> Iterator[Block | Unreadable]:
        nonlocal resume
        out = window.popleft()
        if out.submission is None:
            assert isinstance(out.share, Unreadable)
            # The planner could not count a file's lines on, for the reason a share of it
            # before this point already gave (the file changed under the run): said once.
            if (out.share.file, out.share.message) not in said:
                yield out.share
            return
        try:
            if isinstance(out.submission, WorkersFailed):
                raise out.submission
            block = runner.result(out.submission)
        except WorkersFailed as exc:
            lost = out.share if exc.share is None else exc.share
            assert not isinstance(lost, Unreadable)
            exc.file, exc.line = lost.first_packet(resume)
            raise
        resume = block.resume or resume
        file = out.share.file if isinstance(out.share, JsonlShare) else None
        if file is not None and file in broken:
            # A later share of a file that changed under the run may have been read before
            # the change: its results would follow a gap. Nothing after the problem counts.
            yield replace(block, output=b"", entries=0, packets=0, failed=0, problems=(), rest=None)
            return
        if block.problems:
            new = tuple(problem for problem in block.problems if problem not in said)
            said.update(new)
            broken.update(problem_file for problem_file, _ in block.problems)
            if new != block.problems:
                block = replace(block, problems=new)
        yield block
        rest = _rest_of(block)
        if rest is not None and not out.rest_out:
            window.appendleft(hand_out(rest))

    def hand_out_rests() -> None:
        """Hand out the rest of every share that is done, right behind it in the window, so
        workers do not idle until every share before it is taken. Only for workers elsewhere:
        in this process a rest is judged after its block is written."""
        index = 0
        while index < len(window):
            out = window[index]
            index += 1
            if out.rest_out or isinstance(out.submission, WorkersFailed) or out.submission is None:
                continue
            if not out.submission.done():
                continue
            try:
                rest = _rest_of(out.submission.result(timeout=0))
            except Exception:  # not here yet after all (a cluster's result is fetched), or raised
                continue  # again, and reported, when the share is taken: its rest is handed out then
            out.rest_out = True
            if rest is not None:
                window.insert(index, hand_out(rest))

    planned = iter(shares)
    try:
        while True:
            try:
                share = next(planned)
            except StopIteration:
                break
            except WorkersFailed as exc:  # planning the shares (counting lines) needed the workers
                assert exc.share is not None, "the planner names the share it could not plan"
                window.append(_Out(exc.share, exc))
                break
            if isinstance(share, Unreadable):
                window.append(_Out(share, None))
            else:
                window.append(hand_out(share))
                if isinstance(window[-1].submission, WorkersFailed):
                    break  # no point reading on: nothing more can be judged
            # Wait for the oldest share when too many are out; take any that are done anyway.
            while window:
                if runner.parallel:
                    hand_out_rests()
                if not (len(window) > runner.in_flight or _done(window[0].submission)):
                    break
                yield from oldest()
        while window:
            if runner.parallel:
                hand_out_rests()
            yield from oldest()
        completed = True
    finally:
        runner.close(completed=completed)


@dataclass(slots=True)
class _Out:
    """A share in the window: handed out (or why it could not be, or None for an Unreadable),
    and whether its rest, if it has one, is already in the window right behind it."""

    share: Share | Unreadable
    submission: Pending[Block] | WorkersFailed | None
    rest_out: bool = False


def _done(submission: Pending[Block] | WorkersFailed | None) -> bool:
    return submission is None or isinstance(submission, WorkersFailed) or submission.done()


def share_starts(size: int, largest: int, in_flight: int) -> list[int]:
    """Where the shares of a file of ``size`` bytes start, for workers that take ``in_flight``
    shares at once: at most ``largest`` and ``left // (2 * in_flight)`` bytes, at least
    SMALLEST_SHARE_BYTES, so a run does not end with one worker judging a large share alone."""
    starts = [0]
    while True:
        left = size - starts[-1]
        step = max(SMALLEST_SHARE_BYTES, min(largest, left // (2 * in_flight)))
        if step >= left:
            return starts
        starts.append(starts[-1] + step)


def jsonl_shares(
    path: str, file: str, size: int, runner: Runner, *, inode: int | None = None
) -> Iterator[JsonlShare | Unreadable]:
    """A JSON Lines file of ``size`` bytes as shares for ``runner``: in this process, one share
    that judging cuts as it goes; over workers, those of :func:`share_starts`, each share's
    first line number counted by the workers, so the parent never reads the file."""
    starts = share_starts(size, runner.share_bytes, runner.in_flight) if runner.parallel else [0]
    last = len(starts) - 1
    counts: deque[int] = deque()  # newlines of the shares from the one handed out last, as counted
    batches: deque[Pending[list[int]] | WorkersFailed] = deque()
    batched = 0  # the shares before this one are counted, or being counted
    ahead = 2 * runner.in_flight

    def count(first: int, end: int) -> Pending[list[int]] | WorkersFailed:
        try:
            return runner.submit(newline_counts, path, tuple(starts[first : end + 1]), inode)
        except WorkersFailed as exc:
            return exc

    lines_before = 0
    for index, start in enumerate(starts):
        yield JsonlShare(path, file, start, None if index == last else starts[index + 1], lines_before, inode)
        if index == last:
            return
        while batched < last and batched < index + ahead:
            end = min(batched + COUNTED_TOGETHER, last)
            batches.append(count(batched, end))
            batched = end
        try:
            if not counts:
                counted = batches.popleft()
                if isinstance(counted, WorkersFailed):
                    raise counted
                counts.extend(runner.result(counted))
        except WorkersFailed as exc:
            # The next share is lost: it starts no earlier than the line after those counted.
            lost_end = starts[index + 2] if index + 2 <= last else None
            lost = JsonlShare(path, file, starts[index + 1], lost_end, lines_before, inode)
            raise WorkersFailed(str(exc), lost) from None
        except (SourceError, OSError) as exc:
            yield unreadable(file, exc)
            return
        lines_before += counts.popleft()


def input_shares(
    files: Sequence[str], jsonl: Sequence[str], runner: Runner, walk: Walk = EVERY_JSON
) -> Generator[Share | Unreadable, None, None]:
    """What ``check`` judges, as shares: the FILE and DIR arguments (read here), then each
    --jsonl file (read by whoever judges it). An unreadable source takes its place in the order."""
    one_by_one = not runner.parallel
    yield from shares_of(packets(files, (), walk), one_by_one=one_by_one)
    for raw_name in jsonl:
        if raw_name == "-":
            yield from shares_of(packets((), ("-",)), one_by_one=one_by_one)
        else:
            yield from jsonl_file_shares(raw_name, runner)


def jsonl_file_shares(raw_name: str, runner: Runner) -> Iterator[JsonlShare | Unreadable]:
    """A named JSON Lines file as shares for ``runner`` (:func:`jsonl_shares`), or why it cannot be read.
    Workers open it by absolute name and refuse a file no longer the one planned (``JsonlShare.inode``)."""
    name = display_name(raw_name)
    try:
        with open_file(raw_name) as stream:
            info = os.fstat(stream.fileno())
    except (SourceError, OSError) as exc:
        yield unreadable(name, exc)
        return
    yield from jsonl_shares(os.path.abspath(raw_name), name, info.st_size, runner, inode=info.st_ino)
