"""cmp.chain: how a set of packets links up through parent_id; and created_at as an exact instant."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp import _timestamps as timestamps
from cmp._chain import RULES
from tests.support.examples import examples

T0 = "2026-01-01T10:00:00Z"
T1 = "2026-01-01T11:00:00Z"
T2 = "2026-01-01T12:00:00Z"
T3 = "2026-01-01T13:00:00Z"


def pid(name: str) -> str:
    """A packet id of the allowed length (10 to 64) from a short name."""
    return f"packet-{name}".ljust(10, "0")


def packet(
    name: str,
    parent: str = "",
    at: str = T0,
    methods: Sequence[tuple[str, str]] = (),
    version: str = "0.2",
) -> cmp.Packet:
    return cmp.Packet(
        ltm_version=version,
        id=pid(name),
        parent_id=pid(parent) if parent else "",
        created_at=at,
        goal="Keep the chain in order.",
        next_step="Write the next packet.",
        methods=[cmp.Method(name=n, when_applicable="When it applies.", how=how) for n, how in methods],
    )


def found(report: cmp.ChainReport) -> set[tuple[int, str, str | None, int | None]]:
    return {(f.index, f.finding.path, f.finding.keyword, f.other) for f in report.findings}


# ---------------------------------------------------------------------------
# created_at as an exact instant


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("2026-01-01T10:00:00Z", "2026-01-01T10:00:00.000000001Z"),
        ("2026-01-01T10:00:00.1234561Z", "2026-01-01T10:00:00.1234562Z"),  # one microsecond to a datetime
        ("2026-01-01T10:00:00+02:00", "2026-01-01T09:00:00Z"),  # the smaller text is the later instant
        ("2026-01-01T23:30:00-01:00", "2026-01-02T00:31:00Z"),  # across midnight and a date
        ("0000-01-01T00:00:00Z", "0000-03-01T00:00:00+23:59"),  # year 0, a leap year
        ("2024-02-28T23:59:59.999999999Z", "2024-02-29T00:00:00Z"),
        ("9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59.999999999-23:59"),
    ],
)
def test_instants_order_exactly(earlier: str, later: str) -> None:
    first, second = timestamps.instant(earlier), timestamps.instant(later)
    assert first is not None and second is not None and first < second


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("2026-01-01T12:00:00.5+02:00", "2026-01-01T10:00:00.500000000Z"),
        ("2026-01-01T10:00:00+00:00", "2026-01-01T10:00:00-00:00"),
        ("2026-01-01T00:30:00+00:30", "2026-01-01T00:00:00Z"),
        ("2026-01-01T00:00:00-05:00", "2026-01-01T05:00:00.000000000Z"),
    ],
)
def test_equal_instants(one: str, other: str) -> None:
    assert timestamps.instant(one) == timestamps.instant(other) is not None


@pytest.mark.parametrize("text", ["2026-01-01T10:00:00", "2026-02-30T10:00:00Z", "2026-01-01T10:00:00.1234567891Z", ""])
def test_no_instant_for_an_invalid_created_at(text: str) -> None:
    assert timestamps.instant(text) is None


@settings(max_examples=examples(300))
@given(
    st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
    st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59),
    st.integers(min_value=0, max_value=999),
)
def test_instants_agree_with_datetime(moment: dt.datetime, offset_minutes: int, nanos: int) -> None:
    """Down to the microsecond a datetime agrees; the nanoseconds are added on top."""
    zone = dt.timezone(dt.timedelta(minutes=offset_minutes))
    local = moment.replace(tzinfo=zone)
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    text = f"{local.year:04d}-{local:%m-%dT%H:%M:%S}.{local.microsecond:06d}{nanos:03d}{sign}{hours:02d}:{minutes:02d}"
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    assert timestamps.instant(text) == (local - epoch) // dt.timedelta(microseconds=1) * 1000 + nanos


# ---------------------------------------------------------------------------
# The rules, one table each: hits and near misses.

RULE_CASES: list[tuple[str, list[Any], set[tuple[int, str, str | None, int | None]]]] = [
    # each packet newer than its parent
    ("a chain in order", [("one", "", T0), ("two", "one", T1), ("three", "two", T2)], set()),
    ("equal created_at", [("one", "", T1), ("two", "one", T1)], {(1, "$.created_at", "not-newer", 0)}),
    (
        "the same instant in two offsets",
        [("one", "", "2026-01-01T12:00:00+02:00"), ("two", "one", "2026-01-01T10:00:00.000Z")],
        {(1, "$.created_at", "not-newer", 0)},
    ),
    (
        "an offset makes the apparently older text newer",
        [("one", "", "2026-01-01T10:00:00+02:00"), ("two", "one", "2026-01-01T09:00:00Z")],
        set(),
    ),
    (
        "an offset makes the apparently newer text older",
        [("one", "", "2026-01-01T10:00:00Z"), ("two", "one", "2026-01-01T11:00:00+02:00")],
        {(1, "$.created_at", "not-newer", 0)},
    ),
    (
        "a nanosecond later is newer",
        [("one", "", "2026-01-01T10:00:00.123456789Z"), ("two", "one", "2026-01-01T10:00:00.12345679Z")],
        set(),
    ),
    (
        "a nanosecond earlier is not",
        [("one", "", "2026-01-01T10:00:00.12345679Z"), ("two", "one", "2026-01-01T10:00:00.123456789Z")],
        {(1, "$.created_at", "not-newer", 0)},
    ),
    (
        "trailing zeros name the same instant",
        [("one", "", "2026-01-01T10:00:00.1234567Z"), ("two", "one", "2026-01-01T10:00:00.123456700Z")],
        {(1, "$.created_at", "not-newer", 0)},
    ),
    ("a child listed before its parent", [("two", "one", T0), ("one", "", T1)], {(0, "$.created_at", "not-newer", 1)}),
    # v0.1 packets: no parent_id, each its own root and head
    ("v0.1 packets", [("one", "", T0, (), "0.1"), ("two", "", T0, (), "0.1")], set()),
    ("a v0.2 packet continuing a v0.1 one", [("one", "", T0, (), "0.1"), ("two", "one", T1)], set()),
    # parents outside the set are not findings
    ("a parent outside the set", [("two", "one", T1), ("three", "two", T2)], set()),
    # unique ids
    ("duplicate ids", [("one", "", T0), ("one", "", T1)], {(1, "$.id", "duplicate-id", 0)}),
    (
        "three copies name the first",
        [("one", "", T0), ("one", "", T1), ("one", "", T2)],
        {(1, "$.id", "duplicate-id", 0), (2, "$.id", "duplicate-id", 0)},
    ),
    ("ids differing in case are distinct", [("one", "", T0), ("ONE", "", T0)], set()),
    # no packet its own ancestor
    ("self-parent", [("one", "one", T0)], {(0, "$.parent_id", "cycle", 0)}),
    (
        "a 2-cycle: one finding, on the smaller id",
        [("two", "one", T1), ("one", "two", T0)],
        {(1, "$.parent_id", "cycle", 0), (1, "$.created_at", "not-newer", 0)},
    ),
    (
        "a 3-cycle",
        [("aaa", "ccc", T0), ("bbb", "aaa", T1), ("ccc", "bbb", T2)],
        {(0, "$.parent_id", "cycle", 2), (0, "$.created_at", "not-newer", 2)},
    ),
    (
        "a cycle beside a valid chain, with a chain hanging off the cycle",
        [
            ("root", "", T0),
            ("mid", "root", T1),
            ("tip", "mid", T2),
            ("cyc1", "cyc2", T1),
            ("cyc2", "cyc1", T2),
            ("hang", "cyc1", T3),
        ],
        {(3, "$.parent_id", "cycle", 4), (3, "$.created_at", "not-newer", 4)},
    ),
    (
        "a cycle through a duplicate id resolves to the first",
        [("one", "", T0), ("two", "one", T1), ("one", "two", T2)],
        {(2, "$.id", "duplicate-id", 0)},
    ),
]


def _packets(specs: list[Any]) -> list[cmp.Packet]:
    return [packet(*spec) for spec in specs]


@pytest.mark.parametrize(("specs", "expected"), [(s, e) for _, s, e in RULE_CASES], ids=[c[0] for c in RULE_CASES])
def test_rule(specs: list[Any], expected: set[tuple[int, str, str | None, int | None]]) -> None:
    report = cmp.chain(_packets(specs))
    assert found(report) == expected
    assert report.ok is (not expected)
    assert all(f.finding.code == "chain" and f.finding.keyword in RULES for f in report.findings)
    assert all(f.id == report.links[f.index].id for f in report.findings)


METHOD = ("replay-load", "Replay last month's requests at 4x against staging.")
OTHER = ("bisect-builds", "Bisect the nightly builds between the good and the bad one.")

METHOD_CASES: list[tuple[str, list[tuple[str, str]], list[tuple[str, str]], set[str]]] = [
    ("unchanged", [METHOD], [METHOD], set()),
    ("renamed, how unchanged", [METHOD], [("replay-traffic", METHOD[1])], {"$.methods[0].name"}),
    ("renamed second method", [METHOD, OTHER], [METHOD, ("bisect", OTHER[1])], {"$.methods[1].name"}),
    ("renamed and how changed", [METHOD], [("replay-traffic", METHOD[1] + " Then compare p99.")], set()),
    ("how changed, name kept", [METHOD], [(METHOD[0], "Replay at 8x instead.")], set()),
    ("new method in the child", [METHOD], [METHOD, OTHER], set()),
    ("method dropped by the child", [METHOD, OTHER], [OTHER], set()),
    ("moved to another position", [METHOD, OTHER], [OTHER, METHOD], set()),
    (
        "parent had the how under two names; child keeps one",
        [METHOD, ("replay", METHOD[1])],
        [("replay", METHOD[1])],
        set(),
    ),
    ("how differs only in case", [METHOD], [("replay-traffic", METHOD[1].upper())], set()),
]


@pytest.mark.parametrize(
    ("before", "after", "expected"), [c[1:] for c in METHOD_CASES], ids=[c[0] for c in METHOD_CASES]
)
def test_method_names_are_stable(
    before: list[tuple[str, str]], after: list[tuple[str, str]], expected: set[str]
) -> None:
    report = cmp.chain([packet("one", "", T0, before), packet("two", "one", T1, after)])
    assert {(f.index, f.finding.path, f.finding.keyword, f.other) for f in report.findings} == {
        (1, path, "method-renamed", 0) for path in expected
    }


def test_renamed_method_is_compared_with_the_parent_only() -> None:
    """A name changed two packets up is not this packet's doing: each link is judged on its own."""
    report = cmp.chain(
        [
            packet("one", "", T0, [METHOD]),
            packet("two", "one", T1, [("replay-traffic", METHOD[1])]),
            packet("three", "two", T2, [("replay-traffic", METHOD[1])]),
        ]
    )
    assert found(report) == {(1, "$.methods[0].name", "method-renamed", 0)}
    assert "'replay-load' is renamed 'replay-traffic'" in report.findings[0].finding.message


