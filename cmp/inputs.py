"""Reading packet files and stdin for the CLI: bounded, non-blocking on odd files, never a traceback."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from typing import BinaryIO

from cmp._intake import MAX_PACKET_BYTES

# One byte past the limit is enough to know a packet is too large.
READ_LIMIT = MAX_PACKET_BYTES + 1


@dataclass(frozen=True, slots=True)
class Stamp:
    """What identifies one state of a file: ``fmt --write`` compares it before replacing the file."""

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, info: os.stat_result) -> Stamp:
        return cls(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


@dataclass(frozen=True, slots=True)
class Input:
    """Bytes read from one source; ``size`` is the true length when it is known.

    ``stamp`` is the file's state when it was opened (``None`` for stdin).
    """

    data: bytes
    size: int | None
    stamp: Stamp | None = None


class InputError(Exception):
    """A source that cannot be read; the message is one line for the user."""


def display_name(name: str) -> str:
    """A file name safe to print: undecodable bytes shown as escapes, never an error."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _read_stream(stream: BinaryIO) -> bytes:
    chunks: list[bytes] = []
    remaining = READ_LIMIT
    while remaining > 0:
        chunk = stream.read(remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _describe(error: OSError) -> str:
    return error.strerror or type(error).__name__


def _stdin() -> BinaryIO:
    if sys.stdin is None or sys.stdin.closed:
        raise InputError("cannot read stdin: it is closed")
    return sys.stdin.buffer


def open_file(name: str) -> BinaryIO:
    """Open a regular file for reading; anything else is refused before a byte is read.

    This is the one way the CLI opens a named source (FILE, ``--jsonl FILE``, the
    re-read of ``fmt --write``): a FIFO with no writer must not block the open, and a
    device such as /dev/zero must not be read forever, so the file is opened
    non-blocking and judged by ``fstat`` of what was actually opened (no race with a
    rename between a check and the open).
    """
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InputError(f"cannot open: {_describe(exc)}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError("cannot read: is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise InputError("cannot read: not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except OSError as exc:
        os.close(fd)
        raise InputError(f"cannot read: {_describe(exc)}") from None
    except BaseException:
        os.close(fd)
        raise


def open_source(name: str) -> BinaryIO:
    """``open_file(name)``, or stdin for ``-`` (which the caller must not close)."""
    return _stdin() if name == "-" else open_file(name)


def read_source(name: str) -> Input:
    """Read at most 32,769 bytes of ``name`` (``-`` is stdin)."""
    if name == "-":
        stream = _stdin()
        try:
            data = _read_stream(stream)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read stdin: {exc}") from None
        return Input(data, len(data) if len(data) <= MAX_PACKET_BYTES else None)
    with open_file(name) as stream:
        try:
            stamp = Stamp.of(os.fstat(stream.fileno()))
            data = _read_stream(stream)
        except OSError as exc:
            raise InputError(f"cannot read: {_describe(exc)}") from None
    size = max(stamp.size, len(data)) if len(data) > MAX_PACKET_BYTES else len(data)
    return Input(data, size, stamp)
