"""The synchronous client of a team server (the ltm protocol), on httpx.

Nothing leaves the process before the pre-flight: :meth:`Client.push` runs :func:`cmp.check`
on the writer's side first and sends the canonical bytes. Every answer is untrusted: read no
further than a bound for its kind, parsed by the same reader as any packet, checked for its
shape; a pulled packet is judged by :func:`cmp.check` before the caller gets it.
"""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote as escape

import httpx

import cmp
from cmp._toolkit import decode_text, parse_json
from cmp.client._credentials import fingerprint, login, same_server, server_url
from cmp.client._errors import (
    BY_STATUS,
    AnswerTooLarge,
    BadAnswer,
    ConnectionLost,
    ForeignInvite,
    NotConfigured,
    PushRefused,
    ServerError,
    ServerRefused,
    TimedOut,
    TLSFailure,
    TransportError,
    Unreachable,
    shown_text,
)
from cmp.findings import first_of

# The most an answer may be: a packet and a little, or a listing of 500 items with long goals.
PACKET_ANSWER = 2 * cmp.MAX_PACKET_BYTES
MAX_ANSWER = 1 << 21
DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRIES = 2
MAX_LISTED = 500  # the server's own cap on limit
_INVITE_PATH = "/v1/invites/"


@dataclass(frozen=True)
class Listed:
    """One packet of a listing: its id, created_at (UTC, whole seconds) and goal."""

    id: str
    created_at: str
    goal: str


@dataclass(frozen=True)
class Listing:
    """A page of a listing, newest first; ``next_cursor`` goes on from its end (None: the last page)."""

    packets: list[Listed]
    next_cursor: str | None = None


@dataclass(frozen=True)
class Team:
    id: str
    name: str
    owner_id: str
    created_at: str | None = None


@dataclass(frozen=True)
class Member:
    user_id: str
    display: str
    role: str
    joined_at: str


@dataclass(frozen=True)
class Invite:
    """A single-use invite: its code, the URL that carries it, and when it expires."""

    code: str
    url: str
    expires_at: str


@dataclass(frozen=True)
class Joined:
    """What joining did: the team, the user who joined, and a new ``token`` when a new identity was made."""

    server: str
    team: str
    team_id: str
    user_id: str
    display: str
    token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Identity:
    """Who the client is: its server and the fingerprint of its token (never the token)."""

    server: str
    token_fingerprint: str


