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
from cmp._text import describe
from cmp.cli._judge import check_source
from cmp.cli._output import Output, error_line
from cmp.cli._rewrite import WriteRefused, write_atomically
from cmp.cli._sources import Unreadable, packet_in_file, read_each
from cmp.cli._status import EXIT_FAIL, EXIT_USAGE, ExitStatus
from cmp.findings import PacketError
from cmp.model import Packet

# A packet to (the new packet, one line per change); PacketError when there is none.
Transform = Callable[[Packet], tuple[Packet, list[str]]]


def run_transform(args: argparse.Namespace, out: Output, command: str, transform: Transform) -> int:
    if not args.write and len(args.files) != 1:
        error_line(f"{command} prints one packet; use --write to rewrite several files")
        return EXIT_USAGE
    if args.write and "-" in args.files:
        error_line(f"{command} --write cannot rewrite stdin")
        return EXIT_USAGE
    if args.force and not args.write:
        error_line(f"{command} --force only applies to --write")
        return EXIT_USAGE
    run = ExitStatus()
    for raw_name, source in read_each(args.files):
        if isinstance(source, Unreadable):
            run.file_error(source.file, source.message)
            continue
        name = source.file
        report = check_source(packet_in_file(source), lenient=False, allow_unredacted=True)
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
        try:
            write_atomically(raw_name, data, read=source, force=args.force)
        except WriteRefused as exc:
            run.file_error(name, f"not rewritten: {exc}")
            continue
        except OSError as exc:
            run.file_error(name, f"cannot write: {describe(exc)}; the file is unchanged")
            continue
        out.line(f"{name}: rewritten")
    return run.status
