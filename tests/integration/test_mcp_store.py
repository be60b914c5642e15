"""The MCP server's store tools, prompt and resources, through the official SDK's client
over stdio (`python -m cmp mcp --store DIR` in a subprocess, a fresh folder each test, no
mocks): an agent writes a packet with `new`, stores it with `save`, finds it with `ls`
and starts the next session from `resume`; what the store refuses, and a credential
never reaching an answer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import cmp
from tests.integration.test_mcp import ROOT, answer, refusal, session
from tests.integration.test_mcp_agent import SESSION, text_of
from tests.support.extras import require

require("mcp")  # the test extra installs it; skipped without it, failed under CI

AWS = "AKIA" + "IOSFODNN7EXAMPLE"  # AWS's documented example key, built at run time
UNSTORED = "01J9X8K2QZ7N4M0WXYZV3R8ABC"  # a ULID no test stores


def recorder(client: Any, answers: list[str]) -> Callable[[str, dict[str, Any]], Awaitable[Any]]:
    """``client.call_tool``, keeping each answer's text and structured content in ``answers``."""

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        result = await client.call_tool(name, arguments)
        answers.append(text_of(result) + json.dumps(result.structured_content))
        return result

    return call


def stored(store: Path) -> list[str]:
    """The names of the files in the store's folder."""
    return sorted(path.name for path in store.iterdir()) if store.exists() else []


def test_new_save_ls_resume_is_the_whole_loop(tmp_path: Path) -> None:
    """The issue's "done when": an agent writes, saves and resumes with this server alone."""
    store = tmp_path / "packets"

    async def steps(client: Any) -> None:
        written = await client.call_tool("new", SESSION)
        packet = written.structured_content["packet"]
        saved = await client.call_tool("save", {"packet": packet})  # new's packet as an object
        assert not saved.is_error, text_of(saved)
        assert saved.structured_content == {
            "id": packet["id"],
            "path": f"{packet['id']}.json",
            "written": True,
            "redactions": [],
        }
        assert packet["id"] in text_of(saved)
        assert cmp.loads((store / f"{packet['id']}.json").read_bytes()) == cmp.loads(written.content[0].text)

        listed = await client.call_tool("ls", {})
        assert listed.structured_content == {
            "packets": [
                {
                    "id": packet["id"],
                    "created_at": packet["created_at"],
                    "goal": SESSION["goal"],
                    "tags": SESSION["tags"],
                    "parent_id": None,
                }
            ],
            "more": 0,
            "problems": [],
        }
        assert f"{packet['id']}  {packet['created_at']}  {SESSION['goal']}" in text_of(listed)

        # The next session: resume with no id is the newest head, this packet.
        resumed = await client.call_tool("resume", {})
        block = answer(resumed)
        assert block.startswith("# Resuming from a Core Memory Packet")
        assert SESSION["goal"] in block and SESSION["next_step"] in block and packet["id"] in block
        facts = resumed.structured_content
        assert (facts["id"], facts["style"], facts["text"], facts["dropped"]) == (packet["id"], "markdown", block, [])
        assert facts["chars"] == len(block) and 0 < facts["tokens"] < len(block)

        # It goes on: a child written from show's packet, saved, is the newest head now.
        shown = await client.call_tool("show", {"id": packet["id"]})
        assert shown.structured_content == {"id": packet["id"], "packet": packet}
        assert SESSION["goal"] in shown.content[0].text and shown.content[1].text == written.content[0].text
        holds = next(line for line in shown.content[0].text.splitlines() if line.startswith("Holds: "))
        assert "(s)" not in holds and re.fullmatch(r"Holds: (\d+ [a-z ()0-9]+)(, \d+ [a-z ()0-9]+)*\.", holds)
        child = await client.call_tool(
            "new",
            {
                "goal": "Roll the GPU job out.",
                "next_step": "Deploy to staging.",
                "parent": shown.structured_content["packet"],
            },
        )
        child_id = child.structured_content["packet"]["id"]
        assert not (await client.call_tool("save", {"packet": child.content[0].text})).is_error  # as text
        latest = await client.call_tool("resume", {"style": "xml"})
        assert latest.structured_content["id"] == child_id and answer(latest).startswith("<core_memory_packet>")
        ids = [entry["id"] for entry in (await client.call_tool("ls", {})).structured_content["packets"]]
        assert ids == [child_id, packet["id"]]  # newest first
        parent = await client.call_tool("resume", {"id": packet["id"], "max_chars": 1500})
        assert parent.structured_content["chars"] <= 1500 and parent.structured_content["dropped"]

    session(steps, store=store)
    assert len(stored(store)) == 2


