"""The command line: ``cmp check``, ``cmp fmt`` and ``cmp conformance``.

Every result is rendered from the same Report/Finding/Redaction objects the library
returns. Exit codes: 0 every file accepted, 1 any not, 2 a usage error or an
unreadable file (the other files are still processed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar

from cmp import __version__
from cmp.batch import Job, Progress, judge_all, judge_report, open_jsonl, read_jsonl
from cmp.canonical import dumps
from cmp.findings import Finding
from cmp.inputs import Input, InputError, display_name, read_source

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

_EXAMPLES = """\
examples:
  cmp check packet.json                 one line per finding, or "packet.json: ok"
  cmp check a.json b.json --format json one JSON document with a result per file
  cat packet.json | cmp check -         read the packet from stdin
  cmp check --jsonl packets.jsonl --jobs 2   one packet per line, results per line, both cores
  cmp check --lenient old.json          report schema errors as warnings, exit 0
  cmp fmt packet.json                   print the canonical bytes
  cmp fmt --check *.json                list files that are not canonical (exit 1)
  cmp fmt --write packet.json           rewrite in canonical form, atomically
  cmp conformance                       run the conformance vectors against this library
  cmp conformance --impl 'go run ./x'   run them against another implementation
"""


class _Output:
    """UTF-8 lines to stdout whatever the locale; a closed stdout or pipe ends output cleanly."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.lost = False  # something could not be written

    def line(self, text: str) -> None:
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
    if sys.stderr is not None:
        try:
            sys.stderr.buffer.write(("cmp: " + text + "\n").encode("utf-8", "backslashreplace"))
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


@dataclass
class _Run:
    """The exit status and JSON results of one command, as sources are read and judged."""

    status: int = EXIT_OK
    results: list[dict[str, Any]] = field(default_factory=list)

    def fail(self, code: int) -> None:
        self.status = max(self.status, code)

    def unreadable(self, name: str, message: str) -> None:
        self.fail(EXIT_USAGE)
        _error_line(f"{name}: {message}")
        self.results.append({"file": name, "ok": False, "error": message})


_Opened = TypeVar("_Opened")


def _opened(names: Sequence[str], run: _Run, opener: Callable[[str], _Opened]) -> Iterator[tuple[str, str, _Opened]]:
    """(name as given, name to print, what ``opener`` made of it) for each name it could open.

    The rest are reported as unreadable, and the run goes on.
    """
    for raw_name in names:
        name = display_name(raw_name)
        try:
            opened = opener(raw_name)
        except InputError as exc:
            run.unreadable(name, str(exc))
            continue
        yield raw_name, name, opened


def _jobs(args: argparse.Namespace, run: _Run) -> Iterator[Job]:
    """Jobs from the FILE arguments, then from --jsonl; unreadable sources are reported here."""
    for _, name, source in _opened(args.files, run, read_source):
        yield Job(name, None, source.data, source.size)
    for raw_name, name, stream in _opened(args.jsonl or (), run, open_jsonl):
        try:
            yield from read_jsonl(stream, name)
        except OSError as exc:
            run.unreadable(name, f"cannot read: {exc.strerror or exc}")
        finally:
            if raw_name != "-":
                stream.close()


def _cmd_check(args: argparse.Namespace, out: _Output) -> int:
    if not args.files and not args.jsonl:
        _error_line("check needs a FILE or --jsonl")
        return EXIT_USAGE
    if args.jobs < 0:
        _error_line("--jobs must be 0 (all cores) or more")
        return EXIT_USAGE
    workers = args.jobs or os.cpu_count() or 1
    run = _Run()
    progress = Progress(None if args.jsonl else len(args.files))
    try:
        for verdict in judge_all(_jobs(args, run), args.lenient, args.allow_unredacted, workers):
            progress.step()
            if not verdict.accepted:
                run.fail(EXIT_FAIL)
            if args.format == "json":
                run.results.append(verdict.result)
            else:
                for line in verdict.lines:
                    out.line(line)
    finally:
        progress.close()
    if args.format == "json":
        out.line(json.dumps({"results": run.results}, ensure_ascii=False, indent=2))
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


