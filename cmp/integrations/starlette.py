"""Receiving packets over HTTP: a Starlette/FastAPI dependency that judges the raw body.

A typed body (``packet: cmp.Packet`` in a FastAPI route) is judged after the framework
parsed the JSON, when a duplicated member is already gone and the size limit can no
longer be told: only the bytes can say. So this dependency reads the body itself, as a
stream, at most 32,769 bytes of it (413 beyond that, the rest never read), and runs
:func:`cmp.check` on exactly those bytes::

    from fastapi import Depends, FastAPI
    from cmp.integrations.starlette import Received, install, packet_intake

    app = FastAPI()
    install(app)  # refusals as application/problem+json; validation errors without the body

    @app.post("/packets")
    async def receive(received: Received = Depends(packet_intake())):
        ...

A refused packet is answered 422 with an RFC 9457 problem document listing every finding
(code, path, keyword, message, line, column) and every redaction hit, masked as
everywhere. In lenient mode a packet whose only findings are schema findings is
accepted and flagged (``Received.conforming`` is False, its findings are in
``Received.warnings``), as the specification's clause 10 asks of a lenient reader.

Before the body is judged, the request itself is: a Content-Length that is not one
decimal number of ASCII digits, or several that disagree, is 400; with
``require_json=True`` a Content-Type other than ``application/json`` is 415 (a page on
another origin can post ``text/plain`` without a CORS preflight, never
``application/json``); a body that has not arrived within ``body_deadline`` seconds is
408. These answers, and 413, close the connection, since the rest of the body was left
unread. A client that goes away mid-body ends its request quietly: no answer (there is
no one to read it) and nothing logged.

Needs Starlette (FastAPI brings it): the ``starlette`` extra.
"""

import json
import math
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cmp import MAX_PACKET_BYTES, Finding, Packet, Report, check
from cmp.findings import first_of

try:  # the `server` extra; FastAPI brings it too (and Starlette brings anyio)
    import anyio
    from starlette.datastructures import Headers
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import Response
except ImportError as exc:  # pragma: no cover - the extra is installed where this is tested
    raise ImportError(
        "cmp.integrations.starlette needs Starlette (the starlette extra): pip install 'starlette>=0.37'"
    ) from exc

if TYPE_CHECKING:
    from cmp._toolkit import RuleSetName

PROBLEM_TYPE = "application/problem+json"
# Seconds a whole body may take to arrive. A packet is at most 32 KB: 10 s is 3.3 KB/s, a
# poor mobile link, and bounds how long a client that sends a byte now and then holds a
# connection (and a worker's attention) for nothing.
BODY_DEADLINE = 10.0
# nginx's number for a request its client closed: never sent (there is no one to send it
# to), but it is what a middleware that logs statuses sees.
CLIENT_CLOSED = 499
_ASCII_DIGITS = frozenset("0123456789")
_OWS = " \t"  # the whitespace HTTP allows around a field value and its list items


@dataclass(frozen=True, slots=True)
class Received:
    """A packet the intake accepted: the bytes as they came, and the report that judged them.

    ``packet`` is the typed packet of a conforming one. A packet lenient mode let in has
    none (it does not fit the schema): ``conforming`` is False, its schema findings are
    ``warnings``, and a lenient server stores ``body`` as it came.
    """

    body: bytes
    report: Report

    @property
    def packet(self) -> Packet | None:
        return self.report.packet

    @property
    def conforming(self) -> bool:
        return self.report.conforming

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return self.report.errors


class PacketRejected(Exception):
    """The request is not a packet the intake takes: ``status`` and the problem document.

    400 a Content-Length that is no length, 408 a body slower than the deadline, 413 a
    body over the limit, 415 not ``application/json`` (when required), 422 a packet
    refused, 499 a client that went away. ``body_unread`` says the refusal came before
    the body's end, so the answer closes the connection: a server that kept it open
    would go on reading the rest (a slow client's drip, a declared 50 MB) to reach the
    next request.
    """

    def __init__(self, status: int, problem: dict[str, Any], *, body_unread: bool = False) -> None:
        super().__init__(problem["title"])
        self.status = status
        self.problem = problem
        self.body_unread = body_unread


def _problem(status: int, title: str, detail: str, *, body_unread: bool = False, **members: Any) -> PacketRejected:
    return PacketRejected(
        status,
        {"type": "about:blank", "title": title, "status": status, "detail": detail, **members},
        body_unread=body_unread,
    )


