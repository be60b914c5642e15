"""Where the framework integrations keep packets: a local store or a team server, behind one small interface.

A *scope* is a string or None. In a local store (:class:`cmp.Store`) the scope ``"x"`` holds the
packets whose ``project.name`` is ``"x"``, and None those with no project; on a team server
(:class:`cmp.Client`) ``"x"`` is the team ``x`` and None the login's personal scope. Every write
is judged by :func:`cmp.check` with ``writer=True`` first (the local store and the client both
apply that rule themselves); nothing here imports a framework.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cmp
from cmp.findings import first_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.client import Client

LISTING_PAGE = 500  # the most a team server lists at once


class RefusedPacket(ValueError):
    """A packet the writer's rule refuses: it does not conform, or a redaction pattern or a
    credential matches in one of its strings. ``report`` is :func:`cmp.check`'s, and the
    message is one line that never shows what matched."""

    def __init__(self, message: str, report: cmp.Report | None = None) -> None:
        super().__init__(message)
        self.report = report


def judged(data: bytes | str, *, allow_unredacted: bool = False) -> cmp.Packet:
    """The packet ``data`` holds, as a writer may send it; :class:`RefusedPacket` otherwise."""
    report = cmp.check(data, allow_unredacted=allow_unredacted, writer=True)
    if report.errors or report.packet is None:
        raise RefusedPacket(f"not a conforming packet: {first_of(report.errors)}", report)
    if report.blocked:
        hits = first_of([hit.line() for hit in report.redactions])
        raise RefusedPacket(f"refused by the writer's rule: {hits}; cmp.scrub replaces it", report)
    return report.packet


def scope_of(packet: cmp.Packet) -> str | None:
    """A local packet's scope: its project's name, None for a packet with none."""
    return packet.project.name or None if packet.project is not None else None


class Backing:
    """A :class:`cmp.Store` or a :class:`cmp.Client`, with the few calls the integrations make."""

    def __init__(self, target: cmp.Store | Client, *, allow_unredacted: bool = False) -> None:
        self.target = target
        self.local = isinstance(target, cmp.Store)
        self.allow_unredacted = allow_unredacted

    def save(self, packet: cmp.Packet, scope: str | None) -> None:
        """Keep ``packet`` (in ``scope`` on a server; checked first; the same packet again is no error)."""
        judged(cmp.dumps(packet), allow_unredacted=self.allow_unredacted)
        if isinstance(self.target, cmp.Store):  # a local packet's scope is its project: no place to name
            self.target.save(packet, allow_unredacted=self.allow_unredacted)
        else:
            self.target.push(packet, scope, allow_unredacted=self.allow_unredacted)

    def packets(
        self, scope: str | None, *, text: str | None = None, every: bool = False
    ) -> Iterator[tuple[str | None, cmp.Packet]]:
        """The packets of ``scope`` (``every``: of every scope, local only), newest first, each with
        its scope; ``text``: only those whose goal holds it, case aside."""
        if isinstance(self.target, cmp.Store):
            for packet in self.target.list(text=text):
                if every or scope_of(packet) == scope:
                    yield scope_of(packet), packet
            return
        wanted = None if text is None else text.casefold()
        for listed in self._listed(scope):
            if wanted is None or wanted in listed.goal.casefold():
                yield scope, self.target.pull(listed.id, allow_unredacted=self.allow_unredacted)

    def _listed(self, scope: Any) -> Iterator[Any]:
        assert not isinstance(self.target, cmp.Store)
        cursor = None
        while True:
            page = self.target.ls(scope, limit=LISTING_PAGE, cursor=cursor)
            yield from page.packets
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def get(self, id: str, scope: str | None) -> cmp.Packet | None:
        """The packet ``id`` of ``scope``, None when the scope holds no such packet."""
        if isinstance(self.target, cmp.Store):
            if not cmp.store.is_store_id(id):
                return None
            try:
                packet = self.target.get(id)
            except cmp.store.PacketNotFound:
                return None
            return packet if scope_of(packet) == scope else None
        # A pulled packet does not say its scope: the scope's listing does.
        if not any(listed.id == id for listed in self._listed(scope)):
            return None
        return self.target.pull(id, allow_unredacted=self.allow_unredacted)

    def latest(self, scope: str | None) -> cmp.Packet | None:
        """What the next session resumes from: the newest head of the scope (local), the newest packet (server)."""
        if isinstance(self.target, cmp.Store):
            return next((packet for packet in self.target.heads() if scope_of(packet) == scope), None)
        page = self.target.ls(scope, limit=1)
        return self.target.pull(page.packets[0].id, allow_unredacted=self.allow_unredacted) if page.packets else None

    def scopes(self) -> list[str | None]:
        """Every scope that holds a packet (local), or every team and the personal scope (server)."""
        if isinstance(self.target, cmp.Store):
            return sorted({scope_of(packet) for packet in self.target.list()}, key=lambda scope: scope or "")
        return [None, *(team.name for team in self.target.teams())]

    def delete(self, id: str, scope: str | None) -> None:
        """Delete on a team server; a local store never deletes (:class:`cmp.StoreError`)."""
        if isinstance(self.target, cmp.Store):
            raise cmp.StoreError("the local store never deletes a packet: remove its file by hand")
        if self.get(id, scope) is not None:
            self.target.rm(id)
