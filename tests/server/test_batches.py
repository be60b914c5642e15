"""The server's speed tricks against the plain way they stand in for, on the real engines.

Batched writes (:class:`cmp.server._storage.Batches`: many pushes in one transaction) give what the
same pushes one by one give (:meth:`Storage.push`, a transaction each); the answers' hand-made JSON
is what ``json.dumps(indent=2)`` writes.
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp.server import Storage
from cmp.server._app import _indented, json_response, listing_answer
from cmp.server._storage import Batches, DatabaseFailed, Session, finish

from .conftest import ENGINES, Postgres


@pytest.fixture(params=ENGINES)
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    if request.param == "sqlite":
        db = str(tmp_path / "server.db")
    else:
        postgres: Postgres = request.getfixturevalue("postgres")
        db = postgres.new_database()
    made = Storage(db)
    made.migrate()
    try:
        yield made
    finally:
        made.close()


Push = tuple[str, str | None, str, bytes]  # user, team, id, body


def _pushes(storage: Storage, seed: int) -> tuple[list[Push], list[str], str]:
    """Pushes that collide: a few ids, two bodies, two users, personal and team scope, a deleted packet,
    and one push into a team that does not exist (the database refuses it)."""
    rng = random.Random(seed)
    alice, bob = storage.create_user("alice"), storage.create_user("bob")
    team = storage.create_team(alice, f"t{seed}-{uuid.uuid4().hex[:6]}")
    assert team is not None
    scopes = [(alice, None), (bob, None), (alice, team.id), (bob, team.id)]
    ids = [f"01JBATCH{seed:04d}{n:014d}" for n in range(6)]
    pushes = []
    for _ in range(40):
        user, team_id = rng.choice(scopes)
        pushes.append((user, team_id, rng.choice(ids), rng.choice([b'{"v":1}', b'{"v":2}'])))
    pushes.insert(rng.randrange(len(pushes)), (alice, "01JNOSUCHTEAM0000000000000", ids[0] + "x", b"{}"))
    return pushes, ids, alice


def _apply_one_by_one(storage: Storage, pushes: list[Push], prefix: str) -> list[str]:
    outcomes = []
    for user, team_id, packet_id, body in pushes:
        try:
            outcomes.append(storage.push(user, team_id, prefix + packet_id, KEY, "Goal.", body))
        except DatabaseFailed:
            outcomes.append("failed")
    return outcomes


async def _apply_batched(batches: Batches, pushes: list[Push], prefix: str) -> list[str]:
    def work(push: Push) -> Any:
        user, team_id, packet_id, body = push
        return lambda session: session.push(user, team_id, prefix + packet_id, KEY, "Goal.", body)

    # Submitted in one turn of the loop: one transaction on SQLite, as many as the thread takes on PostgreSQL.
    answers = await asyncio.gather(
        *(batches.write(work(push), prefix + push[2]) for push in pushes), return_exceptions=True
    )
    return ["failed" if isinstance(answer, DatabaseFailed) else str(answer) for answer in answers]


KEY = "2026-04-21T10:00:00.000000000Z"


def _rows(storage: Storage, prefix: str) -> list[tuple[Any, ...]]:
    with storage.engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT id, owner_id, team_id, body, deleted_at IS NULL FROM packets ORDER BY id"
        ).all()
    return [(row[0][len(prefix) :], *row[1:3], bytes(row[3]), row[4]) for row in rows if row[0].startswith(prefix)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batched_pushes_are_the_pushes_one_by_one(storage: Storage, seed: int) -> None:
    pushes, ids, alice = _pushes(storage, seed)
    # A packet of each namespace deleted first: a push into its scope brings it back, another is refused.
    for prefix in ("one-", "batch-"):
        assert storage.push(alice, None, prefix + ids[1], KEY, "Goal.", b'{"v":1}') == "stored"
        assert storage.delete_packet(alice, prefix + ids[1])
    one_by_one = _apply_one_by_one(storage, pushes, "one-")

    async def batched() -> list[str]:
        return await _apply_batched(storage.batches, pushes, "batch-")

    assert asyncio.run(batched()) == one_by_one
    assert "failed" in one_by_one and {"stored", "same", "different", "taken"} <= set(one_by_one)
    assert _rows(storage, "batch-") == _rows(storage, "one-")


def test_a_failed_write_fails_alone_and_its_batch_commits(storage: Storage) -> None:
    user = storage.create_user("carol")

    async def batched() -> list[Any]:
        return await asyncio.gather(
            storage.batches.write(lambda s: s.push(user, None, "01JALONE0000000000000000A1", KEY, "G.", b"{}"), "A1"),
            storage.batches.write(
                lambda s: s.push(user, "no-such-team", "01JALONE0000000000000000A2", KEY, "G.", b"{}"), "A2"
            ),
            storage.batches.write(lambda s: s.push(user, None, "01JALONE0000000000000000A3", KEY, "G.", b"{}"), "A3"),
            return_exceptions=True,
        )

    first, failed, third = asyncio.run(batched())
    assert (first, third) == ("stored", "stored")
    assert isinstance(failed, DatabaseFailed) and str(failed).startswith("the database failed: ")
    assert storage.get_packet(user, "01JALONE0000000000000000A1") == b"{}"
    assert storage.get_packet(user, "01JALONE0000000000000000A2") is None


def test_a_token_is_looked_up_afresh_for_each_request(storage: Storage) -> None:
    """No verdict on a token outlives its request's batch: revoked between two requests, the second is refused."""
    user = storage.create_user("dave")
    token = storage.issue_token(user, "laptop")

    async def lookup() -> str | None:
        found: str | None = await storage.batches.read(lambda session: session.user_for_token(token))
        return found

    async def both() -> tuple[str | None, str | None]:
        first = await lookup()
        assert storage.revoke_token("laptop") == 1
        return first, await lookup()

    assert asyncio.run(both()) == (user, None)


