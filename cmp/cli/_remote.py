"""The team server from the command line: ``auth``, ``whoami``, ``push``, ``pull``, ``ls --remote``,
``rm``, ``teams``, ``invite``, ``join``, ``sync``, and ``save --push`` (over :class:`cmp.Client`).

Exit statuses: 1 for a refusal (the pre-flight's, or the server's 4xx answer), 2 for usage,
configuration and I/O (a file, the connection, a 5xx or an answer that is not the protocol's).
No token is ever printed; the server's words are shown masked, as :mod:`cmp.client` words them.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import Any

import cmp
from cmp._toolkit import display_name, file_bytes, unquoted
from cmp.cli._output import EXIT_FAIL, EXIT_OK, EXIT_USAGE, Output, error_line
from cmp.cli._render import report_lines
from cmp.cli._sources import SourceError, packet_in_file, read_source
from cmp.store import PacketConflict, PacketNotFound, Store, StoreError, is_store_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.client import Client, ClientError

GOAL_SHOWN = 72  # as the local ls cuts a goal
SYNC_PAGES = 200  # a sync lists at most this many pages of 500
_HINT = "this command needs httpx (the client extra): pip install 'httpx>=0.27'"


class _Stop(Exception):
    """The command ends with ``status``; its line was said."""

    def __init__(self, status: int) -> None:
        self.status = status


def _client_module() -> Any:
    try:
        import cmp.client as client
    except ImportError:
        error_line(_HINT)
        raise _Stop(EXIT_USAGE) from None
    return client


def _status(error: ClientError) -> int:
    """1 for a refusal (the pre-flight's, the server's 4xx, a foreign invite), 2 for the rest."""
    from cmp.client import ForeignInvite, PushRefused, ServerError, ServerRefused

    if isinstance(error, (PushRefused, ForeignInvite)):
        return EXIT_FAIL
    return EXIT_FAIL if isinstance(error, ServerRefused) and not isinstance(error, ServerError) else EXIT_USAGE


def _failed(command: str, error: ClientError) -> int:
    error_line(f"{command}: {error}")
    return _status(error)


def _connected(command: str) -> Client:
    client = _client_module()
    try:
        return client.Client()  # type: ignore[no-any-return]
    except client.ClientError as exc:
        raise _Stop(_failed(command, exc)) from None


def _run(command: str, args: argparse.Namespace, out: Output, body: Any) -> int:
    """``body(client)`` with the configured client; each failure one line and its status."""
    try:
        client = _connected(command)
    except _Stop as stop:
        return stop.status
    from cmp.client import ClientError

    with client:
        try:
            status: int = body(client)
        except ClientError as exc:
            return _failed(command, exc)
        except _Stop as stop:
            return stop.status
    return status


def _shown(text: str, limit: int | None = None) -> str:
    """A server's text on one line of output: withheld when a redaction pattern matches, cut at ``limit``."""
    text = unquoted(text)
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


# -- auth, whoami --------------------------------------------------------------------------------


def _read_token() -> str:
    if sys.stdin is not None and sys.stdin.isatty():
        return getpass.getpass("token: ").strip()
    try:
        return (sys.stdin.readline(4096) if sys.stdin is not None else "").strip()
    except (OSError, ValueError, UnicodeDecodeError):
        return ""


def run_auth(args: argparse.Namespace, out: Output) -> int:
    try:
        client = _client_module()
    except _Stop as stop:
        return stop.status
    try:
        server = client.server_url(args.url)
    except ValueError as exc:
        error_line(f"auth: {exc}")
        return EXIT_USAGE
    credentials = client.CredentialsFile(client.config_folder())
    try:
        kept = credentials.read()[1]
    except client.ClientError as exc:
        return _failed("auth", exc)
    token = args.token or kept.get(server) or _read_token()
    if not token:
        error_line("auth: no token: give it as TOKEN or on stdin (server issue-token makes one)")
        return EXIT_USAGE
    try:
        with client.Client(server, token) as connected:
            health = connected.healthz()
            if health.get("ok") is not True:
                error_line(f"auth: {server} does not say it is healthy")
                return EXIT_USAGE
            connected.whoami()
    except client.Unauthorized as exc:
        error_line(f"auth: token rejected by server: {exc.server_message}")
        return EXIT_FAIL
    except client.ClientError as exc:
        return _failed("auth", exc)
    try:
        credentials.save(server, token)
    except OSError as exc:
        error_line(f"auth: cannot write {display_name(str(credentials.path))}: {exc.strerror or exc}")
        return EXIT_USAGE
    out.line(f"authenticated to {server}")
    out.line(f"default server set to {server} (token kept in {display_name(str(credentials.path))})")
    return EXIT_OK


def run_whoami(args: argparse.Namespace, out: Output) -> int:
    try:
        client = _client_module()
        found = client.login()
    except _Stop as stop:
        return stop.status
    except client.ClientError as exc:
        return _failed("whoami", exc)

    def body(client: Client) -> int:
        identity = client.whoami()
        out.line(f"server: {identity.server} (from {found.source})")
        out.line(f"token: sha256 {identity.token_fingerprint}…, accepted")
        return EXIT_OK

    return _run("whoami", args, out, body)