def test_save_is_idempotent_and_never_replaces_a_stored_packet(tmp_path: Path) -> None:
    store = tmp_path / "packets"
    packet = cmp.Packet.new(goal="Ship the store.", next_step="Tag the release.")
    text = cmp.dumps(packet).decode()
    other = cmp.dumps(packet.replace(goal="Ship something else.")).decode()  # the same id

    async def steps(client: Any) -> None:
        first = await client.call_tool("save", {"packet": text})
        again = await client.call_tool("save", {"packet": json.loads(text)})
        assert (first.structured_content["written"], again.structured_content["written"]) == (True, False)
        assert "nothing was written" in text_of(again)
        conflict = refusal(await client.call_tool("save", {"packet": other}))
        assert conflict["id"] == packet.id and "different packet" in conflict["summary"]
        bad = refusal(await client.call_tool("save", {"packet": json.dumps({**json.loads(text), "tags": ["Bad"]})}))
        assert [(e["path"], e["keyword"]) for e in bad["errors"]] == [("$.tags[0]", "pattern")]

    session(steps, store=store)
    assert stored(store) == [f"{packet.id}.json"]
    assert cmp.loads((store / f"{packet.id}.json").read_bytes()).goal == "Ship the store."


def test_a_packet_with_a_credential_is_refused_and_the_key_never_answered(tmp_path: Path) -> None:
    store = tmp_path / "packets"
    leaky = cmp.Packet.new(goal=f"Rotate {AWS} today.", next_step=f"Revoke {AWS}.", tags=["keys"])
    text = cmp.dumps(leaky).decode()
    answers: list[str] = []

    async def steps(client: Any) -> None:
        call = recorder(client, answers)
        refused = refusal(await call("save", {"packet": text}))
        assert {(hit["field"], hit["found"]) for hit in refused["redactions"]} == {
            ("goal", "AKIA…"),
            ("next_step", "AKIA…"),
        }
        assert stored(store) == []
        # Stored as it is when asked; from then on every answer shows it masked.
        kept = await call("save", {"packet": text, "allow_unredacted": True})
        assert kept.structured_content["written"] is True and len(kept.structured_content["redactions"]) == 2
        assert "[redacted:aws-key]" in (await call("ls", {})).structured_content["packets"][0]["goal"]
        shown = await call("show", {"id": leaky.id})
        assert shown.structured_content["packet"]["next_step"] == "Revoke [redacted:aws-key]."
        assert refusal(await call("resume", {"id": leaky.id}))["redactions"][0]["found"] == "AKIA…"
        block = await call("resume", {"allow_unredacted": True})
        assert "[redacted:aws-key]" in answer(block) and len(block.structured_content["replaced"]) == 2
        resource = (await client.read_resource(f"cmp://packet/{leaky.id}")).contents[0].text
        listing = (await client.list_resources()).resources
        answers.extend([resource, json.dumps([entry.model_dump(mode="json") for entry in listing])])
        assert json.loads(resource)["goal"] == "Rotate [redacted:aws-key] today."
        with pytest.raises(Exception) as prompt:
            await client.get_prompt("resume", {"id": leaky.id})
        answers.append(str(prompt.value))
        assert "redaction finding" in str(prompt.value)

    session(steps, store=store)
    assert len(answers) == 9
    assert all(AWS not in text and AWS[4:] not in text for text in answers)
    assert AWS in (store / f"{leaky.id}.json").read_text()  # the store keeps what it was given


def test_resume_and_show_refuse_in_one_sentence(tmp_path: Path) -> None:
    async def steps(client: Any) -> None:
        empty = refusal(await client.call_tool("resume", {}))
        assert empty["summary"] == "the store holds no packets yet: write one with `new` and store it with `save`"
        assert answer(await client.call_tool("ls", {})) == "The store holds no packets yet."
        missing = refusal(await client.call_tool("resume", {"id": UNSTORED}))
        assert missing["summary"] == f"no packet {UNSTORED} in the store: `ls` lists the stored packets"
        assert refusal(await client.call_tool("show", {"id": UNSTORED}))["summary"] == missing["summary"]
        for wrong in ("../../etc/passwd", AWS, UNSTORED.lower()):
            result = await client.call_tool("show", {"id": wrong})
            assert refusal(result)["summary"].startswith("that is not a stored packet's id")
            assert wrong not in text_of(result)
        packet = cmp.Packet.new(goal="Ship it.", next_step="Tag it.")
        assert not (await client.call_tool("save", {"packet": cmp.dumps(packet).decode()})).is_error
        small = refusal(await client.call_tool("resume", {"max_chars": 10}))
        assert small["summary"].startswith("max_chars is 10, and the block needs at least")
        for arguments in ({"style": "html"}, {"max_chars": 0}, {"id": 7}, {"limit": 5}):
            assert refusal(await client.call_tool("resume", arguments))["errors"][0]["code"] == "argument"

    session(steps, store=tmp_path / "packets")