def test_a_parent_outside_the_set_is_a_finding_only_in_a_closed_set() -> None:
    packets = [packet("two", "one", T1), packet("three", "two", T2)]
    assert cmp.chain(packets).ok
    closed = cmp.chain(packets, closed=True)
    assert found(closed) == {(0, "$.parent_id", "parent-missing", None)}


def test_messages_quote_at_most_32_characters_of_an_id() -> None:
    long_id = "x" * 64
    report = cmp.chain(
        [
            cmp.Packet(ltm_version="0.2", id=long_id, created_at=T1, goal="g", next_step="n"),
            cmp.Packet(ltm_version="0.2", id=long_id, created_at=T0, goal="g", next_step="n"),
        ]
    )
    (finding,) = report.findings
    assert "x" * 33 not in finding.finding.message and "x" * 32 in finding.finding.message


@pytest.mark.parametrize(
    ("parent_at", "child_at", "says"),
    [
        (T1, T1, "the same instant"),
        (T1, T0, "1 hour earlier"),
        ("2026-01-01T10:03:00Z", T0, "3 minutes earlier"),
        ("2026-01-01T10:03:20Z", T0, "about 3.3 minutes earlier"),
        ("2026-01-01T10:00:01Z", T0, "1 second earlier"),
        ("2026-01-01T10:00:00.5Z", "2026-01-01T10:00:00.25Z", "0.25 seconds earlier"),
        ("2026-01-01T10:00:00.000000001Z", T0, "0.000000001 seconds earlier"),
        ("2026-01-03T10:00:00Z", T0, "2 days earlier"),
        ("2026-02-15T22:00:00Z", T0, "about 1.5 months earlier"),
        ("2026-01-01T10:00:00Z", "2019-01-27T01:38:15.912161Z", "about 6.9 years earlier"),
        ("2126-01-01T10:00:00Z", T0, "about 100 years earlier"),
    ],
)
def test_not_newer_says_by_how_much(parent_at: str, child_at: str, says: str) -> None:
    (finding,) = cmp.chain([packet("one", "", parent_at), packet("two", "one", child_at)]).findings
    assert finding.finding.message.endswith(": " + says)