# -- packets -------------------------------------------------------------------------------------


def _packet_to_push(source: str, store: str | None) -> tuple[str, bytes | cmp.Packet]:
    """What ``push SOURCE`` sends (its name as shown, and its bytes or stored packet)."""
    try:
        read = read_source(source)
    except SourceError as exc:
        if source != "-" and is_store_id(source):
            try:
                return source, Store(store or None).get(source)
            except PacketNotFound:
                pass
            except StoreError as error:
                error_line(f"push: {error}")
                raise _Stop(EXIT_USAGE) from None
        error_line(f"push: {display_name(source)}: {exc}")
        raise _Stop(EXIT_USAGE) from None
    return read.file, packet_in_file(read).data


def _refused(name: str, report: cmp.Report) -> _Stop:
    for _, text in report_lines(name, None, report):  # check's lines, hits masked
        error_line(text)
    error_line(f"push: {name}: not sent")
    return _Stop(EXIT_FAIL)


def push_one(client: Client, name: str, packet: bytes | cmp.Packet, team: str | None, allow: bool) -> str:
    """Push one packet; a pre-flight refusal is check's lines on stderr and :class:`_Stop` (exit 1)."""
    from cmp.client import PushRefused

    try:
        return client.push(packet, team, allow_unredacted=allow)
    except PushRefused as exc:
        raise _refused(name, exc.report) from None


def run_push(args: argparse.Namespace, out: Output) -> int:
    try:
        name, packet = _packet_to_push(args.source, args.store)
        client = _client_module()
        try:  # the pre-flight before the configuration is even read: a refused packet needs no server
            client.preflight(packet, allow_unredacted=args.allow_unredacted)
        except client.PushRefused as exc:
            raise _refused(name, exc.report) from None
    except _Stop as stop:
        return stop.status

    def body(client: Client) -> int:
        out.line(push_one(client, name, packet, args.team, args.allow_unredacted))
        return EXIT_OK

    return _run("push", args, out, body)


def push_saved(packet: cmp.Packet, team: str | None, allow: bool, out: Output) -> int:
    """``save --push``: the packet just saved, pushed; one line on stderr saying where."""

    def body(client: Client) -> int:
        push_one(client, packet.id, packet, team, allow)
        error_line(f"save: pushed {packet.id} to {client.server}" + (f", team {team}" if team else ""))
        return EXIT_OK

    return _run("save --push", argparse.Namespace(), out, body)


def run_pull(args: argparse.Namespace, out: Output) -> int:
    def body(client: Client) -> int:
        packet = client.pull(args.id)
        data = file_bytes(cmp.dumps(packet))
        if args.save:
            try:
                Store(args.store or None).save(packet)
            except StoreError as exc:
                error_line(f"pull: not kept in the store: {exc}")
                return EXIT_FAIL if isinstance(exc, PacketConflict) else EXIT_USAGE
        if args.output is None:
            out.write(data)
            return EXIT_OK
        try:
            with open(args.output, "wb") as stream:
                stream.write(data)
        except OSError as exc:
            error_line(f"pull: {display_name(args.output)}: cannot write: {exc.strerror or exc}")
            return EXIT_USAGE
        error_line(f"pull: {packet.id} written to {display_name(args.output)}")
        return EXIT_OK

    return _run("pull", args, out, body)


def run_ls_remote(args: argparse.Namespace, out: Output) -> int:
    limit = 50 if args.limit is None else args.limit
    if not 1 <= limit <= 500:
        error_line(f"ls --remote: --limit is from 1 to 500, not {limit}")
        return EXIT_USAGE

    def body(client: Client) -> int:
        page = client.ls(args.team, limit=limit, cursor=args.cursor)
        if args.format == "json":
            listed = [{"id": p.id, "created_at": p.created_at, "goal": _shown(p.goal)} for p in page.packets]
            out.document(json.dumps({"packets": listed, "next_cursor": page.next_cursor}, indent=2))
        else:
            for packet in page.packets:
                out.line(f"{_shown(packet.id)}  {_shown(packet.created_at)}  {_shown(packet.goal, GOAL_SHOWN)}")
        if page.next_cursor:
            error_line(f"ls: more follow: --cursor {page.next_cursor}")
        return EXIT_OK

    return _run("ls", args, out, body)


def run_rm(args: argparse.Namespace, out: Output) -> int:
    def body(client: Client) -> int:
        client.rm(args.id)
        out.line(f"deleted {_shown(args.id)}")
        return EXIT_OK

    return _run("rm", args, out, body)


# -- teams, invites ------------------------------------------------------------------------------


