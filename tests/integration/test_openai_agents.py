"""cmp.integrations.openai_agents with the real openai-agents package: Runner.run drives an Agent whose
model is the SDK's own scripted Model (no network), through a ResumeSession over the SDK's SQLiteSession;
save_handoff asks it for a draft under the strict draft schema and stores the packet (issue 50, part 3).
docs/openai-agents.md's example runs as shown."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

import cmp
from tests.support.extras import require

require("agents")

from agents import Agent, Runner, SQLiteSession, set_tracing_disabled  # noqa: E402
from agents.memory import Session  # noqa: E402
from agents.testing import ScriptedModel, assistant_message  # noqa: E402

from cmp.integrations.openai_agents import (  # noqa: E402
    HANDOFF_REQUEST,
    DraftOutput,
    RefusedPacket,
    ResumeSession,
    save_handoff,
)

ROOT = Path(__file__).resolve().parents[2]
KEY = "AKIAIOSFODNN7EXAMPLE"

set_tracing_disabled(True)  # no trace leaves the test process


def _messages(items: Any) -> list[tuple[str, str]]:
    """(role, text) of each message item the model was given."""
    found = []
    for item in items:
        content = item.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        found.append((item.get("role", ""), content))
    return found


@pytest.fixture
def earlier(tmp_path: Path) -> tuple[cmp.Store, cmp.Packet]:
    store = cmp.Store(tmp_path / "packets")
    packet = cmp.Packet.new(
        goal="Make the nightly export finish in two hours.",
        next_step="Time the batched writer on last night's snapshot.",
        tags=["export"],
    )
    store.save(packet)
    return store, packet


def test_a_run_starts_from_the_resume_block_and_its_history_keeps_it(earlier: tuple[cmp.Store, cmp.Packet]) -> None:
    store, packet = earlier
    model = ScriptedModel([[assistant_message("Timing it.")], [assistant_message("Done timing.")]])
    agent = Agent(name="worker", instructions="You do the work.", model=model)
    session = ResumeSession(SQLiteSession("conversation"), store)
    assert isinstance(session, Session) and session.session_id == "conversation"

    async def two_turns() -> list[Any]:
        await Runner.run(agent, "Go on.", session=session)
        await Runner.run(agent, "And then?", session=session)
        return await session.inner.get_items()

    stored = asyncio.run(two_turns())
    block = cmp.resume_block(packet).text
    first, second = (_messages(call.input) for call in model.calls)
    assert first[0] == ("user", block) and first[1] == ("user", "Go on.")
    assert second[0] == ("user", block) and ("user", "And then?") in second  # the next turn keeps it
    assert _messages(stored)[0] == ("user", block) and len(stored) == 5  # the block, two questions, two answers


def test_an_empty_store_starts_an_empty_conversation_and_other_calls_go_to_the_inner_session(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path / "empty")
    session = ResumeSession(SQLiteSession("s"), store)

    async def calls() -> tuple[Any, ...]:
        empty = await session.get_items()
        await session.add_items([{"role": "user", "content": "Hello."}])
        held = await session.get_items()
        popped = await session.pop_item()
        return empty, held, popped, await session.get_items()

    empty, held, popped, after = asyncio.run(calls())
    assert empty == [] and _messages(held) == [("user", "Hello.")]
    assert _messages([popped]) == [("user", "Hello.")] and after == []


def test_the_block_follows_the_latest_packet_after_a_clear(earlier: tuple[cmp.Store, cmp.Packet]) -> None:
    store, packet = earlier
    session = ResumeSession(SQLiteSession("s"), store, role="developer", max_chars=2000)
    later = cmp.Packet.new(goal="Ship the faster export.", next_step="Open the pull request.", parent=packet)

    async def calls() -> tuple[Any, Any, Any]:
        before = await session.get_items()
        await session.add_items([{"role": "user", "content": "Hi."}])
        store.save(later)
        kept = await session.get_items()
        await session.clear_session()
        return before, kept, await session.get_items()

    before, kept, cleared = asyncio.run(calls())
    assert before[0]["role"] == "developer" and "Time the batched writer" in before[0]["content"]
    assert kept[0] == before[0]  # the conversation keeps what it started from
    assert "Open the pull request." in cleared[0]["content"] and len(cleared[0]["content"]) <= 2000


def test_save_handoff_asks_for_a_strict_draft_and_stores_the_packet(earlier: tuple[cmp.Store, cmp.Packet]) -> None:
    store, packet = earlier
    draft = {**packet.to_draft(), "next_step": "Compare the two writers.", "tags": ["export", "writer"]}
    model = ScriptedModel([[assistant_message("Timing it.")], [assistant_message(json.dumps(draft))]])
    agent = Agent(name="worker", instructions="You do the work.", model=model)
    session = ResumeSession(SQLiteSession("conversation"), store)

    async def run() -> cmp.Packet:
        await Runner.run(agent, "Go on.", session=session)
        return await save_handoff(agent, store, session=session)

    saved = asyncio.run(run())
    assert store.get(saved.id) == saved and saved.parent_id == packet.id
    assert saved.next_step == "Compare the two writers." and saved.tags == ("export", "writer")
    asked = model.calls[1]
    assert isinstance(asked.output_schema, DraftOutput) and asked.output_schema.is_strict_json_schema()
    assert asked.output_schema.json_schema() == cmp.draft_schema("0.2") and asked.tools == []
    said = _messages(asked.input)
    assert said[0][1] == cmp.resume_block(packet).text and said[-1] == ("user", HANDOFF_REQUEST)
    assert len(asyncio.run(session.get_items())) == 3  # the session was read, not written


def test_save_handoff_refuses_a_draft_with_a_credential_and_keeps_nothing(
    earlier: tuple[cmp.Store, cmp.Packet],
) -> None:
    store, packet = earlier
    leaky = {**packet.to_draft(), "project": {"name": "ops", "ref": KEY}}
    broken = {**packet.to_draft(), "next_step": None}
    model = ScriptedModel([[assistant_message(json.dumps(leaky))], [assistant_message(json.dumps(broken))]])
    agent = Agent(name="worker", model=model)
    with pytest.raises(RefusedPacket, match=r"project\.ref/aws-key") as refused:
        asyncio.run(save_handoff(agent, store))
    assert KEY not in str(refused.value)
    with pytest.raises(cmp.PacketError, match=r"\$\.next_step"):
        asyncio.run(save_handoff(agent, store))
    assert store.list() == [packet]


def test_the_example_of_the_page_runs_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = (ROOT / "docs" / "openai-agents.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"^```python\n(.*?)^```$", page, re.MULTILINE | re.DOTALL)
    (shown,) = re.findall(r"^It prints:\n\n```text\n(.*?)^```$", page, re.MULTILINE | re.DOTALL)
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CMP_STORE", raising=False)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, "docs/openai-agents.md", "exec", dont_inherit=True), {"__name__": "__docs__"})
    assert printed.getvalue() == shown
    (saved,) = cmp.Store(tmp_path / ".cmp" / "packets").list()
    assert saved.next_step == "Time the batched writer on last night's snapshot."
