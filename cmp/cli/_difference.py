"""How a file differs from its canonical bytes: the first place it does, said without the
packet's text, and a unified diff (``fmt --diff``).

Both compare the bytes a file holds with the bytes ``fmt --write`` would write
(:func:`cmp._canonical.file_bytes`), so "canonical" means one thing in every command.
"""

from __future__ import annotations

from collections.abc import Iterator

from cmp._toolkit import visible
from cmp.findings import Position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.cli._render import Tone

# What a byte of JSON layout is called in a reason. Only layout and punctuation are ever
# named: any other byte is part of a member name or a value, the packet's own text, which
# a reason must not quote (a line of CI output is no place for what a packet holds).
_NAMED = {
    ord(" "): "a space",
    ord("\n"): "a line end",
    ord("\r"): "a carriage return",
    ord("\t"): "a tab",
    **{ord(mark): f"'{mark}'" for mark in '{}[],:"'},
}


def _offset(data: bytes) -> int:
    """The length in code points of ``data``, less a character cut short at its end: the
    offset of the character that holds the byte just past ``data`` (columns count code
    points, :class:`cmp.findings.Position`)."""
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
    ``fail`` for a line taken out, ``ok`` for a line put in, None for the rest. Both headers
    name the file as it is shown (``patch -p0`` applies the diff where no line needed an
    escape: the diff is for reading, ``fmt --write`` for rewriting); each line is without its
    line end, and a last line without one is followed by diff's ``\\ No newline at end of
    file``. Nothing when the two are equal.

    Characters that could end a line or disguise one (a CR, a C1 control, a bidi override)
    are written as escapes (``\\r``), as in every text line the command line prints.
    """
    import difflib  # here: fmt without --diff never loads it (nor heapq), some 2 ms of its start-up

    diff = difflib.unified_diff(_lines(data), _lines(canonical), fromfile=name, tofile=name)
    for number, line in enumerate(diff):
        text = line[:-1] if line.endswith("\n") else line
        tone: Tone | None = None
        if number >= 2:  # past the two header lines, which a line taken out ("---...") could look like
            tone = "fail" if text.startswith("-") else "ok" if text.startswith("+") else None
        yield visible(text), tone
        if not line.endswith("\n"):
            yield "\\ No newline at end of file", None
