"""Stop signals (SIGINT, SIGTERM, SIGHUP) raised as :class:`Stopped` where the code is, so that cleanup runs."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Stopped(BaseException):
    """A stop signal arrived while :class:`StopSignals` was entered: raised where the code was, like
    KeyboardInterrupt, so that cleanup runs; :func:`cmp.cli.main` exits with 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

# The StopSignals entered, innermost last (a forked worker inherits the parent's: ``owner`` tells).
_ENTERED: list[StopSignals] = []


def pending_stop() -> int | None:
    """The stop signal received while a StopSignals of this process was entered, or None: SQLite swallows
    what its progress handler raises, so the handler asks this, and the code around it raises Stopped."""
    for entered in reversed(_ENTERED):
        if entered.owner == os.getpid() and entered.received is not None:
            return entered.received
    return None


class StopSignals:
    """While entered, the first stop signal raises :class:`Stopped` where the code is.

    Without this, SIGTERM kills the process on the spot: a rewrite leaves its temporary file, and a
    ``--jobs`` run leaves its workers waiting forever. Later signals are ignored so they cannot cut the
    cleanup short; inside :meth:`deferred` the first waits for the block's end. ``nohup`` is respected."""

    def __init__(self) -> None:
        self.received: int | None = None
        self.owner = os.getpid()
        self.deferring = False
        self.previous: dict[int, Any] = {}

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self.owner:
            # A worker process forked while the handler was set: it stops as it would have without it.
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if self.received is not None:
            return
        self.received = signum
        if not self.deferring:
            raise Stopped(signum)

    def __enter__(self) -> StopSignals:
        self.owner = os.getpid()
        _ENTERED.append(self)
        for number in _STOP_SIGNALS:
            handler = signal.getsignal(number)
            if handler is signal.SIG_IGN or handler is None:
                continue
            try:
                self.previous[number] = signal.signal(number, self._handler)
            except ValueError:  # not the main thread
                break
        return self

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        for number, handler in self.previous.items():
            signal.signal(number, handler)
        if self in _ENTERED:
            _ENTERED.remove(self)
        if self.received is not None and not isinstance(error, Stopped):
            # Deferred, then overtaken by another error: the stop still wins, after the cleanup.
            raise Stopped(self.received)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """A stop signal arriving in this block is raised at its end: for steps that must not be cut in two."""
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False
        if self.received is not None:
            raise Stopped(self.received)
