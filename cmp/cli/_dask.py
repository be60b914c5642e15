"""Shares judged on a Dask cluster (``--dask SCHEDULER``): the same shares and work functions as
on this machine's worker processes, so the same output, in the same order.

Workers read their shares themselves: inputs must be at the same absolute path on every worker,
which needs this package installed. A share whose tasks keep killing workers
(``distributed.scheduler.allowed-failures``) ends the run with one line.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from concurrent.futures import CancelledError
from typing import TYPE_CHECKING, Any, TypeVar

from cmp._toolkit import describe
from cmp.cli._batch import IN_FLIGHT_PER_WORKER, WorkersFailed
from cmp.cli._sources import SHARE_ROWS

if TYPE_CHECKING:
    from cmp.cli._batch import Pending

T = TypeVar("T")

# How long to wait for the scheduler when connecting, and how often a wait for a share
# checks that the client is still connected.
CONNECT_SECONDS = 10
_POLL_SECONDS = 1.0
# How long a cluster may have no worker at all before the run gives up on it.
NO_WORKERS_SECONDS = 60


# How much of a JSON Lines file one share covers on a cluster: larger than on this machine,
# as the scheduler spends about a millisecond on each task, two per share with its line count.
DASK_SHARE_BYTES = 16 << 20
# Rows in one share of a store on a cluster, 16 times this machine's for the same reason.
DASK_SHARE_ROWS = 16 * SHARE_ROWS


class DaskCluster:
    """A Runner on a Dask cluster, reached through its scheduler's address."""

    parallel = True
    share_bytes = DASK_SHARE_BYTES
    share_rows = DASK_SHARE_ROWS

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client as _Client
        except ImportError:
            raise WorkersFailed(
                "--dask needs the Dask scheduler's client (the dask extra): pip install 'distributed>=2024.1'"
            ) from None
        # The client logs its reconnection attempts with tracebacks on stderr, where the
        # CLI writes one line per error: it says what went wrong itself.
        for name in ["distributed", *logging.root.manager.loggerDict]:
            if name.partition(".")[0] == "distributed":
                logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        client_class: Any = _Client  # distributed is not typed: its client is handled as Any
        failure = None
        try:
            self.client: Any = client_class(address, timeout=f"{CONNECT_SECONDS}s", set_as_default=False)
        except (OSError, ValueError) as exc:  # no answer, or an address that is none
            failure = describe(exc)
        except Exception:  # something answered, and not as a scheduler (a web server, another service)
            failure = "it does not answer as a Dask scheduler"
        if failure is not None:
            # A client that failed half-way waits 20 s on a dead loop when collected later:
            # collected now, it goes at once.
            gc.collect()
            raise WorkersFailed(f"cannot reach the Dask scheduler at {address} ({failure})")
        self.address = address
        try:
            self.client.wait_for_workers(1, timeout=CONNECT_SECONDS)
        except Exception:  # no worker joined in time: nothing would ever run
            self.close(completed=False)
            raise WorkersFailed(f"the Dask cluster at {address} has no workers") from None
        threads = sum(self.client.nthreads().values())
        self.in_flight = IN_FLIGHT_PER_WORKER * max(threads, 1)
        self.idle_since: float | None = None

    def submit(self, fn: Callable[..., T], *args: Any) -> Pending[T]:
        try:
            future: Pending[T] = self.client.submit(fn, *args, pure=False)
        except Exception as exc:
            raise WorkersFailed(f"cannot hand work to the Dask cluster ({describe(exc)})") from None
        return future

    def result(self, future: Pending[T]) -> T:
        """The share's result; WorkersFailed when the cluster will not give it. A task's own
        exception (a bug: work functions turn expected failures into problems) is raised as is."""
        from distributed import TimeoutError as StillWaiting
        from distributed.scheduler import KilledWorker

        while True:
            try:
                result = future.result(timeout=_POLL_SECONDS)
                self.idle_since = None
                return result
            except KilledWorker:
                raise WorkersFailed("Dask workers kept dying on this share") from None
            except CancelledError:  # distributed's FutureCancelledError: the client lost the scheduler
                raise WorkersFailed(f"lost the Dask scheduler at {self.address}") from None
            except StillWaiting:
                self._check_alive()
            except OSError as exc:
                raise WorkersFailed(f"lost the Dask scheduler at {self.address} ({describe(exc)})") from None
            except Exception as exc:
                # The cluster could not run the share: most often workers without this
                # package (or another version of it), which cannot read the task.
                raise WorkersFailed(f"the Dask cluster could not run a share ({describe(exc)})") from None

    def _check_alive(self) -> None:
        """WorkersFailed when the client lost its scheduler, or the cluster has had no
        workers for NO_WORKERS_SECONDS: the shares out would wait forever."""
        if self.client.status not in ("running", "connecting"):
            raise WorkersFailed(f"lost the Dask scheduler at {self.address}")
        try:
            workers = len(self.client.nthreads())
        except Exception:  # asking failed: the scheduler is gone
            raise WorkersFailed(f"lost the Dask scheduler at {self.address}") from None
        now = time.monotonic()
        if workers:
            self.idle_since = None
        elif self.idle_since is None:
            self.idle_since = now
        elif now - self.idle_since > NO_WORKERS_SECONDS:
            raise WorkersFailed(f"the Dask cluster at {self.address} has had no workers for {NO_WORKERS_SECONDS} s")

    def close(self, *, completed: bool) -> None:
        try:
            self.client.close(timeout=CONNECT_SECONDS)
        except Exception:
            pass
