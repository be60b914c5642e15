"""The command line: ``core-memory-packet check``, ``fmt`` and ``conformance`` (also ``python -m cmp``).

There is no ``cmp`` console script: that name is POSIX cmp(1).

Every result is rendered from the same Report/Finding/Redaction objects the library
returns. Exit codes: 0 every file accepted, 1 any not, 2 a usage error, an unreadable
file (the other files are still processed), a file ``fmt --write`` could not or would
not rewrite, or worker processes that failed; 128 + N when stopped by signal N.
Text output is one result per physical line (:func:`render_line`).
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import closing, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TextIO, TypeVar

from cmp import __version__, conformance
from cmp._canonical import dumps, file_bytes
from cmp.batch import (
    Job,
    Progress,
    Unreadable,
    Verdict,
    WorkersFailed,
    error_entry,
    judge_all,
    judge_report,
    read_jsonl,
)
from cmp.conformance._text import describe, one_line
from cmp.findings import Finding
from cmp.inputs import Input, InputError, display_name, open_source, read_source

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
# More worker processes than this only exhaust the machine (each is a Python interpreter).
MAX_JOBS = 256

# How the program is named in usage, help and examples: the console script, or the module.
CONSOLE_PROG = "core-memory-packet"
MODULE_PROG = "python -m cmp"

# (command with {prog} for the program name, what it does), per subcommand.
_CHECK_EXAMPLES = (
    ("{prog} check packet.json", 'one line per finding, or "packet.json: ok"'),
    ("{prog} check a.json b.json --format json", "one JSON document with a result object per file"),
    ("cat packet.json | {prog} check -", "read the packet from stdin"),
    ("{prog} check --jsonl packets.jsonl --jobs 2", "one packet per line, results per line, both cores"),
    ("{prog} check --lenient old.json", "report schema errors as warnings, exit 0"),
)
_FMT_EXAMPLES = (
    ("{prog} fmt packet.json", "print the canonical bytes and one final newline"),
    ("{prog} fmt --check *.json", "list files that are not canonical (exit 1)"),
    ("{prog} fmt --write packet.json", "rewrite in canonical form, atomically"),
)
_CONFORMANCE_EXAMPLES = (
    ("{prog} conformance", "run the conformance vectors against this library"),
    ("{prog} conformance --impl 'go run ./x'", "run them against another implementation"),
    ("{prog} conformance --filter canonical --format json", "one area, one JSON document"),
    ("{prog} conformance --format junit > conformance.xml", "a JUnit XML report for a CI system"),
)


def _examples(prog: str, *groups: Sequence[tuple[str, str]]) -> str:
    """An ``examples:`` block: each command as it is typed, what it does on the line below."""
    lines = ["examples:"]
    for group in groups:
        for command, what in group:
            lines.append("  " + command.format(prog=prog))
            lines.append("      " + what)
    return "\n".join(lines) + "\n"


_CHECK_FORMAT_HELP = (
    "text (default): one line per finding or redaction hit, or 'FILE: ok'; "
    'json: one document {"results": [...]} with one result object per packet or unreadable source'
)
_CHECK_OUTPUT = """\
--format json prints one document {"results": [...]}: one result object per
packet, in input order, with the members file (and line, for --jsonl), ok,
conforming, accepted, version, errors [{code, path, keyword, message}],
redactions [{field, category, found, text}] and error: null, or for a source
that could not be read or checked, the one-line reason (ok, conforming and
accepted are then false, version null, errors and redactions empty).
"""
_FMT_DESCRIPTION = """\
Print or rewrite packets in canonical form. A file is written as the canonical
bytes plus one final newline, as editors and pre-commit's end-of-file-fixer keep
files (cmp.dumps, and what goes over the wire, are the canonical bytes alone);
--check calls a file canonical only with exactly that one final newline (none
after a packet of the full 32,768 bytes, which a newline would make too large).
"""
_CONFORMANCE_OUTPUT = """\
--format text: one "FAIL id: problems" line per failing vector, then
"N passed, N failed". --format json: one document {"passed", "failed",
"failures": [{"id", "area", "problems"}]}. --format junit: a JUnit XML report,
a <testsuite> per area and a <testcase> per vector.
"""


# What can end a line or disguise one in a terminal or a log: C0 controls, DEL, C1
# controls (U+0085 is a line break too), the Unicode line and paragraph separators, and
# the bidi embeddings, overrides and isolates that reorder what follows them.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED_ESCAPES.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def render_line(text: str) -> bytes:
    """One line of text output as UTF-8 bytes, and never more than one line.

    Every text line the CLI prints, on stdout or stderr, goes through here: file
    names and quoted packet text are hostile, and a newline or carriage return in
    them would forge or hide a result line. Such characters are written as visible
    escapes (``\\n``, ``\\x1b``, ``\\u2028``); escaping twice changes nothing, as an
    escape is plain ASCII. Backslashes are left as they are, so paths and patterns
    read as usual.
    """
    return (_UNPRINTABLE.sub(_escape, text) + "\n").encode("utf-8", "backslashreplace")


class _Output:
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

    def line(self, text: str) -> None:
        """One line of text output (escaped: see :func:`render_line`)."""
        self.write(render_line(text))

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


def _error_line(text: str) -> None:
    """One ``cmp: `` line on stderr, escaped like every text line; a closed stderr is not an error."""
    if sys.stderr is not None:
        try:
            sys.stderr.buffer.write(render_line("cmp: " + text))
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


class _JsonResults:
    """``{"results": [...]}`` written one entry at a time, as results arrive.

    Holding every result until the end cost memory in proportion to the input (a
    packet with thousands of errors has a result of megabytes). The bytes are those
    ``json.dumps({"results": entries}, indent=2)`` writes for the whole list: each
    entry is an object rendered with ``indent=2``, indented two levels more here.
    """

    def __init__(self, out: _Output) -> None:
        self.out = out
        self.entries = 0
        out.write(b'{\n  "results": [')

    def add(self, entry: str) -> None:
        separator = ",\n    " if self.entries else "\n    "
        # JSON text holds no raw newline inside a string, so every newline is indentation.
        self.out.write((separator + entry.replace("\n", "\n    ")).encode("utf-8", "backslashreplace"))
        self.entries += 1

    def close(self) -> None:
        self.out.write(b"\n  ]\n}\n" if self.entries else b"]\n}\n")


@dataclass
class _Run:
    """The exit status of one command, as sources are read and judged."""

    status: int = EXIT_OK

    def fail(self, code: int) -> None:
        self.status = max(self.status, code)

    def unreadable(self, name: str, message: str) -> None:
        self.fail(EXIT_USAGE)
        _error_line(f"{name}: {message}")


_Opened = TypeVar("_Opened")


def _opened(names: Sequence[str], opener: Callable[[str], _Opened]) -> Iterator[tuple[str, str, _Opened] | Unreadable]:
    """(name as given, name to print, what ``opener`` made of it) for each name, or the
    Unreadable that takes its place in the order."""
    for raw_name in names:
        name = display_name(raw_name)
        try:
            yield raw_name, name, opener(raw_name)
        except InputError as exc:
            yield Unreadable(name, str(exc))


def _sources(args: argparse.Namespace) -> Generator[Job | Unreadable, None, None]:
    """Jobs from the FILE arguments, then from --jsonl; an unreadable source takes its place in the order."""
    for read in _opened(args.files, read_source):
        if isinstance(read, Unreadable):
            yield read
            continue
        _, name, source = read
        yield Job(name, None, source.data, source.size)
    for opened in _opened(args.jsonl or (), open_source):
        if isinstance(opened, Unreadable):
            yield opened
            continue
        raw_name, name, stream = opened
        try:
            yield from read_jsonl(stream, name)
        except OSError as exc:
            yield Unreadable(name, f"cannot read: {exc.strerror or exc}")
        finally:
            if raw_name != "-":
                stream.close()


class _CheckOutput:
    """Where ``check`` results go: text lines, or entries of the streamed JSON document."""

    def __init__(self, out: _Output, as_json: bool, progress: Progress) -> None:
        self.out = out
        self.progress = progress
        self.document = _JsonResults(out) if as_json else None

    def verdict(self, verdict: Verdict) -> None:
        if self.document is not None:
            self.document.add(verdict.entry)
        for line in verdict.lines:
            self.out.line(line)

    def error(self, file: str, line: int | None, message: str) -> None:
        """One line on stderr and, in JSON, an entry in its place among the results."""
        self.progress.clear()
        _error_line(f"{file if line is None else f'{file}:{line}'}: {message}")
        if self.document is not None:
            self.document.add(error_entry(file, line, message))

    def close(self) -> None:
        if self.document is not None:
            self.document.close()


def _usable_cores() -> int:
    """The cores this process may run on (its affinity), not all the machine has."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _cmd_check(args: argparse.Namespace, out: _Output) -> int:
    if not args.files and not args.jsonl:
        _error_line("check needs a FILE or --jsonl")
        return EXIT_USAGE
    if not 0 <= args.jobs <= MAX_JOBS:
        _error_line(f"--jobs must be 0 (all cores) to {MAX_JOBS}")
        return EXIT_USAGE
    workers = args.jobs or min(_usable_cores(), MAX_JOBS)
    run = _Run()
    # A counter on the terminal that also shows the results would break their lines.
    progress = Progress(None if args.jsonl else len(args.files), quiet=out.is_terminal)
    results = _CheckOutput(out, args.format == "json", progress)
    sources = _sources(args)
    verdicts = judge_all(sources, args.lenient, args.allow_unredacted, workers, args.format == "json")
    # With workers, a stop signal must unwind through judge_all, which then kills them.
    stop = _StopSignals() if workers > 1 else nullcontext()
    try:
        with stop, closing(sources), closing(verdicts):  # on any exit: workers stopped, --jsonl files closed, now
            for item in verdicts:
                if out.lost:  # nobody reads the results any more (`| head`): stop reading input
                    break
                if isinstance(item, Unreadable):
                    run.fail(EXIT_USAGE)
                    results.error(item.file, None, item.message)
                    continue
                progress.step()
                if not item.accepted:
                    run.fail(EXIT_FAIL)
                results.verdict(item)
    except WorkersFailed as exc:
        run.fail(EXIT_USAGE)
        pending = exc.pending
        results.error(pending.file, pending.line, f"not checked: {exc}; nothing after it was checked either")
    finally:
        progress.close()
    results.close()
    return run.status


