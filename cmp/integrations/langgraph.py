"""Packets as a LangGraph long-term store, and the two graph nodes that resume and save (the ``langgraph`` extra).

:class:`PacketStore` is a LangGraph ``BaseStore`` over a local store (:class:`cmp.Store`) or a team
server (:class:`cmp.Client`). A namespace has one label: the project (local) or the team (server);
``default_namespace`` holds the packets with no project (local) or the personal scope (server). The
key is the packet's id and the value the packet as JSON data. Packets are never changed: a put of
another packet under a stored id is refused, and only a team server deletes. docs/langgraph.md
shows it in a graph.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

import cmp
from cmp.integrations._backing import Backing, RefusedPacket, judged

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.client import Client

DEFAULT_NAMESPACE = ("packets",)


class Node:
    """A graph node: called with the graph's state (read as a mapping), it returns the state's update.

    A class rather than a function type, so that a type checker takes it for a node of any graph."""

    __slots__ = ("_step",)

    def __init__(self, step: Callable[[Mapping[str, Any]], dict[str, Any]]) -> None:
        self._step = step

    def __call__(self, state: Any) -> dict[str, Any]:
        return self._step(state)


class PacketStore(BaseStore):
    """A LangGraph store whose items are packets, kept in ``backing`` (a local store or a team server).

    ``put`` judges the value as a writer must (:func:`cmp.check` with ``writer=True``) and raises
    :class:`RefusedPacket` for a packet that does not conform or holds a credential (unless
    ``allow_unredacted``); ``get`` and ``search`` return packets as items; ``search`` takes a
    ``query`` (text the goal holds, case aside) and a ``filter`` (``tags``: a tag or a list of tags
    all held; any other member: equal to it).
    """

    __slots__ = ("_backing", "default_namespace")

    def __init__(
        self,
        backing: cmp.Store | Client,
        *,
        default_namespace: tuple[str, ...] = DEFAULT_NAMESPACE,
        allow_unredacted: bool = False,
    ) -> None:
        if len(default_namespace) != 1:
            raise InvalidNamespaceError("the default namespace has one label")
        self._backing = Backing(backing, allow_unredacted=allow_unredacted)
        self.default_namespace = tuple(default_namespace)

    def __repr__(self) -> str:
        return f"PacketStore({self._backing.target!r})"

    # -- namespaces and scopes -------------------------------------------------------------------

    def _scope(self, namespace: tuple[str, ...]) -> str | None:
        if len(namespace) != 1 or not isinstance(namespace[0], str) or not namespace[0]:
            raise InvalidNamespaceError(
                f"a packet namespace has one label (a project, or a team on a server), not {len(namespace)}"
            )
        return None if tuple(namespace) == self.default_namespace else namespace[0]

    def _namespace(self, scope: str | None) -> tuple[str, ...]:
        return self.default_namespace if scope is None else (scope,)

    @staticmethod
    def _item(namespace: tuple[str, ...], packet: cmp.Packet) -> SearchItem:
        made = packet.created_at_datetime
        return SearchItem(namespace, packet.id, packet.to_dict(), made, made)

    # -- the operations --------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # The local store and the client are synchronous: a worker thread keeps the event loop free.
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            packet = self._backing.get(op.key, self._scope(op.namespace))
            return None if packet is None else self._item(op.namespace, packet)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"not a store operation: {type(op).__name__}")

    def _put(self, op: PutOp) -> None:
        scope = self._scope(op.namespace)
        if op.value is None:
            self._backing.delete(op.key, scope)
            return
        try:
            data = json.dumps(dict(op.value), ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            raise RefusedPacket("a packet's value is JSON data: a mapping of JSON values") from None
        packet = judged(data, allow_unredacted=self._backing.allow_unredacted)
        if packet.id != op.key:
            raise RefusedPacket("a packet's key is its id: the value's id is another")
        if self._backing.local and scope is not None:
            # The namespace is the project: a packet without one takes the namespace's name.
            if packet.project is None:
                packet = packet.replace(project=cmp.Project(name=scope))
            elif packet.project.name != scope:
                raise RefusedPacket("the packet's project.name is not the namespace's label")
        elif self._backing.local and packet.project is not None and packet.project.name:
            raise RefusedPacket("a packet with a project goes under its project's namespace, not the default one")
        self._backing.save(packet, scope)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.namespace_prefix:
            scopes: list[str | None] = [self._scope(op.namespace_prefix)]
        else:  # every scope: the local store lists them all at once, a server one at a time
            scopes = [None] if self._backing.local else self._backing.scopes()
        every = self._backing.local and not op.namespace_prefix
        found: list[SearchItem] = []
        wanted = op.offset + op.limit
        for scope in scopes:
            for own, packet in self._backing.packets(scope, text=op.query, every=every):
                if _matches(packet, op.filter):
                    found.append(self._item(self._namespace(own), packet))
                if len(found) >= wanted and len(scopes) == 1:
                    break
        found.sort(key=lambda item: (item.created_at, item.key), reverse=True)
        return found[op.offset : wanted]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        names = sorted({self._namespace(scope) for scope in self._backing.scopes()})
        chosen = [name for name in names if all(_namespace_matches(name, c) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            chosen = sorted({name[: op.max_depth] for name in chosen})
        return chosen[op.offset : op.offset + op.limit]

    # -- the graph's first and last nodes --------------------------------------------------------

    def resume_node(
        self,
        namespace: tuple[str, ...] | None = None,
        *,
        state_key: str = "resume",
        style: Literal["markdown", "xml"] = "markdown",
        max_chars: int | None = None,
    ) -> Node:
        """A node that puts the resume block of the namespace's latest packet (text) into
        ``state_key`` (``""`` when it holds none): a graph's first node."""
        scope = self._scope(namespace or self.default_namespace)

        def resume(state: Mapping[str, Any]) -> dict[str, Any]:
            packet = self._backing.latest(scope)
            if packet is None:
                return {state_key: ""}
            block = cmp.resume_block(packet, style=style, max_chars=max_chars)
            return {state_key: block.text}

        return Node(resume)

    def save_node(
        self,
        namespace: tuple[str, ...] | None = None,
        *,
        state_key: str = "handoff",
        id_key: str = "packet_id",
    ) -> Node:
        """A node that writes the draft in ``state_key`` (a mapping of the draft schema,
        :func:`cmp.draft_schema`) as a packet continuing the namespace's latest, and puts its id
        into ``id_key``: a graph's last node. :class:`cmp.PacketError` for a draft that is no
        packet, :class:`RefusedPacket` for one the writer's rule refuses."""
        chosen = namespace or self.default_namespace
        scope = self._scope(chosen)

        def save(state: Mapping[str, Any]) -> dict[str, Any]:
            draft = state.get(state_key)
            if not isinstance(draft, Mapping):
                raise RefusedPacket(f"no hand-off to save: the state's {state_key!r} is no draft (a mapping)")
            draft = dict(draft)
            if self._backing.local and scope is not None and not draft.get("project"):
                draft["project"] = {"name": scope, "ref": None}
            packet = cmp.Packet.from_draft(draft, parent=self._backing.latest(scope))
            self.put(chosen, packet.id, packet.to_dict())
            return {id_key: packet.id}

        return Node(save)


def _matches(packet: cmp.Packet, wanted: Mapping[str, Any] | None) -> bool:
    if not wanted:
        return True
    value = packet.to_dict()
    for name, expected in wanted.items():
        if name == "tags":
            tags = [expected] if isinstance(expected, str) else list(expected)
            if not set(tags) <= set(packet.tags):
                return False
        elif value.get(name) != expected:
            return False
    return True


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(want in ("*", have) for want, have in zip(path, part, strict=True))


__all__ = ["DEFAULT_NAMESPACE", "Node", "PacketStore", "RefusedPacket"]
