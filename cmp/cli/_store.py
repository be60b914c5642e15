"""``save``, ``ls`` and ``show``: the local store (:class:`cmp.Store`) from the command line.

What a stored packet's text shows goes through the redaction rules first: a packet saved
with ``--allow-unredacted`` keeps its secret in the file, never in the listing.
"""

from __future__ import annotations

import argparse
import itertools
import json
from typing import Any

from cmp import scrub
from cmp._toolkit import display_name, policy_of, withheld
from cmp.cli._judge import check_source
from cmp.cli._output import EXIT_FAIL, EXIT_OK, EXIT_USAGE, Output, error_line
from cmp.cli._render import report_lines
from cmp.cli._sources import SourceError, packet_in_file, read_source
from cmp.findings import PacketError
from cmp.model import Packet
from cmp.store import PacketConflict, Store, StoreError, UnredactedPacket

# ls shows at most this many characters of a goal (a goal may be 280).
GOAL_SHOWN = 72


def _store(args: argparse.Namespace) -> Store:
    return Store(args.store or None)  # an empty --store is no store named, as an empty CMP_STORE


def run_save(args: argparse.Namespace, out: Output) -> int:
    if args.draft is not None:
        error_line("save: --draft is the hand-off of --hook claude; to save a draft, new --draft FILE | save -")
        return EXIT_USAGE
    if args.file is None:
        error_line("save: needs a FILE (- reads stdin), or --hook claude")
        return EXIT_USAGE
    try:
        source = read_source(args.file)
    except SourceError as exc:
        error_line(f"save: {display_name(args.file)}: {exc}")
        return EXIT_USAGE
    report = check_source(packet_in_file(source), policy_of(allow_unredacted=args.allow_unredacted, writer=True))
    if not report.ok or report.packet is None:
        for _, text in report_lines(source.file, None, report):  # check's lines, redaction hits masked
            error_line(text)
        error_line(f"save: {source.file}: not stored")
        return EXIT_FAIL
    return save_and_say(_store(args), report.packet, args.allow_unredacted, source.file, out, args)


def save_and_say(
    store: Store, packet: Packet, allow_unredacted: bool, shown: str, out: Output, args: argparse.Namespace
) -> int:
    """Save ``packet`` (from the file named ``shown``) and print its id; then with ``--push`` push it.
    The exit status."""
    try:
        saved = store.save(packet, allow_unredacted=allow_unredacted)
    except UnredactedPacket as exc:
        for hit in exc.redactions:  # where and what kind, never the text: it may be a secret
            error_line(
                f"save: {shown}: {hit.field}: {hit.category} found; scrub replaces it, --allow-unredacted keeps it"
            )
        return EXIT_FAIL
    except PacketConflict as exc:
        error_line(f"save: {shown}: {exc}")
        return EXIT_FAIL
    except PacketError as exc:  # not conforming as a Packet: cannot happen after check, said all the same
        error_line(f"save: {shown}: not stored: {exc}")
        return EXIT_FAIL
    except StoreError as exc:
        error_line(f"save: {exc}")
        return EXIT_USAGE
    out.line(saved.id)
    if args.push:
        from cmp.cli._remote import push_saved

        return push_saved(packet, args.team, allow_unredacted, out)
    return EXIT_OK


def _shown(text: str) -> str:
    """``text``, unless a redaction pattern matches in it (what scrub could not replace)."""
    hidden = withheld(text)
    return f"({hidden})" if hidden is not None else text


def _displayed(packet: Packet) -> Packet:
    """The packet as output shows it: every redaction match replaced by its placeholder."""
    try:
        return scrub(packet)[0]
    except PacketError:  # a placeholder longer than its match overflowed a field: _shown withholds it
        return packet


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def run_ls(args: argparse.Namespace, out: Output) -> int:
    if args.remote:
        from cmp.cli._remote import run_ls_remote

        if args.tag is not None or args.grep is not None:
            error_line("ls --remote: --tag and --grep are the local store's; the server lists by scope")
            return EXIT_USAGE
        return run_ls_remote(args, out)
    if args.team is not None or args.cursor is not None:
        error_line("ls: -t and --cursor list the team server's packets: add --remote")
        return EXIT_USAGE
    if args.limit is not None and args.limit < 0:
        error_line(f"ls: --limit is a count, not {args.limit}")
        return EXIT_USAGE
    try:
        store = _store(args)
        problems = store.problems()
        # One packet read at a time: memory holds one packet, however many the store holds.
        packets = itertools.islice(store.packets(tag=args.tag, text=args.grep), args.limit)
    except StoreError as exc:
        error_line(f"ls: {exc}")
        return EXIT_USAGE
    shown = map(_displayed, packets)
    if args.format == "json":
        document: dict[str, Any] = {
            "packets": [
                {
                    "id": packet.id,
                    "created_at": packet.created_at,
                    "goal": _shown(packet.goal),
                    "tags": list(packet.tags),
                    "parent_id": _shown(packet.parent_id) or None,  # as chain's JSON says none
                }
                for packet in shown
            ],
            "problems": [{"file": display_name(str(p.path)), "message": p.message} for p in problems],
        }
        out.document(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        listed = 0
        for packet in shown:  # lazy: one packet at a time, so counted as it goes
            out.line(f"{packet.id}  {packet.created_at}  {_cut(_shown(packet.goal), GOAL_SHOWN)}")
            listed += 1
        if not listed and not problems and args.limit != 0:  # nothing on stdout: say why, as MCP's ls does
            filtered = args.tag is not None or args.grep is not None
            where = display_name(str(store.path))
            error_line(
                f"ls: no packet in store {where} matches" if filtered else f"ls: store {where} holds no packets yet"
            )
    for problem in problems:
        error_line(str(problem))
    return EXIT_FAIL if problems else EXIT_OK


def _author(packet: Packet) -> str:
    provenance = packet.provenance
    if provenance is None:
        return ""
    human, model = _shown(provenance.author_human), _shown(provenance.author_model)
    if human and model:
        return f"{human} (with {model})"
    return human or model


def run_show(args: argparse.Namespace, out: Output) -> int:
    try:
        packet = _store(args).get(args.id)
    except StoreError as exc:
        error_line(f"show: {exc}")
        return EXIT_USAGE
    shown = _displayed(packet)
    locked = sum(decision.locked for decision in packet.decisions)
    fields = (
        ("id", packet.id),
        ("goal", _shown(shown.goal)),
        ("next step", _shown(shown.next_step)),
        ("decisions", f"{len(packet.decisions)}" + (f" ({locked} locked)" if locked else "")),
        ("attempts", str(len(packet.attempts))),
        ("open questions", str(len(packet.open_questions))),
        ("tags", ", ".join(packet.tags)),
        ("parent", _shown(packet.parent_id)),
        ("created", packet.created_at),
        ("author", _author(packet)),
        ("version", packet.ltm_version),
    )
    for name, value in fields:
        out.line(f"{name}: {value or '-'}")  # each one line: out.line writes a line break as \n
    return EXIT_OK
