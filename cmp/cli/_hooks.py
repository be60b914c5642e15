"""Claude Code hooks: what a hook command reads on stdin, and ``save --hook claude``, the hand-off
saved at ``PreCompact``, ``SessionEnd`` or ``Stop``.

A hook's input is one JSON object or nothing (so a hook can be tried by hand); ``cwd`` is where the
session works, and the project (its store, the hand-off draft) is found from there up. A packet needs
the agent's own words, so the agent keeps a draft at ``.cmp/handoff.json``; the hook makes it a packet
continuing the store's latest head and saves it, unless that head already holds it.

Claude Code reads a hook's exit status: 0 is success; 2 at ``Stop`` keeps the session going and
gives the model the hook's stderr; any other status is an error shown to the user. So ``save``
exits 2 only on purpose: at ``Stop``, for a hand-off the agent can rewrite (not JSON, not a
packet, a credential in it), once (not when the input's ``stop_hook_active`` says the session
already goes on for a stop hook). Every other failure, at every event, is 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from cmp._toolkit import display_name, visible
from cmp.cli._new import DraftError, read_draft
from cmp.cli._output import EXIT_FAIL, EXIT_OK, EXIT_USAGE, Output, error_line
from cmp.cli._store import run_save as run_save_file
from cmp.cli._store import save_and_say
from cmp.findings import PacketError
from cmp.model import Packet
from cmp.store import Store, StoreError, default_store_path, project_folder

# A hook's input is a small JSON object; more than this is not one.
MAX_HOOK_INPUT = 1 << 20
# In the project's folder (cmp.store.project_folder), wherever in it the session works.
HANDOFF = os.path.join(".cmp", "handoff.json")
SAVE_EVENTS = ("PreCompact", "SessionEnd", "Stop")
# Claude Code's "blocking error": at Stop the session goes on, and the model reads stderr.
BLOCKING = 2


class HookRefused(Exception):
    """The one line already said on stderr, and the exit status; ``rewritable``: the hand-off
    draft is wrong in a way the agent that wrote it can put right."""

    def __init__(self, status: int, rewritable: bool = False) -> None:
        self.status = status
        self.rewritable = rewritable


def refuse(command: str, message: str, status: int = EXIT_USAGE) -> HookRefused:
    error_line(f"{command}: {message}")
    return HookRefused(status)


def hook_input(stream: Any, events: tuple[str, ...], command: str) -> dict[str, Any]:
    """The JSON object a hook command gets on stdin ({} for a terminal, closed or empty stdin);
    :class:`HookRefused` for anything else, or for an event not in ``events``."""
    if stream is None or stream.isatty():
        return {}
    try:
        data = stream.buffer.read(MAX_HOOK_INPUT + 1)
    except (OSError, ValueError) as exc:
        raise refuse(command, f"cannot read the hook's input on stdin: {exc}") from None
    if len(data) > MAX_HOOK_INPUT:
        raise refuse(command, f"the hook's input on stdin is over {MAX_HOOK_INPUT:,} bytes, not a hook's JSON object")
    if not data.strip():
        return {}
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        raise refuse(command, "the hook's input on stdin is not JSON (a Claude Code hook sends an object)") from None
    if not isinstance(value, dict):
        raise refuse(command, "the hook's input on stdin is not a JSON object")
    event = value.get("hook_event_name")
    if event is not None and event not in events:
        # Only a name we know is repeated: the input is foreign text.
        named = " or ".join(events)
        raise refuse(command, f"answers {named}, and the hook's input is of another event; see docs/resume.md")
    cwd = value.get("cwd")
    if cwd is not None and not (isinstance(cwd, str) and cwd and "\0" not in cwd and _file_name(cwd)):
        raise refuse(command, "the hook's input has a cwd that is not a folder's path")
    return value


def _file_name(text: str) -> bool:
    try:
        os.fsencode(text)
    except UnicodeEncodeError:  # a lone surrogate (JSON can escape one): no file system's name
        return False
    return True


def hook_folder(given: dict[str, Any], command: str) -> str:
    """The hook's ``cwd``, else this process's working directory."""
    cwd = given.get("cwd")
    if isinstance(cwd, str):
        return cwd
    try:
        return os.getcwd()
    except OSError:
        raise refuse(command, "the working directory cannot be read, and the hook's input names no cwd") from None


def hook_store(store: str | None, cwd: str, command: str) -> Store:
    """``--store`` (relative to the hook's folder), else the default found from ``cwd``."""
    if store:
        return Store(os.path.join(cwd, store))
    try:
        return Store(default_store_path(cwd=cwd))
    except StoreError as exc:
        raise refuse(command, str(exc)) from None


def handoff_path(draft: str | None, cwd: str) -> str:
    """``--draft`` (relative to the hook's folder), else the project's ``.cmp/handoff.json``."""
    if draft == "-":
        raise refuse("save", "--draft - cannot be: stdin is the hook's input; name the hand-off's file")
    if draft:
        return os.path.join(cwd, draft)
    try:
        return str(project_folder(cwd) / HANDOFF)
    except StoreError as exc:
        raise refuse("save", str(exc)) from None


def _handoff(path: str, named: bool, store: Store) -> Packet | None:
    """The packet the hand-off draft at ``path`` makes, continuing the latest head; None: no
    draft at the default place (a draft the user ``named`` must be there)."""
    if not os.path.lexists(path):
        if named:
            raise refuse("save", f"--draft {display_name(path)}: no such file; nothing saved", EXIT_FAIL)
        return None
    try:
        shown, draft = read_draft(path)
    except DraftError as exc:
        error_line(f"save: --draft {exc}")
        raise HookRefused(EXIT_FAIL, rewritable=os.path.isfile(path)) from None
    try:
        parent = store.latest()
    except StoreError as exc:
        raise refuse("save", str(exc), EXIT_FAIL) from None
    try:
        return Packet.from_draft(draft, parent=parent)
    except PacketError as exc:
        for finding in exc.findings:
            error_line(f"save: --draft {shown}: {finding}")
        raise HookRefused(EXIT_FAIL, rewritable=True) from None


def run_save(args: argparse.Namespace, out: Output) -> int:
    """``save``: a packet file (cmp.cli._store), or with ``--hook claude`` the hand-off."""
    if args.hook is None:
        return run_save_file(args, out)
    return run_save_hook(args, out)


def run_save_hook(args: argparse.Namespace, out: Output) -> int:
    """``save --hook claude``: save the hand-off draft as the next packet of the chain. Exit 0,
    1 for any failure, or 2 to keep a ``Stop``-ped session going to rewrite its hand-off."""
    if args.file is not None:
        error_line("save: --hook claude reads the hook's input on stdin and the hand-off from --draft, not a FILE")
        return EXIT_FAIL
    given: dict[str, Any] = {}
    path = ""
    try:
        given = hook_input(sys.stdin, SAVE_EVENTS, "save --hook claude")
        cwd = hook_folder(given, "save")
        store = hook_store(args.store, cwd, "save")
        path = handoff_path(args.draft, cwd)
        packet = _handoff(path, bool(args.draft), store)
        if packet is None:
            return EXIT_OK  # the session wrote no hand-off: nothing to save
        warn_of_problems(store, "save")
        latest = store.latest()
        if latest is not None and latest.to_draft() == packet.to_draft():
            error_line(f"save: the latest packet, {latest.id}, holds this hand-off already; nothing saved")
            out.line(latest.id)
            return EXIT_OK
    except HookRefused as refused:
        return _hook_status(given, path, refused.rewritable)
    except StoreError as exc:
        error_line(f"save: {exc}")
        return EXIT_FAIL
    status = save_and_say(store, packet, args.allow_unredacted, display_name(path), out, args)
    # EXIT_FAIL: the packet was refused (a credential in it); EXIT_USAGE: the store failed.
    return EXIT_OK if status == EXIT_OK else _hook_status(given, path, status == EXIT_FAIL)


def _hook_status(given: dict[str, Any], path: str, rewritable: bool) -> int:
    """A failed hand-off's exit status, as Claude Code reads it: 2 (the session goes on, and the
    model reads stderr) only at the first ``Stop`` and only for a draft the agent can rewrite;
    else 1, an error shown to the user, which stops nothing."""
    stopping = given.get("hook_event_name") == "Stop" and given.get("stop_hook_active") is not True
    if not (rewritable and stopping):
        return EXIT_FAIL
    error_line(f"save: the hand-off was not saved: rewrite {display_name(path)} as the lines above say, then stop")
    return BLOCKING


def warn_of_problems(store: Store, command: str) -> None:
    """One line on stderr when the store holds files it does not serve: its latest may not be the one meant."""
    try:
        count = len(store.problems())
    except StoreError:
        return  # the read that follows says why, once
    if count:
        many = count != 1
        error_line(
            f"{command}: store {visible(display_name(str(store.path)))} has {count} problem{'s' if many else ''} "
            f"(ls names {'them' if many else 'it'}): its latest packet may not be the one you think"
        )
