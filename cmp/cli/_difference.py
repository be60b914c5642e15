"""How a file differs from the bytes ``fmt --write`` would write: the first place it does,
said without the packet's text, and a unified diff (``fmt --diff``).
"""

from __future__ import annotations

from collections.abc import Iterator

from cmp._toolkit import visible
from cmp.findings import Position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.cli._render import Tone

# What a byte of JSON layout is called in a reason. Any other byte is the packet's own
# text, which a reason must not quote.
_NAMED = {
    ord(" "): "a space",
    ord("\n"): "a line end",
    ord("\r"): "a carriage return",
    ord("\t"): "a tab",
    **{ord(mark): f"'{mark}'" for mark in '{}[],:"'},
}


def _offset(data: bytes) -> int:
    """The length in code points of ``data``, less a character cut short at its end."""
    return len(data.decode("utf-8", "ignore"))


def _position(data: bytes, index: int) -> Position:
    """Where byte ``index`` of ``data`` is, as findings are placed: lines end at LF, columns count code points."""
    line_start = data.rfind(b"\n", 0, index) + 1
    return Position(data.count(b"\n", 0, index) + 1, _offset(data[line_start:index]) + 1)


def _what(data: bytes, index: int) -> str:
    if index >= len(data):
        return "the end of the file"
    return _NAMED.get(data[index], "text")


def _first_unequal(data: bytes, canonical: bytes) -> int:
    """The index of the first byte that differs, or of the end of the shorter of the two."""
    for index, (byte, expected) in enumerate(zip(data, canonical, strict=False)):
        if byte != expected:
            return index
    return min(len(data), len(canonical))


def first_difference(data: bytes, canonical: bytes) -> tuple[Position, str] | None:
    """Where ``data`` first differs from ``canonical`` (a position in ``data``) and why, in
    words that name layout only (``expected a line end, found a space``); None when equal."""
    if data == canonical:
        return None
    index = _first_unequal(data, canonical)
    if canonical == data + b"\n":
        why = "no line end after the packet"
    elif data.startswith(canonical):
        why = "more after the packet's final line end"
    else:
        expected, found = _what(canonical, index), _what(data, index)
        if expected == found == "text":  # a member out of order, a string escaped otherwise, ...
            why = "the text differs from its canonical form here (the order of members or how a string is written)"
        else:
            why = f"expected {expected}, found {found}"
    return _position(data, index), why


def _lines(data: bytes) -> list[str]:
    """The lines of a packet file, each with its LF; only LF ends a line (a CR stays in its line)."""
    text = data.decode("utf-8", "replace")
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]  # what follows the last LF, without the LF split() took away
    return lines if lines[-1] else lines[:-1]


def unified_diff(name: str, data: bytes, canonical: bytes) -> Iterator[tuple[str, Tone | None]]:
    """The unified diff of a file's bytes against its canonical bytes, as (line, tone) pairs:
    ``fail`` for a line taken out, ``ok`` for one put in, None for the rest; nothing when
    equal. Characters that could end or disguise a line are written as escapes (``\\r``)."""
    import difflib  # here: fmt without --diff never loads it

    diff = difflib.unified_diff(_lines(data), _lines(canonical), fromfile=name, tofile=name)
    for number, line in enumerate(diff):
        text = line[:-1] if line.endswith("\n") else line
        tone: Tone | None = None
        if number >= 2:  # past the two header lines, which a line taken out ("---...") could look like
            tone = "fail" if text.startswith("-") else "ok" if text.startswith("+") else None
        yield visible(text), tone
        if not line.endswith("\n"):
            yield "\\ No newline at end of file", None
