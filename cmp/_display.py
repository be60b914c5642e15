"""Text a program did not write (file names, error messages, answers), shown on one line."""

from __future__ import annotations

import functools
import json
import re
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# What can end a line or disguise one in a terminal or a log: C0 and C1 controls, DEL, the Unicode line
# and paragraph separators, and the bidi embeddings, overrides and isolates that reorder what follows.
UNPRINTABLE = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
# Of those, ASCII holds exactly the ones str.isprintable refuses, so ASCII text it accepts has
# nothing to escape (tests/unit/test_display.py holds this to the class).


@functools.cache
def _unprintable() -> re.Pattern[str]:
    return re.compile(UNPRINTABLE)


_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED_ESCAPES.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every character that can end a line or disguise one written as a visible
    escape (``\\n``, ``\\x1b``, ``\\u2028``); escaping twice changes nothing; backslashes stay."""
    if text.isascii() and text.isprintable():
        return text
    return _unprintable().sub(_escape, text)


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
    """A file name safe to print: undecodable bytes shown as escapes, never an error, and
    each part of the path that holds a credential withheld (:func:`masked_name`)."""
    try:
        raw = name.encode("utf-8", "surrogateescape")  # the bytes of a name os gave back
    except UnicodeEncodeError:  # a lone surrogate no file system name holds
        raw = name.encode("utf-8", "surrogatepass")
    return masked_name(raw.decode("utf-8", "backslashreplace"))


def masked_name(name: str) -> str:
    """``name`` with each ``/``-separated part in which a credential pattern (or credential-like form) of
    either rule set matches written ``(not shown: …)``: a file named for a key must not leak it to a log."""
    if not any(_credential(part) for part in name.split("/")):
        return name
    return "/".join(_withheld_part(part) for part in name.split("/"))


def _credential(part: str) -> str | None:
    if not part:
        return None
    # Imported here: a program that shows no file name loads neither table.
    from cmp._extended_patterns import credential_like as extended_like
    from cmp._extended_patterns import first_category as first_extended
    from cmp._patterns import credential_like, first_credential

    return first_credential(part) or credential_like(part) or first_extended(part) or extended_like(part)


def _withheld_part(part: str) -> str:
    category = _credential(part)
    if category is None:
        return part
    return f"(not shown: {len(part)} characters matching {category})"


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
