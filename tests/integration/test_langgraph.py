"""cmp.integrations.langgraph with the real langgraph package: a StateGraph of plain functions that
resumes at its start and writes a packet at its end, the BaseStore operations over the local store,
(issue 50, part 2; tests/client/test_langgraph_remote.py puts it over a team server). docs/langgraph.md's
examples run as shown."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
from pathlib import Path
from typing import Any, TypedDict

import pytest

import cmp
from tests.support.extras import require

require("langgraph")

from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.store.base import InvalidNamespaceError  # noqa: E402

from cmp.integrations.langgraph import PacketStore, RefusedPacket  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KEY = "AKIAIOSFODNN7EXAMPLE"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


class State(TypedDict, total=False):
    resume: str
    handoff: dict[str, Any]
    packet_id: str


def graph_of(store: PacketStore, namespace: tuple[str, ...], seen: list[str]) -> Any:
    def work(state: State) -> dict[str, Any]:
        seen.append(state["resume"])
        step = f"Step {len(seen)}: time the batched writer."
        return {
            "handoff": {"goal": "Make the nightly export finish in two hours.", "next_step": step, "tags": ["export"]}
        }

    graph = StateGraph(State)
    graph.add_node("resume", store.resume_node(namespace))
    graph.add_node("work", work)
    graph.add_node("save", store.save_node(namespace))
    graph.add_edge(START, "resume")
    graph.add_edge("resume", "work")
    graph.add_edge("work", "save")
    graph.add_edge("save", END)
    return graph.compile(store=store)


def test_a_graph_resumes_from_the_packet_its_last_run_wrote(tmp_path: Path) -> None:
    local = cmp.Store(tmp_path / "packets")
    store = PacketStore(local)
    seen: list[str] = []
    app = graph_of(store, ("nightly-export",), seen)
    first = app.invoke({})
    second = app.invoke({})
    assert seen[0] == ""  # nothing to resume from the first time
    assert "Step 1: time the batched writer." in seen[1] and seen[1].startswith("# Resuming from a Core Memory Packet")
    stored = local.get(second["packet_id"])
    assert stored.parent_id == first["packet_id"] and stored.project is not None
    assert stored.project.name == "nightly-export" and stored.next_step == "Step 2: time the batched writer."
    assert [packet.id for packet in local.heads()] == [second["packet_id"]]


def test_put_get_and_search_hold_packets(tmp_path: Path) -> None:
    store = PacketStore(cmp.Store(tmp_path / "packets"))
    old = cmp.Packet.new(goal="Cut the export's memory use.", next_step="Profile it.", tags=["export", "memory"])
    new = cmp.Packet.new(goal="Speed the export up.", next_step="Batch the writes.", tags=["export"], parent=old)
    loose = cmp.Packet.new(goal="Tidy the docs.", next_step="Read them.")
    store.put(("export",), old.id, old.to_dict())  # no project: it takes the namespace's
    store.put(("export",), new.id, new.to_dict())
    store.put(("packets",), loose.id, loose.to_dict())  # the default namespace: no project
    item = store.get(("export",), old.id)
    assert item is not None and item.key == old.id and item.namespace == ("export",)
    assert item.value == old.replace(project=cmp.Project(name="export")).to_dict()
    assert item.created_at == old.created_at_datetime == item.updated_at
    assert store.get(("packets",), old.id) is None and store.get(("export",), "no-such-id") is None
    assert [hit.key for hit in store.search(("export",))] == [new.id, old.id]  # newest first
    assert [hit.key for hit in store.search(("export",), query="MEMORY")] == [old.id]
    assert [hit.key for hit in store.search(("export",), filter={"tags": ["export", "memory"]})] == [old.id]
    assert [hit.key for hit in store.search(("export",), filter={"parent_id": old.id})] == [new.id]
    assert [hit.key for hit in store.search(("export",), limit=1, offset=1)] == [old.id]
    everything = store.search((), limit=10)
    assert {(hit.namespace, hit.key) for hit in everything} == {
        (("export",), old.id),
        (("export",), new.id),
        (("packets",), loose.id),
    }
    assert store.list_namespaces() == [("export",), ("packets",)]
    assert store.list_namespaces(prefix=("exp*",)) == [] and store.list_namespaces(suffix=("*",)) == [
        ("export",),
        ("packets",),
    ]
    assert asyncio.run(store.aget(("export",), new.id)) == store.get(("export",), new.id)
    assert [hit.key for hit in asyncio.run(store.asearch(("export",), query="speed"))] == [new.id]


def test_put_refuses_what_a_writer_must_not_write(tmp_path: Path) -> None:
    folder = tmp_path / "packets"
    store = PacketStore(cmp.Store(folder))
    packet = cmp.Packet.new(goal="Rotate the key.", next_step="Ask ops.")
    leaky_ref = packet.replace(project=cmp.Project(name="ops", ref=KEY)).to_dict()
    leaky_author = {**packet.to_dict(), "provenance": {"author_human": TOKEN}}
    for namespace, value in ((("ops",), leaky_ref), (("packets",), leaky_author)):
        with pytest.raises(RefusedPacket, match="refused by the writer's rule") as refused:
            store.put(namespace, packet.id, value)
        assert KEY not in str(refused.value) and TOKEN not in str(refused.value)
        assert refused.value.report is not None and refused.value.report.blocked
    with pytest.raises(RefusedPacket, match=r"not a conforming packet: \$.goal: missing required member 'goal'"):
        store.put(("ops",), packet.id, {k: v for k, v in packet.to_dict().items() if k != "goal"})
    with pytest.raises(RefusedPacket, match="key is its id"):
        store.put(("ops",), "01J9X8K2QZ7N4M0WXYZV3R8ABD", packet.to_dict())
    with pytest.raises(RefusedPacket, match=r"project\.name is not the namespace"):
        store.put(("other",), packet.id, packet.to_dict() | {"project": {"name": "ops"}})
    with pytest.raises(RefusedPacket, match="JSON data"):
        store.put(("ops",), packet.id, {**packet.to_dict(), "tags": {object()}})
    with pytest.raises(InvalidNamespaceError, match="one label"):
        store.put(("ops", "more"), packet.id, packet.to_dict())
    assert not folder.exists()  # nothing was written
    store.put(("packets",), packet.id, packet.to_dict())
    other = packet.replace(goal="Another goal under the same id.")
    with pytest.raises(cmp.StoreError, match="different packet"):
        store.put(("packets",), packet.id, other.to_dict())
    with pytest.raises(cmp.StoreError, match="never deletes"):
        store.delete(("packets",), packet.id)
    assert store.get(("packets",), packet.id) is not None


def test_the_save_node_refuses_a_draft_that_holds_a_credential(tmp_path: Path) -> None:
    store = PacketStore(cmp.Store(tmp_path / "packets"))
    save = store.save_node()
    with pytest.raises(RefusedPacket) as refused:
        save({"handoff": {"goal": f"Rotate {KEY} today.", "next_step": "Ask ops."}})
    assert KEY not in str(refused.value)
    with pytest.raises(cmp.PacketError, match=r"\$.next_step"):
        save({"handoff": {"goal": "Rotate the key."}})
    with pytest.raises(RefusedPacket, match="no hand-off to save"):
        save({})
    assert store.search(()) == []


def test_the_examples_of_the_page_run_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = (ROOT / "docs" / "langgraph.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```$", page, re.MULTILINE | re.DOTALL)
    assert len(blocks) == 2
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CMP_STORE", raising=False)
    printed = io.StringIO()
    scope: dict[str, Any] = {"__name__": "__docs__"}
    with contextlib.redirect_stdout(printed):
        for number, block in enumerate(blocks):
            exec(compile(block, f"docs/langgraph.md block {number + 1}", "exec", dont_inherit=True), scope)
    assert printed.getvalue().splitlines() == [
        "resuming: False",
        "resuming: True",
        "True",
        """["Cut the export's memory use."]""",
        "[('nightly-export',)]",
        "refused by the writer's rule: project.ref/aws-key: AKIA… (20 chars) at 0; cmp.scrub replaces it",
    ]
    assert len(cmp.Store(tmp_path / ".cmp" / "packets").list()) == 3
