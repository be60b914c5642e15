"""Google's Agent Development Kit: a memory service whose entries are packets (the ``google-adk`` extra).

:class:`PacketMemoryService` is an ADK ``BaseMemoryService`` over a local store (:class:`cmp.Store`)
or a team server (:class:`cmp.Client`). The app is the packet's scope (its project in a local store,
a team on a server), the user its ``provenance.author_human``. A session's hand-off is the draft
an agent left in the session's state (``output_schema=cmp.draft_schema()`` with ``output_key``); a
search answers each matching packet as its resume block. docs/google-adk.md shows it in a run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions import Session
from google.genai import types

import cmp
from cmp.integrations._backing import Backing, RefusedPacket

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.client import Client

DRAFT_KEY = "handoff"
MAX_RESULTS = 10
_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {word.casefold() for word in _WORD.findall(text)}


class PacketMemoryService(BaseMemoryService):
    """ADK memory kept as packets in ``backing``.

    ``add_session_to_memory`` keeps the draft in the session's ``state[draft_key]`` (a mapping, or
    its JSON text) as a packet continuing the app's latest, written by the session's user; a session
    added again with the same draft adds nothing. ``search_memory`` answers the user's packets of the
    app that share a word with the query (its goal, next step and tags), newest first, at most ten,
    each entry's text the packet's resume block and its ``custom_metadata["packet"]`` the packet.
    """

    def __init__(
        self, backing: cmp.Store | Client, *, draft_key: str = DRAFT_KEY, allow_unredacted: bool = False
    ) -> None:
        self._backing = Backing(backing, allow_unredacted=allow_unredacted)
        self.draft_key = draft_key

    def _users(self, app_name: str, user_id: str) -> list[cmp.Packet]:
        return [
            packet
            for _, packet in self._backing.packets(app_name)
            if packet.provenance is not None and packet.provenance.author_human == user_id
        ]

    async def add_session_to_memory(self, session: Session) -> None:
        """Keep the session's hand-off; :class:`cmp.PacketError` for a draft that is no packet,
        :class:`RefusedPacket` for one the writer's rule refuses (nothing is kept)."""
        draft = session.state.get(self.draft_key)
        if draft is None:
            return  # no hand-off written yet: a session is added many times in its life
        if isinstance(draft, str):
            try:
                draft = json.loads(draft)
            except ValueError:
                raise RefusedPacket(f"the session's {self.draft_key!r} is not a draft: not JSON") from None
        if not isinstance(draft, Mapping):
            raise RefusedPacket(f"the session's {self.draft_key!r} is not a draft: not a JSON object")
        draft = dict(draft)
        if self._backing.local and not draft.get("project"):
            draft["project"] = {"name": session.app_name, "ref": None}
        draft["provenance"] = {**(draft.get("provenance") or {}), "author_human": session.user_id}
        mine = self._users(session.app_name, session.user_id)
        latest = mine[0] if mine else None
        packet = cmp.Packet.from_draft(draft, parent=latest)
        if latest is not None and latest.to_draft() == packet.to_draft():
            return  # this hand-off is kept already
        self._backing.save(packet, session.app_name)

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        wanted = _words(query)
        found = []
        for packet in self._users(app_name, user_id):
            if wanted & _words(" ".join((packet.goal, packet.next_step, *packet.tags))):
                found.append(self._entry(packet))
            if len(found) == MAX_RESULTS:
                break
        return SearchMemoryResponse(memories=found)

    @staticmethod
    def _entry(packet: cmp.Packet) -> MemoryEntry:
        block = cmp.resume_block(packet).text
        return MemoryEntry(
            id=packet.id,
            content=types.Content(role="user", parts=[types.Part(text=block)]),
            author=packet.provenance.author_human if packet.provenance is not None else None,
            timestamp=packet.created_at,
            custom_metadata={"packet": packet.to_dict()},
        )

    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: str | None = None) -> None:
        """Delete a packet on a team server; a local store never deletes (:class:`cmp.StoreError`)."""
        if self._backing.local:
            raise cmp.StoreError("the local store never deletes a packet: remove its file by hand")
        if memory_id is not None and any(packet.id == memory_id for packet in self._users(app_name, user_id)):
            self._backing.delete(memory_id, app_name)


__all__ = ["DRAFT_KEY", "PacketMemoryService", "RefusedPacket"]
