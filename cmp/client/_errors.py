"""What a call to a team server can end in: one exception class per outcome, each one line.

The server's own words are foreign text: they are shown on one line, cut short, and withheld
whole when a redaction pattern matches in them (:func:`shown_text`), so a message never
carries a credential a server (or something posing as one) put there.
"""

from __future__ import annotations

from cmp._toolkit import one_line, unquoted, visible

TYPE_CHECKING = False
if TYPE_CHECKING:
    import cmp

# The most of a server's message an error shows.
SHOWN_LIMIT = 200


def shown_text(text: str, secret: str | None = None) -> str:
    """A server's ``text`` as a message may show it: one line of at most SHOWN_LIMIT characters,
    the client's own token never in it, and nothing at all when a redaction pattern matches."""
    if secret:
        text = text.replace(secret, "(the token)")
    return visible(unquoted(one_line(text, SHOWN_LIMIT)))


class ClientError(Exception):
    """A call to the server failed; ``str()`` says what happened on one line. ``status`` is the
    HTTP status of an answer that came (None when none did)."""

    status: int | None = None

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status


class NotConfigured(ClientError):
    """No server (or no token) is set: nothing was sent."""


class PushRefused(ClientError):
    """The pre-flight refused the packet (not conforming, or a redaction hit or a credential in
    any of its strings): nothing was sent. ``report`` is :func:`cmp.check`'s, writer side."""

    def __init__(self, message: str, report: cmp.Report) -> None:
        super().__init__(message)
        self.report = report


class ForeignInvite(ClientError):
    """An invite for another server than the one the token was issued by: the token is not sent
    there. Joining it as a new identity is an explicit choice (``new_identity=True``)."""


class TransportError(ClientError):
    """No usable answer came: the connection failed, broke, or took too long."""


class Unreachable(TransportError):
    """The connection was refused, or the name did not resolve: nothing was sent."""


class ConnectionLost(TransportError):
    """The connection closed before a whole answer came."""


class TimedOut(TransportError):
    """The server took longer than the call's timeout."""


class TLSFailure(TransportError):
    """The TLS handshake failed (a certificate not trusted, or no TLS on the other side)."""


class BadAnswer(ClientError):
    """An answer that is not what the protocol says: not JSON, the wrong shape, a packet that does
    not conform, or larger than any answer can be (:class:`AnswerTooLarge`)."""


class AnswerTooLarge(BadAnswer):
    """An answer larger than the bound for its kind: read no further."""


class ServerRefused(ClientError):
    """The server answered with an error status; ``server_message`` is its message as shown."""

    def __init__(self, message: str, status: int, server_message: str) -> None:
        super().__init__(message, status)
        self.server_message = server_message


class BadRequest(ServerRefused):
    status = 400


class Unauthorized(ServerRefused):
    status = 401


class Forbidden(ServerRefused):
    status = 403


class NotFound(ServerRefused):
    status = 404


class Conflict(ServerRefused):
    status = 409


class Gone(ServerRefused):
    status = 410


class PayloadTooLarge(ServerRefused):
    status = 413


class Unprocessable(ServerRefused):
    status = 422


class ServerError(ServerRefused):
    """A 5xx: the server failed (the request may be worth repeating later)."""


BY_STATUS: dict[int, type[ServerRefused]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    413: PayloadTooLarge,
    422: Unprocessable,
}