def test_ls_filters_limits_and_reports_what_it_does_not_serve(tmp_path: Path) -> None:
    store = tmp_path / "packets"
    store.mkdir()
    (store / "notes.txt").write_text("not a packet\n")
    (store / f"{UNSTORED}.json").write_text('{"goal": "hand-written"}\n')

    async def steps(client: Any) -> None:
        for goal, tag in (("Fix the GPU job.", "gpu"), ("Write the docs.", "docs"), ("Tune the GPU clocks.", "gpu")):
            packet = cmp.Packet.new(goal=goal, next_step="Start.", tags=[tag])
            assert not (await client.call_tool("save", {"packet": cmp.dumps(packet).decode()})).is_error
        everything = await client.call_tool("ls", {})
        assert [entry["goal"] for entry in everything.structured_content["packets"]] == [
            "Tune the GPU clocks.",
            "Write the docs.",
            "Fix the GPU job.",
        ]
        problems = everything.structured_content["problems"]
        assert [problem["file"] for problem in problems] == [f"{UNSTORED}.json", "notes.txt"]
        assert "2 file(s) in the store's folder not served:" in text_of(everything)
        gpu = (await client.call_tool("ls", {"tag": "gpu", "limit": 1})).structured_content
        assert [entry["goal"] for entry in gpu["packets"]] == ["Tune the GPU clocks."] and gpu["more"] == 1
        docs = (await client.call_tool("ls", {"text": "DOCS"})).structured_content["packets"]
        assert [entry["goal"] for entry in docs] == ["Write the docs."]
        assert answer(await client.call_tool("ls", {"tag": "none"})).startswith("No stored packet matches.")
        for limit in (0, 201, 2.5, True):
            assert refusal(await client.call_tool("ls", {"limit": limit}))["errors"][0]["path"] == "$.limit"
        assert refusal(await client.call_tool("ls", {"limit": 0}))["summary"].endswith("from 1 to 200")

    session(steps, store=store)


def test_resume_says_when_the_store_serves_no_packet_but_holds_files(tmp_path: Path) -> None:
    store = tmp_path / "packets"
    store.mkdir()
    (store / "notes.txt").write_text("not a packet\n")

    async def steps(client: Any) -> None:
        document = refusal(await client.call_tool("resume", {}))
        assert document["summary"] == "the store serves no packets, only files it does not serve: `ls` says why"
        assert (await client.call_tool("ls", {})).structured_content["problems"][0]["file"] == "notes.txt"

    session(steps, store=store)


