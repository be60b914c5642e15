"""The MCP server as an agent meets it, through the official SDK's client over stdio
(`python -m cmp mcp` in a subprocess, no mocks): what is listed, a whole packet written
with `new` and got back member for member, and calls it must refuse without echoing
what they were given."""

from __future__ import annotations

import json
from typing import Any

import cmp
from tests.integration.test_mcp import TOOLS, refusal, session
from tests.support.extras import require
from tests.support.packets import encode, full

require("mcp")  # the test extra installs it; skipped without it, failed under CI

# Synthetic credentials, built at run time so no scanner takes this file for a leak.
AWS = "AKIA" + "IOSFODNN7EXAMPLE"  # AWS's documented example key
GITHUB = "ghp_" + "x" * 36

SESSION = {
    "project": {"name": "video-pipeline", "ref": "github.com/example/video-pipeline"},
    "goal": "Make the nightly encode job use the GPU encoder.",
    "success_criteria": ["The nightly job log shows the NVENC encoder for every output file."],
    "constraints": ["Keep the CPU encoder as the fallback for machines without a GPU."],
    "decisions": [
        {
            "what": "Use NVENC through the ffmpeg build shipped in the base image.",
            "why": "A custom ffmpeg build doubled the image size.",
            "consequences": "Moving to another base image means checking its ffmpeg flags again.",
            "locked": True,
        },
        {"what": "Encode at constant quality 23.", "why": "It matched the CPU output in the blind test."},
    ],
    "methods": [
        {
            "name": "check-encoder",
            "when_applicable": "Whenever the encode job's image changes.",
            "how": "Run ffmpeg -encoders and look for h264_nvenc.",
        }
    ],
    "attempts": [
        {
            "tried": "Passing the GPU into the job's container with the default runtime.",
            "outcome": "failed",
            "learned": "The job needs the NVIDIA container runtime, not the default one.",
            "confidence": "high",
        },
        {
            "tried": "Two encodes at once on one GPU.",
            "outcome": "partial",
            "learned": "The second encode falls back to the CPU when the GPU's sessions run out.",
            "confidence": "medium",
        },
    ],
    "open_questions": ["Does the staging cluster have the NVIDIA runtime installed?"],
    "next_step": "Switch the nightly job's runtime to the NVIDIA container runtime.",
    "tags": ["gpu", "encoding"],
    "provenance": {
        "author_model": "an-agent-model",
        "author_human": "Sam",
        "source_hash": cmp.source_hash("the session's transcript"),
        "confidence": "medium",
    },
}


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def test_tools_resources_and_prompts_are_listed() -> None:
    async def steps(client: Any) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(tools) == TOOLS
        for tool in tools.values():
            hints = tool.annotations
            # save and push alone write (to the store, to the team server), and never replace: not destructive.
            assert (hints.read_only_hint, hints.destructive_hint) == (tool.name not in ("save", "push"), False)
            assert (hints.idempotent_hint, hints.open_world_hint) == (True, tool.name in ("push", "pull", "teams"))
            assert all(member.get("description") for member in tool.input_schema["properties"].values())
        new = tools["new"]
        draft = cmp.draft_schema("0.2")
        assert {name: new.input_schema["properties"][name] for name in draft["properties"]} == draft["properties"]
        assert set(new.input_schema["properties"]) == {*draft["properties"], "parent", "version"}
        assert new.input_schema["additionalProperties"] is False
        assert new.input_schema["properties"]["version"]["anyOf"][0]["enum"] == list(cmp.SUPPORTED_VERSIONS)
        assert new.output_schema["required"] == ["text", "packet", "lint"]
        assert tools["check"].input_schema["properties"]["rule_set"]["anyOf"][0]["enum"] == ["default", "extended"]
        assert tools["migrate"].input_schema["properties"]["to"]["enum"] == list(cmp.SUPPORTED_VERSIONS)

        uris = [str(resource.uri) for resource in (await client.list_resources()).resources]
        for version in cmp.SUPPORTED_VERSIONS:
            assert {
                f"cmp://schema/{version}/annotated",
                f"cmp://schema/{version}/draft",
                f"cmp://example/{version}",
            } <= set(uris)
        draft_text = (await client.read_resource("cmp://schema/0.2/draft")).contents[0].text
        assert json.loads(draft_text) == draft
        example = (await client.read_resource("cmp://example/0.1")).contents[0].text
        assert cmp.check(example).ok and cmp.loads(example).ltm_version == "0.1"

        prompts = (await client.list_prompts()).prompts
        assert [prompt.name for prompt in prompts] == ["write_packet", "resume"]
        message = (await client.get_prompt("write_packet")).messages[0].content.text
        assert "`new`" in message and "- decisions:" in message and "missing-learned" in message
        assert "`save`" in message and "as `new`'s `parent`" in message  # packets form a chain
        # What the agent writes is the draft: the members the writer fills are not asked for.
        for text in (message, new.description):
            assert "- goal (required):" in text and "- next_step (required):" in text and "- tags:" in text
            assert not any(f"- {name}" in text for name in ("ltm_version", "id", "created_at", "parent_id"))

    session(steps)


