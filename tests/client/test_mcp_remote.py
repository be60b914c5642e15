"""The MCP tools push, pull and teams through the official SDK's client over stdio, against our
own team server on 127.0.0.1: the login is the command line's, never an argument or an answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cmp
from cmp.client import Client
from tests.client.conftest import config_env, new_user
from tests.server.conftest import Running
from tests.support.extras import require

require("mcp")
from tests.integration.test_mcp import refusal, session  # noqa: E402

AWS = "AKIA" + "IOSFODNN7EXAMPLE"


def pushes_logged(server: Running) -> int:
    """How many pushes the server has logged (its access log: one line a request)."""
    return server.log.read_text(errors="replace").count("POST /v1/packets ")


def test_push_pull_and_teams_through_the_sdk_client(team_server: Running, tmp_path: Path) -> None:
    token = new_user(team_server)
    with Client(team_server.base, token) as client:
        team = client.create_team(f"mcp-{token[:8].lower()}").name
    packet = cmp.Packet.new(goal="Hand the work over.", next_step="Pull it on the other side.")
    leaky = cmp.Packet.new(goal=f"Rotate {AWS} first.", next_step="Run the tests.")
    answers: list[str] = []

    async def steps(client: Any) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"push", "pull", "teams"} <= set(tools)
        assert not {"token", "server"} & set(tools["push"].input_schema["properties"])

        pushed = await client.call_tool("push", {"packet": packet.to_dict(), "team": team})
        assert not pushed.is_error, pushed.content[0].text
        assert pushed.structured_content == {"id": packet.id, "server": team_server.base, "team": team}

        before = pushes_logged(team_server)
        refused = await client.call_tool("push", {"packet": cmp.dumps(leaky).decode()})
        document = refusal(refused)
        assert document["summary"].startswith("not sent: goal/aws-key: AKIA… (20 chars)")
        assert "\n" not in document["summary"] and AWS not in refused.content[0].text
        assert pushes_logged(team_server) == before  # the server never heard of it

        pulled = await client.call_tool("pull", {"id": packet.id})
        assert pulled.content[0].text == cmp.dumps(packet).decode()
        assert pulled.structured_content == {"id": packet.id, "packet": packet.to_dict()}
        missing = refusal(await client.call_tool("pull", {"id": "01JDEMO0000000000000000999"}))
        assert missing["summary"] == "server returned 404: not found"

        listed = await client.call_tool("teams", {})
        assert [t["name"] for t in listed.structured_content["teams"]] == [team]
        for result in (pushed, refused, pulled, listed):
            answers.extend(block.text for block in result.content)

    session(steps, env=config_env(tmp_path, CMP_SERVER=team_server.base, CMP_TOKEN=token))
    assert answers and not any(token in text for text in answers)
    json.dumps(answers)  # plain text blocks, nothing else


def test_without_a_login_the_tools_say_so_in_one_line(tmp_path: Path) -> None:
    async def steps(client: Any) -> None:
        for name, arguments in (("teams", {}), ("pull", {"id": "01JDEMO0000000000000000999"})):
            document = refusal(await client.call_tool(name, arguments))
            assert document["summary"].startswith("no server configured: run `core-memory-packet auth URL`")

    session(steps, env=config_env(tmp_path))
