"""Where the CLI writes, and the exit status it ends with: UTF-8 whatever the locale, one line
per result (:func:`render_line`), a closed pipe never a traceback. Exit statuses: 0 every packet
accepted, 1 any not, 2 a usage error or a file that could not be read or written.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from cmp._toolkit import visible

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

# SGR colours by a line's tone (cmp.cli._render.Tone): red, yellow, green.
_COLOURS = {"fail": b"\x1b[31m", "warn": b"\x1b[33m", "ok": b"\x1b[32m"}
_RESET = b"\x1b[0m"


def render_line(text: str) -> bytes:
    """One line of text output as UTF-8 bytes, and never more than one line: every text line the CLI prints
    goes through here. File names and quoted packet text are hostile, and a line break in them would forge
    or hide a result line, so such characters are written as visible escapes (:func:`visible`)."""
    return (visible(text) + "\n").encode("utf-8", "backslashreplace")


def coloured_line(text: str, tone: str | None) -> bytes:
    """:func:`render_line`, coloured by ``tone`` (``fail``, ``warn``, ``ok``; None for no colour)
    after escaping, so the escape sequences are ours, never the packet's."""
    data = render_line(text)
    if tone in _COLOURS:
        return _COLOURS[tone] + data[:-1] + _RESET + b"\n"
    return data


def wants_colour(is_terminal: bool) -> bool:
    """Whether lines are coloured: not with NO_COLOR set (which wins), with FORCE_COLOR even into a pipe
    (CI logs that render colour), else on a terminal whose TERM is not ``dumb``."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return is_terminal and os.environ.get("TERM") != "dumb"


class Output:
    """UTF-8 to stdout whatever the locale; a closed stdout or pipe ends output cleanly."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.lost = False  # something could not be written
        self.is_terminal = False
        try:
            fd = stream.fileno() if stream is not None else -1
        except (OSError, ValueError, AttributeError):
            fd = -1
        if fd >= 0:
            try:
                self.is_terminal = os.isatty(fd)
                # A parent (some CI runners) may hand us a non-blocking pipe, on which a
                # full pipe drops data without an error: results would go missing.
                os.set_blocking(fd, True)
            except OSError:
                pass
        self.colour = stream is not None and wants_colour(self.is_terminal)

    def line(self, text: str, tone: str | None = None) -> None:
        """One line of text output (escaped: see :func:`render_line`), coloured by its ``tone``
        (``fail``, ``warn``, ``ok``) when :attr:`colour` is on."""
        self.write(coloured_line(text, tone if self.colour else None))

    def document(self, text: str) -> None:
        """A JSON document, which escapes control characters itself and spans lines on purpose."""
        self.write((text + "\n").encode("utf-8", "backslashreplace"))

    def write(self, data: bytes) -> None:
        if self.lost or self.stream is None:
            self.lost = True
            return
        try:
            self.stream.buffer.write(data)
            self.stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.lost = True


def silence_stdout() -> None:
    """Point stdout at /dev/null: Python flushes it at exit, which on a closed pipe prints a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def error_line(text: str) -> None:
    """One ``cmp: `` line on stderr, escaped like every text line; a closed stderr is not an error."""
    if sys.stderr is not None:
        try:
            sys.stderr.buffer.write(render_line("cmp: " + text))
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


@dataclass(slots=True)
class ExitStatus:
    """The exit status of one command, the worst so far, as sources are read and judged."""

    status: int = EXIT_OK

    def fail(self, code: int) -> None:
        self.status = max(self.status, code)

    def final(self, *, exit_zero: bool = False) -> int:
        """The status to exit with: with ``exit_zero``, 0 for packets that failed; a usage or I/O error stays 2."""
        return EXIT_OK if exit_zero and self.status == EXIT_FAIL else self.status

    def file_error(self, name: str, message: str) -> None:
        """A file that could not be read or rewritten: one line on stderr, exit status 2 (others go on)."""
        self.fail(EXIT_USAGE)
        error_line(f"{name}: {message}")
