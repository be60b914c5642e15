"""The OpenAI Agents SDK: a session that starts from the resume block, and the hand-off a run ends with
(the ``openai-agents`` extra).

:class:`ResumeSession` wraps any session of the SDK (``SQLiteSession``, ...): when the conversation
is empty, the resume block of the latest packet comes first, and is kept as the history's first item
once the conversation starts. :func:`save_handoff` asks the agent's model for a draft, with the strict
draft schema (:func:`cmp.draft_schema`) as the output type, and keeps it as a packet continuing the
latest. Packets live in a local store (:class:`cmp.Store`) or on a team server (:class:`cmp.Client`).
docs/openai-agents.md shows both.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from agents import Agent, ModelBehaviorError, RunConfig, Runner, TResponseInputItem
from agents.agent_output import AgentOutputSchemaBase
from agents.memory import Session

import cmp
from cmp.integrations._backing import Backing, RefusedPacket

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agents.memory import SessionSettings

    from cmp.client import Client

HANDOFF_REQUEST = (
    "Write the hand-off for the next session now, as a Core Memory Packet draft: the goal, the first "
    "thing the next session does (next_step), what was decided and why, what was tried and how it went, "
    "and what is still open. Leave out anything secret: keys, tokens, passwords."
)


def _latest(backing: Backing, scope: str | None) -> cmp.Packet | None:
    """What a new conversation resumes from and a hand-off continues: in a local store with no
    project named, the store's latest head; else the scope's latest."""
    if isinstance(backing.target, cmp.Store) and scope is None:
        return backing.target.latest()
    return backing.latest(scope)


class ResumeSession:
    """A session of the SDK whose conversation starts from a packet's resume block.

    ``source`` is a packet, or a local store or a team server's client whose latest packet (in
    ``scope``: a project of the store, a team of the server) is read when the conversation is
    found empty. The block is one message of ``role`` ahead of the conversation, written to
    ``inner`` with the conversation's first items; every call goes on to ``inner``.
    """

    def __init__(
        self,
        inner: Session,
        source: cmp.Packet | cmp.Store | Client,
        *,
        scope: str | None = None,
        role: Literal["user", "developer", "system"] = "user",
        style: Literal["markdown", "xml"] = "markdown",
        max_chars: int | None = None,
    ) -> None:
        self.inner = inner
        self.session_id = inner.session_id
        # An attribute, as the SDK's protocol declares it: the inner session's settings.
        self.session_settings: SessionSettings | None = inner.session_settings
        self._source = source
        self._scope = scope
        self._role = role
        self._style: Literal["markdown", "xml"] = style
        self._max_chars = max_chars
        self._block: TResponseInputItem | None = None
        self._read = False

    def resume_item(self) -> TResponseInputItem | None:
        """The message that opens an empty conversation; None when there is no packet to resume from.
        Read once, so what a run was shown is what its history keeps."""
        if not self._read:
            if isinstance(self._source, cmp.Packet):
                packet: cmp.Packet | None = self._source
            else:
                packet = _latest(Backing(self._source), self._scope)
            if packet is not None:
                block = cmp.resume_block(packet, style=self._style, max_chars=self._max_chars)
                self._block = {"role": self._role, "content": block.text}
            self._read = True
        return self._block

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        items = await self.inner.get_items(limit)
        if items or limit == 0:
            return items
        opening = self.resume_item()
        return [] if opening is None else [opening]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if items and not await self.inner.get_items(1):
            opening = self.resume_item()
            if opening is not None:
                items = [opening, *items]
        await self.inner.add_items(items)

    async def pop_item(self) -> TResponseInputItem | None:
        return await self.inner.pop_item()

    async def clear_session(self) -> None:
        await self.inner.clear_session()
        self._block, self._read = None, False  # the next conversation starts from the latest packet then


class DraftOutput(AgentOutputSchemaBase):
    """The strict draft schema (:func:`cmp.draft_schema`) as an agent's output type; the output is
    the draft as a dict, for :meth:`cmp.Packet.from_draft`."""

    def __init__(self, version: str = "0.2") -> None:
        self.version = version
        self._schema = cmp.draft_schema(version)

    def is_plain_text(self) -> bool:
        return False

    def name(self) -> str:
        return "core_memory_packet_draft"

    def json_schema(self) -> dict[str, Any]:
        return self._schema

    def is_strict_json_schema(self) -> bool:
        return True

    def validate_json(self, json_str: str) -> dict[str, Any]:
        try:
            draft = json.loads(json_str)
        except ValueError:
            raise ModelBehaviorError("the model's draft is not JSON") from None
        if not isinstance(draft, dict):
            raise ModelBehaviorError("the model's draft is not a JSON object")
        return draft


async def save_handoff(
    agent: Agent[Any],
    target: cmp.Store | Client,
    *,
    session: Session | None = None,
    scope: str | None = None,
    request: str = HANDOFF_REQUEST,
    run_config: RunConfig | None = None,
    allow_unredacted: bool = False,
) -> cmp.Packet:
    """Ask ``agent``'s model for the hand-off of the conversation in ``session`` and keep it in
    ``target`` (a local store, or a team server in ``scope``'s team) as a packet continuing the latest.

    The model answers ``request`` with the strict draft schema as its output type, without tools or
    handoffs; the session is read, not written. Raises :class:`cmp.PacketError` for a draft that is no
    packet and :class:`RefusedPacket` for one the writer's rule refuses (nothing is kept).
    """
    backing = Backing(target, allow_unredacted=allow_unredacted)
    history = await session.get_items() if session is not None else []
    writer = agent.clone(output_type=DraftOutput(), tools=[], handoffs=[], mcp_servers=[])
    asked: list[TResponseInputItem] = [*history, {"role": "user", "content": request}]
    result = await Runner.run(writer, asked, run_config=run_config, max_turns=1)
    draft = result.final_output
    if not isinstance(draft, dict):
        raise RefusedPacket("the model wrote no draft")
    packet = cmp.Packet.from_draft(draft, parent=_latest(backing, scope))
    backing.save(packet, scope)
    return packet


__all__ = ["HANDOFF_REQUEST", "DraftOutput", "RefusedPacket", "ResumeSession", "save_handoff"]
