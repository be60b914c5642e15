"""The commands that turn a packet into another, scrub and migrate: print the result, or rewrite files.

Without ``--write``: one source; the new packet's file bytes on stdout, what changed on
stderr. With ``--write``: every changed file rewritten atomically, what changed on stdout.
A packet that does not pass ``check`` (redaction aside) is reported and left as it is.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable

from cmp import Redaction, dumps, locate, migrate, scrub
from cmp._toolkit import file_bytes, locate_both, placeholder_in, policy_of
from cmp.cli._judge import check_source
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, ExitStatus, Output, error_line
from cmp.cli._render import place
from cmp.cli._rewrite import bad_write_options, rewrite
from cmp.cli._sources import Unreadable, packet_in_file, read_each
from cmp.findings import Finding, PacketError
from cmp.model import Packet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp._toolkit import RuleSetName

# One change: what it is about (a hit replaced, a member dropped; None: the whole packet),
# and its line, printed after where that is in the file.
Change = tuple[Finding | Redaction | None, str]
# A packet to (the new packet, its changes); PacketError when there is none.
Transform = Callable[[Packet], tuple[Packet, list[Change]]]


def _placed(name: str, data: bytes, changes: list[Change]) -> list[str]:
    """Each change's line after ``name:LINE:COLUMN`` where it is in ``data``, else after ``name``."""
    findings = [item for item, _ in changes if isinstance(item, Finding)]
    hits = [item for item, _ in changes if isinstance(item, Redaction)]
    if not (findings or hits):
        return [f"{name}: {text}" for _, text in changes]
    placed_findings, placed_hits = locate_both(data, findings, hits)
    found, hit = iter(placed_findings), iter(placed_hits)
    lines = []
    for item, text in changes:
        position = None
        if isinstance(item, Finding):
            position = next(found).position
        elif isinstance(item, Redaction):
            position = next(hit).position
        lines.append(f"{place(name, None, position)}: {text}")
    return lines


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
        read = packet_in_file(source)
        report = check_source(read, policy_of(allow_unredacted=True))
        try:
            if report.packet is None:
                raise PacketError(report.errors)
            packet, changes = transform(report.packet)
            data = file_bytes(dumps(packet))
        except PacketError as exc:
            for finding in locate(read.data, exc.findings):
                out.line(f"{place(name, None, finding.position)}: {finding}")
            run.fail(EXIT_FAIL)
            continue
        if not args.write:
            for line in _placed(name, read.data, changes):
                error_line(line)
            out.write(data)
            continue
        for line in _placed(name, read.data, changes):
            out.line(line)
        if packet == report.packet:
            out.line(f"{name}: unchanged")
            continue
        rewrite(raw_name, source, data, force=args.force, run=run, out=out)
    return run.status


def _scrubbed(packet: Packet, rule_set: RuleSetName) -> tuple[Packet, list[Change]]:
    clean, replaced = scrub(packet, rule_set=rule_set)
    # What was found is not shown: the point of scrubbing is that it goes nowhere.
    return clean, [(r, f"{r.field}: {r.category} replaced by {placeholder_in(r.field, r.category)}") for r in replaced]


def run_scrub(args: argparse.Namespace, out: Output) -> int:
    """``scrub``: every redaction match in a packet replaced by its category's placeholder."""
    return run_transform(args, out, "scrub", functools.partial(_scrubbed, rule_set=args.rule_set))


def _migrated(packet: Packet, *, to: str, drop: bool) -> tuple[Packet, list[Change]]:
    dropped: list[Change] = []
    if drop:
        try:
            migrate(packet, to)
        except PacketError as exc:  # the members the target version lacks, which drop leaves out
            dropped = [(f, f"dropped {f.path} (version {to} has no such member)") for f in exc.findings]
    moved = migrate(packet, to, drop=drop)
    if moved.ltm_version == packet.ltm_version:
        return moved, dropped
    return moved, [(None, f"version {packet.ltm_version} -> {to}"), *dropped]


def run_migrate(args: argparse.Namespace, out: Output) -> int:
    """``migrate``: a packet as another supported version."""
    return run_transform(args, out, "migrate", functools.partial(_migrated, to=args.to, drop=args.drop))
