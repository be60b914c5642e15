"""Another implementation behind the harness protocol: one process, restarted after any failure."""

from __future__ import annotations

import os
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from cmp._display import describe, short
from cmp.conformance._protocol import answer_error, parse_answer, request_line

# No answer line may grow past this; an implementation that never ends its line fails.
MAX_ANSWER_BYTES = 1 << 20


def split_command(command: str) -> list[str]:
    """--impl as an argv list; ValueError (one line) for unbalanced quotes, a NUL or nothing at all."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise ValueError(f"--impl cannot be split into a command: {exc}") from None
    if not argv:
        raise ValueError("--impl needs a command")
    if any("\0" in arg for arg in argv):
        raise ValueError("--impl holds a NUL character")
    return argv


class Implementation:
    """Another implementation behind the JSON-lines protocol, restarted after any failure."""

    def __init__(
        self,
        argv: list[str],
        timeout: float,
        stderr: int | None = subprocess.DEVNULL,
        starting: Callable[[], AbstractContextManager[object]] = nullcontext,
    ) -> None:
        """``stderr`` is where the implementation's stderr goes: DEVNULL (the default), None
        for the runner's own stderr, or an open file descriptor. ``starting`` makes the context
        each start runs in: the CLI's ``deferred`` raises a stop signal only once
        ``self.process`` holds the process, so the cleanup stops it.
        """
        self.argv = argv
        self.timeout = timeout
        self.stderr = stderr
        self.starting = starting
        self.process: subprocess.Popen[bytes] | None = None
        self.buffer = b""

    def _start(self) -> subprocess.Popen[bytes]:
        if self.process is None or self.process.poll() is not None:
            self.buffer = b""
            with self.starting():
                # Its own process group, so that stop() also ends what it started: an adapter's
                # child processes, or the program behind `sh -c` run without `exec`.
                self.process = subprocess.Popen(
                    self.argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=self.stderr,
                    bufsize=0,
                    start_new_session=True,
                )
            assert self.process.stdin is not None
            # Requests are written without blocking, so that one that does not read cannot stall us.
            os.set_blocking(self.process.stdin.fileno(), False)
        return self.process

    def stop(self) -> None:
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):  # the group is gone already
                pass
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
            self.process = None

    def ask(self, vector_id: str, data: bytes) -> tuple[Any, str | None]:
        """(response, None) or (None, why there is none). An error answer (``{"id", "error"}``) is a
        response: compare() fails the vector with its text, and the implementation keeps running."""
        try:
            process = self._start()
        except (OSError, ValueError) as exc:  # not found, not executable, bad format
            return None, f"cannot start implementation: {describe(exc)}"
        line, why = self._exchange(process, request_line(vector_id, data))
        response: Any = None
        if line is not None:
            response, why = parse_answer(line)
        if why is None and isinstance(response, dict) and response.get("id") != vector_id:
            if not (response.get("id") is None and answer_error(response) is not None):
                why = f"answer is for id {short(response.get('id'), 60)}, not {short(vector_id, 60)}"
        if why is not None:
            self.stop()
            return None, why
        return response, None

    def _exchange(self, process: subprocess.Popen[bytes], request: bytes) -> tuple[bytes | None, str | None]:
        """Write the request and read one answer line, both within the timeout, in one select
        loop: an implementation that never reads its input cannot block the runner."""
        assert process.stdin is not None and process.stdout is not None
        deadline = time.monotonic() + self.timeout
        writer, reader = process.stdin.fileno(), process.stdout.fileno()
        unsent = memoryview(request)
        with selectors.DefaultSelector() as selector:
            selector.register(writer, selectors.EVENT_WRITE)
            selector.register(reader, selectors.EVENT_READ)
            while unsent or b"\n" not in self.buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not (events := selector.select(remaining)):
                    if unsent:
                        return None, f"request not read within {self.timeout:g}s"
                    return None, f"no answer within {self.timeout:g}s"
                for key, _ in events:
                    if key.fd == writer:
                        try:
                            unsent = unsent[os.write(writer, unsent) :]
                        except BlockingIOError:
                            continue
                        except OSError:  # EPIPE: it exited or closed its input
                            return None, self._ended(process, deadline, "input", "before reading the request")
                        if not unsent:
                            selector.unregister(writer)
                    else:
                        why = self._receive(process, reader, deadline)
                        if why is not None:
                            return None, why
        line, _, self.buffer = self.buffer.partition(b"\n")
        if len(line) > MAX_ANSWER_BYTES:
            return None, f"answer longer than {MAX_ANSWER_BYTES >> 20} MiB"
        return line, None

    def _receive(self, process: subprocess.Popen[bytes], reader: int, deadline: float) -> str | None:
        """Append what the implementation wrote to the buffer; why the exchange is over, if it is."""
        try:
            chunk = os.read(reader, 65536)
        except OSError as exc:
            return f"cannot read the answer: {describe(exc)}"
        if not chunk:
            return self._ended(process, deadline, "output", "without answering")
        self.buffer += chunk
        if b"\n" not in self.buffer and len(self.buffer) > MAX_ANSWER_BYTES:
            return f"answer longer than {MAX_ANSWER_BYTES >> 20} MiB"
        return None

    def _ended(self, process: subprocess.Popen[bytes], deadline: float, pipe: str, when: str) -> str:
        """Why a pipe closed: the exit status if the implementation exits in time (waiting
        without a limit would hang on one that closed a pipe and kept running)."""
        try:
            code = process.wait(timeout=max(deadline - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            return f"implementation closed its {pipe} {when} and kept running"
        return f"implementation exited (status {code}) {when}"
