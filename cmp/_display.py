"""Text a program did not write (file names, error messages, answers), shown on one line."""

from __future__ import annotations

import json
import stat
from typing import Any


def describe(error: BaseException) -> str:
    """An OSError's own words (``No such file or directory``) without errno and path noise."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def one_line(text: str, limit: int = 300) -> str:
    """Foreign messages (jsonschema, file names) can hold line breaks; the CLI promises one line."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def display_name(name: str) -> str:
    """A file name safe to print: undecodable bytes shown as escapes, never an error."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def short(value: Any, limit: int = 160) -> str:
    """A value as JSON text cut to ``limit``; a value json cannot render is named, never raised."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):  # nesting near the recursion limit, a non-JSON value
        text = f"<{type(value).__name__} too deep or too large to show>"
    return text if len(text) <= limit else text[:limit] + "…"


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, for a message: ``a regular file``, ``a FIFO``, ``a character device``…"""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")