def preflight(packet: cmp.Packet | bytes | str | Mapping[str, Any], *, allow_unredacted: bool = False) -> cmp.Packet:
    """The packet ``push`` would send, judged as a writer judges it (:func:`cmp.check` with
    ``writer=True``); :class:`PushRefused`, one masked line, for one it would not send."""
    if isinstance(packet, cmp.Packet):
        data: bytes | str = cmp.dumps(packet)
    elif isinstance(packet, (bytes, bytearray, str)):
        data = bytes(packet) if isinstance(packet, bytearray) else packet
    elif isinstance(packet, Mapping):
        try:
            data = json.dumps(packet, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            raise TypeError("push takes a packet as cmp.Packet, bytes, text or a JSON object") from None
    else:
        raise TypeError(f"push takes a cmp.Packet, bytes, str or a mapping, not {type(packet).__name__}")
    report = cmp.check(data, allow_unredacted=allow_unredacted, writer=True)
    if report.errors or report.packet is None:
        raise PushRefused(f"not sent: not a conforming packet: {first_of(report.errors)}", report)
    if report.blocked:
        hits = first_of([hit.line() for hit in report.redactions])
        raise PushRefused(
            f"not sent: {hits}; cmp.scrub replaces it, allow_unredacted sends it as it is (not recommended)", report
        )
    return report.packet


def invite_parts(invite: str, server: str | None) -> tuple[str, str]:
    """An invite's server and code: from its URL (``…/v1/invites/CODE``), or a bare code for ``server``."""
    text = invite.strip()
    base, marker, code = text.partition(_INVITE_PATH)
    if not marker:
        base, code = server or "", text
        if not base:
            raise NotConfigured("a bare invite code needs a configured server: give the invite's URL")
    code = code.removesuffix("/accept").strip("/")
    if not code or len(code) > 256 or not all(c.isascii() and (c.isalnum() or c in "-_") for c in code):
        raise ValueError("not an invite: an invite is a URL ending in /v1/invites/CODE, or its CODE")
    try:
        return server_url(base), code
    except ValueError as exc:
        raise ValueError(f"not an invite's URL: {exc}") from None


def _tls_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _shape(value: Any, members: Mapping[str, type | tuple[type, ...]], what: str) -> dict[str, Any]:
    """``value`` when it is an object with each of ``members`` of its type; BadAnswer otherwise."""
    if not isinstance(value, dict) or not all(isinstance(value.get(name), kind) for name, kind in members.items()):
        raise BadAnswer(f"the server's answer is not {what}")
    return value


def _items(value: Any, member: str, what: str) -> list[Any]:
    items = _shape(value, {member: list}, what)[member]
    assert isinstance(items, list)
    return items


class Client:
    """A team server's client: push, pull, ls, rm, move, teams, invites, join, whoami, healthz.

    ``server`` and ``token`` default to the configured ones (``CMP_SERVER`` and ``CMP_TOKEN``, the
    credentials file ``auth`` writes, else the reference ltm client's). Every call has a
    ``timeout`` (seconds, for the whole answer); calls that are safe to repeat are tried again
    ``retries`` times when the connection fails. Each failure is a :class:`ClientError` subclass.
    """

    def __init__(
        self,
        server: str | None = None,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        verify: bool | str | ssl.SSLContext = True,
    ) -> None:
        if server is None:
            found = login()
            server, token = found.server, token if token is not None else found.token
        try:
            self.server = server_url(server)
        except ValueError as exc:
            raise NotConfigured(f"not a server's URL: {exc}") from None
        if token is not None and (not token or any(c.isspace() or not c.isprintable() for c in token)):
            raise NotConfigured("a token is one word of printable characters")
        self._token = token
        if not timeout > 0 or retries < 0:
            raise ValueError("timeout is a positive number of seconds, retries a count")
        self.timeout, self.retries = float(timeout), int(retries)
        self._http = httpx.Client(
            timeout=httpx.Timeout(self.timeout),
            verify=verify,
            follow_redirects=False,  # a redirect would carry the token elsewhere
            headers={"User-Agent": f"core-memory-packet/{cmp.__version__}", "Accept-Encoding": "identity"},
        )

    def __repr__(self) -> str:
        return f"Client(server={self.server!r}, token={'set' if self._token else 'none'})"

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    @property
    def has_token(self) -> bool:
        return self._token is not None

    # -- the transport ---------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        params: dict[str, str] | None = None,
        expect: tuple[int, ...] = (200,),
        limit: int = MAX_ANSWER,
        safe: bool = False,
        token: bool = True,
        base: str | None = None,
    ) -> bytes:
        """One request, its answer's body when its status is one of ``expect``. ``safe``: repeating
        it does no harm, so a connection lost mid-way is tried again too (a connection refused is
        always tried again: nothing was sent)."""
        headers = {}
        if token:
            if self._token is None:
                raise NotConfigured(f"no token for {self.server}: run `core-memory-packet auth {self.server}`")
            headers["Authorization"] = f"Bearer {self._token}"
        if body is not None:
            headers["Content-Type"] = "application/json"
        url = (base or self.server) + path
        attempt = 0
        while True:
            try:
                status, data = self._exchange(method, url, body, params, headers, limit)
                break
            except TransportError as exc:
                again = isinstance(exc, Unreachable) or (safe and isinstance(exc, ConnectionLost))
                if not again or attempt >= self.retries:
                    raise
                time.sleep(min(0.1 * 2**attempt, 1.0))
                attempt += 1
        if status in expect:
            return data
        message = self._server_message(data)
        text = f"server returned {status}: {message}"
        if status >= 500:
            raise ServerError(text, status, message)
        raise BY_STATUS.get(status, ServerRefused)(text, status, message)

    def _exchange(
        self,
        method: str,
        url: str,
        body: bytes | None,
        params: dict[str, str] | None,
        headers: dict[str, str],
        limit: int,
    ) -> tuple[int, bytes]:
        where = self._where(url)
        deadline = time.monotonic() + self.timeout
        try:
            with self._http.stream(method, url, content=body, params=params, headers=headers) as response:
                encoding = response.headers.get("content-encoding", "identity").strip().lower()
                if encoding not in ("", "identity"):
                    raise BadAnswer(f"{where} answered in a content encoding this client did not ask for")
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise AnswerTooLarge(f"{where} answered {int(declared):,} bytes, more than {limit:,}: not read")
                received = bytearray()
                for chunk in response.iter_raw():
                    received += chunk
                    if len(received) > limit:
                        raise AnswerTooLarge(f"{where} answered more than {limit:,} bytes: not read further")
                    if time.monotonic() > deadline:
                        raise TimedOut(f"{where} did not answer within {self.timeout:g} s")
                return response.status_code, bytes(received)
        except httpx.TimeoutException:
            raise TimedOut(f"{where} did not answer within {self.timeout:g} s") from None
        except httpx.ConnectError as exc:
            if _tls_failure(exc):
                raise TLSFailure(f"TLS with {where} failed: {shown_text(str(exc))}") from None
            raise Unreachable(f"cannot connect to {where}: {shown_text(str(exc))}") from None
        except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError, httpx.CloseError) as exc:
            if _tls_failure(exc):
                raise TLSFailure(f"TLS with {where} failed: {shown_text(str(exc))}") from None
            raise ConnectionLost(f"{where} closed the connection before a whole answer came") from None
        except httpx.HTTPError as exc:
            raise TransportError(f"{where}: {shown_text(str(exc)) or type(exc).__name__}") from None

    def _where(self, url: str) -> str:
        parts = httpx.URL(url)
        return f"{parts.scheme}://{parts.netloc.decode('ascii', 'replace')}"

    def _server_message(self, data: bytes) -> str:
        text = data.decode("utf-8", "replace")
        try:
            value = json.loads(text) if len(data) <= 1 << 16 else None
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict) and isinstance(value.get("error"), str):
            text = value["error"]
        return shown_text(text, self._token) or "(no message)"

    def _json(self, data: bytes) -> Any:
        text = decode_text(data)
        if not isinstance(text, str):
            raise BadAnswer("the server's answer is not UTF-8 text")
        value, findings = parse_json(text, data)
        if findings:
            raise BadAnswer("the server's answer is not JSON")
        return value

    # -- packets ---------------------------------------------------------------------------------

    def healthz(self) -> dict[str, Any]:
        """The server's health answer, ``{"ok": true, "version": "0.2"}``; no token is sent."""
        return _shape(
            self._json(self._call("GET", "/v1/healthz", token=False, safe=True)), {"ok": bool}, "a health answer"
        )

    def whoami(self) -> Identity:
        """The server and the token's fingerprint, once the server has accepted the token (a listing of one)."""
        self._call("GET", "/v1/packets", params={"limit": "1"}, safe=True)
        assert self._token is not None  # _call refused a call without one
        return Identity(self.server, fingerprint(self._token))

    def push(
        self,
        packet: cmp.Packet | bytes | str | Mapping[str, Any],
        team: str | None = None,
        *,
        allow_unredacted: bool = False,
    ) -> str:
        """Send a packet (into ``team``'s scope, else the personal one); its id.

        The pre-flight runs first (:func:`preflight`): :class:`PushRefused` and nothing sent for a
        packet that does not conform or holds a redaction hit or a credential in any string,
        unless ``allow_unredacted``. What is sent is the canonical bytes."""
        judged = preflight(packet, allow_unredacted=allow_unredacted)
        params = {"team": team} if team else None
        data = self._call("POST", "/v1/packets", body=cmp.dumps(judged), params=params, expect=(201,), safe=True)
        answered = _shape(self._json(data), {"id": str}, "a push's answer")["id"]
        if answered != judged.id:
            raise BadAnswer("the server's answer names another packet than the one sent")
        return judged.id

    def pull(self, id: str, *, allow_unredacted: bool = False) -> cmp.Packet:
        """The packet ``id``, judged by :func:`cmp.check`: :class:`BadAnswer` for one that does not
        conform or is another packet; a redaction hit refuses it too, unless ``allow_unredacted``."""
        data = self._call("GET", f"/v1/packets/{escape(id, safe='')}", limit=PACKET_ANSWER, safe=True)
        report = cmp.check(data, allow_unredacted=allow_unredacted)
        if report.errors or report.packet is None:
            raise BadAnswer(f"the server's packet does not conform: {first_of(report.errors)}")
        if report.blocked:
            hits = first_of([hit.line() for hit in report.redactions])
            raise BadAnswer(f"the server's packet holds {hits}; allow_unredacted takes it as it is")
        if report.packet.id != id:
            raise BadAnswer("the server answered another packet than the one asked for")
        return report.packet

    def ls(self, team: str | None = None, *, limit: int = 50, cursor: str | None = None) -> Listing:
        """A page of the packets of ``team`` (else the personal scope), newest first."""
        if not 1 <= limit <= MAX_LISTED:
            raise ValueError(f"limit is from 1 to {MAX_LISTED}")
        params = {"limit": str(limit)}
        if team:
            params["team"] = team
        if cursor:
            params["cursor"] = cursor
        value = self._json(self._call("GET", "/v1/packets", params=params, safe=True))
        listed = [
            Listed(item["id"], item["created_at"], item["goal"])
            for item in (
                _shape(item, {"id": str, "created_at": str, "goal": str}, "a listing")
                for item in _items(value, "packets", "a listing")
            )
        ]
        following = value.get("next_cursor")
        if not isinstance(following, (str, type(None))) or len(listed) > limit:
            raise BadAnswer("the server's answer is not a listing")
        return Listing(listed, following or None)

    def rm(self, id: str) -> None:
        """Delete the packet ``id`` (NotFound: none the caller may delete)."""
        self._call("DELETE", f"/v1/packets/{escape(id, safe='')}", expect=(204,))

    def move(self, id: str, team: str | None) -> None:
        """Move the packet ``id`` into ``team``'s scope (None: the personal one); its pusher alone may."""
        body = json.dumps({"team": team}).encode()
        self._call("PUT", f"/v1/packets/{escape(id, safe='')}/scope", body=body, safe=True)

    # -- teams -----------------------------------------------------------------------------------

    def _team_path(self, name: str, rest: str = "") -> str:
        return f"/v1/teams/{escape(name, safe='')}{rest}"

    def create_team(self, name: str) -> Team:
        value = self._json(self._call("POST", "/v1/teams", body=json.dumps({"name": name}).encode(), expect=(201,)))
        team = _shape(value, {"team": dict}, "a team")["team"]
        made = _shape(team, {"id": str, "name": str, "owner_id": str}, "a team")
        return Team(made["id"], made["name"], made["owner_id"])

    def teams(self) -> list[Team]:
        """The teams the caller is in."""
        value = self._json(self._call("GET", "/v1/teams", safe=True))
        members = {"id": str, "name": str, "owner_id": str, "created_at": str}
        return [
            Team(t["id"], t["name"], t["owner_id"], t["created_at"])
            for t in (_shape(item, members, "a team listing") for item in _items(value, "teams", "a team listing"))
        ]

    def delete_team(self, name: str) -> None:
        """Delete a team and its packets (its owner alone may)."""
        self._call("DELETE", self._team_path(name), expect=(204,))

    def members(self, name: str) -> list[Member]:
        value = self._json(self._call("GET", self._team_path(name, "/members"), safe=True))
        wanted = {"user_id": str, "display": str, "role": str, "joined_at": str}
        return [
            Member(m["user_id"], m["display"], m["role"], m["joined_at"])
            for m in (_shape(item, wanted, "a member listing") for item in _items(value, "members", "a member listing"))
        ]

    def remove_member(self, name: str, user_id: str) -> None:
        """Remove a member from a team (its owner alone may)."""
        self._call("DELETE", self._team_path(name, f"/members/{escape(user_id, safe='')}"), expect=(204,))

    def leave(self, name: str) -> None:
        self._call("POST", self._team_path(name, "/leave"), body=b"{}", expect=(204,))

    def invite(self, name: str) -> Invite:
        """A new single-use invite into a team (any member may make one)."""
        value = self._json(self._call("POST", self._team_path(name, "/invites"), body=b"{}", expect=(201,)))
        made = _shape(value, {"code": str, "url": str, "expires_at": str}, "an invite")
        return Invite(made["code"], made["url"], made["expires_at"])

    def join(self, invite: str, *, new_identity: bool = False, display: str | None = None) -> Joined:
        """Accept an invite (its URL, or its code for this client's server).

        The token goes only to the server it is for: an invite of another server is refused
        (:class:`ForeignInvite`) unless ``new_identity``, which joins there without any token, as
        a new user whose token the answer carries (``Joined.token``). ``display`` names that user."""
        try:
            base, code = invite_parts(invite, self.server)
        except ValueError as exc:
            raise BadAnswer(str(exc)) from None
        ours = same_server(base, self.server)
        if not ours and self._token is not None and not new_identity:
            raise ForeignInvite(
                f"the invite is for {base}, and the token is for {self.server}: it is not sent to another server; "
                "join as a new identity there with new_identity=True (--new-identity)"
            )
        send_token = ours and self._token is not None and not new_identity
        body = json.dumps({"display": display} if display else {}).encode()
        data = self._call("POST", f"{_INVITE_PATH}{code}/accept", body=body, expect=(201,), token=send_token, base=base)
        value = self._json(data)
        team = _shape(_shape(value, {"team": dict}, "a join's answer")["team"], {"id": str, "name": str}, "a team")
        user = _shape(_shape(value, {"user": dict}, "a join's answer")["user"], {"id": str, "display": str}, "a user")
        token = value.get("token")
        if send_token or not isinstance(token, str) or not token:
            token = None
        if not send_token and token is None:
            raise BadAnswer("the server joined a new identity but sent no token for it")
        return Joined(base, team["name"], team["id"], user["id"], user["display"], token)
