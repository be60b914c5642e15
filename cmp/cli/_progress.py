"""The progress line of a long check: a packet counter and rate on stderr, rewritten in place."""

from __future__ import annotations

import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Progress:
    """A one-line counter on stderr, only on a terminal and only once a run takes a while."""

    def __init__(self, total: int | None, stream: Any = None, *, quiet: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.started = time.monotonic()
        self.shown_at = 0.0
        self.enabled = not quiet and bool(self.stream is not None and getattr(self.stream, "isatty", lambda: False)())
        self.visible = False

    def step(self, packets: int = 1) -> None:
        self.done += packets
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
