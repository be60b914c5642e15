"""The HTTP side: every route of the reference ltm server, on Starlette, over :class:`Storage`.

Paths, methods, statuses and JSON members are the reference's (REFERENCE-SERVER.md); where it
is unsafe this server answers otherwise, each difference in docs/server.md. Every push is
judged by :func:`cmp.check` on the bytes as they came, read no further than the packet limit.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio.to_thread
from sqlalchemy.exc import SQLAlchemyError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import cmp
from cmp._toolkit import instant
from cmp.findings import first_of
from cmp.integrations.starlette import BODY_DEADLINE, PacketRejected, read_body
from cmp.server._metrics import CONTENT_TYPE as METRICS_TYPE
from cmp.server._metrics import Metrics
from cmp.server._storage import (
    DatabaseFailed,
    Session,
    Storage,
    StorageError,
    Team,
    created_key,
    decode_cursor,
    encode_cursor,
    seconds,
    stamp,
)

Redaction = Literal["on", "flag", "off"]
REDACTION_MODES: tuple[Redaction, ...] = ("on", "flag", "off")
FLAGS_HEADER = "X-CMP-Flags"  # a flagged packet's flags on GET; a listing item carries "flags"
SPEC_VERSION = "0.2"  # healthz's "version": the newest packet version, as the reference answers
DEFAULT_LIMIT, MAX_LIMIT = 50, 500
TEAM_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
TEAM_NAME_RULE = "team name must match ^[a-z0-9][a-z0-9_-]{0,39}$"
SMALL_BODY = 4096  # a team's name, a move: the reference reads 4,096 bytes of them
ACCEPT_BODY = 1024  # an invite acceptance's optional {"display": …}
MAX_DISPLAY = 100
_DIGITS = re.compile(r"[+-]?[0-9]{1,18}")
_INVITE_CODE = re.compile(r"[0-9a-f]{48}")
_INVITE_PATH = re.compile(r"^(/v1/invites/)[^/]+")

access_log = logging.getLogger("cmp.server.access")
error_log = logging.getLogger("cmp.server")


class Answer(Exception):
    """A JSON error answer: ``{"error": message}`` with ``status``."""

    def __init__(self, status: int, message: str, *, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.close = close  # the body was left unread: the connection closes, or it would be read on


def json_response(status: int, data: Any) -> Response:
    """The reference's layout: keys sorted, two-space indent, a final newline, ``<>&`` escaped as Go does."""
    try:
        body = _indented(data, "").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, as JSON allows
        body = json.dumps(data, indent=2, sort_keys=True).encode("ascii")
    for raw, escaped in ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026")):
        body = body.replace(raw, escaped)
    body = body.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
    return Response(body + b"\n", status, media_type="application/json")


_string = json.encoder.encode_basestring  # ensure_ascii=False's string encoder, in C


def _indented(value: Any, indent: str) -> str:
    """``json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)``, twice as fast: ``indent`` makes
    json.dumps use its pure-Python encoder (140 µs of a list of 50, 76 µs here), so the layout is written
    here and each string goes through the C encoder. Invariant: the same text for every answer this
    server gives (objects with string keys, arrays, strings, numbers, booleans, null);
    tests/server/test_batches.py compares the two on arbitrary such values."""
    if isinstance(value, str):
        return _string(value)
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        members = ",\n".join(
            f"{inner}{_string(key)}: {_string(item) if type(item) is str else _indented(item, inner)}"
            for key, item in sorted(value.items())
        )
        return f"{{\n{members}\n{indent}}}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        items = ",\n".join(inner + (_string(item) if type(item) is str else _indented(item, inner)) for item in value)
        return f"[\n{items}\n{indent}]"
    return json.dumps(value)  # null, a boolean, a number


def listing_answer(listed: list[tuple[str, str, str, str]], next_cursor: str | None) -> dict[str, Any]:
    """A listing's answer: ``{"packets": [{created_at, goal, id, flags?}], "next_cursor"?}`` from rows of
    (id, created_at as the wire shows it, goal, flags)."""
    items = []
    for packet_id, created_at, goal, flags in listed:
        item: dict[str, Any] = {"created_at": created_at, "goal": goal, "id": packet_id}
        if flags:  # only on a flagged packet: a listing of strict pushes is the reference's
            item["flags"] = flags.split(",")
        items.append(item)
    return {"packets": items} if next_cursor is None else {"packets": items, "next_cursor": next_cursor}


