"""Child processes that start with the stop signals at their defaults, whatever the test run inherited.

A signal a process ignores stays ignored in the processes it starts, and Python keeps it
ignored: under ``nohup`` SIGHUP is, and in a shell's background job SIGINT may be. A test
that sends its child one of them and waits for it to stop would then wait in vain, so the
tests that send stop signals start their children with ``preexec_fn=default_stop_signals``.
"""

from __future__ import annotations

import signal

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def default_stop_signals() -> None:
    """In the child, before it runs: each stop signal at SIG_DFL and unblocked."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
