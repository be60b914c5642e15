"""The client of a team server (the ltm protocol): :class:`Client`, its errors, and the login it finds.

Needs httpx (the ``client`` extra); ``import cmp`` does not load it, ``cmp.Client`` does::

    import cmp

    with cmp.Client() as client:  # the server and token `core-memory-packet auth` stored
        packet_id = client.push(packet, team="backend")  # checked first: nothing leaves on a refusal
        same = client.pull(packet_id)

docs/client.md describes it, the command line and the MCP tools built on it.
"""

from __future__ import annotations

from cmp.client._credentials import (
    CREDENTIALS_FILE,
    CredentialsFile,
    Login,
    config_folder,
    fingerprint,
    login,
    ltm_folder,
    same_server,
    server_url,
)
from cmp.client._errors import (
    AnswerTooLarge,
    BadAnswer,
    BadRequest,
    ClientError,
    Conflict,
    ConnectionLost,
    Forbidden,
    ForeignInvite,
    Gone,
    NotConfigured,
    NotFound,
    PayloadTooLarge,
    PushRefused,
    ServerError,
    ServerRefused,
    TimedOut,
    TLSFailure,
    TransportError,
    Unauthorized,
    Unprocessable,
    Unreachable,
)

try:
    from cmp.client._http import (
        Client,
        Identity,
        Invite,
        Joined,
        Listed,
        Listing,
        Member,
        Team,
        invite_parts,
        preflight,
    )
except ImportError as exc:  # pragma: no cover - the extra is installed where this is tested
    if exc.name != "httpx":
        raise
    raise ImportError("cmp.Client needs httpx (the client extra): pip install 'httpx>=0.27'") from exc

__all__ = [
    "CREDENTIALS_FILE",
    "AnswerTooLarge",
    "BadAnswer",
    "BadRequest",
    "Client",
    "ClientError",
    "Conflict",
    "ConnectionLost",
    "CredentialsFile",
    "Forbidden",
    "ForeignInvite",
    "Gone",
    "Identity",
    "Invite",
    "Joined",
    "Listed",
    "Listing",
    "Login",
    "Member",
    "NotConfigured",
    "NotFound",
    "PayloadTooLarge",
    "PushRefused",
    "ServerError",
    "ServerRefused",
    "TLSFailure",
    "Team",
    "TimedOut",
    "TransportError",
    "Unauthorized",
    "Unprocessable",
    "Unreachable",
    "config_folder",
    "fingerprint",
    "invite_parts",
    "login",
    "ltm_folder",
    "preflight",
    "same_server",
    "server_url",
]