# ---------------------------------------------------------------------------
# Heads, roots, cycles and the tree


def test_heads_roots_and_cycles() -> None:
    report = cmp.chain(
        _packets(
            [
                ("root", "", T0),  # 0
                ("mid", "root", T1),  # 1
                ("tip", "mid", T2),  # 2
                ("cyc1", "cyc2", T1),  # 3
                ("cyc2", "cyc1", T2),  # 4
                ("hang", "cyc1", T3),  # 5
                ("far", "away", T3),  # 6: parent outside
                ("self", "self", T0),  # 7
            ]
        )
    )
    assert report.roots == (0, 6)
    assert report.heads == (2, 6, 5)  # by created_at, then id: far before hang
    assert report.cycles == ((3, 4), (7,))
    assert [link.parent for link in report.links] == [None, 0, 1, 4, 3, 3, None, 7]
    # The roots' trees, then the cycles' (self at T0 before cyc1 at T1), each without its closing link.
    assert list(report.tree()) == [(0, 0), (1, 1), (2, 2), (0, 6), (0, 7), (0, 3), (1, 4), (1, 5)]


def test_tree_orders_siblings_by_instant_then_id() -> None:
    report = cmp.chain(
        _packets(
            [
                ("root", "", T0),
                ("zzz", "root", "2026-01-01T11:00:00+01:00"),  # 10:00Z: the same instant as root
                ("bbb", "root", T2),
                ("aaa", "root", T2),
                ("late", "root", "2026-01-01T12:30:00+02:00"),  # 10:30Z, though its text sorts last
            ]
        )
    )
    order = [report.links[index].id for _, index in report.tree()]
    assert order == [pid(n) for n in ("root", "zzz", "late", "aaa", "bbb")]


