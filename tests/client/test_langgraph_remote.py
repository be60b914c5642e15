"""cmp.integrations.langgraph over our team server on 127.0.0.1 (the session's server of this folder):
the graph of tests/integration/test_langgraph.py resumes and hands off through cmp.Client, and the
store's get, search, list_namespaces and delete follow the server's scopes (issue 50, part 2)."""

from __future__ import annotations

import pytest

import cmp
from tests.client.conftest import new_user
from tests.server.conftest import Running
from tests.support.extras import require

require("langgraph")

from cmp.integrations.langgraph import PacketStore, RefusedPacket  # noqa: E402
from tests.integration.test_langgraph import TOKEN, graph_of  # noqa: E402


def test_a_team_server_backs_the_store_and_the_graph(team_server: Running) -> None:
    with cmp.Client(team_server.base, new_user(team_server, "graph"), retries=0) as client:
        client.create_team("graph-team")
        store = PacketStore(client)
        seen: list[str] = []
        app = graph_of(store, ("graph-team",), seen)
        first = app.invoke({})
        second = app.invoke({})
        assert "Step 1: time the batched writer." in seen[1]
        assert client.pull(second["packet_id"]).parent_id == first["packet_id"]
        assert [listed.id for listed in client.ls("graph-team").packets] == [second["packet_id"], first["packet_id"]]
        personal = cmp.Packet.new(goal="Mine alone.", next_step="Keep it.", tags=["solo"])
        store.put(("packets",), personal.id, personal.to_dict())
        assert store.get(("graph-team",), personal.id) is None  # another scope's packet
        assert store.get(("packets",), personal.id).value == personal.to_dict()  # type: ignore[union-attr]
        assert [hit.key for hit in store.search(("packets",), filter={"tags": "solo"})] == [personal.id]
        assert [hit.key for hit in store.search(("graph-team",), query="NIGHTLY", limit=1)] == [second["packet_id"]]
        assert {hit.namespace for hit in store.search(())} == {("packets",), ("graph-team",)}
        assert store.list_namespaces() == [("graph-team",), ("packets",)]
        leaky = personal.replace(id="01J9X8K2QZ7N4M0WXYZV3R8ABD", project=cmp.Project(name="x", ref=TOKEN))
        with pytest.raises(RefusedPacket):
            store.put(("packets",), leaky.id, leaky.to_dict())
        assert len(client.ls().packets) == 1  # the refused packet was never sent
        store.delete(("packets",), personal.id)
        assert store.get(("packets",), personal.id) is None and client.ls().packets == []
