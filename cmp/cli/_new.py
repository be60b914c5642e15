"""``new``: a fresh packet from options; ``example``: an example packet of our own."""

from __future__ import annotations

import argparse
import os

from cmp._canonical import dumps, file_bytes
from cmp._migrate import migrate
from cmp._pipeline import policy_of
from cmp._redaction._scan import redact
from cmp._text import describe
from cmp.cli._judge import check_source
from cmp.cli._output import Output, error_line
from cmp.cli._rewrite import WriteRefused, create_atomically, write_atomically
from cmp.cli._sources import SourceError, packet_in_file, read_source
from cmp.cli._status import EXIT_FAIL, EXIT_OK, EXIT_USAGE
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


def example_packet(version: str) -> Packet:
    """An example packet of our own: what a good one says, field by field (conforming, clean, lint-free)."""
    packet = Packet.new(
        goal="Make the nightly export job finish within its two-hour window.",
        next_step="Run the export with the batched writer against last night's snapshot and time it.",
        id="01JD4S7M3G8X2Q5V9B6N1K0T7W",
        created_at="2026-11-30T09:15:00Z",
        project={"name": "nightly-export", "ref": "git.example.org/data/nightly-export"},
        success_criteria=[
            "The export of a full snapshot completes in under 120 minutes on the production runner.",
            "Row counts in the export match the snapshot's row counts for every table.",
        ],
        constraints=["The export must not hold table locks that block the morning ingest."],
        decisions=[
            {
                "what": "Write rows in batches of 5,000 instead of one insert per row.",
                "why": "Per-row inserts spent most of the run waiting on round trips to the database.",
                "consequences": "A failed batch is retried whole, so the writer must stay idempotent.",
                "locked": True,
            }
        ],
        methods=[
            {
                "name": "time-a-snapshot-export",
                "when_applicable": "Any change to the export path needs a timing on realistic data.",
                "how": "make export-timing SNAPSHOT=latest",
            }
        ],
        attempts=[
            {
                "tried": "Raised the database connection pool from 4 to 16 connections.",
                "outcome": "failed",
                "learned": "The job is bound by round trips per row, not by the number of connections.",
                "confidence": "high",
            }
        ],
        open_questions=["Should the export skip tables that did not change since the previous night?"],
        tags=["export", "performance"],
        provenance={"author_model": "example-model", "confidence": "medium"},
    )
    return packet if version == packet.ltm_version else migrate(packet, version, drop=True)


def run_example(args: argparse.Namespace, out: Output) -> int:
    out.write(file_bytes(dumps(example_packet(args.version))))
    return EXIT_OK
