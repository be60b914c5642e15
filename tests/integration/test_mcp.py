"""The MCP server, driven by the official MCP SDK's own client over stdio (the real
protocol, in a subprocess): the tools listed, each called with a good and a bad packet,
and an agent-style session from a failing first draft to ok."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import cmp
from tests.support.extras import require
from tests.support.packets import encode, full, put

require("mcp")  # the test extra installs it; skipped without it, failed under CI

ROOT = Path(__file__).resolve().parents[2]
AWS = "AKIAIOSFODNN7EXAMPLE"
GOOD = cmp.dumps(cmp.loads(encode(full()))).decode()
LEAKY = encode(put(full(), "constraints[0]", f"The key {AWS} is old.")).decode()
TOOLS = ["check", "lint", "scrub", "format", "new", "example", "migrate", "schema", "save", "ls", "show", "resume"]
TOOLS += ["push", "pull", "teams"]  # the team server's (cmp.integrations._mcp_remote)


def session(
    steps: Callable[[Any], Awaitable[None]], *, store: Path | None = None, env: dict[str, str] | None = None
) -> None:
    """Start `python -m cmp mcp` (with ``--store`` when given, and ``env`` beside the SDK's
    default environment), connect the SDK's client over stdio, run ``steps``."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def run() -> None:
        args = ["-m", "cmp", "mcp", *(["--store", str(store)] if store is not None else [])]
        params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT), env=env)
        with open(Path("/dev/null"), "w") as quiet:  # the server logs refused calls on stderr
            async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                await steps(client)

    asyncio.run(asyncio.wait_for(run(), timeout=120))


def refusal(result: Any) -> dict[str, Any]:
    """A tool error's document: its text is exactly one JSON document (no prefix, nothing after)."""
    assert result.is_error, result
    assert len(result.content) == 1
    document: dict[str, Any] = json.loads(result.content[0].text)
    return document


def answer(result: Any) -> str:
    assert not result.is_error, result.content[0].text
    text: str = result.content[0].text
    return text


def test_the_tools_are_listed_with_the_schemas_guidance() -> None:
    async def steps(client: Any) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(listed) == TOOLS
        assert all(tool.description for tool in listed.values())
        assert "- goal (required):" in listed["new"].description
        assert set(listed["check"].input_schema["properties"]) == {"packet", "lenient", "rule_set"}

    session(steps)


def test_check_reports_a_good_packet_and_refuses_bad_ones_with_findings() -> None:
    async def steps(client: Any) -> None:
        report = json.loads(answer(await client.call_tool("check", {"packet": GOOD})))
        assert report["ok"] is True and report["errors"] == []
        cases = {
            "{not json": "json",
            " " * 40_000: "size",
            json.dumps({**full(), "ltm_version": "9.9"}): "version-unsupported",
            encode(put(full(), "tags[0]", "Bad Tag")).decode(): "schema",
        }
        for packet, code in cases.items():
            document = refusal(await client.call_tool("check", {"packet": packet}))
            assert code in {error["code"] for error in document["errors"]}
            assert all("line" in error for error in document["errors"])
        leaky = await client.call_tool("check", {"packet": LEAKY})
        document = refusal(leaky)
        assert document["redactions"][0]["found"] == "AKIA…" and AWS[4:] not in leaky.content[0].text
        lenient = json.loads(
            answer(await client.call_tool("check", {"packet": GOOD[:-2] + ',\n  "x": 1\n}', "lenient": True}))
        )
        assert lenient["accepted"] is True and lenient["conforming"] is False
        assert (await client.call_tool("check", {"packet": 7})).is_error  # not a string: the SDK refuses it
        # Still answering after every refusal.
        assert json.loads(answer(await client.call_tool("check", {"packet": GOOD})))["ok"] is True

    session(steps)


def test_every_other_tool_with_a_good_and_a_bad_packet() -> None:
    async def steps(client: Any) -> None:
        lint = json.loads(answer(await client.call_tool("lint", {"packet": GOOD})))
        assert lint["ok"] is True and isinstance(lint["lint"], list)
        assert refusal(await client.call_tool("lint", {"packet": "[]"}))["errors"][0]["code"] == "not-object"

        scrubbed = json.loads(answer(await client.call_tool("scrub", {"packet": LEAKY})))
        assert AWS not in scrubbed["packet"] and "[redacted:aws-key]" in scrubbed["packet"]
        assert cmp.check(scrubbed["packet"]).ok
        assert refusal(await client.call_tool("scrub", {"packet": "{}"}))["errors"]

        untidy = json.dumps(json.loads(GOOD))
        assert answer(await client.call_tool("format", {"packet": untidy})) == GOOD
        assert refusal(await client.call_tool("format", {"packet": LEAKY}))["redactions"]

        fresh = answer(
            await client.call_tool("new", {"goal": "Ship it.", "next_step": "Tag the release.", "tags": ["ci"]})
        )
        assert cmp.check(fresh).ok and cmp.loads(fresh).tags == ("ci",)
        child = answer(await client.call_tool("new", {"goal": "Go on.", "next_step": "Merge.", "parent": fresh}))
        assert cmp.loads(child).parent_id == cmp.loads(fresh).id
        assert refusal(await client.call_tool("new", {"goal": f"Use {AWS}.", "next_step": "x"}))["redactions"]
        assert refusal(await client.call_tool("new", {"goal": "", "next_step": "x"}))["errors"]

        for version in ("0.1", "0.2"):
            example = answer(await client.call_tool("example", {"version": version}))
            assert cmp.check(example).ok and cmp.loads(example).ltm_version == version
        assert refusal(await client.call_tool("example", {"version": "9.9"}))["summary"]

        migrated = answer(await client.call_tool("migrate", {"packet": GOOD, "to": "0.1", "drop": True}))
        assert cmp.loads(migrated).ltm_version == "0.1"
        assert refusal(await client.call_tool("migrate", {"packet": GOOD, "to": "0.1"}))["errors"]

        schema = json.loads(answer(await client.call_tool("schema", {"version": "0.2"})))
        assert schema["properties"]["goal"]["description"]
        assert refusal(await client.call_tool("schema", {"version": "9.9"}))["summary"]

    session(steps)


def test_an_agent_goes_from_a_failing_draft_to_ok() -> None:
    """What an agent does: draft, check, read the findings, fix each, check again."""

    async def steps(client: Any) -> None:
        draft = {
            "ltm_version": "0.2",
            "id": "01J9X8K2QZ7N4M0WXYZV3R8ABC",
            "created_at": "yesterday",
            "goal": "Get GPU encoding working.",
            "next_step": f"Rotate {AWS} first.",
            "tags": ["GPU Work"],
        }
        first = refusal(await client.call_tool("check", {"packet": json.dumps(draft)}))
        assert {(e["path"], e["keyword"]) for e in first["errors"]} == {
            ("$.created_at", "format"),
            ("$.tags[0]", "pattern"),
        }
        draft.update(created_at="2026-11-30T17:00:00Z", tags=["gpu-work"])
        second = refusal(await client.call_tool("check", {"packet": json.dumps(draft)}))
        assert second["errors"] == [] and second["redactions"][0]["field"] == "next_step"
        draft["next_step"] = "Rotate the old key first."
        report = json.loads(answer(await client.call_tool("check", {"packet": json.dumps(draft)})))
        assert report["ok"] is True
        canonical = answer(await client.call_tool("format", {"packet": json.dumps(draft)}))
        assert canonical == cmp.dumps(cmp.loads(json.dumps(draft))).decode()

    session(steps)