def test_cycle_order_follows_parents_from_the_smallest_id() -> None:
    report = cmp.chain(_packets([("ddd", "ccc", T0), ("bbb", "ddd", T0), ("ccc", "bbb", T0), ("zzz", "", T0)]))
    assert report.cycles == ((1, 0, 2),)  # bbb, its parent ddd, its parent ccc
    (cycle,) = [f for f in report.findings if f.finding.keyword == "cycle"]
    assert (cycle.index, cycle.other) == (1, 0)
    assert "after 3 links" in cycle.finding.message


def test_chain_takes_any_iterable_once_and_refuses_other_items() -> None:
    report = cmp.chain(packet(name) for name in ("one", "two"))
    assert len(report.links) == 2 and report.roots == report.heads == (0, 1)
    assert cmp.chain([]).links == ()
    with pytest.raises(TypeError, match="chain takes Packet items, not dict"):
        cmp.chain([{"id": "x"}])  # type: ignore[list-item]


def test_an_invalid_created_at_is_compared_with_nothing() -> None:
    report = cmp.chain([packet("one", "", T2), packet("two", "one", "not a time")])
    assert report.ok
    assert [index for _, index in report.tree()] == [0, 1]


LONG = 100_000


@pytest.mark.slow
def test_a_long_chain_is_walked_without_recursion() -> None:
    """100,000 packets in one line: no RecursionError in the cycle search or the tree walk."""
    packets = [
        cmp.Packet(
            ltm_version="0.2",
            id=f"packet-{i:08d}",
            parent_id=f"packet-{i - 1:08d}" if i else "",
            created_at=f"2026-01-01T00:00:00.{i:09d}Z",
            goal="g",
            next_step="n",
        )
        for i in range(LONG)
    ]
    report = cmp.chain(reversed(packets))  # children before parents
    assert report.ok and len(report.roots) == len(report.heads) == 1
    depths = [depth for depth, _ in report.tree()]
    assert depths == list(range(LONG))
    # Closing it into one cycle: one finding for the whole cycle, and one not-newer.
    packets[0] = cmp.Packet(
        ltm_version="0.2",
        id=packets[0].id,
        parent_id=packets[-1].id,
        created_at=packets[0].created_at,
        goal="g",
        next_step="n",
    )
    closed = cmp.chain(packets)
    assert sorted((f.index, f.finding.keyword) for f in closed.findings) == [(0, "cycle"), (0, "not-newer")]
    assert len(closed.cycles) == 1 and len(closed.cycles[0]) == LONG
    assert "after 100000 links" in closed.findings[1].finding.message  # $.parent_id, after $.created_at
    assert closed.roots == closed.heads == ()
    assert sum(1 for _ in closed.tree()) == LONG