def _error(status: int, message: str) -> Response:
    return json_response(status, {"error": message})


def judge(body: bytes, *, lenient: bool, allow_unredacted: bool) -> cmp.Report:
    """A push's verdict: :func:`cmp.check` as a writer judges (the writer's rule, specification 8.8):
    a credential in any string of the packet, not only the fields the format's pre-flight reads, is a
    redaction finding, so it blocks the push as any hit does (422, masked), unless the operator turned
    redaction off or to flag."""
    return cmp.check(body, lenient=lenient, allow_unredacted=allow_unredacted, writer=True)


class Server:
    """The routes over one storage; :func:`create_app` makes its Starlette app."""

    def __init__(
        self,
        storage: Storage,
        *,
        external_url: str | None = None,
        trust_proxy: bool = False,
        redaction: Redaction = "on",
        lenient: bool = False,
        body_deadline: float | None = BODY_DEADLINE,
    ) -> None:
        if redaction not in REDACTION_MODES:
            raise ValueError(f"redaction is one of {', '.join(REDACTION_MODES)}, not {redaction!r}")
        self.storage = storage
        self.external_url = (external_url or "").rstrip("/") or None
        self.trust_proxy = trust_proxy
        self.redaction = redaction
        self.lenient = lenient
        self.body_deadline = body_deadline

    async def _run(self, function: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(function, *args)

    # -- auth ----------------------------------------------------------------------------------

    async def _caller(self, request: Request) -> str:
        """The user a request's bearer token names; 401 for none or a bad one."""
        return await self._bearer(request.headers.get("authorization"))

    async def _bearer(self, header: str | None) -> str:
        token = _token(header)
        user_id: str = (await self.storage.batches.read(lambda session: _authorized(session, token, "")))[0]
        return user_id

    async def _team(self, user_id: str, name: str) -> tuple[Team, str]:
        # A name no team can have is not looked up (PostgreSQL cannot even compare one with a NUL).
        found: tuple[Team, str] | None = (
            await self.storage.batches.read(lambda session: session.team_for(user_id, name))
            if TEAM_NAME.fullmatch(name)
            else None
        )
        if found is None:
            raise Answer(404, "team not found")  # missing and not-a-member alike
        return found

    async def _small_json(self, request: Request, limit: int) -> Any:
        """A small JSON body, parsed; 413 past ``limit`` bytes, the intake's 400 and 408 as they are."""
        try:
            body = await read_body(request, limit, deadline=self.body_deadline)
        except PacketRejected as exc:
            if exc.status == 413:
                raise Answer(413, f"body is larger than {limit} bytes", close=True) from None
            raise Answer(exc.status, str(exc.problem["detail"]), close=exc.body_unread) from None
        try:
            return json.loads(body) if body.strip() else None
        except (ValueError, RecursionError):
            raise Answer(400, "invalid body: not JSON") from None

    # -- routes --------------------------------------------------------------------------------

    async def healthz(self, request: Request) -> Response:
        return json_response(200, {"ok": True, "version": SPEC_VERSION})

    async def readyz(self, request: Request) -> Response:
        if await self._run(self.storage.ping):
            return json_response(200, {"ok": True})
        return _error(503, "database unavailable")

    async def packets(self, request: Request) -> Response:
        token = _token(request.headers.get("authorization"))
        name = request.query_params.get("team", "")
        if request.method == "POST":
            user_id, team_id = await self.storage.batches.read(lambda session: _authorized(session, token, name))
            return await self._push(request, user_id, team_id)
        limit = _limit(request.query_params.get("limit"))
        cursor = request.query_params.get("cursor")
        after = decode_cursor(cursor) if cursor else None

        async def listing(session: Session) -> list[tuple[str, str, str, str]]:
            user_id, team_id = await _authorized(session, token, name)
            if cursor and after is None:
                raise Answer(400, "invalid cursor")
            return await session.list_packets(user_id, team_id, limit, after)

        rows = await self.storage.batches.read(listing)
        listed = [(packet_id, seconds(key), goal, flags) for packet_id, key, goal, flags in rows[:limit]]
        next_cursor = encode_cursor(rows[limit - 1][1], rows[limit - 1][0]) if len(rows) > limit else None
        return json_response(200, listing_answer(listed, next_cursor))

    async def _push(self, request: Request, user_id: str, team_id: str | None) -> Response:
        try:
            body = await read_body(request, cmp.MAX_PACKET_BYTES, deadline=self.body_deadline)
        except PacketRejected as exc:
            if exc.status == 413:  # read no further, never cut and then judged
                raise Answer(413, f"packet is larger than {cmp.MAX_PACKET_BYTES} bytes", close=True) from None
            raise Answer(exc.status, str(exc.problem["detail"]), close=exc.body_unread) from None
        report = judge(body, lenient=self.lenient, allow_unredacted=self.redaction != "on")
        if report.blocked:
            # As the CLI shows a hit: field/category and the masked finding, never what was found.
            hits = "; ".join(hit.line() for hit in report.redactions)
            raise Answer(422, f"packet contains redactable content: {hits}")
        if not report.accepted:
            raise Answer(400, first_of(report.errors, more="more findings"))
        flags = [
            name
            for name, on in (
                ("not-conforming", not report.conforming),
                ("redaction", self.redaction == "flag" and bool(report.redactions)),
            )
            if on
        ]
        packet_id, created_at, goal, stored = _stored_form(report, body)
        if "\x00" in packet_id:  # a text column cannot hold it on PostgreSQL, nor a URL path well
            raise Answer(400, "packet id holds a NUL character, which this server cannot store")
        moment = instant(created_at) if isinstance(created_at, str) else None
        # A lenient packet without a valid created_at is listed at the instant it arrived.
        key = created_key(moment) if moment is not None else created_key(time.time_ns())
        listed_goal = goal.replace("\x00", "\ufffd")  # the listing's copy only: the packet keeps its goal
        outcome = await self.storage.batches.write(
            lambda session: session.push(user_id, team_id, packet_id, key, listed_goal, stored, ",".join(flags)),
            packet_id,
        )
        if outcome == "different":
            raise Answer(409, "a different packet is already stored under this id")
        if outcome == "taken":
            raise Answer(409, "packet id already taken")
        return json_response(201, {"id": packet_id})

    async def packet(self, request: Request) -> Response:
        token = _token(request.headers.get("authorization"))
        if request.method == "DELETE":
            user_id = (await self.storage.batches.read(lambda session: _authorized(session, token, "")))[0]
            if not await self._run(self.storage.delete_packet, user_id, _packet_id(request)):
                raise Answer(404, "not found")
            return Response(status_code=204)

        async def reading(session: Session) -> tuple[bytes, str] | None:
            try:
                packet_id = _packet_id(request)
            except Answer:  # an id no packet can have is not looked up; a bad token still goes first
                await _authorized(session, token, "")
                raise
            user_id, found = await session.token_and_packet(token, packet_id)
            if user_id is None:
                raise Answer(401, "invalid token")
            return found

        found = await self.storage.batches.read(reading)
        if found is None:
            raise Answer(404, "not found")
        body, flags = found
        return Response(body, 200, media_type="application/json", headers={FLAGS_HEADER: flags} if flags else None)

    async def packet_scope(self, request: Request) -> Response:
        """Move a packet between personal and team scope: metadata only, the packet unchanged."""
        user_id = await self._caller(request)
        data = await self._small_json(request, SMALL_BODY)
        if not isinstance(data, dict) or set(data) != {"team"} or not isinstance(data["team"], (str, type(None))):
            raise Answer(400, 'invalid body: send {"team": "<name>"} or {"team": null} for personal scope')
        name = data["team"]
        team_id = (await self._team(user_id, name))[0].id if name else None
        outcome = await self._run(self.storage.move_packet, user_id, _packet_id(request), team_id)
        if outcome == "not found":
            raise Answer(404, "not found")
        if outcome == "not pusher":
            raise Answer(403, "only the packet's pusher can move it")
        return json_response(200, {"id": request.path_params["id"], "team": name or None})

    async def teams(self, request: Request) -> Response:
        user_id = await self._caller(request)
        if request.method == "GET":
            found: list[Team] = await self._run(self.storage.list_teams, user_id)
            listed = [
                {"created_at": seconds(t.created_at), "id": t.id, "name": t.name, "owner_id": t.owner_id} for t in found
            ]
            return json_response(200, {"teams": listed})
        data = await self._small_json(request, SMALL_BODY)
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise Answer(400, 'invalid body: send {"name": "<team name>"}')
        name = data["name"].strip()
        if not TEAM_NAME.fullmatch(name):
            raise Answer(400, TEAM_NAME_RULE)
        team = await self._run(self.storage.create_team, user_id, name)
        if team is None:
            raise Answer(409, "team name already taken")
        return json_response(201, {"team": {"id": team.id, "name": team.name, "owner_id": team.owner_id}})

    async def team(self, request: Request) -> Response:
        user_id = await self._caller(request)
        team, role = await self._team(user_id, request.path_params["name"])
        if role != "owner":
            raise Answer(403, "only the team owner can delete a team")
        await self._run(self.storage.delete_team, team.id)
        return Response(status_code=204)

    async def members(self, request: Request) -> Response:
        user_id = await self._caller(request)
        team, _ = await self._team(user_id, request.path_params["name"])
        return json_response(200, {"members": await self._run(self.storage.members, team.id)})

    async def member(self, request: Request) -> Response:
        user_id = await self._caller(request)
        team, role = await self._team(user_id, request.path_params["name"])
        if role != "owner":
            raise Answer(403, "only the team owner can remove members")
        target = request.path_params["user_id"]
        if target == team.owner_id:
            raise Answer(400, "owner cannot be removed; transfer ownership or delete the team")
        if "\x00" in target or not await self._run(self.storage.remove_member, team.id, target):
            raise Answer(404, "not a member")
        return Response(status_code=204)

    async def leave(self, request: Request) -> Response:
        user_id = await self._caller(request)
        team, _ = await self._team(user_id, request.path_params["name"])
        if team.owner_id == user_id:
            raise Answer(400, "owner cannot leave; transfer ownership or delete the team")
        if not await self._run(self.storage.remove_member, team.id, user_id):
            raise Answer(404, "not a member")
        return Response(status_code=204)

    async def invites(self, request: Request) -> Response:
        user_id = await self._caller(request)
        team, _ = await self._team(user_id, request.path_params["name"])  # any member may invite
        code, expires = await self._run(self.storage.create_invite, team.id, user_id)
        return json_response(
            201,
            {"code": code, "expires_at": seconds(stamp(expires)), "url": f"{self._base(request)}/v1/invites/{code}"},
        )

    def _base(self, request: Request) -> str:
        """Where invite links point: the configured external URL; else, only behind a proxy the operator
        named, its X-Forwarded-Proto and -Host; else this request's own scheme and Host."""
        if self.external_url:
            return self.external_url
        scheme, host = request.url.scheme, request.headers.get("host", "")
        if self.trust_proxy:
            scheme = request.headers.get("x-forwarded-proto", scheme).split(",")[0].strip() or scheme
            host = request.headers.get("x-forwarded-host", host).split(",")[0].strip() or host
        return f"{scheme}://{host}{request.scope.get('root_path', '')}"

    async def accept(self, request: Request) -> Response:
        """Join a team by invite: as the bearer's user, or with no Authorization header as a new user with
        a new token. A bad bearer is 401 (never a new identity in place of the caller's)."""
        header = request.headers.get("authorization")
        user_id = None if header is None else await self._bearer(header)
        data = await self._small_json_lenient(request)
        code = request.path_params["code"]
        if not _INVITE_CODE.fullmatch(code):  # not one this server made: gone, as an unknown one is
            raise Answer(410, "invite expired or already consumed")
        if user_id is not None:
            team = await self._run(self.storage.accept_invite, code, user_id)
            if team is None:
                raise Answer(410, "invite expired or already consumed")
            display = None
            token = None
        else:
            display = data.get("display") if isinstance(data, dict) else None
            display = display.strip() if isinstance(display, str) else ""
            if len(display) > MAX_DISPLAY:
                raise Answer(400, f"display is longer than {MAX_DISPLAY} characters")
            if any(ord(c) < 0x20 or c == "\x7f" for c in display):
                raise Answer(400, "display holds control characters")
            made = await self._run(self.storage.accept_invite_as_new_user, code, display)
            if made is None:
                raise Answer(410, "invite expired or already consumed")
            user_id, display, team, token = made
        if display is None:
            display = await self._run(self.storage.display, user_id)
        answer: dict[str, Any] = {
            "team": {"id": team.id, "name": team.name},
            "user": {"display": display, "id": user_id},
        }
        if token is not None:
            answer["token"] = token
        return json_response(201, answer)

    async def _small_json_lenient(self, request: Request) -> Any:
        """The acceptance's optional body: unparseable is as none (the reference's), too long is 413."""
        try:
            return await self._small_json(request, ACCEPT_BODY)
        except Answer as exc:
            if exc.status == 400 and exc.message.startswith("invalid body"):
                return None
            raise


def _stored_form(report: cmp.Report, body: bytes) -> tuple[str, Any, str, bytes]:
    """(id, created_at, goal, bytes to store) of an accepted packet: a conforming one's canonical
    bytes; one lenient mode let in as it came (it has no canonical form), 400 without a usable id."""
    packet = report.packet
    if packet is not None:
        return packet.id, packet.created_at, packet.goal, cmp.dumps(packet)
    data = json.loads(body)  # lenient mode lets in only an object that parsed
    packet_id, goal = data.get("id"), data.get("goal")
    if not isinstance(packet_id, str) or not 0 < len(packet_id) <= 64:
        raise Answer(400, "a packet let in leniently still needs an id: a string of 1 to 64 characters")
    return packet_id, data.get("created_at"), goal if isinstance(goal, str) else "", body


def _token(header: str | None) -> str:
    """The bearer token of an Authorization header; 401 for none."""
    scheme, _, token = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Answer(401, "missing bearer token")
    return token


async def _authorized(session: Session, token: str, team_name: str) -> tuple[str, str | None]:
    """(the token's user, the id of the team ``team_name`` names, or None without one): 401 for a bad token,
    404 for a team that does not exist or the user is not in. Run in the storage's batches."""
    user_id = await session.user_for_token(token)
    if user_id is None:
        raise Answer(401, "invalid token")
    if not team_name:
        return user_id, None
    # A name no team can have is not looked up (PostgreSQL cannot even compare one with a NUL).
    found = await session.team_for(user_id, team_name) if TEAM_NAME.fullmatch(team_name) else None
    if found is None:
        raise Answer(404, "team not found")  # missing and not-a-member alike
    return user_id, found[0].id


def _packet_id(request: Request) -> str:
    """The path's packet id; 404 for one no packet can have (longer than 64, or holding a NUL)."""
    packet_id: str = request.path_params["id"]
    if len(packet_id) > 64 or "\x00" in packet_id:
        raise Answer(404, "not found")
    return packet_id


def _limit(text: str | None) -> int:
    """``limit``: unparseable or below 1 is the default, above the maximum is the maximum (capped, not reset)."""
    if text is None or not _DIGITS.fullmatch(text):
        return DEFAULT_LIMIT
    value = int(text)
    return DEFAULT_LIMIT if value < 1 else min(value, MAX_LIMIT)


def _endpoint(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    async def answered(request: Request) -> Response:
        try:
            return await handler(request)
        except Answer as exc:
            answer = _error(exc.status, exc.message)
            if exc.close:
                answer.headers["connection"] = "close"
            return answer
        except (SQLAlchemyError, StorageError) as exc:
            # The type alone: a driver's message can quote the statement's parameters (packet text).
            # DatabaseFailed's message is the driver error's type already.
            error_log.error("database error: %s", exc if isinstance(exc, DatabaseFailed) else type(exc).__name__)
            return _error(500, "internal error")

    return answered


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("404 page not found\n", 404)(scope, receive, send)


class AccessLog:
    """One line per request: method, path (an invite code withheld), status, milliseconds. No query
    string, header or body: nothing of a token, a credential or a packet's text. With ``metrics``,
    each request is counted too, under its route's template."""

    def __init__(self, app: ASGIApp, routes: list[Route], metrics: Metrics | None = None) -> None:
        self.app = app
        self.routes = routes
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            if self.metrics is not None:
                route = next((r.path for r in self.routes if r.matches(scope)[0] != Match.NONE), "other")
                self.metrics.observe(scope["method"], route, status, time.perf_counter() - started)
            path = _INVITE_PATH.sub(r"\1{code}", scope.get("path", ""))
            access_log.info(
                "%s %s %d %.1fms",
                scope.get("method"),
                json.dumps(path)[1:-1],
                status,
                (time.perf_counter() - started) * 1000,
            )


def create_app(
    db: str | Storage | None = None,
    *,
    external_url: str | None = None,
    trust_proxy: bool = False,
    redaction: Redaction = "on",
    lenient: bool = False,
    metrics: bool = False,
    body_deadline: float | None = BODY_DEADLINE,
) -> Starlette:
    """The server as an ASGI app, to serve or mount in a Starlette or FastAPI app.

    ``db``: a :class:`Storage`, a file path, ``sqlite:///PATH`` or ``postgresql://…`` (default: the
    file in the user's data folder). :class:`StorageError` when the database needs migrating.
    ``external_url``: the base of invite links; ``trust_proxy``: read X-Forwarded-Proto and -Host
    (only behind a proxy that sets them); ``redaction``: ``on`` refuses a packet with a hit, ``flag``
    stores it flagged, ``off`` stores it; ``lenient``: a packet whose only errors are schema errors
    is stored as it came, flagged ``not-conforming`` (the specification's lenient mode); ``metrics``:
    serve Prometheus metrics at ``GET /metrics`` (no auth: expose it to the scraper alone)."""
    storage = db if isinstance(db, Storage) else Storage(db)
    storage.check_ready()
    server = Server(
        storage,
        external_url=external_url,
        trust_proxy=trust_proxy,
        redaction=redaction,
        lenient=lenient,
        body_deadline=body_deadline,
    )
    table: list[tuple[str, Callable[[Request], Awaitable[Response]], list[str]]] = [
        ("/v1/healthz", server.healthz, ["GET"]),
        ("/v1/readyz", server.readyz, ["GET"]),
        ("/v1/packets", server.packets, ["GET", "POST"]),
        ("/v1/packets/{id}", server.packet, ["GET", "DELETE"]),
        ("/v1/packets/{id}/scope", server.packet_scope, ["PUT"]),
        ("/v1/teams", server.teams, ["GET", "POST"]),
        ("/v1/teams/{name}", server.team, ["DELETE"]),
        ("/v1/teams/{name}/members", server.members, ["GET"]),
        ("/v1/teams/{name}/members/{user_id}", server.member, ["DELETE"]),
        ("/v1/teams/{name}/leave", server.leave, ["POST"]),
        ("/v1/teams/{name}/invites", server.invites, ["POST"]),
        ("/v1/invites/{code}/accept", server.accept, ["POST"]),
    ]
    routes = [Route(path, _endpoint(handler), methods=methods) for path, handler, methods in table]
    counted = Metrics() if metrics else None
    if counted is not None:

        async def scraped(request: Request) -> Response:
            return Response(counted.render(), media_type=METRICS_TYPE)

        routes.append(Route("/metrics", scraped, methods=["GET"]))
    app = Starlette(routes=routes)
    app.router.redirect_slashes = False  # /v1/packets/ is another path: 404, as the reference
    app.router.default = _not_found
    app.state.storage = storage
    app.add_middleware(AccessLog, routes=routes, metrics=counted)
    return app
