"""The MCP tools' input schemas in the strict subset docs/drafts.md states, and `new`'s
`parent` as the prompt `write_packet` asks for it (a stored packet's id, `latest` or a
packet), through the official SDK's client over stdio (`python -m cmp mcp --store DIR`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import cmp
from tests.integration.test_mcp import answer, refusal, session
from tests.integration.test_mcp_agent import text_of
from tests.support.extras import require
from tests.support.strict_modes import nullable, violations

require("mcp")  # the test extra installs it; skipped without it, failed under CI

AWS = "AKIA" + "IOSFODNN7EXAMPLE"  # AWS's documented example key, built at run time
UNSTORED = "01J9X8K2QZ7N4M0WXYZV3R8ABC"  # a ULID no test stores


def test_every_tools_input_schema_is_in_the_strict_subset(tmp_path: Path) -> None:
    async def steps(client: Any) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {name: violations(tool.input_schema) for name, tool in tools.items()} == {name: [] for name in tools}
        new = tools["new"].input_schema
        assert {"parent", "version"} <= set(new["required"])
        assert nullable(new["properties"]["parent"]) and nullable(new["properties"]["version"])
        assert tools["save"].input_schema["properties"]["packet"]["type"] == "string"  # no type list
        assert not nullable(tools["save"].input_schema["properties"]["packet"])  # required: never null

    session(steps, store=tmp_path / "packets")


# The optional arguments of each tool: what a strict mode's model gives as null.
OPTIONAL = {
    "new": ["parent", "version", "success_criteria", "constraints", "decisions", "tags"],
    "save": ["allow_unredacted"],
    "ls": ["limit", "tag", "text"],
    "resume": ["id", "style", "max_chars", "allow_unredacted"],
    "check": ["lenient", "rule_set"],
}


def test_a_strict_client_gives_null_for_each_argument_it_leaves_out(tmp_path: Path) -> None:
    async def steps(client: Any) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name, optional in OPTIONAL.items():
            schema = tools[name].input_schema
            assert all(nullable(schema["properties"][member]) for member in optional), name

        def nulls(name: str) -> dict[str, None]:
            return dict.fromkeys(OPTIONAL[name])

        written = await client.call_tool("new", {**nulls("new"), "goal": "Ship it.", "next_step": "Tag it."})
        packet = written.structured_content["packet"]
        assert "parent_id" not in packet and packet["ltm_version"] == "0.2"  # the defaults
        assert not (await client.call_tool("save", {**nulls("save"), "packet": written.content[0].text})).is_error
        listed = await client.call_tool("ls", nulls("ls"))
        assert [entry["id"] for entry in listed.structured_content["packets"]] == [packet["id"]]
        resumed = await client.call_tool("resume", nulls("resume"))
        assert resumed.structured_content["id"] == packet["id"] and resumed.structured_content["style"] == "markdown"
        checked = await client.call_tool("check", {**nulls("check"), "packet": written.content[0].text})
        assert json.loads(answer(checked))["ok"] is True
        # A required argument is never null.
        assert refusal(await client.call_tool("show", {"id": None}))["errors"][0]["path"] == "$.id"

    session(steps, store=tmp_path / "packets")


def test_new_takes_the_parent_as_a_stored_id_latest_or_a_packet(tmp_path: Path) -> None:
    draft = {"goal": "Go on with the store.", "next_step": "Write the next tool."}

    async def steps(client: Any) -> None:
        # latest in an empty store: no parent, and the answer says so.
        first = await client.call_tool("new", {**draft, "parent": "latest"})
        assert "parent_id" not in first.structured_content["packet"]
        assert "has no parent" in first.structured_content["note"]
        assert "has no parent" in json.loads(first.content[1].text)["note"]
        root = first.structured_content["packet"]
        assert not (await client.call_tool("save", {"packet": first.content[0].text})).is_error

        by_id = await client.call_tool("new", {**draft, "parent": root["id"]})
        assert by_id.structured_content["packet"]["parent_id"] == root["id"]
        assert "note" not in by_id.structured_content
        assert not (await client.call_tool("save", {"packet": by_id.content[0].text})).is_error
        child = by_id.structured_content["packet"]
        latest = await client.call_tool("new", {**draft, "parent": "latest"})
        assert latest.structured_content["packet"]["parent_id"] == child["id"]  # the newest head
        as_text = await client.call_tool("new", {**draft, "parent": cmp.dumps(cmp.loads(json.dumps(root))).decode()})
        as_object = await client.call_tool("new", {**draft, "parent": root})
        assert as_text.structured_content["packet"]["parent_id"] == root["id"]
        assert as_object.structured_content["packet"]["parent_id"] == root["id"]

    session(steps, store=tmp_path / "packets")


def test_each_refusal_of_a_parent_names_the_argument(tmp_path: Path) -> None:
    draft = {"goal": "Go on.", "next_step": "Merge."}
    good = json.loads(cmp.dumps(cmp.Packet.new(goal="Ship it.", next_step="Tag it.")))

    async def steps(client: Any) -> None:
        missing = refusal(await client.call_tool("new", {**draft, "parent": UNSTORED}))
        assert missing["summary"] == f"parent: no packet {UNSTORED} in the store: `ls` lists the stored packets"
        assert [error["path"] for error in missing["errors"]] == ["$.parent"]
        for given, paths in (
            ("not a packet", ["$.parent"]),
            ("latest please", ["$.parent"]),
            (json.dumps({**good, "tags": ["Bad Tag"]}), ["$.parent.tags[0]"]),
            ({**good, "tags": ["Bad Tag"]}, ["$.parent.tags[0]"]),
            ([1], ["$.parent"]),
        ):
            document = refusal(await client.call_tool("new", {**draft, "parent": given}))
            assert [error["path"] for error in document["errors"]] == paths, given
            assert re.match(r"(bad arguments: )?parent", document["summary"]), document["summary"]
        leaky = await client.call_tool("new", {**draft, "parent": {**good, "goal": f"Use {AWS}."}})
        document = refusal(leaky)
        assert document["summary"].startswith("parent") and [hit["field"] for hit in document["redactions"]] == [
            "parent.goal"
        ]
        assert AWS[4:] not in text_of(leaky)

    session(steps, store=tmp_path / "packets")
