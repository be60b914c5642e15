"""Reading packet files and stdin for the CLI: bounded, non-blocking on odd files, never a traceback."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from typing import BinaryIO

from cmp.intake import MAX_PACKET_BYTES

# One byte past the limit is enough to know a packet is too large.
READ_LIMIT = MAX_PACKET_BYTES + 1


@dataclass(frozen=True, slots=True)
class Input:
    """Bytes read from one source; ``size`` is the true length when it is known."""

    data: bytes
    size: int | None


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


def read_source(name: str) -> Input:
    """Read at most 32,769 bytes of ``name`` (``-`` is stdin)."""
    if name == "-":
        stream = sys.stdin.buffer if sys.stdin is not None and not sys.stdin.closed else None
        if stream is None:
            raise InputError("cannot read stdin: it is closed")
        try:
            data = _read_stream(stream)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read stdin: {exc}") from None
        return Input(data, len(data) if len(data) <= MAX_PACKET_BYTES else None)
    try:
        # O_NONBLOCK so that opening a FIFO with no writer does not hang.
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
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = _read_stream(stream)
    except OSError as exc:
        raise InputError(f"cannot read: {_describe(exc)}") from None
    finally:
        os.close(fd)
    return Input(data, max(info.st_size, len(data)) if len(data) > MAX_PACKET_BYTES else len(data))