async def read_body(
    request: Request, limit: int = MAX_PACKET_BYTES, *, deadline: float | None = BODY_DEADLINE
) -> bytes:
    """The request body, read as a stream; :class:`PacketRejected` as soon as it is clear
    the body is no packet's: 400 for a Content-Length that is not one decimal number (or
    several that disagree, or one the body does not match), 413 as soon as the body
    passes ``limit`` bytes (declared or read: the rest is never read), 408 when the whole
    body has not arrived within ``deadline`` seconds (None: no deadline, the server's or
    proxy's own), 499 when the client went away before the end.
    """
    _check_deadline(deadline)
    declared = declared_length(request.headers, limit)
    if declared is not None and declared > limit:  # said up front: nothing need be read
        raise _too_large(limit)
    body = bytearray()
    with anyio.move_on_after(math.inf if deadline is None else deadline) as waited:
        try:
            # aclosing: when the deadline cancels the stream mid-receive, it is closed here,
            # not left for the garbage collector to finalize.
            async with aclosing(request.stream()) as chunks:
                async for chunk in chunks:
                    body += chunk
                    if len(body) > limit:
                        raise _too_large(limit)
        except ClientDisconnect:
            # Not an error of ours: the server has no one to answer. Left to propagate, it
            # is a traceback in the error log per dropped connection, which anyone can cause.
            raise _problem(
                CLIENT_CLOSED,
                "Client closed the request",
                "the client went away before the body's end",
                body_unread=True,
            ) from None
    if waited.cancelled_caught:
        assert deadline is not None
        raise _problem(
            408,
            "Body too slow",
            f"the body did not arrive within {deadline:g} seconds",
            body_unread=True,
            deadline=deadline,
        )
    if declared is not None and len(body) != declared:
        raise _bad_length(f"the body has {len(body):,} bytes where its Content-Length declares {declared:,}")
    return bytes(body)


def declared_length(headers: Headers, limit: int = MAX_PACKET_BYTES) -> int | None:
    """The length the Content-Length header declares, None without one; :class:`PacketRejected`
    400 unless it is one decimal number of ASCII digits (whitespace around it aside).

    ``str.isdigit`` is no test: it takes ``²`` (a latin-1 byte, as ASGI servers decode
    headers), which ``int`` refuses. Several Content-Length fields, or a comma-separated
    list, are one length if they all say the same (RFC 9112, 6.3), 400 if not. A number
    longer than ``limit`` written out is returned as ``limit + 1``: ``int`` refuses more than
    4,300 digits, and the caller needs to know no more than that it is over.
    """
    items = [item.strip(_OWS) for field in headers.getlist("content-length") for item in field.split(",")]
    if not items:
        return None
    if not all(item and set(item) <= _ASCII_DIGITS for item in items):
        raise _bad_length("the Content-Length is not a decimal number of ASCII digits")
    numbers = {item.lstrip("0") or "0" for item in items}
    if len(numbers) > 1:
        raise _bad_length("the request has several Content-Length values that disagree")
    (number,) = numbers
    return limit + 1 if len(number) > len(str(limit)) else int(number)


def _bad_length(detail: str) -> PacketRejected:
    return _problem(400, "Bad Content-Length", detail, body_unread=True)


def _too_large(limit: int) -> PacketRejected:
    return _problem(
        413,
        "Packet too large",
        f"the body passes {limit:,} bytes, the most a packet may have",
        body_unread=True,
        limit=limit,
    )


def _check_deadline(deadline: float | None) -> None:
    if deadline is None:
        return
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or not 0 < deadline < math.inf:
        raise ValueError("the body deadline is a number of seconds above 0 (or None for none)")


