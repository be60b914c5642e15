"""cmp.integrations.google_adk with the real google-adk package: sessions of ADK's own session service
added to a PacketMemoryService, searched as ADK's tools search it, and docs/google-adk.md's example (a
Runner over a stand-in BaseLlm, no network) run as shown (issue 50, part 4)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import cmp
from tests.support.extras import require

if sys.version_info < (3, 11):
    pytest.skip("google-adk needs Python 3.11 or later", allow_module_level=True)
require("google.adk")

from google.adk.sessions import InMemorySessionService  # noqa: E402

from cmp.integrations.google_adk import PacketMemoryService, RefusedPacket  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KEY = "AKIAIOSFODNN7EXAMPLE"


def _draft(next_step: str, **more: Any) -> dict[str, Any]:
    return {"goal": "Make the nightly export finish in two hours.", "next_step": next_step, **more}


def _session(sessions: InMemorySessionService, user: str, state: dict[str, Any]) -> Any:
    return asyncio.run(sessions.create_session(app_name="exporter", user_id=user, state=state))


def test_a_session_s_hand_off_becomes_a_packet_the_next_search_finds(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path / "packets")
    memory = PacketMemoryService(store)
    sessions = InMemorySessionService()
    monday = _session(sessions, "ana", {"handoff": json.dumps(_draft("Time the batched writer.", tags=["export"]))})
    asyncio.run(memory.add_session_to_memory(monday))
    asyncio.run(memory.add_session_to_memory(monday))  # added again: nothing new
    (first,) = store.list()
    assert first.project == cmp.Project(name="exporter") and first.provenance is not None
    assert first.provenance.author_human == "ana" and first.tags == ("export",)
    tuesday = _session(sessions, "ana", {"handoff": _draft("Compare the two writers.")})
    asyncio.run(memory.add_session_to_memory(tuesday))
    asyncio.run(memory.add_session_to_memory(_session(sessions, "ana", {})))  # no hand-off: nothing
    asyncio.run(memory.add_session_to_memory(_session(sessions, "bo", {"handoff": _draft("Bo's own step.")})))
    bos = store.latest()  # another user's hand-off continues nothing of ana's
    assert bos is not None and bos.parent_id == "" and bos.provenance == cmp.Provenance(author_human="bo")
    assert len(store.list()) == 3
    (ana_latest,) = [p for p in store.heads() if p.provenance and p.provenance.author_human == "ana"]
    assert ana_latest.parent_id == first.id and ana_latest.next_step == "Compare the two writers."

    found = asyncio.run(memory.search_memory(app_name="exporter", user_id="ana", query="the writers EXPORT?"))
    assert [entry.id for entry in found.memories] == [ana_latest.id, first.id]
    entry = found.memories[0]
    assert entry.content.parts is not None and entry.content.parts[0].text == cmp.resume_block(ana_latest).text
    assert entry.author == "ana" and entry.timestamp == ana_latest.created_at
    assert entry.custom_metadata == {"packet": ana_latest.to_dict()}
    nothing = asyncio.run(memory.search_memory(app_name="exporter", user_id="ana", query="unrelated words"))
    other_app = asyncio.run(memory.search_memory(app_name="importer", user_id="ana", query="export"))
    assert nothing.memories == [] and other_app.memories == []
    with pytest.raises(cmp.StoreError, match="never deletes"):
        asyncio.run(memory.delete_memory(app_name="exporter", user_id="ana", memory_id=first.id))


def test_a_hand_off_the_writer_s_rule_refuses_is_not_kept(tmp_path: Path) -> None:
    store = cmp.Store(tmp_path / "packets")
    memory = PacketMemoryService(store)
    sessions = InMemorySessionService()
    leaky = _session(sessions, "ana", {"handoff": _draft(f"Rotate {KEY} first.")})
    with pytest.raises(RefusedPacket, match=r"next_step/aws-key") as refused:
        asyncio.run(memory.add_session_to_memory(leaky))
    assert KEY not in str(refused.value)
    with pytest.raises(RefusedPacket, match="not JSON"):
        asyncio.run(memory.add_session_to_memory(_session(sessions, "ana", {"handoff": "{not json"})))
    with pytest.raises(cmp.PacketError, match=r"\$\.next_step"):
        asyncio.run(memory.add_session_to_memory(_session(sessions, "ana", {"handoff": {"goal": "No step."}})))
    assert store.list() == []


def test_the_example_of_the_page_runs_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = (ROOT / "docs" / "google-adk.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"^```python\n(.*?)^```$", page, re.MULTILINE | re.DOTALL)
    (shown,) = re.findall(r"^It prints:\n\n```text\n(.*?)^```$", page, re.MULTILINE | re.DOTALL)
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CMP_STORE", raising=False)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, "docs/google-adk.md", "exec", dont_inherit=True), {"__name__": "__docs__"})
    assert printed.getvalue() == shown
    (saved,) = cmp.Store(tmp_path / ".cmp" / "packets").list()
    assert saved.project == cmp.Project(name="nightly-export")