def test_a_session_runs_the_statements_its_storage_runs(storage: Storage) -> None:
    user = storage.create_user("erin")
    storage.push(user, None, "01JSESSION0000000000000001", KEY, "Goal.", b'{"a":1}', "not-conforming")
    with storage._session() as session:
        assert isinstance(session, Session)
        assert finish(session.get_flagged(user, "01JSESSION0000000000000001")) == (b'{"a":1}', "not-conforming")
        assert finish(session.list_packets(user, None, 5, None)) == storage.list_packets(user, None, 5, None)


def test_a_get_in_one_statement_is_the_token_then_the_packet(storage: Storage) -> None:
    """token_and_packet's one statement answers as user_for_token, then get_flagged for that user."""
    owner, member, stranger = (storage.create_user(name) for name in ("owner", "member", "stranger"))
    team = storage.create_team(owner, "one-statement")
    assert team is not None
    code, _ = storage.create_invite(team.id, owner)
    assert storage.accept_invite(code, member) is not None
    storage.push(owner, None, "01JONESTMT0000000000000001", KEY, "G.", b'{"p":1}')
    storage.push(owner, team.id, "01JONESTMT0000000000000002", KEY, "G.", b'{"t":1}', "redaction")
    storage.push(owner, None, "01JONESTMT0000000000000003", KEY, "G.", b'{"d":1}')
    storage.delete_packet(owner, "01JONESTMT0000000000000003")
    tokens = [storage.issue_token(user, "t") for user in (owner, member, stranger)]
    expired = storage.issue_token(owner, "old", datetime.now(timezone.utc) - timedelta(days=1))
    ids = [f"01JONESTMT000000000000000{n}" for n in range(1, 5)]
    for token in [*tokens, expired, "x" * 48]:
        for packet_id in ids:
            with storage._session() as session:
                user = finish(session.user_for_token(token))
                expected = (user, None if user is None else finish(session.get_flagged(user, packet_id)))
            with storage._session() as session:
                assert finish(session.token_and_packet(token, packet_id)) == expected
    with storage._session() as session:
        assert finish(session.token_and_packet(tokens[1], ids[1])) == (member, (b'{"t":1}', "redaction"))
        assert finish(session.token_and_packet(tokens[2], ids[0])) == (stranger, None)
        assert finish(session.token_and_packet(expired, ids[0])) == (None, None)


ODD_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=12) | (
    st.sampled_from(["<a&b>", "\u2028\u2029", '"\\', "\x00\x1f\x7f", "\ud800", "é ü 日本", ""])
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ODD_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ODD_TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES)
def test_the_answers_json_is_json_dumps_indented(value: Any) -> None:
    """json_response writes the reference's layout itself: the text json.dumps(indent=2) gives."""
    plain = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    assert _indented(value, "") == plain
    if not any("\ud800" <= c <= "\udfff" for c in plain):
        body = json_response(200, value).body
        assert json.loads(body) == json.loads(plain) or value != value  # NaN is not itself


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(ODD_TEXT, ODD_TEXT, ODD_TEXT, st.sampled_from(["", "not-conforming", "not-conforming,redaction"])),
        max_size=4,
    ),
    next_cursor=st.none() | ODD_TEXT,
)
def test_a_listing_answer_is_the_reference_layout(
    rows: list[tuple[str, str, str, str]], next_cursor: str | None
) -> None:
    answer = listing_answer(rows, next_cursor)
    plain = json.dumps(answer, indent=2, sort_keys=True, ensure_ascii=False)
    try:
        expected = plain.encode()
    except UnicodeEncodeError:
        expected = json.dumps(answer, indent=2, sort_keys=True).encode()
    for raw, escaped in ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026")):
        expected = expected.replace(raw, escaped)
    expected = expected.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
    assert json_response(200, answer).body == expected + b"\n"
    assert [item["id"] for item in answer["packets"]] == [row[0] for row in rows]
    assert ("next_cursor" in answer) == (next_cursor is not None)
