"""``new``: a fresh packet from options; ``example``: an example packet of our own."""

from __future__ import annotations

import argparse
import os

from cmp import dumps
from cmp._canonical import file_bytes
from cmp._display import describe
from cmp._example import example_packet
from cmp._pipeline import policy_of
from cmp._redaction._scan import redact
from cmp.cli._judge import check_source
from cmp.cli._output import EXIT_FAIL, EXIT_OK, EXIT_USAGE, Output, error_line
from cmp.cli._rewrite import WriteRefused, create_atomically, refuse_unless_regular, write_atomically
from cmp.cli._sources import SourceError, packet_in_file, read_source
from cmp.findings import PacketError
from cmp.model import Packet


class _Refused(Exception):
    """Why the command writes nothing: ``status`` and the lines already said on stderr."""

    def __init__(self, status: int) -> None:
        self.status = status


def _parent(name: str) -> Packet:
    try:
        source = read_source(name)
    except SourceError as exc:
        error_line(f"--parent {name}: {exc}")
        raise _Refused(EXIT_USAGE) from None
    report = check_source(packet_in_file(source), policy_of(allow_unredacted=True))
    if report.packet is None:
        more = f" (and {len(report.errors) - 1} more)" if len(report.errors) > 1 else ""
        error_line(f"--parent {source.file}: not a packet: {report.errors[0]}{more}")
        raise _Refused(EXIT_USAGE)
    return report.packet


def _built(args: argparse.Namespace) -> Packet:
    lists = {
        "success_criteria": args.success_criterion,
        "constraints": args.constraint,
        "open_questions": args.open_question,
        "tags": args.tag,
    }
    members = {name: values for name, values in lists.items() if values}
    parent = _parent(args.parent) if args.parent else None
    try:
        return Packet.new(goal=args.goal, next_step=args.next_step, parent=parent, ltm_version=args.version, **members)
    except PacketError as exc:  # the options make no packet: a usage error, every reason said
        for finding in exc.findings:
            error_line(f"new: {finding}")
        raise _Refused(EXIT_USAGE) from None


def _output(out: Output, data: bytes, path: str | None, force: bool) -> int:
    if path is None or path == "-":
        out.write(data)
        return EXIT_OK
    try:
        if os.path.lexists(path):
            try:
                refuse_unless_regular(os.stat(path))  # with or without --force
            except FileNotFoundError:
                pass  # a link to nothing: it exists, and only --force replaces it
        if force and os.path.lexists(path):
            write_atomically(path, data, force=True)
        else:
            create_atomically(path, data)
    except FileExistsError:
        error_line(f"{path}: exists; --force replaces it")
        return EXIT_USAGE
    except (OSError, WriteRefused) as exc:
        error_line(f"{path}: cannot write: {describe(exc)}")
        return EXIT_USAGE
    return EXIT_OK


def run_new(args: argparse.Namespace, out: Output) -> int:
    try:
        packet = _built(args)
    except _Refused as refused:
        return refused.status
    found = redact(packet)
    if found and not args.allow_unredacted:
        for hit in found:  # where and what kind, never the text: it may be a secret
            error_line(f"new: {hit.field}: {hit.category} found; scrub replaces it, --allow-unredacted keeps it")
        return EXIT_FAIL
    return _output(out, file_bytes(dumps(packet)), args.output, args.force)


def run_example(args: argparse.Namespace, out: Output) -> int:
    out.write(file_bytes(dumps(example_packet(args.version))))
    return EXIT_OK