def _canonical(source: Input, allow_unredacted: bool) -> tuple[bytes | None, list[str]]:
    """Canonical bytes of a source, or the one-line reasons it has none."""
    report = judge_report(source.data, source.size, False, allow_unredacted)
    if report.packet is None:
        return None, [str(f) for f in report.errors]
    if report.blocked:
        return None, [f"redaction {r} (use --allow-unredacted to format anyway)" for r in report.redactions]
    try:
        return dumps(report.packet), []
    except ValueError as exc:
        findings: Sequence[Finding] = getattr(exc, "findings", ())
        return None, [str(f) for f in findings] or [str(exc)]


class WriteRefused(Exception):
    """A rewrite that would be unsafe or would lose someone else's change; the message is one line."""


class Stopped(BaseException):
    """SIGINT, SIGTERM or SIGHUP arrived during a rewrite.

    Raised where the code was, like KeyboardInterrupt, so that the rewrite cleans up
    on its way out; :func:`main` turns it into exit status 128 + the signal number.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class _StopSignals:
    """While entered, the first stop signal raises :class:`Stopped` where the code is.

    Without this, SIGTERM kills the process on the spot: a rewrite leaves its
    temporary file behind, and a ``--jobs`` run leaves its workers waiting forever
    for work (they hold its stdout open, so a pipeline never ends). Later signals are
    ignored, so that they cannot cut short the cleanup the first one started; inside
    :meth:`deferred` the first one waits for the end of the block. A signal the
    process ignores (``nohup``) stays ignored; outside the main thread, where no
    handler can be set, nothing changes.
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self.owner = os.getpid()
        self.deferring = False
        self.previous: dict[int, Any] = {}

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self.owner:
            # A worker process forked while the handler was set: it stops as it would have without it.
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if self.received is not None:
            return
        self.received = signum
        if not self.deferring:
            raise Stopped(signum)

    def __enter__(self) -> _StopSignals:
        self.owner = os.getpid()
        for number in _STOP_SIGNALS:
            handler = signal.getsignal(number)
            if handler is signal.SIG_IGN or handler is None:
                continue
            try:
                self.previous[number] = signal.signal(number, self._handler)
            except ValueError:  # not the main thread
                break
        return self

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        for number, handler in self.previous.items():
            signal.signal(number, handler)
        if self.received is not None and not isinstance(error, Stopped):
            # Deferred, then overtaken by another error: the stop still wins, after the cleanup.
            raise Stopped(self.received)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """A stop signal arriving in this block is raised at its end: for steps that must not be cut in two."""
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False
        if self.received is not None:
            raise Stopped(self.received)