# ---------------------------------------------------------------------------
# Properties: random forests against a simple model


def _text_at(seconds: int, offset_minutes: int) -> str:
    """The instant ``seconds`` after T0 written in a local time with the given offset."""
    zone = dt.timezone(dt.timedelta(minutes=offset_minutes))
    local = (dt.datetime(2026, 1, 1, 10, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=seconds)).astimezone(zone)
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"{local:%Y-%m-%dT%H:%M:%S}{sign}{hours:02d}:{minutes:02d}"


@st.composite
def forests(draw: st.DrawFn) -> list[cmp.Packet]:
    """Packets of a random forest, shuffled; a root has no parent_id or one naming a packet outside the set."""
    size = draw(st.integers(min_value=1, max_value=25))
    parents: list[int | None] = [None]
    for node in range(1, size):
        parents.append(draw(st.none() | st.integers(min_value=0, max_value=node - 1)))
    outside = [parent is None and draw(st.booleans()) for parent in parents]
    offsets = draw(st.lists(st.integers(min_value=-720, max_value=720), min_size=size, max_size=size))
    method = ("walk-tree", "Walk the tree one level at a time.")
    built = [
        cmp.Packet(
            ltm_version="0.2",
            id=f"forest-{node:04d}",
            parent_id=f"forest-{parents[node]:04d}"
            if parents[node] is not None
            else ("outside-01" if outside[node] else ""),
            created_at=_text_at(node * 60, offsets[node]),  # a parent is always older than its children
            goal="g",
            next_step="n",
            methods=[cmp.Method(name="walk-tree", when_applicable="w", how=method[1])] if draw(st.booleans()) else [],
        )
        for node in range(size)
    ]
    order = draw(st.permutations(range(size)))
    return [built[i] for i in order]


@pytest.mark.slow
@settings(max_examples=examples(200))
@given(forests())
def test_a_forest_has_no_findings_and_the_model_heads_and_roots(packets: list[cmp.Packet]) -> None:
    report = cmp.chain(packets)
    assert report.ok and report.cycles == ()
    ids = [p.id for p in packets]
    named = {p.parent_id for p in packets}
    assert {ids[i] for i in report.heads} == {p.id for p in packets if p.id not in named}
    assert {ids[i] for i in report.roots} == {p.id for p in packets if p.parent_id not in ids}
    # The tree: every packet once, each after its parent, one level deeper.
    walked = list(report.tree())
    assert sorted(index for _, index in walked) == list(range(len(packets)))
    depth_of = {index: depth for depth, index in walked}
    position = {index: n for n, (_, index) in enumerate(walked)}
    for index, link in enumerate(report.links):
        if link.parent is not None:
            assert ids[link.parent] == link.parent_id
            assert depth_of[index] == depth_of[link.parent] + 1 and position[index] > position[link.parent]
        else:
            assert depth_of[index] == 0


@pytest.mark.slow
@settings(max_examples=examples(200))
@given(forests(), st.data())
def test_one_back_edge_makes_exactly_one_cycle(packets: list[cmp.Packet], data: st.DataObject) -> None:
    ids = [p.id for p in packets]
    by_id = {p.id: i for i, p in enumerate(packets)}
    # An ancestor x of y (or y itself), made y's child: the path from y up to x becomes a cycle.
    y = data.draw(st.integers(min_value=0, max_value=len(packets) - 1))
    path = [y]
    while packets[path[-1]].parent_id in by_id:
        path.append(by_id[packets[path[-1]].parent_id])
    x = path[data.draw(st.integers(min_value=0, max_value=len(path) - 1))]
    packets[x] = cmp.Packet(
        ltm_version="0.2", id=ids[x], parent_id=ids[y], created_at=packets[x].created_at, goal="g", next_step="n"
    )
    report = cmp.chain(packets)
    cycle = path[: path.index(x) + 1]
    keywords = sorted(f.finding.keyword or "" for f in report.findings)
    assert keywords == (["cycle"] if x == y else ["cycle", "not-newer"])
    (found_cycle,) = report.cycles
    assert set(found_cycle) == set(cycle)
    assert ids[found_cycle[0]] == min(ids[i] for i in cycle)
    (finding,) = [f for f in report.findings if f.finding.keyword == "cycle"]
    assert finding.index == found_cycle[0] and finding.finding.path == "$.parent_id"
    assert x not in report.roots and all(i not in report.roots for i in cycle)
    assert sorted(index for _, index in report.tree()) == list(range(len(packets)))