def test_the_resume_prompt_frames_the_block(tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    packet = cmp.Packet.new(goal="Ship the store.", next_step="Write the MCP tools.")

    async def steps(client: Any) -> None:
        with pytest.raises(MCPError, match="the store holds no packets yet"):
            await client.get_prompt("resume")
        assert not (await client.call_tool("save", {"packet": cmp.dumps(packet).decode()})).is_error
        listed = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        assert [(argument.name, argument.required) for argument in listed["resume"].arguments] == [
            ("id", False),
            ("style", False),
        ]
        for arguments, opening in (({}, "# Resuming"), ({"id": packet.id, "style": "xml"}, "<core_memory_packet>")):
            got = await client.get_prompt("resume", arguments)
            [message] = got.messages
            assert message.role == "user"
            text = message.content.text
            assert text.startswith("You are starting a work session that goes on from an earlier one.")
            assert "`new`" in text and "`save`" in text and f"`show` with id {packet.id}" in text
            block = text[text.index(opening) :]
            assert block == (await client.call_tool("resume", arguments)).content[0].text
        for arguments, said in (
            ({"style": "html"}, "style must be one of markdown, xml"),
            ({"id": UNSTORED}, f"no packet {UNSTORED} in the store"),
            ({"colour": "red"}, "unknown argument colour"),
        ):
            with pytest.raises(MCPError, match=said):
                await client.get_prompt("resume", arguments)

    session(steps, store=tmp_path / "packets")


def test_stored_packets_are_resources_listed_and_read(tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    packets = [cmp.Packet.new(goal=f"Step {n}.", next_step="Go on.") for n in (1, 2)]

    async def steps(client: Any) -> None:
        for packet in packets:
            assert not (await client.call_tool("save", {"packet": cmp.dumps(packet).decode()})).is_error
        resources = {str(entry.uri): entry for entry in (await client.list_resources()).resources}
        assert "cmp://schema/0.2/annotated" in resources  # the fixed ones stay
        stored_uris = [uri for uri in resources if uri.startswith("cmp://packet/")]
        assert stored_uris == [f"cmp://packet/{packet.id}" for packet in reversed(packets)]  # newest first
        assert resources[stored_uris[0]].mime_type == "application/json"
        assert resources[stored_uris[0]].title == "Step 2."
        for packet in packets:
            read = (await client.read_resource(f"cmp://packet/{packet.id}")).contents[0]
            assert read.mime_type == "application/json" and read.text == cmp.dumps(packet).decode()
        [template] = (await client.list_resource_templates()).resource_templates
        assert template.uri_template == "cmp://packet/{id}" and "newest 100" in template.description
        with pytest.raises(MCPError, match=f"no packet {UNSTORED} in the store"):
            await client.read_resource(f"cmp://packet/{UNSTORED}")
        with pytest.raises(MCPError) as wrong:
            await client.read_resource(f"cmp://packet/{AWS}")
        assert AWS not in str(wrong.value) and "unknown resource" in str(wrong.value)

    session(steps, store=tmp_path / "packets")


def test_the_store_tools_are_listed_with_their_hints_and_schemas(tmp_path: Path) -> None:
    async def steps(client: Any) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        hints = {
            name: (
                tools[name].annotations.read_only_hint,
                tools[name].annotations.destructive_hint,
                tools[name].annotations.idempotent_hint,
                tools[name].annotations.open_world_hint,
            )
            for name in ("save", "ls", "show", "resume")
        }
        assert hints == {
            "save": (False, False, True, False),
            "ls": (True, False, True, False),
            "show": (True, False, True, False),
            "resume": (True, False, True, False),
        }
        # Every member required, an optional one nullable (the strict subset: tests/integration/test_mcp_schemas.py).
        assert tools["save"].input_schema["required"] == ["packet", "allow_unredacted"]
        assert tools["show"].input_schema["required"] == ["id"]
        assert tools["resume"].input_schema["properties"]["style"]["anyOf"][0]["enum"] == ["markdown", "xml"]
        limit = tools["ls"].input_schema["properties"]["limit"]
        assert limit["anyOf"] == [{"type": "integer"}, {"type": "null"}] and "from 1 to 200" in limit["description"]
        for name in ("save", "ls", "show", "resume"):
            assert tools[name].output_schema["type"] == "object"

    session(steps, store=tmp_path / "packets")


def test_the_store_is_cmp_store_when_no_flag_names_one(tmp_path: Path) -> None:
    store = tmp_path / "from-the-environment"
    packet = cmp.Packet.new(goal="Ship it.", next_step="Tag it.")

    async def steps(client: Any) -> None:
        assert (await client.call_tool("save", {"packet": cmp.dumps(packet).decode()})).structured_content["written"]

    session(steps, env={"CMP_STORE": str(store)})
    assert stored(store) == [f"{packet.id}.json"]


def test_a_store_that_is_a_file_stops_the_server_before_it_serves(tmp_path: Path) -> None:
    where = tmp_path / "a-file"
    where.write_text("not a folder\n")
    done = subprocess.run(
        [sys.executable, "-m", "cmp", "mcp", "--store", str(where)],
        cwd=ROOT,
        input=b"",
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().splitlines() == [f"cmp: --store {where}: not a folder"]


def test_new_and_save_refuse_a_key_outside_the_scanned_fields_and_check_warns(tmp_path: Path) -> None:
    """The writer's rule (issue #47, A1): a key as provenance.author_human conforms, and still
    neither `new` nor `save` writes it unless asked; `check` keeps the verdict and warns, masked."""
    store = tmp_path / "packets"
    leaky = cmp.Packet.new(goal="Rotate the key.", next_step="Revoke it.", provenance=cmp.Provenance(author_human=AWS))
    text = cmp.dumps(leaky).decode()
    answers: list[str] = []

    async def steps(client: Any) -> None:
        call = recorder(client, answers)
        refused = refusal(await call("save", {"packet": text}))
        assert [(hit["field"], hit["category"], hit["found"]) for hit in refused["redactions"]] == [
            ("provenance.author_human", "aws-key", "AKIA…")
        ]
        assert stored(store) == []
        tag = "xoxb-4815162342-synthetic"  # a slack token that is a valid tag
        made = refusal(await call("new", {"goal": "Rotate the key.", "next_step": "Revoke it.", "tags": [tag]}))
        assert [(hit["field"], hit["category"]) for hit in made["redactions"]] == [("tags[0]", "slack-token")]
        checked = json.loads(answer(await call("check", {"packet": text})))
        assert checked["ok"] is True and [w["path"] for w in checked["warnings"]] == ["$.provenance.author_human"]
        kept = await call("save", {"packet": text, "allow_unredacted": True})
        assert kept.structured_content["written"] is True

    session(steps, store=store)
    assert all(AWS[4:] not in text and "4815162342-synthetic" not in text for text in answers)
    assert stored(store) == [f"{leaky.id}.json"]