def _refuse_unsafe(path: str, info: os.stat_result) -> None:
    """Refuse what a rename would quietly change: other names of the file, a write protection.

    A rename gives ``path`` a new inode, so other hard links keep the old bytes; and
    renaming needs only the folder to be writable, so a read-only file would be
    rewritten anyway. Root passes every access check, so a file with no write bit at
    all counts as read-only too.
    """
    if info.st_nlink > 1:
        raise WriteRefused(
            f"it has {info.st_nlink} hard links, which rewriting would split (--force to rewrite anyway)"
        )
    if not info.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise WriteRefused("it is read-only (--force to rewrite anyway)")


def _refuse_changed(path: str, read: Input) -> None:
    """Just before the rename, leave the file alone if it is no longer what was read.

    Someone may have saved it meanwhile; the rename would throw their change away.
    The file (inode, size, mtime) and its bytes must both be unchanged. A change in
    the instant between this check and the rename cannot be seen; that is as close
    as a rename-based write can get without locks every writer would have to honour.
    """
    try:
        now = read_source(path)
    except InputError:
        now = None
    if now is None or now.data != read.data or (read.stamp is not None and now.stamp != read.stamp):
        raise WriteRefused("it changed since it was read; run fmt again")


def _copy_owner(temporary: str, info: os.stat_result) -> None:
    """Give the new file the original's owner and group where permitted.

    Only root may give a file away and a user may only pick one of their groups, so
    a refusal keeps the writer's ids rather than failing the rewrite; EINVAL is an id
    this system cannot map (user namespaces), the same kind of refusal.
    """
    try:
        os.chown(temporary, info.st_uid, info.st_gid)
    except PermissionError:
        pass
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_atomically(path: str, data: bytes, read: Input | None = None, force: bool = False) -> None:
    """Replace ``path`` with ``data``: temporary file in the same folder, fsync, rename.

    On any error, and on SIGINT, SIGTERM or SIGHUP (:class:`Stopped`), the original is
    untouched and the temporary file removed. A symlink is followed, so the file it
    names is rewritten and the link stays a link. Mode, owner and group are carried
    over (owner and group where permitted). Unless ``force``, a file with other hard
    links or without write permission is refused (:class:`WriteRefused`). Given
    ``read`` (what was read from the file), a file that changed since is left alone
    (:class:`WriteRefused`).
    """
    import tempfile

    path = os.path.realpath(path)
    folder = os.path.dirname(path) or "."
    info = os.stat(path)
    if not force:
        _refuse_unsafe(path, info)
    with _StopSignals() as stop:
        temporary = None
        try:
            with stop.deferred():  # a signal between creating and naming it would leak the file
                fd, temporary = tempfile.mkstemp(dir=folder, prefix=".cmp-", suffix=".tmp")
                stream = os.fdopen(fd, "wb")
            with stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            _copy_owner(temporary, info)  # before chmod: chown may clear set-id bits
            os.chmod(temporary, info.st_mode & 0o7777)
            if read is not None:
                _refuse_changed(path, read)
            os.replace(temporary, path)
        except BaseException:
            if temporary is not None:
                _remove(temporary)  # after a late signal the rename is done and this finds nothing
            raise
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    """fsync the folder, so that the rename itself survives a crash (best effort)."""
    try:
        folder_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(folder_fd)
    except OSError:
        pass
    finally:
        os.close(folder_fd)


