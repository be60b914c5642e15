"""The team server's HTTP protocol against REFERENCE-SERVER.md, on SQLite and on PostgreSQL, over real HTTP.

Every endpoint's statuses and bodies; auth; personal and team scope, every cross-user and cross-team
access answered as specified and never with data; invites; the section-14 flaws fixed (each test
says which); concurrency (one invite, one id); hostile requests one answer each.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select, update
from ulid import ULID

import cmp
from cmp.server._schema import invites, packets, team_members, users
from tests.server.conftest import Running, cli, free_port, wait_until_up

AKIA = "AKIAIOSFODNN7EXAMPLE"
HEX48 = re.compile(r"[0-9a-f]{48}")
TOKEN = re.compile(r"[0-9A-Za-z]{48}")


def new_id() -> str:
    return str(ULID())


def packet(
    packet_id: str | None = None,
    *,
    goal: str = "Ship the export fix.",
    created_at: str = "2026-04-21T10:00:00Z",
    **members: object,
) -> bytes:
    data = {
        "ltm_version": "0.2",
        "id": packet_id or new_id(),
        "created_at": created_at,
        "goal": goal,
        "next_step": "Time it on a snapshot.",
        **members,
    }
    return json.dumps(data).encode()


def id_of(body: bytes) -> str:
    return str(json.loads(body)["id"])


def error(response: httpx.Response) -> str:
    assert response.headers["content-type"] == "application/json", response.text
    return str(response.json()["error"])


def push(client: httpx.Client, body: bytes, team: str | None = None) -> httpx.Response:
    return client.post("/v1/packets", content=body, params={"team": team} if team else None)


def team(owner: httpx.Client, *members: httpx.Client) -> str:
    """A new team owned by ``owner``, each of ``members`` joined through an invite: its name."""
    name = "t-" + new_id().lower()[-12:]
    assert owner.post("/v1/teams", json={"name": name}).status_code == 201
    for member in members:
        code = owner.post(f"/v1/teams/{name}/invites", json={}).json()["code"]
        assert member.post(f"/v1/invites/{code}/accept", json={}).status_code == 201
    return name


def row_count(server: Running, table: object, *where: object) -> int:
    with server.storage.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table).where(*where)).scalar_one())  # type: ignore[arg-type]


# -- conventions, health, routing --------------------------------------------------------------


def test_healthz_answers_without_auth_and_head_and_405(server: Running) -> None:
    anyone = server.client()
    answer = anyone.get("/v1/healthz")
    assert (answer.status_code, answer.json()) == (200, {"ok": True, "version": "0.2"})
    assert answer.headers["content-type"] == "application/json"
    assert answer.text == '{\n  "ok": true,\n  "version": "0.2"\n}\n'  # the reference's layout
    head = anyone.head("/v1/healthz")
    assert (head.status_code, head.content) == (200, b"")
    wrong = anyone.delete("/v1/healthz")
    assert wrong.status_code == 405 and set(wrong.headers["allow"].split(", ")) == {"GET", "HEAD"}
    assert anyone.get("/v1/readyz").json() == {"ok": True}


@pytest.mark.parametrize("path", ["/nope", "/v1/packets/", "/oauth/token", "/v1/packets/x/publish"])
def test_unknown_paths_are_the_text_404(server: Running, path: str) -> None:
    answer = server.client(server.root_token).get(path)
    assert (answer.status_code, answer.text) == (404, "404 page not found\n")
    assert answer.headers["content-type"].startswith("text/plain")


def test_auth_failures(server: Running) -> None:
    for header, expected in [
        (None, "missing bearer token"),
        ("Basic dXNlcjpwYXNz", "missing bearer token"),
        ("Bearer", "missing bearer token"),
        ("Bearer " + "x" * 48, "invalid token"),
    ]:
        answer = httpx.get(server.base + "/v1/packets", headers={"Authorization": header} if header else {})
        assert (answer.status_code, error(answer)) == (401, expected)


def test_a_revoked_or_expired_token_is_refused(server: Running) -> None:
    user_id = server.storage.create_user("tokens")
    kept = server.storage.issue_token(user_id, "kept")
    revoked = server.storage.issue_token(user_id, "revoked-" + new_id())
    expired = server.storage.issue_token(user_id, "expired", datetime.now(timezone.utc) - timedelta(seconds=1))
    assert server.client(kept).get("/v1/packets").status_code == 200
    assert server.client(revoked).get("/v1/packets").status_code == 200
    assert (
        server.storage.revoke_token(
            next(
                t for t in server.storage.list_tokens() if t.label.startswith("revoked-") and t.user_id == user_id
            ).hash8
        )
        == 1
    )
    assert error(server.client(revoked).get("/v1/packets")) == "invalid token"
    assert error(server.client(expired).get("/v1/packets")) == "invalid token"
    assert server.client(kept).get("/v1/packets").status_code == 200  # several tokens, one user


# -- packets -----------------------------------------------------------------------------------


def test_push_get_list_delete_and_resurrect(server: Running) -> None:
    alice = server.user("alice")
    body = packet(goal="Demo <goal> & more", created_at="2026-04-21T12:00:00.123456789+02:00")
    first = push(alice, body)
    assert (first.status_code, first.json()) == (201, {"id": id_of(body)})
    assert "location" not in first.headers
    assert push(alice, body).status_code == 201  # idempotent
    got = alice.get(f"/v1/packets/{id_of(body)}")
    assert got.status_code == 200 and got.content == cmp.dumps(cmp.loads(body))
    assert b'"2026-04-21T12:00:00.123456789+02:00"' in got.content
    listed = alice.get("/v1/packets")
    assert listed.json() == {
        "packets": [{"created_at": "2026-04-21T10:00:00Z", "goal": "Demo <goal> & more", "id": id_of(body)}]
    }
    assert "\\u003cgoal\\u003e \\u0026 more" in listed.text
    assert alice.delete(f"/v1/packets/{id_of(body)}").status_code == 204
    assert error(alice.delete(f"/v1/packets/{id_of(body)}")) == "not found"
    assert alice.get(f"/v1/packets/{id_of(body)}").status_code == 404
    assert alice.get("/v1/packets").json() == {"packets": []}
    assert push(alice, body).status_code == 201  # the owner brings it back
    assert alice.get(f"/v1/packets/{id_of(body)}").status_code == 200


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "invalid"),
        (b"{bad", "invalid"),
        (b"[]", "object"),
        (b'{"ltm_version": "0.3"}', "0.3"),
        (b'{"ltm_version": "0.2", "id": "0123456789"}', "created_at"),
    ],
)
def test_an_invalid_packet_is_400_with_the_checks_finding(server: Running, body: bytes, message: str) -> None:
    answer = push(server.user(), body)
    assert answer.status_code == 400 and message in error(answer)


def test_a_v01_packet_is_accepted(server: Running) -> None:
    body = json.dumps(
        {
            "ltm_version": "0.1",
            "id": new_id(),
            "created_at": "2026-04-21T10:00:00Z",
            "goal": "Old packet.",
            "next_step": "Read it.",
        }
    ).encode()
    assert push(server.user(), body).status_code == 201


def test_flaw4_a_body_over_the_limit_is_413_unread_and_the_canonical_form_counts(server: Running) -> None:
    alice = server.user()
    huge = packet(constraints=["x" * 1000] * 40)
    assert len(huge) > cmp.MAX_PACKET_BYTES
    answer = push(alice, huge)
    assert (answer.status_code, error(answer)) == (413, "packet is larger than 32768 bytes")
    assert answer.headers["connection"] == "close"  # the rest of the body is never read
    # Within the limit as written, over it canonically (each < is \\u003c there): refused, not stored.
    grown = packet(constraints=["<" * 1000] * 6)
    assert len(grown) <= cmp.MAX_PACKET_BYTES
    answer = push(alice, grown)
    assert answer.status_code == 400 and "canonical form is" in error(answer)
    assert alice.get(f"/v1/packets/{id_of(grown)}").status_code == 404


def test_a_packet_with_a_credential_is_refused_with_the_masked_finding(server: Running) -> None:
    alice = server.user()
    body = packet(constraints=[f"Use key {AKIA} for the bucket."])
    answer = push(alice, body)
    assert answer.status_code == 422
    assert "constraints[0]/aws-key: AKIA… (20 chars)" in error(answer)
    assert AKIA not in answer.text
    assert alice.get(f"/v1/packets/{id_of(body)}").status_code == 404


def test_flaw1_an_id_of_another_scope_is_refused_without_revealing_it(server: Running) -> None:
    alice, bob, carol = server.user("alice"), server.user("bob"), server.user("carol")
    body = packet(goal="Alice's own goal.")
    assert push(alice, body).status_code == 201
    over = packet(id_of(body), goal="Bob overwrites.")
    for attempt in (over, body):  # other bytes, or the very same bytes: refused alike
        answer = push(bob, attempt)
        assert (answer.status_code, error(answer)) == (409, "packet id already taken")
        assert "Alice" not in answer.text
    assert alice.get(f"/v1/packets/{id_of(body)}").content == cmp.dumps(cmp.loads(body))
    # A deleted packet's id stays its owner's.
    assert alice.delete(f"/v1/packets/{id_of(body)}").status_code == 204
    assert error(push(bob, over)) == "packet id already taken"
    # Different bytes under one's own id: a conflict, the stored packet unchanged.
    mine = packet(goal="First version.")
    assert push(carol, mine).status_code == 201
    answer = push(carol, packet(id_of(mine), goal="Second version."))
    assert (answer.status_code, error(answer)) == (409, "a different packet is already stored under this id")
    assert carol.get(f"/v1/packets/{id_of(mine)}").content == cmp.dumps(cmp.loads(mine))
    # A team packet's id pushed into personal scope, even by a member who can read it: taken.
    name = team(alice, bob)
    shared = packet()
    assert push(alice, shared, name).status_code == 201
    assert push(bob, shared, name).status_code == 201  # same bytes, same scope: idempotent
    assert error(push(bob, shared)) == "packet id already taken"


def test_concurrent_pushes_of_one_id_store_one_packet(server: Running) -> None:
    users_ = [server.user(f"racer{n}") for n in range(16)]
    body_id = new_id()
    bodies = [packet(body_id, goal=f"Racer {n}.") for n in range(16)]
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(push, users_, bodies))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [201] + [409] * 15
    winner = next(n for n, a in enumerate(answers) if a.status_code == 201)
    assert users_[winner].get(f"/v1/packets/{body_id}").content == cmp.dumps(cmp.loads(bodies[winner]))
    assert row_count(server, packets, packets.c.id == body_id) == 1
    one = server.user()
    same = packet()
    with ThreadPoolExecutor(16) as pool:
        assert {a.status_code for a in pool.map(lambda _: push(one, same), range(16))} == {201}


def test_flaw7_listing_by_instant_then_id_with_a_cursor(server: Running) -> None:
    alice = server.user()
    times = {  # text order is not time order here; the instants are
        "a": "2026-05-01T00:00:00Z",
        "b": "2026-05-01T00:00:00.9Z",
        "c": "2026-05-01T00:00:00.5Z",
        "d": "2026-05-01T02:00:00.7+02:00",  # 00:00:00.7Z
    }
    ids = {name: f"01JLIST{name.upper()}{new_id()[-18:]}" for name in times}
    tie = [f"01JTIE{n}{new_id()[-19:]}" for n in range(2)]
    for name, moment in times.items():
        assert push(alice, packet(ids[name], created_at=moment)).status_code == 201
    for tied in tie:
        assert push(alice, packet(tied, created_at="2026-05-01T00:00:00.5Z")).status_code == 201
    expected = [ids["b"], ids["d"], *sorted([ids["c"], *tie], reverse=True), ids["a"]]
    assert [p["id"] for p in alice.get("/v1/packets").json()["packets"]] == expected
    seen, cursor = [], None
    pages = 0
    while True:
        page = alice.get("/v1/packets", params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        seen += [p["id"] for p in page["packets"]]
        pages += 1
        cursor = page.get("next_cursor")
        if cursor is None:
            break
    assert (seen, pages) == (expected, 3)
    assert error(alice.get("/v1/packets", params={"cursor": "not-a-cursor!"})) == "invalid cursor"


def test_flaw7_a_limit_above_the_maximum_is_capped_not_reset(server: Running) -> None:
    alice = server.user()
    for n in range(51):
        assert push(alice, packet(created_at=f"2026-06-01T00:00:{n:02d}Z")).status_code == 201
    assert len(alice.get("/v1/packets", params={"limit": 100000}).json()["packets"]) == 51  # 500, not 50
    default = alice.get("/v1/packets", params={"limit": "abc"}).json()
    assert len(default["packets"]) == 50 and "next_cursor" in default
    assert len(alice.get("/v1/packets", params={"limit": 0}).json()["packets"]) == 50
    assert len(alice.get("/v1/packets", params={"limit": 3}).json()["packets"]) == 3


# -- scopes --------------------------------------------------------------------------------------


def test_personal_and_team_scope_and_every_cross_access(server: Running) -> None:
    owner, member, outsider = server.user("owner"), server.user("member"), server.user("outsider")
    name = team(owner, member)
    mine, shared = packet(goal="Personal."), packet(goal="Team work.")
    assert push(member, mine).status_code == 201
    assert push(member, shared, name).status_code == 201
    # personal: the owner alone
    assert owner.get(f"/v1/packets/{id_of(mine)}").status_code == 404
    assert owner.get("/v1/packets").json() == {"packets": []}
    # team: every member, no one else, and never in a personal list
    assert owner.get(f"/v1/packets/{id_of(shared)}").status_code == 200
    assert [p["id"] for p in owner.get("/v1/packets", params={"team": name}).json()["packets"]] == [id_of(shared)]
    assert [p["id"] for p in member.get("/v1/packets").json()["packets"]] == [id_of(mine)]
    for answer in (
        outsider.get(f"/v1/packets/{id_of(shared)}"),
        outsider.delete(f"/v1/packets/{id_of(shared)}"),
        outsider.delete(f"/v1/packets/{id_of(mine)}"),
    ):
        assert (answer.status_code, error(answer)) == (404, "not found")
    for answer in (
        outsider.get("/v1/packets", params={"team": name}),
        push(outsider, packet(), name),
        outsider.get(f"/v1/teams/{name}/members"),
        outsider.post(f"/v1/teams/{name}/invites", json={}),
        outsider.post(f"/v1/teams/{name}/leave", json={}),
        outsider.delete(f"/v1/teams/{name}"),
        outsider.delete(f"/v1/teams/{name}/members/{member.user_id}"),  # type: ignore[attr-defined]
        push(outsider, b"not even json", "no-such-team"),
    ):
        assert (answer.status_code, error(answer)) == (404, "team not found"), answer.request.url
    assert "Team work" not in outsider.get("/v1/packets").text
    # delete: a member who did not push it gets 404; the team owner may
    other = packet()
    assert push(member, other, name).status_code == 201
    third = server.user("third")
    code = owner.post(f"/v1/teams/{name}/invites", json={}).json()["code"]
    assert third.post(f"/v1/invites/{code}/accept").status_code == 201
    assert error(third.delete(f"/v1/packets/{id_of(other)}")) == "not found"
    assert owner.delete(f"/v1/packets/{id_of(other)}").status_code == 204
    # the pusher may delete their team packet even after leaving
    assert member.post(f"/v1/teams/{name}/leave", json={}).status_code == 204
    assert member.get(f"/v1/packets/{id_of(shared)}").status_code == 404  # no longer a reader
    assert member.delete(f"/v1/packets/{id_of(shared)}").status_code == 204


def test_flaw2_moving_a_packet_between_personal_and_team_scope(server: Running) -> None:
    owner, member, outsider = server.user("owner"), server.user("member"), server.user("outsider")
    name = team(owner, member)
    body = packet()
    pid = id_of(body)
    assert push(owner, body).status_code == 201
    assert member.get(f"/v1/packets/{pid}").status_code == 404
    moved = owner.put(f"/v1/packets/{pid}/scope", json={"team": name})
    assert (moved.status_code, moved.json()) == (200, {"id": pid, "team": name})
    assert member.get(f"/v1/packets/{pid}").content == cmp.dumps(cmp.loads(body))  # the packet unchanged
    assert owner.get("/v1/packets").json() == {"packets": []}
    answer = member.put(f"/v1/packets/{pid}/scope", json={"team": None})
    assert (answer.status_code, error(answer)) == (403, "only the packet's pusher can move it")
    assert error(outsider.put(f"/v1/packets/{pid}/scope", json={"team": None})) == "not found"
    assert error(owner.put(f"/v1/packets/{pid}/scope", json={"team": "no-such-team"})) == "team not found"
    assert owner.put(f"/v1/packets/{pid}/scope", json={"name": name}).status_code == 400
    assert owner.put(f"/v1/packets/{pid}/scope", content=b"{").status_code == 400
    back = owner.put(f"/v1/packets/{pid}/scope", json={"team": None})
    assert (back.status_code, back.json()) == (200, {"id": pid, "team": None})
    assert member.get(f"/v1/packets/{pid}").status_code == 404
    assert [p["id"] for p in owner.get("/v1/packets").json()["packets"]] == [pid]


# -- teams and members ------------------------------------------------------------------------------


def test_teams_create_list_and_names(server: Running) -> None:
    alice, bob = server.user("alice"), server.user("bob")
    name = "t-" + new_id().lower()[-10:]
    made = alice.post("/v1/teams", json={"name": f"  {name}  "})
    assert made.status_code == 201
    assert made.json()["team"]["name"] == name and made.json()["team"]["owner_id"] == alice.user_id  # type: ignore[attr-defined]
    assert set(made.json()["team"]) == {"id", "name", "owner_id"}
    assert (
        bob.post("/v1/teams", json={"name": name}).status_code,
        error(bob.post("/v1/teams", json={"name": name})),
    ) == (409, "team name already taken")
    for bad in ("Bad", "-x", "a" * 41, "", "a b"):
        answer = alice.post("/v1/teams", json={"name": bad})
        assert (answer.status_code, error(answer)) == (400, "team name must match ^[a-z0-9][a-z0-9_-]{0,39}$")
    for body in (b"{", b"[]", b'{"name": 5}'):
        assert alice.post("/v1/teams", content=body).status_code == 400
    listed = alice.get("/v1/teams").json()["teams"]
    assert [t["name"] for t in listed] == [name] and set(listed[0]) == {"id", "name", "owner_id", "created_at"}
    assert bob.get("/v1/teams").json() == {"teams": []}


def test_team_delete_rules(server: Running) -> None:
    owner, member = server.user("owner"), server.user("member")
    name = team(owner, member)
    body = packet()
    assert push(member, body, name).status_code == 201
    code = owner.post(f"/v1/teams/{name}/invites", json={}).json()["code"]
    answer = member.delete(f"/v1/teams/{name}")
    assert (answer.status_code, error(answer)) == (403, "only the team owner can delete a team")
    assert owner.delete(f"/v1/teams/{name}").status_code == 204
    assert member.get(f"/v1/packets/{id_of(body)}").status_code == 404
    assert member.get("/v1/packets").json() == {"packets": []}
    assert server.user().post(f"/v1/invites/{code}/accept").status_code == 410
    assert owner.post("/v1/teams", json={"name": name}).status_code == 201  # the name is free again


def test_members_remove_and_leave(server: Running) -> None:
    owner, member, other = server.user("owner"), server.user("member"), server.user("other")
    name = team(owner, member, other)
    listed = owner.get(f"/v1/teams/{name}/members").json()["members"]
    assert [(m["user_id"], m["role"]) for m in listed] == [
        (owner.user_id, "owner"),
        (member.user_id, "member"),
        (other.user_id, "member"),
    ]  # type: ignore[attr-defined]
    assert set(listed[0]) == {"user_id", "display", "role", "joined_at"}
    path = f"/v1/teams/{name}/members"
    answer = member.delete(f"{path}/{other.user_id}")  # type: ignore[attr-defined]
    assert (answer.status_code, error(answer)) == (403, "only the team owner can remove members")
    answer = owner.delete(f"{path}/{owner.user_id}")  # type: ignore[attr-defined]
    assert (answer.status_code, error(answer)) == (
        400,
        "owner cannot be removed; transfer ownership or delete the team",
    )
    assert error(owner.delete(f"{path}/NOSUCHUSER")) == "not a member"
    assert owner.delete(f"{path}/{other.user_id}").status_code == 204  # type: ignore[attr-defined]
    assert other.get(path).status_code == 404
    answer = owner.post(f"/v1/teams/{name}/leave", json={})
    assert (answer.status_code, error(answer)) == (400, "owner cannot leave; transfer ownership or delete the team")
    assert member.post(f"/v1/teams/{name}/leave", json={}).status_code == 204
    assert error(member.post(f"/v1/teams/{name}/leave", json={})) == "team not found"


# -- invites ---------------------------------------------------------------------------------------------


def test_invites_anonymous_existing_and_gone(server: Running) -> None:
    owner, member = server.user("owner"), server.user("member")
    name = team(owner, member)
    made = member.post(f"/v1/teams/{name}/invites", json={})  # any member may invite
    assert made.status_code == 201 and set(made.json()) == {"code", "expires_at", "url"}
    code = made.json()["code"]
    assert HEX48.fullmatch(code) and made.json()["url"] == f"{server.base}/v1/invites/{code}"
    expires = datetime.strptime(made.json()["expires_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    assert timedelta(days=7) - timedelta(minutes=1) < expires - datetime.now(timezone.utc) <= timedelta(days=7)
    anonymous = server.client().post(f"/v1/invites/{code}/accept", json={})
    assert anonymous.status_code == 201 and set(anonymous.json()) == {"team", "token", "user"}
    joined = anonymous.json()
    assert joined["team"]["name"] == name and TOKEN.fullmatch(joined["token"])
    assert joined["user"]["display"] == "invited-" + joined["user"]["id"][-6:]
    newcomer = server.client(joined["token"])
    assert newcomer.get("/v1/packets", params={"team": name}).status_code == 200
    gone = server.client().post(f"/v1/invites/{code}/accept")
    assert (gone.status_code, error(gone)) == (410, "invite expired or already consumed")
    # an existing user joins without a new token; display as sent by a new one
    second = owner.post(f"/v1/teams/{name}/invites", json={}).json()["code"]
    alice = server.user("alice")
    answer = alice.post(f"/v1/invites/{second}/accept", json={"display": "ignored"})
    assert answer.status_code == 201 and "token" not in answer.json()
    assert answer.json()["user"]["id"] == alice.user_id  # type: ignore[attr-defined]
    third = owner.post(f"/v1/teams/{name}/invites", json={}).json()["code"]
    named = server.client().post(f"/v1/invites/{third}/accept", json={"display": "  Ann  "})
    assert named.json()["user"]["display"] == "Ann"
    assert error(server.client().post("/v1/invites/" + "0" * 48 + "/accept")) == "invite expired or already consumed"


def test_flaw5_a_bad_bearer_on_acceptance_is_401_and_the_invite_stays(server: Running) -> None:
    owner = server.user("owner")
    name = team(owner)
    code = owner.post(f"/v1/teams/{name}/invites", json={}).json()["code"]
    users_before = row_count(server, users)
    for header in ("Bearer " + "y" * 48, "Basic abc"):
        answer = httpx.post(f"{server.base}/v1/invites/{code}/accept", headers={"Authorization": header})
        assert answer.status_code == 401 and "token" not in answer.json()
    assert row_count(server, users) == users_before
    assert server.user().post(f"/v1/invites/{code}/accept").status_code == 201


def test_an_expired_invite_is_410_and_leaves_no_rows(server: Running) -> None:
    owner = server.user("owner")
    name = team(owner)
    code = owner.post(f"/v1/teams/{name}/invites", json={}).json()["code"]
    with server.storage.engine.begin() as conn:
        conn.execute(update(invites).where(invites.c.code == code).values(expires_at="2000-01-01T00:00:00.000000Z"))
    users_before = row_count(server, users)
    assert server.client().post(f"/v1/invites/{code}/accept").status_code == 410
    assert row_count(server, users) == users_before


def test_sixteen_concurrent_acceptances_make_one_member(server: Running) -> None:
    owner = server.user("owner")
    name = team(owner)
    code = owner.post(f"/v1/teams/{name}/invites", json={}).json()["code"]
    users_before = row_count(server, users)
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda _: httpx.post(f"{server.base}/v1/invites/{code}/accept", timeout=30), range(16)))
    assert sorted(a.status_code for a in answers) == [201] + [410] * 15
    assert row_count(server, users) == users_before + 1
    team_id = owner.get("/v1/teams").json()["teams"][0]["id"]
    assert row_count(server, team_members, team_members.c.team_id == team_id) == 2


def test_flaw8_invite_urls_ignore_forwarded_headers_by_default(server: Running) -> None:
    owner = server.user()
    name = team(owner)
    made = owner.post(
        f"/v1/teams/{name}/invites", headers={"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "gopher"}
    )
    assert made.json()["url"].startswith(server.base + "/v1/invites/")


# -- hostile requests -------------------------------------------------------------------------------------


def test_hostile_requests_get_one_answer_each_and_store_nothing(server: Running) -> None:
    alice = server.user()
    before = row_count(server, packets)
    assert alice.post("/v1/teams", content=b"{" * 10_000).status_code == 413
    assert alice.post("/v1/teams", content=b'{"name": "' + b"a" * 5000 + b'"}').status_code == 413
    name = team(alice)
    code = alice.post(f"/v1/teams/{name}/invites", json={}).json()["code"]
    assert server.client().post(f"/v1/invites/{code}/accept", content=b"x" * 2000).status_code == 413
    assert server.client().post(f"/v1/invites/{code}/accept", content=b"{not json").status_code == 201  # ignored
    for path in ("/v1/packets/%00", "/v1/packets/..%2F..%2Fetc", "/v1/packets/" + "x" * 5000):
        assert alice.get(path).status_code == 404
    assert error(alice.get("/v1/packets", params={"team": "../x\x00"})) == "team not found"
    assert push(alice, b"\xff\xfe garbage").status_code == 400
    assert (
        error(push(alice, packet("0123456789\x00")))
        == "packet id holds a NUL character, which this server cannot store"
    )
    assert server.client().post(f"/v1/invites/{code}/accept", json={"display": "a\x00b"}).status_code == 400
    assert error(server.client().post("/v1/invites/%00/accept")) == "invite expired or already consumed"
    assert error(alice.delete(f"/v1/teams/{name}/members/%00")) == "not a member"
    assert row_count(server, packets) == before
    # A NUL in a goal is the packet's (kept in its body); the listing shows U+FFFD in its place.
    nul = packet(goal="before\x00after")
    assert push(alice, nul).status_code == 201
    assert alice.get(f"/v1/packets/{id_of(nul)}").content == cmp.dumps(cmp.loads(nul))
    assert alice.get("/v1/packets").json()["packets"][0]["goal"] == "before\ufffdafter"


def test_the_log_holds_no_token_and_no_invite_code(server: Running) -> None:
    alice = server.user()
    name = team(alice)
    code = alice.post(f"/v1/teams/{name}/invites", json={}).json()["code"]
    joined = server.client().post(f"/v1/invites/{code}/accept").json()
    body = packet(goal="A goal nobody logs.")
    push(alice, body)
    alice.get("/v1/packets", params={"team": name})
    log = server.log.read_text(errors="replace")
    assert "POST /v1/invites/{code}/accept 201" in log
    for secret in (code, joined["token"], server.root_token, "A goal nobody logs"):
        assert secret not in log


def test_server_init_twice_refuses(server: Running) -> None:
    users_before = row_count(server, users)
    again = cli("server", "init", "--db", server.db, check=False)
    assert again.returncode == 1 and "initialized already" in again.stderr and again.stdout == ""
    assert row_count(server, users) == users_before


def test_two_server_processes_on_one_postgresql_agree(server: Running, tmp_path: Path) -> None:
    """Several processes serve one team on PostgreSQL: an invite accepted through both is one member,
    one id pushed through both is one packet, a move made through one is what the other answers."""
    if server.engine != "postgresql":
        pytest.skip("several machines share PostgreSQL, not an SQLite file")
    port = free_port()
    with (tmp_path / "second.log").open("wb") as log:
        second = subprocess.Popen(
            [sys.executable, "-m", "cmp", "server", "--db", server.db, "--addr", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        wait_until_up(f"http://127.0.0.1:{port}", second, tmp_path / "second.log")
        owner = server.user("owner")
        other_base = f"http://127.0.0.1:{port}"
        bases = [server.base, other_base] * 8
        name = team(owner)
        code = owner.post(f"/v1/teams/{name}/invites", json={}).json()["code"]
        with ThreadPoolExecutor(16) as pool:
            accepted = list(pool.map(lambda base: httpx.post(f"{base}/v1/invites/{code}/accept", timeout=30), bases))
        assert sorted(a.status_code for a in accepted) == [201] + [410] * 15
        token = next(a.json()["token"] for a in accepted if a.status_code == 201)
        racers = [server.user(f"racer{n}") for n in range(16)]
        one_id = new_id()
        with ThreadPoolExecutor(16) as pool:
            pushed = list(
                pool.map(
                    lambda n: httpx.post(
                        f"{bases[n]}/v1/packets",
                        content=packet(one_id, goal=f"Racer {n}."),
                        headers=racers[n].headers,
                        timeout=30,
                    ),
                    range(16),
                )
            )
        assert sorted(p.status_code for p in pushed) == [201] + [409] * 15
        assert row_count(server, packets, packets.c.id == one_id) == 1
        body = packet()
        assert push(owner, body).status_code == 201
        newcomer = {"Authorization": f"Bearer {token}"}
        assert httpx.get(f"{other_base}/v1/packets/{id_of(body)}", headers=newcomer).status_code == 404
        assert owner.put(f"/v1/packets/{id_of(body)}/scope", json={"team": name}).status_code == 200
        assert httpx.get(f"{other_base}/v1/packets/{id_of(body)}", headers=newcomer).status_code == 200
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=15)
