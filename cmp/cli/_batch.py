"""Many sources judged, results in input order: in this process, or spread over worker processes."""

from __future__ import annotations

from collections import deque
from collections.abc import Generator, Iterable, Iterator
from typing import TYPE_CHECKING

from cmp._text import describe
from cmp.cli._judge import CheckOptions, Verdict, judge
from cmp.cli._sources import Source, Unreadable

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future
    from typing import TypeAlias

# A chunk is what one worker judges at a time: enough sources that handing it over costs
# little next to judging it. At most IN_FLIGHT_PER_WORKER chunks per worker are out at
# once, so however long the input, only a few chunks of sources and results are in memory.
CHUNK = 100
CHUNK_BYTES = 256 * 1024
IN_FLIGHT_PER_WORKER = 2


class WorkersFailed(Exception):
    """The worker processes could not start, or one died: the run cannot go on as asked.

    ``pending`` is the first source left unjudged; every result before it was yielded.
    """

    def __init__(self, message: str, pending: Source) -> None:
        super().__init__(message)
        self.pending = pending


def _judge_chunk(sources: list[Source], options: CheckOptions) -> list[Verdict]:
    return [judge(source, options) for source in sources]


def _chunks(items: Iterable[Source | Unreadable]) -> Iterator[list[Source | Unreadable]]:
    """Items in lists of at most CHUNK sources or about CHUNK_BYTES of packet bytes.

    The byte bound keeps a chunk of large packets (whose results can be large too)
    as small in memory as a chunk of typical ones.
    """
    chunk: list[Source | Unreadable] = []
    count = size = 0
    for item in items:
        chunk.append(item)
        if isinstance(item, Source):
            count += 1
            size += len(item.data)
        if count >= CHUNK or size >= CHUNK_BYTES:
            yield chunk
            chunk, count, size = [], 0, 0
    if chunk:
        yield chunk


def judge_all(
    items: Iterable[Source | Unreadable], options: CheckOptions, *, workers: int
) -> Generator[Verdict | Unreadable, None, None]:
    """Verdicts (and unreadable sources) in input order; ``workers`` > 1 spreads the work over processes.

    Raises :class:`WorkersFailed` after yielding every result it could when the
    worker processes cannot start or one of them dies.
    """
    if workers <= 1:
        for item in items:
            yield item if isinstance(item, Unreadable) else judge(item, options)
        return
    yield from _judge_in_workers(items, options, workers)


if TYPE_CHECKING:
    # What handing a chunk out came to: the future of its verdicts, why it could not be
    # handed out, or nothing (a chunk of unreadable sources only).
    _Submission: TypeAlias = "Future[list[Verdict]] | str | None"


def _judge_in_workers(
    items: Iterable[Source | Unreadable], options: CheckOptions, workers: int
) -> Iterator[Verdict | Unreadable]:
    """A bounded window of chunks in flight, so memory stays flat however long the input.

    Results are yielded in input order as soon as the oldest chunk is done; when the
    pool fails, everything before the first chunk it lost is still yielded.
    """
    pool: Executor | None = None
    window: deque[tuple[list[Source | Unreadable], _Submission]] = deque()
    completed = False
    try:
        for chunk in _chunks(items):
            submission: _Submission = None
            if any(isinstance(item, Source) for item in chunk):
                if pool is None:
                    pool, submission = _start_pool(workers)
                if pool is not None:
                    submission = _submit(pool, [item for item in chunk if isinstance(item, Source)], options)
            window.append((chunk, submission))
            if isinstance(submission, str):
                break  # no point reading on: nothing more can be judged
            # Wait for the oldest chunk when too many are out; print any that are done anyway.
            while window and (len(window) > IN_FLIGHT_PER_WORKER * workers or _done(window[0][1])):
                yield from _in_order(*window.popleft(), pool)
        while window:
            yield from _in_order(*window.popleft(), pool)
        completed = True
    finally:
        if pool is not None:
            _stop_pool(pool, completed=completed)


def _done(submission: _Submission) -> bool:
    return submission is None or isinstance(submission, str) or submission.done()


def _start_pool(workers: int) -> tuple[Executor | None, str | None]:
    """A process pool, or ``(None, why not)``. Imported here: a one-file check should not pay for it."""
    try:
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(max_workers=workers), None
    except (OSError, ImportError, NotImplementedError, ValueError) as exc:
        return None, f"cannot start worker processes ({describe(exc)})"


def _submit(pool: Executor, sources: list[Source], options: CheckOptions) -> _Submission:
    """Hand a chunk to the pool; processes are forked on the first call, so that may fail too.

    A pool that breaks while this runs may answer with a plain RuntimeError ("after
    shutdown": it marks itself shut down right after broken) or an OSError from its
    closed wake-up pipe, so a broken pool is asked about first.
    """
    from concurrent.futures import BrokenExecutor

    try:
        return pool.submit(_judge_chunk, sources, options)
    except (RuntimeError, OSError) as exc:
        if isinstance(exc, BrokenExecutor) or _broken(pool):
            return _WORKER_DIED
        if isinstance(exc, OSError):
            return f"cannot start worker processes ({describe(exc)})"
        return f"cannot hand out work ({describe(exc)})"


_WORKER_DIED = "a worker process died"
# How often a wait for a chunk checks that the pool is still alive.
_POLL_SECONDS = 1.0


def _broken(pool: Executor) -> bool:
    # Private, read defensively: set by ProcessPoolExecutor when a worker died.
    return bool(getattr(pool, "_broken", False))


def _in_order(
    chunk: list[Source | Unreadable], submission: _Submission, pool: Executor | None
) -> Iterator[Verdict | Unreadable]:
    """The items of one chunk in order: unreadable sources as they are, the others as their verdicts."""
    verdicts: Iterator[Verdict] | None = None
    for item in chunk:
        if isinstance(item, Unreadable):
            yield item
            continue
        if verdicts is None:
            verdicts = iter(_verdicts(submission, item, pool))
        yield next(verdicts)


def _verdicts(submission: _Submission, first: Source, pool: Executor | None) -> list[Verdict]:
    """The verdicts of a chunk, waiting for them; WorkersFailed if they will never come.

    A future handed out in the instant its pool broke can be left pending forever
    (the pool fails the futures it knows, then stops), so the wait wakes up now and
    then to ask whether the pool is broken.
    """
    from concurrent.futures import BrokenExecutor
    from concurrent.futures import TimeoutError as StillWaiting

    if isinstance(submission, str) or submission is None:
        raise WorkersFailed(submission or _WORKER_DIED, first)
    while True:
        try:
            return submission.result(timeout=_POLL_SECONDS)
        except BrokenExecutor:
            raise WorkersFailed(_WORKER_DIED, first) from None
        except StillWaiting:
            if pool is not None and _broken(pool) and not submission.done():
                raise WorkersFailed(_WORKER_DIED, first) from None


def _stop_pool(pool: Executor, *, completed: bool) -> None:
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