def _packet_in_file(source: Input) -> Input:
    """What fmt judges: the file's bytes less one final newline, the line end fmt itself writes.

    A file that an editor saved with a newline after a packet of exactly 32,768 bytes is
    still that packet to fmt, which then writes it without the newline (file_bytes).
    """
    if source.data.endswith(b"\n") and source.size == len(source.data):
        return Input(source.data[:-1], source.size - 1, source.stamp)
    return source


def _read_all(names: Sequence[str], run: _Run) -> Iterator[tuple[str, str, Input]]:
    """(name as given, name to print, what was read) for each source; the rest are reported."""
    for item in _opened(names, read_source):
        if isinstance(item, Unreadable):
            run.unreadable(item.file, item.message)
            continue
        yield item


def _cmd_fmt(args: argparse.Namespace, out: _Output) -> int:
    if not (args.check or args.write) and len(args.files) != 1:
        _error_line("fmt prints one file; use --check or --write for several")
        return EXIT_USAGE
    if args.write and "-" in args.files:
        _error_line("fmt --write cannot rewrite stdin")
        return EXIT_USAGE
    if args.force and not args.write:
        _error_line("fmt --force only applies to --write")
        return EXIT_USAGE
    run = _Run()
    for raw_name, name, source in _read_all(args.files, run):
        canonical, problems = _canonical(_packet_in_file(source), args.allow_unredacted)
        if canonical is None:
            for problem in problems:
                out.line(f"{name}: {problem}")
            run.fail(EXIT_FAIL)
            continue
        data = file_bytes(canonical)
        if args.check:
            if data != source.data:
                out.line(f"{name}: not canonical")
                run.fail(EXIT_FAIL)
        elif args.write:
            if data != source.data:
                try:
                    write_atomically(raw_name, data, source, args.force)
                except WriteRefused as exc:
                    run.unreadable(name, f"not rewritten: {exc}")
                    continue
                except OSError as exc:
                    run.unreadable(name, f"cannot write: {exc.strerror or exc}; the file is unchanged")
                    continue
                out.line(f"{name}: rewritten")
        else:
            out.write(data)
    return run.status