def check_content_type(headers: Headers) -> None:
    """:class:`PacketRejected` 415 unless the request says its body is ``application/json``.

    The media type is compared without regard to case. A ``charset`` parameter must be
    UTF-8 (a packet is UTF-8 JSON text, and the body is read as that whatever it says);
    other parameters mean nothing to JSON and are let be. One Content-Type field, not
    several.
    """
    fields = headers.getlist("content-type")
    if not fields:
        raise _unsupported("the request has no Content-Type: send a packet as application/json")
    if len(fields) > 1:
        raise _unsupported("the request has several Content-Type fields: send one, application/json")
    media_type, *parameters = fields[0].split(";")
    if media_type.strip(_OWS).lower() != "application/json":
        raise _unsupported("the body must be sent as application/json")
    for parameter in parameters:
        name, equals, value = parameter.strip(_OWS).partition("=")
        if not name and not equals:  # an empty item: "application/json;"
            continue
        if not name or not equals:
            raise _unsupported("the Content-Type's parameters are malformed: send application/json")
        if name.strip(_OWS).lower() == "charset" and _unquoted(value.strip(_OWS)).lower() != "utf-8":
            raise _unsupported("a packet is UTF-8: send application/json with no charset or charset=utf-8")


def _unquoted(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _unsupported(detail: str) -> PacketRejected:
    return _problem(415, "Unsupported media type", detail, body_unread=True, expected="application/json")


def packet_intake(
    *,
    lenient: bool = False,
    rule_set: "RuleSetName" = "default",
    allow_unredacted: bool = False,
    require_json: bool = False,
    body_deadline: float | None = BODY_DEADLINE,
) -> Callable[[Request], Awaitable[Received]]:
    """A dependency that reads the body and judges it: a :class:`Received`, or
    :class:`PacketRejected` (422 for a packet refused; :func:`read_body` says the rest).

    ``lenient`` accepts a packet whose only findings are schema findings (flagged);
    ``rule_set="extended"`` adds the extended redaction rules; ``allow_unredacted`` lets a
    packet with redaction hits through (the whole-packet override). ``require_json``
    refuses a body not sent as ``application/json`` with 415 before reading it (see
    :func:`check_content_type`). ``body_deadline`` is the seconds the whole body may take
    (408 after; None for none).
    """
    _check_deadline(body_deadline)

    async def intake(request: Request) -> Received:
        if require_json:
            check_content_type(request.headers)
        body = await read_body(request, deadline=body_deadline)
        report = check(body, lenient=lenient, allow_unredacted=allow_unredacted, rule_set=rule_set)
        if not report.accepted:
            located = report.located()
            raise _problem(
                422,
                "Packet refused",
                _summary(located),
                conforming=located.conforming,
                errors=[finding.to_json() for finding in located.errors],
                redactions=[hit.to_json() for hit in located.redactions],
            )
        return Received(body, report)

    return intake


def _summary(report: Report) -> str:
    if report.errors:
        return first_of(report.errors, more="more findings")
    hits = len(report.redactions)
    return f"{hits} redaction finding{'s' if hits != 1 else ''}: the packet holds what must not travel"


async def problem_response(request: Request, exc: Exception) -> Response:
    """The exception handler that answers :class:`PacketRejected` with its problem document."""
    assert isinstance(exc, PacketRejected)
    body = json.dumps(exc.problem, ensure_ascii=False).encode("utf-8")
    headers = {"connection": "close"} if exc.body_unread else None
    return Response(body, status_code=exc.status, media_type=PROBLEM_TYPE, headers=headers)


async def validation_response(request: Request, exc: Exception) -> Response:
    """FastAPI's answer to a request that failed validation, without the ``input`` pydantic
    puts in each error: for a typed packet body that is the whole body, secrets and all,
    and it may not even be JSON text (a lone surrogate, NaN). Our ``cmp_packet`` errors
    carry the findings, masked, in their context."""
    from fastapi.encoders import jsonable_encoder

    errors = [{key: value for key, value in error.items() if key != "input"} for error in exc.errors()]  # type: ignore[attr-defined]
    body = json.dumps({"detail": jsonable_encoder(errors)}, ensure_ascii=False).encode("utf-8", "backslashreplace")
    return Response(body, status_code=422, media_type="application/json")


def install(app: Any) -> None:
    """Register :func:`problem_response` for :class:`PacketRejected` on a Starlette or FastAPI
    app, and on a FastAPI app :func:`validation_response` for its request validation errors."""
    app.add_exception_handler(PacketRejected, problem_response)
    try:
        from fastapi.exceptions import RequestValidationError
    except ImportError:  # Starlette alone: no typed bodies to validate
        return
    app.add_exception_handler(RequestValidationError, validation_response)


__all__ = [
    "BODY_DEADLINE",
    "PROBLEM_TYPE",
    "PacketRejected",
    "Received",
    "check_content_type",
    "declared_length",
    "install",
    "packet_intake",
    "read_body",
]
