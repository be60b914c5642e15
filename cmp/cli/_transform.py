"""Commands that turn a packet into another (scrub, migrate): print the result, or rewrite files.

Without ``--write``: one source (a file, or ``-`` for stdin); the new packet's file bytes
(canonical, one final newline) on stdout and what changed on stderr, so stdout is the
packet alone. With ``--write``: every file rewritten atomically when the packet changed,
and what changed on stdout. A packet that does not pass ``check`` (redaction findings
aside: removing those is what scrub is for) is reported and left as it is.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from cmp._canonical import dumps, file_bytes
from cmp._pipeline import policy_of
from cmp._text import describe
from cmp.cli._judge import check_source
from cmp.cli._output import Output, error_line
from cmp.cli._rewrite import WriteRefused, write_atomically
from cmp.cli._sources import Source, Unreadable, packet_in_file, read_each
from cmp.cli._status import EXIT_FAIL, EXIT_USAGE, ExitStatus
from cmp.findings import PacketError
from cmp.model import Packet

# A packet to (the new packet, one line per change); PacketError when there is none.
Transform = Callable[[Packet], tuple[Packet, list[str]]]


def run_transform(args: argparse.Namespace, out: Output, command: str, transform: Transform) -> int:
    if not args.write and len(args.files) != 1:
        error_line(f"{command} prints one packet; use --write to rewrite several files")
        return EXIT_USAGE
    if bad_write_options(command, args):
        return EXIT_USAGE
    run = ExitStatus()
    for raw_name, source in read_each(args.files):
        if isinstance(source, Unreadable):
            run.file_error(source.file, source.message)
            continue
        name = source.file
        report = check_source(packet_in_file(source), policy_of(allow_unredacted=True))
        try:
            if report.packet is None:
                raise PacketError(report.errors)
            packet, changes = transform(report.packet)
            data = file_bytes(dumps(packet))
        except PacketError as exc:
            for finding in exc.findings:
                out.line(f"{name}: {finding}")
            run.fail(EXIT_FAIL)
            continue
        if not args.write:
            for change in changes:
                error_line(f"{name}: {change}")
            out.write(data)
            continue
        for change in changes:
            out.line(f"{name}: {change}")
        if packet == report.packet:
            out.line(f"{name}: unchanged")
            continue
        rewrite(raw_name, source, data, force=args.force, run=run, out=out)
    return run.status


def bad_write_options(command: str, args: argparse.Namespace) -> bool:
    """``--write`` with stdin, or ``--force`` without ``--write``: said in one line on stderr."""
    if args.write and "-" in args.files:
        error_line(f"{command} --write cannot rewrite stdin")
        return True
    if args.force and not args.write:
        error_line(f"{command} --force only applies to --write")
        return True
    return False


def rewrite(path: str, source: Source, data: bytes, *, force: bool, run: ExitStatus, out: Output) -> None:
    """Replace the file ``source`` was read from (``path``) with ``data``, atomically; say how it went."""
    try:
        write_atomically(path, data, read=source, force=force)
    except WriteRefused as exc:
        run.file_error(source.file, f"not rewritten: {exc}")
    except OSError as exc:
        run.file_error(source.file, f"cannot write: {describe(exc)}; the file is unchanged")
    else:
        out.line(f"{source.file}: rewritten")