def _cmd_conformance(args: argparse.Namespace, out: _Output) -> int:
    # A stop signal becomes Stopped where the runner is, so its cleanup kills the
    # implementation's process group instead of leaving it running without us.
    with _StopSignals():
        # Its JSON output is one multi-line document; its text output, lines like ours.
        return _run_conformance(args, out.document if args.format == "json" else out.line, _error_line)


# --timeout must be a finite number of seconds in (0, one day]: NaN, infinities and huge
# values break the clock and selector arithmetic, and no vector needs a day.
MAX_TIMEOUT_SECONDS = 86_400.0


def _timeout_problem(timeout: float) -> str | None:
    """Why --timeout is unusable: NaN, infinities and huge values break the deadline arithmetic."""
    if math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT_SECONDS:
        return None
    return f"--timeout must be positive and at most {MAX_TIMEOUT_SECONDS:g} seconds (one day), not {timeout:g}"


def _conformance_arguments(parser: argparse.ArgumentParser) -> None:
    """The conformance subcommand's options, kept beside the runner they configure."""
    parser.description = (
        "Run the conformance vectors against this library, or against another implementation "
        f"(--impl). The vectors come from --vectors DIR, by default from {conformance.DEFAULT_VECTORS_TEXT}."
    )
    parser.add_argument(
        "--impl",
        metavar="COMMAND",
        help="test another implementation over the JSON-lines protocol; COMMAND is split into words "
        "by POSIX shell rules and run without a shell (use sh -c '...' for pipes)",
    )
    parser.add_argument("--vectors", metavar="DIR", help=f"vector folder (default: {conformance.DEFAULT_VECTORS_TEXT})")
    parser.add_argument("--filter", metavar="AREA", action="append", help="only this area (repeatable)")
    parser.add_argument(
        "--format",
        choices=("text", "json", "junit"),
        default="text",
        help="text lines (default), one JSON document, or a JUnit XML report with a testcase per vector",
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, metavar="SECONDS", help="per-exchange limit for --impl (default: 10)"
    )
    parser.add_argument(
        "--impl-stderr",
        metavar="FILE",
        help="where the implementation's stderr goes: - for this command's stderr, or a file to append to "
        "(default: discarded)",
    )


