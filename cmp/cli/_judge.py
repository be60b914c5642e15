"""Sources judged and rendered: :func:`check_share` is what a worker runs (:mod:`cmp.cli._batch`),
handing back bytes to print, not reports."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from cmp import MAX_PACKET_BYTES, Report
from cmp._toolkit import DEFAULT_POLICY, Policy, policy_of, size_finding
from cmp._toolkit import judge as judge_data
from cmp.cli._policy import DEFAULT_RUN, RunPolicy
from cmp.cli._render import Block
from cmp.cli._sources import (
    SHARE_BYTES,
    JsonlShare,
    Source,
    SourceError,
    SourcesShare,
    packet_in_file,
    read_source,
    unreadable,
)
from cmp.cli.reporters import reporter
from cmp.findings import first_of
from cmp.model import Packet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.cli._render import Line


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """How ``check`` judges (``policy``) and renders: ``format`` is a reporter's name (a worker
    is handed the name, not the reporter); ``run`` is how hits are reported (:mod:`cmp.cli._policy`)."""

    policy: Policy = DEFAULT_POLICY
    format: str = "text"
    show_found: bool = False
    quiet: bool = False
    colour: bool = False
    run: RunPolicy = DEFAULT_RUN


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judged source, reduced to the reporter's pieces (``output``), rendered where it was
    judged: a fraction of the report's memory and pickling."""

    name: str
    accepted: bool
    output: tuple[Line, ...] = ()
    matched: tuple[tuple[str, str, str], ...] = ()  # the baseline's entries it matched


def check_source(source: Source, policy: Policy = DEFAULT_POLICY) -> Report:
    """``check`` of what was read, or the size finding for a source that was cut at the read limit."""
    if len(source.data) > MAX_PACKET_BYTES:
        return Report.refused(policy, source.data, [size_finding(source.size)])
    return judge_data(source.data, policy)


class NoPacket(Exception):
    """Why a file gives no conforming packet: ``file`` (its name as shown), ``reason`` (one
    line), and ``unreadable`` (True: it could not be read at all; False: it is no packet)."""

    def __init__(self, file: str, reason: str, *, unreadable: bool) -> None:
        super().__init__(f"{file}: {reason}")
        self.file, self.reason, self.unreadable = file, reason, unreadable


def packet_from_file(name: str) -> Packet:
    """The conforming packet file ``name`` (``-``: stdin) holds, judged as check judges it
    (redaction hits do not refuse it: reading is not sending); :class:`NoPacket` otherwise."""
    try:
        source = read_source(name)
    except SourceError as exc:
        raise NoPacket(name, str(exc), unreadable=True) from None
    report = check_source(packet_in_file(source), policy_of(allow_unredacted=True))
    if report.packet is None:
        raise NoPacket(source.file, first_of(report.errors), unreadable=False)
    return report.packet


def judge(source: Source, options: CheckOptions) -> Verdict:
    """One source judged and rendered in ``options.format``."""
    report = check_source(source, options.policy)
    if options.quiet and report.accepted and not options.run.baseline:
        return Verdict(source.name, True)
    file, line, show_found = source.file, source.line, options.show_found
    judged = options.run.judge(report, file)
    accepted, matched = judged.accepted, judged.matched
    if options.quiet and accepted:
        return Verdict(source.name, True, matched=matched)
    output = reporter(options.format).check(file, line, judged, show_found=show_found)
    return Verdict(source.name, accepted, tuple(output), matched=matched)


def render_verdicts(verdicts: list[Verdict], format: str, *, colour: bool = False) -> tuple[bytes, int]:
    """Verdicts as the output's bytes in ``format``, and how many document entries those hold."""
    return reporter(format).fragment([piece for verdict in verdicts for piece in verdict.output], colour=colour)


@dataclass(slots=True)
class ShareReading:
    """How reading a JSON Lines share went, filled in by :func:`jsonl_sources`: past SHARE_BYTES
    ``rendered`` (characters, about) it stops at the next packet's end; ``rest`` is what is left."""

    rendered: int = 0
    problems: tuple[tuple[str, str], ...] = ()
    rest: object | None = None  # a JsonlShare, or the caller's own kind of share
    resume: tuple[str, int | None] | None = None


def jsonl_sources(share: JsonlShare, reading: ShareReading) -> Iterator[Source]:
    """The packets of a JSON Lines share, stopping between two once SHARE_BYTES were rendered
    (or read, from a share with no end); a file that cannot be read is a problem."""
    try:
        reader = share.open()
    except SourceError as exc:
        lost = unreadable(share.file, exc)
        reading.problems = ((lost.file, lost.message),)
        return
    try:
        began = reader.position
        for source in reader:
            yield source
            # A share with no end (in this process, the whole file) is cut every SHARE_BYTES
            # read, so results stream; a bounded one only when its output grows large.
            read_enough = share.end is None and reader.position - began >= SHARE_BYTES
            if reader.more() and (read_enough or reading.rendered >= SHARE_BYTES):
                reading.rest = share.rest(reader)
                break
    except (OSError, SourceError) as exc:  # SourceError: the file was cut short under the share
        lost = unreadable(share.file, exc)
        reading.problems = ((lost.file, lost.message),)
    finally:
        reader.stream.close()
        reading.resume = (reader.file, reader.line + 1)


def verdict_size(verdict: Verdict) -> int:
    """About how much output a verdict renders to, in characters."""
    return sum(len(text) for _, text in verdict.output)


def check_share(share: SourcesShare | JsonlShare, options: CheckOptions) -> Block:
    """One share judged and rendered: the sources the parent read, or a part of a JSON
    Lines file this process reads itself (:func:`jsonl_sources`)."""
    reading = ShareReading()
    sources = share.sources if isinstance(share, SourcesShare) else jsonl_sources(share, reading)
    verdicts: list[Verdict] = []
    judged_sources: list[Source] = []
    for source in sources:
        verdict = judge(source, options)
        if options.run.baseline is not None:
            judged_sources.append(source)
        verdicts.append(verdict)
        reading.rendered += verdict_size(verdict)
    output, entries = render_verdicts(verdicts, options.format, colour=options.colour)
    failed = sum(not verdict.accepted for verdict in verdicts)
    baseline = options.run.baseline
    return Block(
        output,
        entries,
        len(verdicts),
        failed,
        problems=reading.problems,
        rest=reading.rest,
        resume=reading.resume,
        matched=tuple(key for verdict in verdicts for key in verdict.matched),
        seen=tuple(dict.fromkeys(baseline.file_name(source.file) for source in judged_sources)) if baseline else (),
    )
