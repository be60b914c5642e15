"""``resume``: the resume block of a file's packet, a stored one, or the store's latest head;
with ``--hook claude``, the answer a Claude Code ``SessionStart`` hook prints."""

from __future__ import annotations

import argparse
import json
import os
import sys

from cmp import RedactionError, resume_block
from cmp._toolkit import display_name, left_out
from cmp.cli._hooks import HookRefused, hook_folder, hook_input, hook_store, refuse, warn_of_problems
from cmp.cli._judge import NoPacket, packet_from_file
from cmp.cli._output import EXIT_FAIL, EXIT_OK, EXIT_USAGE, Output, error_line
from cmp.model import Packet
from cmp.store import PacketNotFound, Store, StoreError, default_store_path


def _refuse(message: str, status: int = EXIT_USAGE) -> HookRefused:
    return refuse("resume", message, status)


def _store(args: argparse.Namespace, cwd: str | None) -> Store:
    if cwd is not None:  # a hook's: the store is the project's
        return hook_store(args.store, cwd, "resume")
    if args.store:
        return Store(args.store)
    try:  # an empty --store names none, as an empty CMP_STORE does
        return Store(default_store_path())
    except StoreError as exc:
        raise _refuse(str(exc)) from None


def _from_file(name: str) -> Packet:
    try:
        return packet_from_file(name)
    except NoPacket as exc:
        if exc.unreadable:  # named as given: as every command names a file, a part named for a key withheld
            raise _refuse(f"{display_name(name)}: {exc.reason}") from None
        raise _refuse(f"{exc.file}: not a conforming packet: {exc.reason}", EXIT_FAIL) from None


def _looks_like_a_path(target: str) -> bool:
    return target == "-" or os.sep in target or "/" in target or target.endswith(".json") or os.path.exists(target)


def _packet(args: argparse.Namespace, cwd: str | None, hook: bool) -> Packet | None:
    """The packet to render; None when the store holds none and that is no error (a hook)."""
    target: str | None = args.target
    if target is not None and _looks_like_a_path(target):
        return _from_file(target)
    store = _store(args, cwd)
    warn_of_problems(store, "resume")
    try:
        if target is not None:
            return store.get(target)
        latest = store.latest()
    except PacketNotFound as exc:  # its message names the id and the store, as show's does
        raise _refuse(str(exc)) from None
    except StoreError as exc:
        raise _refuse(str(exc)) from None
    if latest is None and not hook:
        raise _refuse(f"store {display_name(str(store.path))} holds no packet to resume")
    return latest


def run_resume(args: argparse.Namespace, out: Output) -> int:
    hook = args.hook == "claude"
    if hook and args.target == "-":
        error_line("resume: --hook claude reads the hook's input on stdin; give the packet as a FILE or an ID")
        return EXIT_USAGE
    try:
        cwd = None
        if hook:
            cwd = hook_folder(hook_input(sys.stdin, ("SessionStart",), "resume --hook claude"), "resume")
        packet = _packet(args, cwd, hook)
        if packet is None:
            return EXIT_OK  # a session with nothing to resume starts as it would have
        try:
            block = resume_block(
                packet,
                style=args.style,
                max_chars=args.max_chars,
                allow_unredacted=args.allow_unredacted,
                rule_set=args.rule_set,
            )
        except RedactionError as exc:
            raise _refuse(f"{packet.id}: {exc}; --allow-unredacted shows placeholders instead", EXIT_FAIL) from None
        except ValueError as exc:  # a --max-chars the block cannot fit
            raise _refuse(str(exc)) from None
    except HookRefused as refused:
        return refused.status
    if hook:
        answer = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": block.text}}
        out.document(json.dumps(answer, ensure_ascii=False))
        return EXIT_OK
    out.write(block.text.encode("utf-8"))  # every character printable: no escape to make
    if not args.quiet:
        dropped = f"; left out: {', '.join(left_out(block.dropped))}" if block.dropped else ""
        error_line(f"resume: {block.chars:,} characters, about {block.tokens:,} tokens{dropped}")
    return EXIT_OK