def _open_stderr(target: str | None) -> int | None:
    """The Popen stderr for --impl-stderr: DEVNULL, None (ours) or a file opened once for appending.

    OSError (one line, from main) if the file cannot be opened. Opened without blocking
    so that a FIFO with no reader fails at once instead of hanging here.
    """
    if target is None:
        return subprocess.DEVNULL
    if target == "-":
        return None
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
    fd = os.open(target, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0), 0o666)
    os.set_blocking(fd, True)
    return fd


# Compiled on first use, not at import: every CLI start imports this module, and the
def _run_conformance(args: argparse.Namespace, line: Callable[[str], None], error: Callable[[str], None]) -> int:
    """Run the vectors; a usage or vector-folder problem is one line on stderr and exit 2."""
    problem = _timeout_problem(args.timeout)
    if problem:
        error(problem)
        return 2
    argv: list[str] | None = None
    if args.impl is not None:
        try:
            argv = conformance.split_command(args.impl)
        except ValueError as exc:
            error(str(exc))
            return 2
    folder = Path(args.vectors) if args.vectors else conformance.default_vector_dir()
    if folder is None:
        error(f"no conformance vectors found (looked for {conformance.DEFAULT_VECTORS_TEXT}); pass --vectors DIR")
        return 2
    try:
        vectors = conformance.load_vectors(folder, args.filter)
    except conformance.VectorError as exc:
        error(one_line(f"conformance: {exc}"))
        return 2
    implementation: conformance.Implementation | None = None
    opened: int | None = None
    if argv is not None:
        try:
            stderr = _open_stderr(args.impl_stderr)
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            error(one_line(f"--impl-stderr: cannot open {display_name(args.impl_stderr)}: {describe(exc)}"))
            return 2
        opened = stderr if stderr is not None and stderr >= 0 else None
        implementation = conformance.Implementation(argv, args.timeout, stderr)
    try:
        outcomes = conformance.run(vectors, implementation)
    finally:
        if opened is not None:
            os.close(opened)
    conformance.report(outcomes, args.format, line)
    return 0 if all(o.passed for o in outcomes) else 1


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Text already laid out in lines (examples, notes) is kept as written; a one-paragraph
    description, such as the one cmp.conformance gives its subcommand, is wrapped."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text.strip("\n"):
            return super()._fill_text(text, width, indent)
        return argparse.HelpFormatter._fill_text(self, text, width, indent)


