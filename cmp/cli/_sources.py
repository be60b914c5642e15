"""Reading what the CLI is given: files, stdin and JSON Lines, each bounded, never a traceback.

What could not be read is an :class:`Unreadable`, which takes the source's place in the order.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import stat
import sys
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import re2

from cmp import MAX_PACKET_BYTES
from cmp._toolkit import describe, display_name, without_lone_surrogates

TYPE_CHECKING = False
if TYPE_CHECKING:
    from io import BufferedReader
    from typing import Any, BinaryIO

READ_LIMIT = MAX_PACKET_BYTES + 1

# What a share of a JSON Lines file says of a file that changed under the run.
ANOTHER_FILE = "changed while it was read: another file took its name"
CUT_SHORT = "changed while it was read: it was cut short"


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
class Source:
    """Bytes read from one source: a FILE, stdin, or one line (``line``) of a JSON Lines file.

    Past 32,768 bytes ``data`` holds only enough to know the packet is too large; ``size`` is the true
    length when known. ``stamp`` is the file's state when opened (None for stdin and JSON Lines)."""

    file: str
    line: int | None
    data: bytes
    size: int | None
    stamp: Stamp | None = None

    @property
    def name(self) -> str:
        return self.file if self.line is None else f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A source that could not be read. It travels with the sources so that it is reported in input order."""

    file: str
    message: str


def packet_in_file(source: Source) -> Source:
    """What a packet file holds: its bytes less one final newline, the line end fmt itself writes
    (so a 32,768-byte packet an editor saved with a newline is still that packet)."""
    if source.data.endswith(b"\n") and source.size == len(source.data):
        return replace(source, data=source.data[:-1], size=source.size - 1)
    return source


class SourceError(Exception):
    """A source that cannot be read; the message is one line for the user."""


def unreadable(name: str, exc: SourceError | OSError) -> Unreadable:
    """What an error while opening or reading ``name`` says, in its place."""
    return Unreadable(name, str(exc) if isinstance(exc, SourceError) else f"cannot read: {describe(exc)}")


def _read_stream(stream: BinaryIO, limit: int = READ_LIMIT) -> bytes:
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = stream.read(remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _stdin() -> BinaryIO:
    if sys.stdin is None or sys.stdin.closed:
        raise SourceError("cannot read stdin: it is closed")
    return sys.stdin.buffer


def open_file(name: str) -> BufferedReader:
    """Open a regular file for reading; anything else is refused before a byte is read.

    A FIFO with no writer must not block the open and /dev/zero must not be read forever, so the file
    is opened non-blocking and judged by ``fstat`` of what was opened (no race with a rename)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise SourceError(f"cannot open: {describe(exc)}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise SourceError("cannot read: is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise SourceError("cannot read: not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except OSError as exc:
        os.close(fd)
        raise SourceError(f"cannot read: {describe(exc)}") from None
    except BaseException:
        os.close(fd)
        raise


def open_source(name: str) -> BinaryIO:
    """``open_file(name)``, or stdin for ``-`` (which the caller must not close)."""
    return _stdin() if name == "-" else open_file(name)


def read_source(name: str, limit: int = READ_LIMIT) -> Source:
    """Read at most ``limit`` bytes (32,769 unless told) of ``name`` (``-`` is stdin)."""
    if name == "-":
        stream = _stdin()
        try:
            data = _read_stream(stream, limit)
        except (OSError, ValueError) as exc:
            raise SourceError(f"cannot read stdin: {exc}") from None
        return Source(name, None, data, len(data) if len(data) <= MAX_PACKET_BYTES else None)
    with open_file(name) as stream:
        try:
            stamp = Stamp.of(os.fstat(stream.fileno()))
            data = _read_stream(stream, limit)
        except OSError as exc:
            raise SourceError(f"cannot read: {describe(exc)}") from None
    size = max(stamp.size, len(data)) if len(data) > MAX_PACKET_BYTES else len(data)
    return Source(display_name(name), None, data, size, stamp)


# A glob is a file name pattern: this is far past any, and bounds what compiling one costs.
MAX_GLOB_CHARS = 1024


def _whole_text() -> Any:
    options = re2.Options()
    options.dot_nl = True  # a file name may hold a newline: ** crosses it like any character
    return options


_WHOLE_TEXT = _whole_text()


class GlobError(ValueError):
    """A glob that cannot be used: the message says why (one line)."""


def _in_class(char: str) -> str:
    return "\\" + char if char in "\\]^-[" else char


def _char_class(glob: str, start: int) -> tuple[str, int] | None:
    """The set ``[...]`` at ``glob[start]`` as an RE2 class, and the index after it; None when no ``]``
    closes it. ``!`` first negates it (never matching ``/``); ``]`` first is itself; ``a-z`` is a range."""
    index = start + 1
    negated = index < len(glob) and glob[index] == "!"
    index += negated
    body_start = index
    if index < len(glob) and glob[index] == "]":
        index += 1
    end = glob.find("]", index)
    if end < 0:
        return None
    body, out, at = glob[body_start:end], [], 0
    while at < len(body):
        if at + 2 < len(body) and body[at + 1] == "-":
            low, high = body[at], body[at + 2]
            if low > high:
                raise GlobError(f"the range {low}-{high} runs backwards")
            out.append(f"{_in_class(low)}-{_in_class(high)}")
            at += 3
        else:
            out.append(_in_class(body[at]))
            at += 1
    return "[" + ("^/" if negated else "") + "".join(out) + "]", end + 1


@functools.lru_cache(maxsize=256)
def glob_pattern(glob: str) -> Any:
    """``glob`` as an RE2 expression over a ``/``-separated path (linear time, where backtracking is
    exponential over ``*a*a*a*…``): ``*`` and ``?`` stay within one step, ``**/`` is any number of
    steps. :class:`GlobError` for an empty glob, one past MAX_GLOB_CHARS, or a backward range."""
    if not glob:
        raise GlobError("an empty glob matches nothing")
    if len(glob) > MAX_GLOB_CHARS:
        raise GlobError(f"longer than {MAX_GLOB_CHARS} characters")
    parts: list[str] = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
            parts.append("(?:[^/]*/)*")
            index += 3
        elif glob.startswith("**", index):
            parts.append(".*")
            index += 2
        elif glob[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            parts.append("[^/]")
            index += 1
        elif glob[index] == "[" and (found := _char_class(glob, index)) is not None:
            parts.append(found[0])
            index = found[1]
        else:
            parts.append(re.escape(glob[index]))
            index += 1
    return re2.compile(without_lone_surrogates("".join(parts)), _WHOLE_TEXT)


DEFAULT_INCLUDE = ("*.json",)


@dataclass(frozen=True, slots=True)
class Walk:
    """Which files below a folder argument are read: those matching an ``include`` glob and no ``exclude``
    glob. A glob without ``/`` matches a name (for ``exclude``, also a folder's on the way); one with
    ``/`` the path from ``root`` (the configuration file's folder, else the working folder)."""

    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = ()
    root: str = ""
    # Files never read in a walk (absolute paths): the run's own baseline, a *.json that is no packet.
    skip: frozenset[str] = frozenset()
    _include: tuple[Any, ...] = field(init=False, repr=False, compare=False)
    _exclude: tuple[Any, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_include", tuple(glob_pattern(glob) for glob in self.include))
        object.__setattr__(self, "_exclude", tuple(glob_pattern(glob) for glob in self.exclude))

    def takes(self, path: str) -> bool:
        """Whether ``path`` (a file found below a folder argument) is read."""
        if self.skip and os.path.abspath(path) in self.skip:
            return False
        relative_path = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root or os.curdir))
        steps = without_lone_surrogates(relative_path).split(os.sep)  # RE2 reads UTF-8
        relative = "/".join(steps)
        pairs = zip(self.include, self._include, strict=True)
        if not any(pattern.fullmatch(relative if "/" in glob else steps[-1]) for glob, pattern in pairs):
            return False
        for glob, pattern in zip(self.exclude, self._exclude, strict=True):
            if "/" in glob:
                if pattern.fullmatch(relative):
                    return False
            elif any(pattern.fullmatch(step) for step in steps if step != os.pardir):
                return False
        return True

    def nothing_found(self) -> str:
        """Why a folder stands for no file: none matches (the globs are named when they are not the default)."""
        if self.include == DEFAULT_INCLUDE and not self.exclude:
            return "no *.json file below it"
        from cmp._toolkit import unquoted  # a glob named for a key is withheld like any value

        excluded = f" and no exclude glob ({', '.join(map(unquoted, self.exclude))})" if self.exclude else ""
        return f"no file below it matches an include glob ({', '.join(map(unquoted, self.include))}){excluded}"


EVERY_JSON = Walk()


def read_each(
    names: Iterable[str], *, folders: bool = False, walk: Walk = EVERY_JSON
) -> Iterator[tuple[str, Source | Unreadable]]:
    """Each name as given, with what was read from it or the Unreadable that takes its place. With
    ``folders``, a folder stands for the files below it that ``walk`` takes (:func:`json_below`)."""
    for name in names:
        if folders and name != "-" and os.path.isdir(name):
            yield from json_below(name, walk)
            continue
        try:
            read: Source | Unreadable = read_source(name)
        except SourceError as exc:
            read = Unreadable(display_name(name), str(exc))
        yield name, read


def json_below(folder: str, walk: Walk = EVERY_JSON) -> Iterator[tuple[str, Source | Unreadable]]:
    """The files below ``folder`` that ``walk`` takes, read in sorted order; then what could not be
    listed. No such file is an Unreadable: a run that checks nothing should not look like a pass."""
    paths, problems = files_below(folder, walk)
    yield from read_each(paths)
    for problem in problems:
        yield problem.file, problem


def files_below(folder: str, chosen: tuple[str, ...] | Walk) -> tuple[list[str], list[Unreadable]]:
    """The files below ``folder`` whose names end in one of ``chosen``'s suffixes (or that the
    :class:`Walk` takes), sorted, and what could not be listed (or that nothing was found).
    Symbolic links to folders are not followed, so a link loop cannot make the walk endless."""
    found: list[tuple[tuple[str, ...], str]] = []
    problems: list[Unreadable] = []

    def unlisted(exc: OSError) -> None:
        problems.append(Unreadable(display_name(exc.filename or folder), f"cannot read: {describe(exc)}"))

    for top, _, files in os.walk(folder, onerror=unlisted):
        relative = os.path.relpath(top, folder)
        steps = () if relative == os.curdir else tuple(relative.split(os.sep))
        for name in files:
            path = os.path.join(top, name)
            if name.endswith(chosen) if isinstance(chosen, tuple) else chosen.takes(path):
                found.append(((*steps, name), path))
    if not found and not problems:
        if isinstance(chosen, Walk):
            why = chosen.nothing_found()
        else:
            why = "no " + " or ".join(f"*{suffix}" for suffix in chosen) + " file below it"
        problems.append(Unreadable(display_name(folder), why))
    found.sort()
    return [path for _, path in found], sorted(problems, key=lambda problem: problem.file)


class JsonlReader:
    """The packets of a JSON Lines file: one per non-blank line (LF or CRLF), never holding a line past 32,769 bytes.

    Reading starts at ``position`` (a line start, ``lines_before`` lines before it); with ``stop``, it
    ends before the first line that starts at or after that offset. Between packets, :attr:`position`
    and :attr:`line` say where to pick up (:meth:`Share.rest`)."""

    def __init__(
        self, stream: BinaryIO, file: str, *, position: int = 0, lines_before: int = 0, stop: int | None = None
    ) -> None:
        self.stream = stream
        self.file = file
        self.position = position
        self.line = lines_before
        self.stop = stop

    def more(self) -> bool:
        """Whether a line may start here that is this reader's to read (the file may have ended)."""
        return self.stop is None or self.position < self.stop

    def __iter__(self) -> Iterator[Source]:
        stream, size = self.stream, 0
        while self.more():
            line = stream.readline(MAX_PACKET_BYTES + 2)
            if not line:
                self._ended()
                return
            self.line += 1
            self.position += len(line)
            if line.endswith(b"\n"):
                body = line[:-2] if line.endswith(b"\r\n") else line[:-1]
                size = len(body)
            elif len(line) > MAX_PACKET_BYTES:
                body, size, before = line, len(line), line[-1:]
                while True:  # skip the rest of the over-long line, counting it less its line end
                    more = stream.readline(65536)
                    size += len(more)
                    self.position += len(more)
                    if not more or more.endswith(b"\n"):
                        if more.endswith(b"\n"):
                            size -= 2 if (more[-2:-1] or before) == b"\r" else 1
                        break
                    before = more[-1:]
            else:
                body, size = line, len(line)
                self._ended()  # a line with no line end: the file ends here
            if size > MAX_PACKET_BYTES or body.strip(b" \t\r\n"):
                yield Source(self.file, self.line, body, size)

    def _ended(self) -> None:
        """SourceError when the file ends before ``stop``: it was cut short while it was read."""
        if self.stop is not None and self.position < self.stop:
            raise SourceError(CUT_SHORT)


def read_jsonl(stream: BinaryIO, file: str) -> Iterator[Source]:
    """Every packet of a JSON Lines stream, from where it stands to its end (:class:`JsonlReader`)."""
    return iter(JsonlReader(stream, file))


# A share's input (and output before the rest goes on as a share of its own): handing it on costs
# little next to judging it, and a few in flight per worker keep memory flat.
SHARE_BYTES = 1 << 20
# Rows in one share of a store (audit): enough that opening the store and the query cost little.
SHARE_ROWS = 1000
SHARE_PACKETS = 100


@dataclass(frozen=True, slots=True)
class SourcesShare:
    """Sources the parent read (FILE arguments, stdin's lines), handed to a worker as they are."""

    sources: tuple[Source, ...]

    def first_packet(self, resume: tuple[str, int | None] | None) -> tuple[str, int | None]:
        """Its first packet: where a lost share's message points."""
        return self.sources[0].file, self.sources[0].line


def shares_of(items: Iterable[Source | Unreadable], *, one_by_one: bool) -> Iterator[SourcesShare | Unreadable]:
    """Sources in shares of at most SHARE_PACKETS sources or about SHARE_BYTES; ``one_by_one``, a share each
    (stdin from a slow writer). An unreadable source ends the share before it and keeps its place."""
    chunk: list[Source] = []
    size = 0
    for item in items:
        if isinstance(item, Unreadable):
            if chunk:
                yield SourcesShare(tuple(chunk))
                chunk, size = [], 0
            yield item
            continue
        chunk.append(item)
        size += len(item.data)
        if one_by_one or len(chunk) >= SHARE_PACKETS or size >= SHARE_BYTES:
            yield SourcesShare(tuple(chunk))
            chunk, size = [], 0
    if chunk:
        yield SourcesShare(tuple(chunk))


@dataclass(frozen=True, slots=True)
class JsonlShare:
    """A part of a JSON Lines file that a worker reads by itself: the lines that start in ``[start, end)``.

    ``path`` is what each worker opens, ``file`` the name to print, ``lines_before`` the newlines before
    ``start`` (packets keep the file's line numbers). ``end`` None reads to the end, however far it grew."""

    path: str
    file: str
    start: int
    end: int | None
    lines_before: int
    inode: int | None = None  # the file's when the shares were planned; None: not checked

    def open(self) -> JsonlReader:
        """A reader at the first line that starts in the share; SourceError if the file cannot be
        opened or is no longer the one the shares were cut from, OSError while it is read."""
        stream = open_file(self.path)
        try:
            _still_the_file(stream, self.inode, self.start)
            position, lines_before = self.start, self.lines_before
            if position > 0:
                stream.seek(position - 1)
                if stream.read(1) not in (b"\n", b""):
                    # Inside a line: it belongs to the share before; skip its rest.
                    lines_before += 1
                    while True:
                        more = stream.readline(65536)
                        position += len(more)
                        if not more or more.endswith(b"\n"):
                            break
            return JsonlReader(stream, self.file, position=position, lines_before=lines_before, stop=self.end)
        except BaseException:
            stream.close()
            raise

    def first_packet(self, resume: tuple[str, int | None] | None) -> tuple[str, int | None]:
        """Its first packet, as precisely as known: ``resume`` if in this file and later than ``lines_before``."""
        line = self.lines_before + 1
        if resume is not None and resume[0] == self.file and resume[1] is not None:
            line = max(line, resume[1])
        return self.file, line

    def rest(self, reader: JsonlReader) -> JsonlShare:
        """What is left of this share after ``reader`` stopped between two packets."""
        return JsonlShare(self.path, self.file, reader.position, self.end, reader.line, self.inode)


def _still_the_file(stream: BinaryIO, inode: int | None, start: int) -> None:
    """SourceError when the file open is not the one the shares were cut from (reading on would mix two files
    silently): another file took its name (inode only: devices differ in a cluster) or it is under ``start``."""
    info = os.fstat(stream.fileno())
    if inode is not None and info.st_ino != inode:
        raise SourceError(ANOTHER_FILE)
    if info.st_size < start:
        raise SourceError(CUT_SHORT)


# Every _FIND_SAMPLE newlines found, newlines_in counts the rest of a buffer at one go if so
# far they came more often than one in _FIND_SPACING bytes: a find skips a whole line but costs
# a Python call, bytes.count looks at every byte, so finds win for lines as long as packets.
_FIND_SAMPLE = 64
_FIND_SPACING = 1024


def newlines_in(data: bytes | bytearray, end: int) -> int:
    """``data.count(b"\n", 0, end)``, found one by one while lines are long (see _FIND_SPACING)."""
    found = 0
    position = 0
    while True:
        index = data.find(b"\n", position, end)
        if index < 0:
            return found
        found += 1
        position = index + 1
        if found % _FIND_SAMPLE == 0 and position < found * _FIND_SPACING:
            return found + data.count(b"\n", position, end)


_COUNT_READ = 1 << 20


def newline_counts(path: str, bounds: tuple[int, ...], inode: int | None = None) -> list[int]:
    """How many newlines each range of the file from one of ``bounds`` to the next holds:
    what the shares after them need for their ``lines_before``."""
    counts = []
    with open_file(path) as stream:
        _still_the_file(stream, inode, bounds[-1])
        stream.seek(bounds[0])
        buffer = bytearray(min(bounds[-1] - bounds[0], _COUNT_READ))
        view = memoryview(buffer)
        for start, end in itertools.pairwise(bounds):
            count = 0
            remaining = end - start
            while remaining > 0:
                read = stream.readinto(view[: min(remaining, len(buffer))])
                if not read:
                    break
                count += newlines_in(buffer, read)
                remaining -= read
            counts.append(count)
    return counts


def packets(
    files: Sequence[str], jsonl: Sequence[str], walk: Walk = EVERY_JSON
) -> Generator[Source | Unreadable, None, None]:
    """What ``check`` judges: the FILE and DIR arguments (a folder expanded in place), then
    each --jsonl file line by line. Closing the generator closes the --jsonl file being read."""
    for _, read in read_each(files, folders=True, walk=walk):
        yield read
    for raw_name in jsonl:
        name = display_name(raw_name)
        try:
            stream = open_source(raw_name)
        except SourceError as exc:
            yield unreadable(name, exc)
            continue
        try:
            yield from read_jsonl(stream, name)
        except OSError as exc:
            yield unreadable(name, exc)
        finally:
            if raw_name != "-":
                stream.close()
