"""Chains: how a set of packets links up through ``parent_id``, and where it does not.

A v0.2 packet names the packet it continues in ``parent_id``; a set of packets is then a forest.
:func:`chain` reports the rules of :data:`RULES`: ``duplicate-id`` at ``$.id``; ``cycle`` (one per
cycle) and ``parent-missing`` (only for a ``closed`` set) at ``$.parent_id``; ``not-newer`` at
``$.created_at``; ``method-renamed`` at ``$.methods[i].name``. Otherwise a parent_id naming a packet
outside the set is no finding: a set is most often a window onto a longer history.

Every step is a loop, never a recursion, and the cycle search visits each packet once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from cmp._messages import quote
from cmp._timestamps import instant
from cmp.findings import Finding
from cmp.model import Packet

# The stable rule ids, each a Finding's keyword (code "chain"), with what each means.
RULES: dict[str, str] = {
    "duplicate-id": "another packet of the set, earlier in input order, has the same id",
    "cycle": "the packet is its own ancestor: following parent_id from it comes back to it",
    "not-newer": "created_at is not a later instant than the parent's",
    "method-renamed": "a method has the how of one of the parent's methods but another name",
    "parent-missing": "with a closed set only: parent_id names no packet of the set",
}


@dataclass(frozen=True, slots=True)
class Link:
    """What the chain keeps of one packet. ``parent``: the input position of the first packet with the
    id ``parent_id`` names (itself included), or None when it is empty or names no packet of the set."""

    id: str
    parent_id: str
    created_at: str
    parent: int | None


@dataclass(frozen=True, slots=True)
class ChainFinding:
    """One chain finding: the packet it is about (``index``, ``id``), the finding (keyword: the rule), and
    the other packet it concerns, if any (``other``: the parent, or the earlier packet with the same id)."""

    index: int
    id: str
    finding: Finding
    other: int | None = None


@dataclass(frozen=True, slots=True)
class ChainReport:
    """What :func:`chain` found in a set of packets, named by their input position: ``links``, one
    :class:`Link` per packet; ``heads``, packets whose id no packet names as its parent; ``roots``, those
    with no parent in the set (both in display order: created_at, id, input position); ``cycles``, each
    from its packet with the smallest id, each followed by its parent; ``findings``, by packet, path, rule."""

    links: tuple[Link, ...]
    findings: tuple[ChainFinding, ...]
    heads: tuple[int, ...]
    roots: tuple[int, ...]
    cycles: tuple[tuple[int, ...], ...]

    @property
    def ok(self) -> bool:
        """No findings."""
        return not self.findings

    def tree(self) -> Iterator[tuple[int, int]]:
        """``(depth, index)`` of every packet once, parents first: the roots' trees, then one per cycle grown
        from the first packet of :attr:`cycles` (its closing link left out), in display order. Iterative."""
        keys = [_display_key(link, index) for index, link in enumerate(self.links)]
        cut = {cycle[0] for cycle in self.cycles}
        children: list[list[int]] = [[] for _ in self.links]
        for index, link in enumerate(self.links):
            if link.parent is not None and index not in cut:
                children[link.parent].append(index)
        for siblings in children:
            siblings.sort(key=keys.__getitem__)
        # Following parents ends at a root or enters a cycle: every packet is below exactly one of these.
        tops = [*self.roots, *sorted(cut, key=keys.__getitem__)]
        stack = [(0, index) for index in reversed(tops)]
        while stack:
            depth, index = stack.pop()
            yield depth, index
            stack.extend((depth + 1, child) for child in reversed(children[index]))


def _display_key(link: Link, index: int) -> tuple[int, int, str, int]:
    """created_at as an instant (a text that is no valid instant last), then id, then input position."""
    moment = instant(link.created_at)
    return (0 if moment is not None else 1, moment or 0, link.id, index)


# The units a difference of instants is said in, largest first, in seconds (a year of 365.25 days).
_UNITS = (("year", 31_557_600), ("month", 2_629_800), ("day", 86_400), ("hour", 3_600), ("minute", 60))


def _duration(nanoseconds: int) -> str:
    """A difference of instants as a person says it: ``3 minutes``, ``about 6.9 years``, and
    under a minute exactly, ``0.25 seconds``."""
    for unit, size in _UNITS:
        whole, rest = divmod(nanoseconds, size * 1_000_000_000)
        if whole and not rest:
            return f"{whole:,} {unit}{'' if whole == 1 else 's'}"
        if whole:
            value = nanoseconds / (size * 1_000_000_000)
            shown = (f"{value:.1f}" if value < 10 else f"{round(value):,}").removesuffix(".0")
            return f"about {shown} {unit}{'' if shown == '1' else 's'}"
    whole, part = divmod(nanoseconds, 1_000_000_000)
    shown = f"{whole}" + (f".{part:09d}".rstrip("0") if part else "")
    return f"{shown} second{'' if shown == '1' else 's'}"


def chain(packets: Iterable[Packet], *, closed: bool = False) -> ChainReport:
    """How ``packets`` link up through ``parent_id`` (see the module docstring for the rules).

    ``closed=True`` says the set holds every packet there is (a parent_id naming none is ``parent-missing``).
    A created_at that is not a valid instant is compared with nothing. Consumes ``packets`` once. Raises
    ``TypeError`` for an item that is not a :class:`~cmp.Packet`.
    """
    ids: list[str] = []
    parent_ids: list[str] = []
    created: list[str] = []
    methods: list[tuple[tuple[str, str], ...]] = []
    for packet in packets:
        if type(packet) is not Packet:
            raise TypeError(f"chain takes Packet items, not {type(packet).__name__}")
        ids.append(packet.id)
        parent_ids.append(packet.parent_id)
        created.append(packet.created_at)
        methods.append(tuple((method.name, method.how) for method in packet.methods))
    count = len(ids)
    findings: list[ChainFinding] = []

    def add(index: int, path: str, rule: str, message: str, other: int | None = None) -> None:
        findings.append(ChainFinding(index, ids[index], Finding("chain", path, message, rule), other))

    first: dict[str, int] = {}
    for index, id_ in enumerate(ids):
        earlier = first.setdefault(id_, index)
        if earlier != index:
            add(index, "$.id", "duplicate-id", f"id {quote(id_)} is also the id of an earlier packet", earlier)

    parents: list[int | None] = [first.get(parent_id) if parent_id else None for parent_id in parent_ids]
    named = {parent_id for parent_id in parent_ids if parent_id}
    heads = [index for index in range(count) if ids[index] not in named]
    roots = [index for index in range(count) if parents[index] is None]
    if closed:
        for index in roots:
            if parent_ids[index]:
                add(index, "$.parent_id", "parent-missing", f"parent_id {quote(parent_ids[index])} names no packet")

    cycles = _cycles(parents, ids)
    for cycle in cycles:
        if len(cycle) == 1:
            message = "parent_id names the packet itself, so it is its own ancestor"
        else:
            message = f"the packet is its own ancestor: parent_id leads back to it after {len(cycle)} links"
        add(cycle[0], "$.parent_id", "cycle", message, parents[cycle[0]])

    moments = [instant(text) for text in created]
    for index, parent in enumerate(parents):
        if parent is None or parent == index:
            continue
        moment, before = moments[index], moments[parent]
        if moment is not None and before is not None and moment <= before:
            how = "the same instant" if moment == before else _duration(before - moment) + " earlier"
            message = f"created_at is not later than the parent's ({quote(ids[parent])}): {how}"
            add(index, "$.created_at", "not-newer", message, parent)
        if methods[index] and methods[parent]:
            _renamed_methods(index, parent, methods, add)

    findings.sort(key=lambda f: (f.index, f.finding.path, f.finding.keyword or ""))
    links = tuple(map(Link, ids, parent_ids, created, parents))
    keys = [_display_key(link, index) for index, link in enumerate(links)]
    return ChainReport(
        links=links,
        findings=tuple(findings),
        heads=tuple(sorted(heads, key=keys.__getitem__)),
        roots=tuple(sorted(roots, key=keys.__getitem__)),
        cycles=tuple(sorted(cycles, key=lambda cycle: ids[cycle[0]])),
    )


def _cycles(parents: list[int | None], ids: list[str]) -> list[tuple[int, ...]]:
    """Every cycle of the parent links, each from its packet with the smallest id, in one pass: a walk
    up the parents stops at the first packet visited before, a cycle if this walk visited it."""
    walk_of: list[int] = [-1] * len(parents)  # which walk first visited each packet
    found: list[tuple[int, ...]] = []
    for start in range(len(parents)):
        if walk_of[start] != -1:
            continue
        path: list[int] = []
        at: int | None = start
        while at is not None and walk_of[at] == -1:
            walk_of[at] = start
            path.append(at)
            at = parents[at]
        if at is not None and walk_of[at] == start:
            cycle = path[path.index(at) :]
            smallest = min(range(len(cycle)), key=lambda i: (ids[cycle[i]], cycle[i]))
            found.append(tuple(cycle[smallest:] + cycle[:smallest]))
    return found


def _renamed_methods(index: int, parent: int, methods: list[tuple[tuple[str, str], ...]], add: _Add) -> None:
    """``method-renamed`` for each method of ``index`` whose how the parent has only under other names."""
    names_by_how: dict[str, list[str]] = {}
    for name, how in methods[parent]:
        names_by_how.setdefault(how, []).append(name)
    for position, (name, how) in enumerate(methods[index]):
        before = names_by_how.get(how)
        if before is not None and name not in before:
            message = f"method {quote(before[0])} is renamed {quote(name)}; its how is the parent's, unchanged"
            add(index, f"$.methods[{position}].name", "method-renamed", message, parent)


class _Add(Protocol):
    """The signature of ``chain``'s ``add``: one finding about the packet at ``index``."""

    def __call__(self, index: int, path: str, rule: str, message: str, other: int | None = None) -> None: ...
