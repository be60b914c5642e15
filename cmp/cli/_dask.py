"""Shares judged on a Dask cluster (``--dask SCHEDULER``): the same shares and work
functions as on this machine's worker processes, so the same output, in the same order.

The cluster's workers read their shares themselves: a JSON Lines file or a store must
be at the same absolute path on every worker (a shared file system), and the workers
need this package installed. Results come back as rendered blocks, as from a local
pool. Dask reschedules the tasks of a worker that dies; a share whose tasks keep
killing workers (``distributed.scheduler.allowed-failures``, 3 by default) ends the run
with one line, after every result before it was written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from cmp._text import describe
from cmp.cli._batch import IN_FLIGHT_PER_WORKER, JOBS_RANGE, Pending, Runner, WorkersFailed, runner_for, workers_for

T = TypeVar("T")

# How long to wait for the scheduler when connecting, and how often a wait for a share
# checks that the client is still connected.
CONNECT_SECONDS = 10
_POLL_SECONDS = 1.0


class DaskCluster:
    """A Runner on a Dask cluster, reached through its scheduler's address."""

    parallel = True

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client as _Client
        except ImportError:
            raise WorkersFailed(
                "--dask needs the Dask scheduler's client: pip install 'core-memory-packet[dask]'"
            ) from None
        client_class: Any = _Client  # distributed is not typed: its client is handled as Any
        try:
            self.client: Any = client_class(address, timeout=f"{CONNECT_SECONDS}s", set_as_default=False)
        except (OSError, ValueError, TypeError) as exc:
            raise WorkersFailed(f"cannot reach the Dask scheduler at {address} ({describe(exc)})") from None
        self.address = address
        threads = sum(self.client.nthreads().values())
        self.in_flight = IN_FLIGHT_PER_WORKER * max(threads, 1)

    def submit(self, fn: Callable[..., T], *args: Any) -> Pending[T]:
        try:
            future: Pending[T] = self.client.submit(fn, *args, pure=False)
        except Exception as exc:
            raise WorkersFailed(f"cannot hand work to the Dask cluster ({describe(exc)})") from None
        return future

    def result(self, future: Pending[T]) -> T:
        """The share's result; WorkersFailed when the cluster will not give it.

        A task's own exception (a bug in a work function) is raised as it is: the work
        functions turn every expected failure into a Block's problem.
        """
        from distributed import TimeoutError as StillWaiting
        from distributed.scheduler import KilledWorker

        while True:
            try:
                return future.result(timeout=_POLL_SECONDS)
            except KilledWorker:
                raise WorkersFailed("Dask workers kept dying on this share") from None
            except StillWaiting:
                if self.client.status not in ("running", "connecting"):
                    raise WorkersFailed(f"lost the Dask scheduler at {self.address}") from None
            except OSError as exc:
                raise WorkersFailed(f"lost the Dask scheduler at {self.address} ({describe(exc)})") from None
            except Exception as exc:
                if type(exc).__name__ == "CancelledError":  # the client lost the scheduler, or the future was dropped
                    raise WorkersFailed(f"lost the Dask scheduler at {self.address}") from None
                raise

    def close(self, *, completed: bool) -> None:
        try:
            self.client.close(timeout=CONNECT_SECONDS)
        except Exception:
            pass


def chosen_runner(jobs: int, scheduler: str | None) -> Runner | str:
    """Where a run's shares go: --dask's cluster, else --jobs processes on this machine
    (or this process); a string says why neither can be had (a usage error)."""
    if scheduler is None:
        workers = workers_for(jobs)
        return JOBS_RANGE if workers is None else runner_for(workers)
    if jobs != 1:
        return "--jobs and --dask cannot be used together: the cluster's workers judge the shares"
    try:
        return DaskCluster(scheduler)
    except WorkersFailed as exc:
        return str(exc)
