"""The MCP server's tools for the team server: ``push``, ``pull`` and ``teams``, over :class:`cmp.Client`.

The server and token are the command line's (``CMP_SERVER`` and ``CMP_TOKEN``, the credentials
``auth`` kept, else the reference ltm client's): the agent never gives one and never sees one.
A refusal is one masked line: the pre-flight's (nothing was sent), or what the server or the
connection answered, as :mod:`cmp.client` words it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import cmp
from cmp._toolkit import unquoted


class RemoteRefused(Exception):
    """A call the tool could not carry out; the message is one masked line."""


@dataclass(frozen=True)
class RemoteTool:
    """A tool as cmp.integrations.mcp lists it: ``run`` answers (texts, structured content)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[Mapping[str, Any]], tuple[list[str], dict[str, Any]]]
    output_schema: dict[str, Any]
    read_only: bool = True


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _calling(work: Callable[[Any], tuple[list[str], dict[str, Any]]]) -> tuple[list[str], dict[str, Any]]:
    """``work(client)`` with the configured client; every failure one masked line."""
    from cmp.client import Client, ClientError

    try:
        with Client() as client:
            return work(client)
    except ClientError as exc:
        raise RemoteRefused(unquoted(str(exc))) from None


def _push(arguments: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    packet = arguments["packet"]
    data = json.dumps(packet, ensure_ascii=False) if isinstance(packet, dict) else packet
    team = arguments.get("team") or None
    allow = bool(arguments.get("allow_unredacted", False))
    from cmp.client import PushRefused, preflight

    try:  # before the configuration is read: a refused packet needs no server
        preflight(data, allow_unredacted=allow)
    except PushRefused as exc:
        raise RemoteRefused(unquoted(str(exc))) from None

    def work(client: Any) -> tuple[list[str], dict[str, Any]]:
        packet_id: str = client.push(data, team, allow_unredacted=allow)
        where = f"team {unquoted(team)}" if team else "your personal scope"
        return [f"pushed {packet_id} to {client.server}, {where}"], {
            "id": packet_id,
            "server": client.server,
            "team": team,
        }

    return _calling(work)


def _pull(arguments: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    def work(client: Any) -> tuple[list[str], dict[str, Any]]:
        packet: cmp.Packet = client.pull(arguments["id"])  # checked: a redaction hit is refused, masked
        return [cmp.dumps(packet).decode("utf-8")], {"id": packet.id, "packet": packet.to_dict()}

    return _calling(work)


def _teams(arguments: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    def work(client: Any) -> tuple[list[str], dict[str, Any]]:
        teams = [
            {"name": unquoted(t.name), "id": t.id, "owner_id": t.owner_id, "created_at": t.created_at}
            for t in client.teams()
        ]
        lines = "\n".join(f"{t['name']}  {t['created_at']}  owner {t['owner_id']}" for t in teams)
        return [lines or "you are in no team"], {"teams": teams}

    return _calling(work)


_CONFIGURED = (
    "The server and token are the ones the command line uses (core-memory-packet auth, or CMP_SERVER "
    "and CMP_TOKEN); no argument names them."
)


def remote_tools() -> list[RemoteTool]:
    """The tools, in the order they are listed."""
    text = {"type": "string"}
    return [
        RemoteTool(
            "push",
            "Send a packet to the team server, into a team's scope or your personal one. It is checked first "
            "as a writer checks it (the format's rules, and a credential in any string): nothing is sent when "
            f"that refuses, and the refusal says why in one line. Returns the packet's id. {_CONFIGURED}",
            _object(
                {
                    "packet": {
                        "type": ["string", "object"],
                        "description": "The packet: its JSON text, or the packet as a JSON object.",
                    },
                    "team": {"type": "string", "description": "The team's name (default: your personal scope)."},
                    "allow_unredacted": {
                        "type": "boolean",
                        "description": "Send a packet with redaction findings as it is (default false: refuse).",
                    },
                },
                ["packet"],
            ),
            _push,
            _object({"id": text, "server": text, "team": {"type": ["string", "null"]}}, ["id", "server", "team"]),
            read_only=False,
        ),
        RemoteTool(
            "pull",
            "Get a packet from the team server by its id, checked on arrival (one that does not conform or "
            f"holds a redaction finding is refused). Returns its canonical text. {_CONFIGURED}",
            _object({"id": {"type": "string", "description": "The packet's id."}}, ["id"]),
            _pull,
            _object({"id": text, "packet": {"type": "object"}}, ["id", "packet"]),
        ),
        RemoteTool(
            "teams",
            f"The teams you are in on the team server: name, id, owner, created. {_CONFIGURED}",
            _object({}, []),
            _teams,
            _object({"teams": {"type": "array", "items": {"type": "object"}}}, ["teams"]),
        ),
    ]
