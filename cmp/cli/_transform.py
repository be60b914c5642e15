"""The commands that turn a packet into another, scrub and migrate: print the result, or rewrite files.

Without ``--write``: one source (a file, or ``-`` for stdin); the new packet's file bytes
(canonical, one final newline) on stdout and what changed on stderr, so stdout is the
packet alone. With ``--write``: every file rewritten atomically when the packet changed,
and what changed on stdout. A packet that does not pass ``check`` (redaction findings
aside: removing those is what scrub is for) is reported and left as it is.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable

from cmp import dumps, migrate, scrub
from cmp._canonical import file_bytes
from cmp._pipeline import policy_of
from cmp._redaction._rules import Rules
from cmp._scrub import placeholder
from cmp.cli._judge import check_source
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, ExitStatus, Output, error_line
from cmp.cli._rewrite import bad_write_options, rewrite
from cmp.cli._sources import Unreadable, packet_in_file, read_each
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


def _scrubbed(packet: Packet, rules: Rules) -> tuple[Packet, list[str]]:
    clean, replaced = scrub(packet, rules=rules)
    # What was found is not shown: the point of scrubbing is that it goes nowhere.
    return clean, [f"{r.field}: {r.category} replaced by {placeholder(r.category)}" for r in replaced]


def run_scrub(args: argparse.Namespace, out: Output) -> int:
    """``scrub``: every redaction match in a packet replaced by its category's placeholder."""
    return run_transform(args, out, "scrub", functools.partial(_scrubbed, rules=args.rules))


def _migrated(packet: Packet, *, to: str, drop: bool) -> tuple[Packet, list[str]]:
    dropped: list[str] = []
    if drop:
        try:
            migrate(packet, to)
        except PacketError as exc:  # the members the target version lacks, which drop leaves out
            dropped = [f"dropped {f.path} (version {to} has no such member)" for f in exc.findings]
    moved = migrate(packet, to, drop=drop)
    if moved.ltm_version == packet.ltm_version:
        return moved, dropped
    return moved, [f"version {packet.ltm_version} -> {to}", *dropped]


def run_migrate(args: argparse.Namespace, out: Output) -> int:
    """``migrate``: a packet as another supported version."""
    return run_transform(args, out, "migrate", functools.partial(_migrated, to=args.to, drop=args.drop))