class _Parser(argparse.ArgumentParser):
    """One-line usage errors; options only by their full names.

    argparse would take a unique prefix for the option (``--al`` for
    ``--allow-unredacted``, ``--json`` for ``--jsonl``): a typo must not switch the
    redaction gate off or read a packet as JSON Lines.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # one line, exit 2, no usage dump
        _error_line(message.splitlines()[0] if message else "usage error")
        raise SystemExit(EXIT_USAGE)


def build_parser(prog: str = CONSOLE_PROG) -> argparse.ArgumentParser:
    """The argument parser; ``prog`` is how usage, help and examples name the program."""
    parser = _Parser(
        prog=prog,
        description="Validate, redact and canonically format Core Memory Packets (v0.1, v0.2).",
        epilog=_examples(prog, _CHECK_EXAMPLES, _FMT_EXAMPLES, _CONFORMANCE_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    # The version names the package, however the program was started.
    parser.add_argument("-V", "--version", action="version", version=f"{CONSOLE_PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    check_cmd = commands.add_parser(
        "check",
        help="validate and redaction-scan packets",
        description="Validate packets and scan them for secrets and personal paths.",
        epilog=_CHECK_OUTPUT + "\n" + _examples(prog, _CHECK_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    check_cmd.add_argument("files", nargs="*", metavar="FILE", help="packet files; - reads stdin")
    check_cmd.add_argument(
        "--jsonl", action="append", metavar="FILE", help="a JSON Lines file (- for stdin), one packet per line"
    )
    check_cmd.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes (0: one per core)")
    check_cmd.add_argument("--format", choices=("text", "json"), default="text", help=_CHECK_FORMAT_HELP)
    check_cmd.add_argument(
        "--lenient", action="store_true", help="schema errors are warnings (exit 0); intake errors still fail"
    )
    check_cmd.add_argument(
        "--allow-unredacted", action="store_true", help="redaction findings are warnings (whole-packet override)"
    )
    check_cmd.set_defaults(handler=_cmd_check)

    fmt_cmd = commands.add_parser(
        "fmt",
        help="print or rewrite packets in canonical form",
        description=_FMT_DESCRIPTION,
        epilog=_examples(prog, _FMT_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    fmt_cmd.add_argument("files", nargs="+", metavar="FILE", help="packet files; - reads stdin")
    mode = fmt_cmd.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="list files that are not canonical; exit 1 if any")
    mode.add_argument("--write", action="store_true", help="rewrite files in place, atomically")
    fmt_cmd.add_argument(
        "--force", action="store_true", help="with --write: rewrite read-only files and files with other hard links too"
    )
    fmt_cmd.add_argument("--allow-unredacted", action="store_true", help="format packets with redaction findings too")
    fmt_cmd.set_defaults(handler=_cmd_fmt)

    conf_cmd = commands.add_parser(
        "conformance",
        help="run the conformance vectors against this library or another",
        epilog=_CONFORMANCE_OUTPUT + "\n" + _examples(prog, _CONFORMANCE_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    _conformance_arguments(conf_cmd)
    conf_cmd.set_defaults(handler=_cmd_conformance)

    return parser


def main(argv: Sequence[str] | None = None, prog: str = CONSOLE_PROG) -> int:
    parser = build_parser(prog)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    handler: Callable[[argparse.Namespace, _Output], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    out = _Output(sys.stdout)
    try:
        status = handler(args, out)
    except KeyboardInterrupt:
        _error_line("interrupted")
        return 128 + signal.SIGINT
    except Stopped as exc:
        _error_line("interrupted" if exc.signum == signal.SIGINT else f"stopped by {signal.Signals(exc.signum).name}")
        return 128 + exc.signum
    if out.lost:
        _error_line("standard output is closed; results were not all written")
        if sys.stdout is not None:
            _silence_stdout()
        return max(status, EXIT_USAGE)
    return status


def _silence_stdout() -> None:
    # Python flushes stdout at exit; on a closed pipe that would print a traceback.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main_exit(prog: str = CONSOLE_PROG) -> None:
    """Entry point of the ``core-memory-packet`` console script, and of ``python -m cmp`` with its own ``prog``."""
    sys.exit(main(prog=prog))
