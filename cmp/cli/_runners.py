"""Where a run's shares go: this process, worker processes on this machine, or a Dask cluster
(imported only for ``--dask``, so a plain ``check`` does not pay for it at start-up)."""

from __future__ import annotations

from cmp.cli._batch import JOBS_RANGE, WorkersFailed, runner_for, workers_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.cli._batch import Runner


def chosen_runner(jobs: int, scheduler: str | None) -> Runner | str:
    """--dask's cluster, else --jobs processes on this machine (or this process); a string
    says why neither can be had (a usage error)."""
    if scheduler is None:
        workers = workers_for(jobs)
        return JOBS_RANGE if workers is None else runner_for(workers)
    if jobs != 1:
        return "--jobs and --dask cannot be used together: the cluster's workers judge the shares"
    from cmp.cli._dask import DaskCluster

    try:
        return DaskCluster(scheduler)
    except WorkersFailed as exc:
        return str(exc)
