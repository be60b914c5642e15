"""``chain``: packets read from folders, files or JSON Lines, checked, then linked up through parent_id.

Each source is checked as ``check`` would (redaction aside); one that is unreadable or not
conforming is reported on one line and left out. Memory grows with packets, not their size.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from typing import Any, NamedTuple

from cmp import ChainReport, chain, locate
from cmp._toolkit import policy_of, unquoted
from cmp.cli._judge import check_source
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, ExitStatus, Output, error_line, render_line
from cmp.cli._render import place, where
from cmp.cli._sources import (
    Source,
    SourceError,
    Unreadable,
    Walk,
    packet_in_file,
    packets,
    read_each,
    read_source,
)
from cmp.findings import Finding, Position
from cmp.model import Packet

# Deeper than this, a tree line starts with its depth instead of more indent, so a long
# chain's text grows linearly.
MAX_INDENT = 32
# A packet left out of the chain is one line: check's first findings, then how many more.
SHOWN_FINDINGS = 3
# Text output is written in pieces of about this many bytes, not one write per line.
_CHUNK = 1 << 16


def _sources(
    names: Sequence[str], jsonl: Sequence[str], walk: Walk
) -> Iterator[tuple[Source | Unreadable, str | None]]:
    """The DIR and FILE arguments in order (a folder expanded in place), then each --jsonl file line by
    line; each with the name a packet file can be read again by (None: stdin or a JSON Lines line)."""
    for raw, read in read_each(names, folders=True, walk=walk):
        yield read, (None if raw == "-" else raw)
    with closing(packets((), jsonl)) as lines:
        for line in lines:
            yield line, None


class LeftOut(NamedTuple):
    """A source kept out of the chain: unreadable (``error`` says why) or not a conforming packet (``findings``)."""

    file: str
    line: int | None
    error: str | None
    findings: tuple[Finding, ...]


class _Reading:
    """Sources read and checked: the packets for the chain, where each came from, and what was left out."""

    def __init__(self, sources: Iterable[tuple[Source | Unreadable, str | None]], run: ExitStatus) -> None:
        self.sources = sources
        self.run = run
        self.places: list[tuple[str, int | None]] = []  # file and line of each packet in the chain
        # The name each packet's file is read again by, to place a chain finding (None: cannot be).
        self.rereadable: list[str | None] = []
        self.left_out: list[LeftOut] = []

    def packets(self) -> Iterator[Packet]:
        for item, raw in self.sources:
            if isinstance(item, Unreadable):
                self.run.fail(EXIT_USAGE)
                error_line(f"{item.file}: {item.message}")
                self.left_out.append(LeftOut(item.file, None, item.message, ()))
                continue
            report = check_source(item, policy_of(allow_unredacted=True))
            if report.packet is None or not report.conforming:
                self.run.fail(EXIT_FAIL)
                self.left_out.append(LeftOut(item.file, item.line, None, report.located().errors))
                continue
            self.places.append((item.file, item.line))
            self.rereadable.append(raw)
            yield report.packet

    def positions(self, report: ChainReport) -> list[Position | None]:
        """Where each of the report's findings is in its packet's file, read again (a chain
        keeps no packet's text); None for stdin, a JSON Lines line, or a file that cannot be."""
        found: list[Position | None] = []
        for item in report.findings:
            raw = self.rereadable[item.index]
            position = None
            if raw is not None:
                try:
                    data = packet_in_file(read_source(raw)).data
                except (SourceError, OSError):
                    data = None
                if data is not None:
                    position = locate(data, [item.finding])[0].position
            found.append(position)
        return found


def _name(place: tuple[str, int | None]) -> str:
    file, line = place
    return file if line is None else f"{file}:{line}"


def _left_out_line(file: str, line: int | None, findings: Sequence[Finding]) -> str:
    shown = "; ".join(str(finding) for finding in findings[:SHOWN_FINDINGS])
    more = len(findings) - SHOWN_FINDINGS
    tail = f" (and {more} more)" if more > 0 else ""  # past the ones shown, not past the first
    where = place(file, line, findings[0].position if findings else None)  # at the first one shown
    return f"{where}: not a conforming packet, left out of the chain: {shown}{tail}"


def text_lines(
    report: ChainReport,
    places: Sequence[tuple[str, int | None]],
    left_out: Sequence[LeftOut],
    positions: Sequence[Position | None] = (),
) -> Iterator[str]:
    """The tree (children indented under their parent), then the packets left out, and the findings."""
    in_cycle = {index for cycle in report.cycles for index in cycle}
    for depth, index in report.tree():
        link = report.links[index]
        indent = "  " * min(depth, MAX_INDENT) + (f"[{depth}] " if depth > MAX_INDENT else "")
        note = ""
        if index in in_cycle:
            note = "  (in a cycle)"
        elif link.parent is None and link.parent_id:
            note = f"  (parent {unquoted(link.parent_id)} is not in the set)"
        yield f"{indent}{unquoted(link.id)}  {link.created_at}  {_name(places[index])}{note}"
    for file, line, error, findings in left_out:
        if error is None:  # an unreadable source has had its line on stderr
            yield _left_out_line(file, line, findings)
    for number, item in enumerate(report.findings):
        finding = item.finding
        see = f"; see {_name(places[item.other])}" if item.other is not None and item.other != item.index else ""
        position = positions[number] if number < len(positions) else None
        where = place(*places[item.index], position)
        yield f"{where}: (id {unquoted(item.id)}) {finding} [{finding.keyword}{see}]"


def summary_line(report: ChainReport, left_out: Sequence[LeftOut]) -> str:
    """``chain: 4 packets, 2 roots, ...``: the line text output ends with, on stderr as check's."""
    counts = (
        (len(report.links), "packet"),
        (len(report.roots), "root"),
        (len(report.heads), "head"),
        (len(report.cycles), "cycle"),
        (len(report.findings), "finding"),
    )
    summary = ", ".join(f"{count:,} {noun}{'' if count == 1 else 's'}" for count, noun in counts)
    return f"chain: {summary}, {len(left_out):,} left out"


def json_document(
    report: ChainReport, places: Sequence[tuple[str, int | None]], left_out: Sequence[LeftOut]
) -> dict[str, Any]:
    """What ``--format json`` prints: packets counted, roots, heads, cycles, findings, what was left out."""

    def packet(index: int) -> dict[str, Any]:
        return {**where(*places[index]), "id": unquoted(report.links[index].id)}

    def parent_id(index: int) -> str | None:
        parent = report.links[index].parent_id
        return unquoted(parent) if parent else None

    return {
        "packets": len(report.links),
        "roots": [{**packet(index), "parent_id": parent_id(index)} for index in report.roots],
        "heads": [packet(index) for index in report.heads],
        "cycles": [[packet(index) for index in cycle] for cycle in report.cycles],
        "findings": [
            {
                **packet(item.index),
                **item.finding.to_json(),
                "other": None if item.other is None else packet(item.other),
            }
            for item in report.findings
        ],
        "left_out": [
            {**where(file, line), "error": error, "errors": [finding.to_json() for finding in findings]}
            for file, line, error, findings in left_out
        ],
    }


def _write_lines(out: Output, lines: Iterable[str]) -> None:
    chunk: list[bytes] = []
    size = 0
    for line in lines:
        data = render_line(line)
        chunk.append(data)
        size += len(data)
        if size >= _CHUNK:
            out.write(b"".join(chunk))
            chunk, size = [], 0
            if out.lost:
                return
    if chunk:
        out.write(b"".join(chunk))


def run_chain(args: argparse.Namespace, out: Output) -> int:
    if not args.paths and not args.jsonl:
        error_line("chain needs a DIR, a FILE or --jsonl")
        return EXIT_USAGE
    run = ExitStatus()
    reading = _Reading(_sources(args.paths, args.jsonl or (), args.walk), run)
    report = chain(reading.packets(), closed=args.closed)
    if report.findings:
        run.fail(EXIT_FAIL)
    if args.format == "json":
        document = json_document(report, reading.places, reading.left_out)
        out.document(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        _write_lines(out, text_lines(report, reading.places, reading.left_out, reading.positions(report)))
        if not out.lost and len(report.links) + len(reading.left_out) > 1:  # one source: its line says it all
            error_line(summary_line(report, reading.left_out))
    return run.status
