"""``new``: a fresh packet from options or from a draft; ``example``: an example packet of our own."""

from __future__ import annotations

import argparse
import os
from typing import Any

from cmp import MAX_PACKET_BYTES, dumps, redact
from cmp._toolkit import decode_text, describe, display_name, example_packet, file_bytes, parse_json
from cmp.cli._judge import NoPacket, packet_from_file
from cmp.cli._output import EXIT_FAIL, EXIT_OK, EXIT_USAGE, Output, error_line
from cmp.cli._rewrite import WriteRefused, create_atomically, refuse_unless_regular, write_atomically
from cmp.cli._sources import SourceError, read_source
from cmp.findings import PacketError
from cmp.model import Packet
from cmp.store import Store, StoreError, is_store_id


class _Refused(Exception):
    """Why the command writes nothing: ``status`` and the lines already said on stderr."""

    def __init__(self, status: int) -> None:
        self.status = status


def _stored_parent(name: str, store_path: str | None) -> Packet:
    """The stored packet ``--parent`` names: ``latest`` (the store's latest head) or an id."""
    store = Store(store_path) if store_path else Store()
    try:
        found = store.latest() if name == "latest" else store.get(name)
    except StoreError as exc:
        error_line(f"--parent {name}: {exc}")
        raise _Refused(EXIT_USAGE) from None
    if found is None:
        error_line(f"--parent latest: store {display_name(str(store.path))} holds no packet")
        raise _Refused(EXIT_USAGE)
    return found


def _parent(name: str, store_path: str | None = None) -> Packet:
    # A file that exists wins; else "latest" or a ULID names a stored packet.
    if not os.path.lexists(name) and (name == "latest" or is_store_id(name)):
        return _stored_parent(name, store_path)
    try:
        return packet_from_file(name)
    except NoPacket as exc:
        error_line(f"--parent {exc}" if exc.unreadable else f"--parent {exc.file}: not a packet: {exc.reason}")
        raise _Refused(EXIT_USAGE) from None


# A draft states every member, null where there is none, and may be indented: it may be
# longer than the packet it makes.
MAX_DRAFT_BYTES = 4 * MAX_PACKET_BYTES

# The options a draft replaces: with --draft, the whole packet comes from FILE.
_MEMBER_OPTIONS = (
    ("goal", "--goal"),
    ("next_step", "--next-step"),
    ("constraint", "--constraint"),
    ("success_criterion", "--success-criterion"),
    ("open_question", "--open-question"),
    ("tag", "--tag"),
)


def _from_draft(args: argparse.Namespace, parent: Packet | None) -> Packet:
    given = [option for name, option in _MEMBER_OPTIONS if getattr(args, name) is not None]
    if given:
        error_line(f"new: --draft gives the whole packet; {', '.join(given)} cannot be given with it")
        raise _Refused(EXIT_USAGE)
    try:
        shown, draft = read_draft(args.draft)
    except DraftError as exc:
        error_line(f"--draft {exc}")
        raise _Refused(EXIT_USAGE) from None
    try:
        return Packet.from_draft(draft, version=args.version, parent=parent)
    except PacketError as exc:  # the draft makes no packet: every reason said, by its path in the draft
        for finding in exc.findings:
            error_line(f"new: --draft {shown}: {finding}")
        raise _Refused(EXIT_USAGE) from None


class DraftError(Exception):
    """Why a file gives no draft document: one line, starting with the file's name."""


def read_draft(name: str) -> tuple[str, dict[str, Any]]:
    """(the file's name as shown, the JSON object it holds) of a draft file (``-``: stdin)."""
    try:
        source = read_source(name, MAX_DRAFT_BYTES + 1)
    except SourceError as exc:
        raise DraftError(f"{name}: {exc}") from None
    if len(source.data) > MAX_DRAFT_BYTES:
        raise DraftError(f"{source.file}: over {MAX_DRAFT_BYTES:,} bytes, longer than any draft of a packet")
    text = decode_text(source.data)
    draft, found = (None, [text]) if not isinstance(text, str) else parse_json(text, source.data)
    if found:
        message = found[0].message  # "invalid json: ...", or a duplicated member's name
        said = message if message.startswith("invalid json") else "invalid json: " + message
        raise DraftError(f"{source.file}: {said}")
    if not isinstance(draft, dict):
        raise DraftError(f"{source.file}: a draft is a JSON object, not {_json_kind(draft)}")
    return source.file, draft


def _json_kind(value: object) -> str:
    return {list: "an array", str: "a string", bool: "true or false", type(None): "null"}.get(type(value), "a number")


def _built(args: argparse.Namespace) -> Packet:
    parent = _parent(args.parent, args.store) if args.parent else None
    if args.draft is not None:
        return _from_draft(args, parent)
    missing = [option for name, option in _MEMBER_OPTIONS[:2] if getattr(args, name) is None]
    if missing:
        error_line(
            f"new: {' and '.join(missing)} are required (or --draft FILE)"
            if len(missing) > 1
            else f"new: {missing[0]} is required (or --draft FILE)"
        )
        raise _Refused(EXIT_USAGE)
    lists = {
        "success_criteria": args.success_criterion,
        "constraints": args.constraint,
        "open_questions": args.open_question,
        "tags": args.tag,
    }
    members = {name: values for name, values in lists.items() if values}
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
    found = redact(packet, writer=True)
    if found and not args.allow_unredacted:
        for hit in found:  # where and what kind, never the text: it may be a secret
            error_line(f"new: {hit.field}: {hit.category} found; scrub replaces it, --allow-unredacted keeps it")
        return EXIT_FAIL
    return _output(out, file_bytes(dumps(packet)), args.output, args.force)


def run_example(args: argparse.Namespace, out: Output) -> int:
    out.write(file_bytes(dumps(example_packet(args.version))))
    return EXIT_OK