def _table(out: Output, rows: list[list[str]]) -> None:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row in rows:
        out.line("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def run_teams(args: argparse.Namespace, out: Output) -> int:
    def body(client: Client) -> int:
        action = args.action
        if action == "create":
            team = client.create_team(args.name)
            out.line(f"created team {_shown(team.name)}")
        elif action == "rm":
            client.delete_team(args.name)
            out.line(f"deleted team {_shown(args.name)}")
        elif action == "leave":
            client.leave(args.name)
            out.line(f"left team {_shown(args.name)}")
        elif action == "remove":
            client.remove_member(args.name, args.user)
            out.line(f"removed {_shown(args.user)} from team {_shown(args.name)}")
        elif action == "ls":
            teams = client.teams()
            if args.json:
                listed = [
                    {"name": t.name, "id": t.id, "owner_id": t.owner_id, "created_at": t.created_at} for t in teams
                ]
                out.document(json.dumps({"teams": listed}, indent=2))
            elif teams:
                _table(out, [["NAME", "CREATED", "OWNER"], *([t.name, t.created_at or "", t.owner_id] for t in teams)])
        else:
            members = client.members(args.name)
            if args.json:
                listed = [
                    {"user_id": m.user_id, "display": _shown(m.display), "role": m.role, "joined_at": m.joined_at}
                    for m in members
                ]
                out.document(json.dumps({"members": listed}, indent=2))
            elif members:
                rows = [[_shown(m.display, 40), m.role, m.joined_at, m.user_id] for m in members]
                _table(out, [["DISPLAY", "ROLE", "JOINED", "USER"], *rows])
        return EXIT_OK

    return _run("teams", args, out, body)


def run_invite(args: argparse.Namespace, out: Output) -> int:
    def body(client: Client) -> int:
        invite = client.invite(args.team)
        out.line(invite.url)
        error_line(f"invite: expires {invite.expires_at}")
        return EXIT_OK

    return _run("invite", args, out, body)


def run_join(args: argparse.Namespace, out: Output) -> int:
    try:
        client = _client_module()
    except _Stop as stop:
        return stop.status
    try:
        found = client.login()
        server, token = found.server, found.token
    except client.NotConfigured:
        server, token = None, None  # nobody yet: the invite's own server, joined as a new identity
    try:
        base, _ = client.invite_parts(args.invite, server)
    except ValueError as exc:
        error_line(f"join: {exc}")
        return EXIT_USAGE
    except client.ClientError as exc:
        return _failed("join", exc)
    try:
        with client.Client(server or base, token) as connected:
            joined = connected.join(args.invite, new_identity=args.new_identity, display=args.display)
    except client.Gone:
        error_line("join: invite expired or already consumed")
        return EXIT_FAIL
    except client.ClientError as exc:
        return _failed("join", exc)
    if joined.token is not None:
        credentials = client.CredentialsFile(client.config_folder())
        try:
            credentials.save(joined.server, joined.token)
        except (OSError, client.ClientError) as exc:
            # The one copy of the new token would be lost: say so, never print it.
            error_line(f"join: joined, but the new identity's token could not be kept: {exc}")
            return EXIT_USAGE
        out.line(f"authenticated to {joined.server} as a new user, {_shown(joined.display)}")
        out.line(f"default server set to {joined.server}")
    out.line(f"joined team {_shown(joined.team)}")
    return EXIT_OK


# -- sync ----------------------------------------------------------------------------------------


def _server_ids(client: Client, team: str | None) -> set[str]:
    ids: set[str] = set()
    cursor = None
    for _ in range(SYNC_PAGES):
        page = client.ls(team, limit=500, cursor=cursor)
        ids.update(packet.id for packet in page.packets)
        cursor = page.next_cursor
        if cursor is None:
            return ids
    error_line(f"sync: the server lists more than {SYNC_PAGES * 500:,} packets: only those were compared")
    return ids


def run_sync(args: argparse.Namespace, out: Output) -> int:
    try:
        store = Store(args.store or None)
        held = {packet.id: packet for packet in store.list()}
    except StoreError as exc:
        error_line(f"sync: {exc}")
        return EXIT_USAGE
    try:
        client_module = _client_module()
    except _Stop as stop:
        return stop.status
    refusals = (client_module.PushRefused, client_module.ServerRefused)
    unpulled = (client_module.ServerRefused, client_module.BadAnswer, StoreError)

    def body(client: Client) -> int:
        remote = _server_ids(client, args.team)
        pushed = pulled = failed = 0
        for packet_id in sorted(set(held) - remote):
            try:
                client.push(held[packet_id], args.team)
            except refusals as exc:
                error_line(f"sync: {packet_id}: not pushed: {exc}")
                failed += 1
                continue
            out.line(f"pushed {packet_id}")
            pushed += 1
        for packet_id in sorted(remote - set(held)):
            if not is_store_id(packet_id):
                error_line(f"sync: {_shown(packet_id)}: not pulled: the store keeps packets whose id is a ULID")
                failed += 1
                continue
            try:
                store.save(client.pull(packet_id))
            except unpulled as exc:
                error_line(f"sync: {packet_id}: not pulled: {exc}")
                failed += 1
                continue
            out.line(f"pulled {packet_id}")
            pulled += 1
        scope = f"team {args.team}" if args.team else "your personal scope"
        both = len(set(held) & remote)
        error_line(
            f"sync: {client.server}, {scope}: {pushed} pushed, {pulled} pulled, {both} on both"
            + (f", {failed} not moved" if failed else "")
        )
        return EXIT_FAIL if failed else EXIT_OK

    return _run("sync", args, out, body)