def write_atomically(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data``: temporary file in the same folder, fsync, rename.

    On any error the original is untouched and the temporary file removed. A symlink
    is followed, so the file it names is rewritten and the link stays a link.
    """
    import tempfile

    path = os.path.realpath(path)
    folder = os.path.dirname(path) or "."
    mode = os.stat(path).st_mode & 0o7777
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".cmp-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
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


def _cmd_fmt(args: argparse.Namespace, out: _Output) -> int:
    if not (args.check or args.write) and len(args.files) != 1:
        _error_line("fmt prints one file; use --check or --write for several")
        return EXIT_USAGE
    if args.write and "-" in args.files:
        _error_line("fmt --write cannot rewrite stdin")
        return EXIT_USAGE
    run = _Run()
    for raw_name, name, source in _opened(args.files, run, read_source):
        data, problems = _canonical(source, args.allow_unredacted)
        if data is None:
            for problem in problems:
                out.line(f"{name}: {problem}")
            run.fail(EXIT_FAIL)
        elif args.check:
            if data != source.data:
                out.line(f"{name}: not canonical")
                run.fail(EXIT_FAIL)
        elif args.write:
            if data != source.data:
                try:
                    write_atomically(raw_name, data)
                except OSError as exc:
                    run.unreadable(name, f"cannot write: {exc.strerror or exc}; the file is unchanged")
                    continue
                out.line(f"{name}: rewritten")
        else:
            out.write(data)
    return run.status


def _cmd_conformance(args: argparse.Namespace, out: _Output) -> int:
    from cmp import conformance

    return conformance.main(args, out.line, _error_line)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2, no usage dump
        _error_line(message.splitlines()[0] if message else "usage error")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cmp",
        description="Validate, redact and canonically format Core Memory Packets (v0.1, v0.2).",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cmp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    check_cmd = commands.add_parser(
        "check",
        help="validate and redaction-scan packets",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check_cmd.add_argument("files", nargs="*", metavar="FILE", help="packet files; - reads stdin")
    check_cmd.add_argument(
        "--jsonl", action="append", metavar="FILE", help="a JSON Lines file (- for stdin), one packet per line"
    )
    check_cmd.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes (0: one per core)")
    check_cmd.add_argument("--format", choices=("text", "json"), default="text")
    check_cmd.add_argument(
        "--lenient", action="store_true", help="schema errors are warnings (exit 0); intake errors still fail"
    )
    check_cmd.add_argument(
        "--allow-unredacted", action="store_true", help="redaction findings are warnings (whole-packet override)"
    )
    check_cmd.set_defaults(handler=_cmd_check)

    fmt_cmd = commands.add_parser("fmt", help="print or rewrite packets in canonical form")
    fmt_cmd.add_argument("files", nargs="+", metavar="FILE", help="packet files; - reads stdin")
    mode = fmt_cmd.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="list files that are not canonical; exit 1 if any")
    mode.add_argument("--write", action="store_true", help="rewrite files in place, atomically")
    fmt_cmd.add_argument("--allow-unredacted", action="store_true", help="format packets with redaction findings too")
    fmt_cmd.set_defaults(handler=_cmd_fmt)

    conf_cmd = commands.add_parser("conformance", help="run the conformance vectors against this library or another")
    conf_cmd.add_argument("--impl", metavar="COMMAND", help="test another implementation over the JSON-lines protocol")
    conf_cmd.add_argument("--vectors", metavar="DIR", help="vector folder (default: the repository's)")
    conf_cmd.add_argument("--filter", metavar="AREA", action="append", help="only this area (repeatable)")
    conf_cmd.add_argument("--format", choices=("text", "json"), default="text")
    conf_cmd.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS", help="per-vector limit for --impl")
    conf_cmd.set_defaults(handler=_cmd_conformance)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
        return 130
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


def main_exit() -> None:
    """Console-script entry point."""
    sys.exit(main())