def test_new_writes_the_whole_session_and_gives_it_back() -> None:
    async def steps(client: Any) -> None:
        result = await client.call_tool("new", SESSION)
        assert not result.is_error, text_of(result)
        text = result.content[0].text
        packet = cmp.loads(text)
        assert cmp.check(text).ok and packet.ltm_version == "0.2"
        written = json.loads(text)
        assert {written.pop(name) for name in ("ltm_version", "id", "created_at")} == {
            "0.2",
            packet.id,
            packet.created_at,
        }
        assert written == SESSION  # every member, nested ones included, as given
        assert result.structured_content["text"] == text
        assert result.structured_content["packet"] == json.loads(text)
        assert json.loads(result.content[1].text)["lint"] == result.structured_content["lint"] == []

        # A child, with the parent as an object; then a 0.1 packet.
        child = await client.call_tool(
            "new", {"goal": "Roll the GPU job out.", "next_step": "Deploy to staging.", "parent": json.loads(text)}
        )
        assert cmp.loads(child.content[0].text).parent_id == packet.id
        old = await client.call_tool("new", {"goal": "Ship it.", "next_step": "Tag it.", "version": "0.1"})
        assert cmp.loads(old.content[0].text).ltm_version == "0.1"

        # Lint advice comes back with the packet, with paths.
        advised = await client.call_tool(
            "new",
            {
                **SESSION,
                "attempts": [{"tried": "A rebuild.", "outcome": "failed", "learned": None, "confidence": None}],
            },
        )
        assert [(a["keyword"], a["path"]) for a in advised.structured_content["lint"]] == [
            ("missing-learned", "$.attempts[0].learned")
        ]

    session(steps)


def test_new_refuses_what_the_schema_does_not_have_and_names_each_path() -> None:
    async def steps(client: Any) -> None:
        unknown = refusal(await client.call_tool("new", {**SESSION, "summary": "Worked on the GPU."}))
        assert [e["path"] for e in unknown["errors"]] == ["$.summary"] and "summary" in unknown["summary"]

        broken = {
            **SESSION,
            "tags": ["GPU Work"],
            "attempts": [{"tried": "x", "outcome": "maybe"}],
            "decisions": [{"what": "Use NVENC.", "why": "Smaller.", "colour": "red"}],
        }
        document = refusal(await client.call_tool("new", broken))
        assert {e["path"] for e in document["errors"]} >= {
            "$.tags[0]",
            "$.attempts[0].outcome",
            "$.decisions[0].colour",
        }

        assert [e["path"] for e in refusal(await client.call_tool("new", {"goal": "x"}))["errors"]] == ["$.next_step"]
        leaky = await client.call_tool("new", {**SESSION, "next_step": f"Rotate {AWS} first."})
        assert refusal(leaky)["redactions"][0]["found"] == "AKIA…" and AWS not in text_of(leaky)

    session(steps)


def test_wrong_types_and_names_holding_secrets_are_never_echoed() -> None:
    packet_text = encode(full()).decode()

    async def steps(client: Any) -> None:
        calls = [
            ("check", {"packet": packet_text, "lenient": AWS}),
            ("check", {"packet": packet_text, "rule_set": GITHUB}),
            ("new", {"goal": "x", "next_step": "y", "tags": GITHUB}),
            ("new", {"goal": "x", "next_step": "y", "version": AWS}),
            ("new", {"goal": "x", "next_step": "y", AWS: 1}),
            ("migrate", {"packet": packet_text, "to": GITHUB}),
            ("check", {"packet": [f"tail {AWS}"]}),
            ("new", {**SESSION, "decisions": [{"what": "x", "why": "y", GITHUB: "z"}]}),
            ("new", {**SESSION, "project": {"name": "p", AWS: "q"}}),
            ("new", {**SESSION, "tags": [GITHUB]}),  # a pattern finding quotes the value
            (AWS, {}),
            (f"check {GITHUB}", {"packet": packet_text}),
        ]
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            text = text_of(result)
            document = refusal(result)
            assert AWS not in text and GITHUB not in text and AWS[4:] not in text, (name, text)
            assert document["summary"]
        unknown = refusal(await client.call_tool(AWS, {}))
        assert unknown["summary"] == "unknown tool" and "check" in unknown["tools"]
        named = refusal(await client.call_tool("check", {"packet": packet_text, AWS: True}))
        assert named["errors"][0]["path"].startswith("$.(a name not shown")

    session(steps)


def test_check_and_the_others_take_a_packet_as_an_object() -> None:
    packet = json.loads(encode(full()))

    async def steps(client: Any) -> None:
        report = json.loads(text_of(await client.call_tool("check", {"packet": packet})))
        assert report["ok"] is True
        bad = refusal(await client.call_tool("check", {"packet": {**packet, "tags": ["Bad Tag"]}}))
        assert [(e["path"], e["keyword"]) for e in bad["errors"]] == [("$.tags[0]", "pattern")]
        assert "line" not in bad["errors"][0]  # no text of the caller's to point into
        leaky = await client.call_tool("check", {"packet": {**packet, "goal": f"Use {AWS}."}})
        assert refusal(leaky)["redactions"][0]["field"] == "goal" and AWS not in text_of(leaky)
        canonical = (await client.call_tool("format", {"packet": packet})).content[0].text
        assert canonical == cmp.dumps(cmp.loads(json.dumps(packet))).decode()
        scrubbed = json.loads(text_of(await client.call_tool("scrub", {"packet": {**packet, "goal": f"Use {AWS}."}})))
        assert AWS not in scrubbed["packet"]
        assert json.loads(text_of(await client.call_tool("lint", {"packet": packet})))["ok"] is True
        migrated = await client.call_tool("migrate", {"packet": packet, "to": "0.1", "drop": True})
        assert cmp.loads(migrated.content[0].text).ltm_version == "0.1"

    session(steps)
