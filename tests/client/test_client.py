"""cmp.Client against our own team server over real HTTP on 127.0.0.1, and against raw socket
servers for what no good server does: every call, every error status, a garbage answer, a
dropped connection, silence, 10 MB; the pre-flight proven by a server that got no request."""

from __future__ import annotations

import json
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import cmp
from cmp.client import (
    AnswerTooLarge,
    BadAnswer,
    BadRequest,
    Client,
    Conflict,
    ConnectionLost,
    CredentialsFile,
    Forbidden,
    ForeignInvite,
    Gone,
    NotConfigured,
    NotFound,
    PayloadTooLarge,
    PushRefused,
    ServerError,
    TimedOut,
    TLSFailure,
    Unauthorized,
    Unprocessable,
    Unreachable,
    login,
)
from tests.client.conftest import RawServer, http_answer, new_user
from tests.server.conftest import Running, free_port

AWS = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def fresh(goal: str = "Ship the client.") -> cmp.Packet:
    return cmp.Packet.new(goal=goal, next_step="Run the tests.")


def with_author(author: str) -> str:
    """A conforming packet whose only credential is in a string the format's pre-flight does not read."""
    data = fresh().to_dict()
    data["provenance"] = {"author_human": author}
    return json.dumps(data)


def client_of(server: Running, token: str | None = None, **options: Any) -> Client:
    return Client(server.base, token if token is not None else new_user(server), **options)


def test_push_ls_pull_move_rm_through_the_python_client(team_server: Running) -> None:
    """The issue's "done when": a Python program pushes, lists and pulls through cmp.Client."""
    with client_of(team_server) as client:
        assert client.healthz() == {"ok": True, "version": "0.2"}
        identity = client.whoami()
        assert identity.server == team_server.base and len(identity.token_fingerprint) == 8
        packet = fresh()
        assert client.push(packet) == packet.id
        assert client.push(packet) == packet.id  # the same bytes again: 201 again
        listing = client.ls()
        assert [(item.id, item.goal) for item in listing.packets] == [(packet.id, packet.goal)]
        assert listing.next_cursor is None
        assert client.pull(packet.id) == packet

        client.create_team(team := f"t-{packet.id[-8:].lower()}")
        client.move(packet.id, team)
        assert client.ls().packets == [] and [item.id for item in client.ls(team).packets] == [packet.id]
        client.move(packet.id, None)
        assert [item.id for item in client.ls().packets] == [packet.id]

        client.rm(packet.id)
        with pytest.raises(NotFound) as gone:
            client.pull(packet.id)
        assert str(gone.value) == "server returned 404: not found" and gone.value.status == 404


def test_push_sends_the_canonical_bytes_of_text_bytes_objects_and_packets(team_server: Running) -> None:
    packet = fresh()
    untidy = json.dumps(packet.to_dict(), indent=7)
    token = new_user(team_server)
    with Client(team_server.base, token) as client:
        for given in (untidy, untidy.encode(), packet.to_dict(), packet):
            assert client.push(given) == packet.id  # one packet: each form canonical, so never a 409
    answer = httpx.get(f"{team_server.base}/v1/packets/{packet.id}", headers={"Authorization": f"Bearer {token}"})
    assert answer.content == cmp.dumps(packet)


def test_listing_pages_with_a_cursor(team_server: Running) -> None:
    with client_of(team_server) as client:
        pushed = [client.push(fresh(f"Packet {n}.")) for n in range(3)]
        first = client.ls(limit=2)
        assert len(first.packets) == 2 and first.next_cursor
        rest = client.ls(limit=2, cursor=first.next_cursor)
        assert rest.next_cursor is None
        assert sorted(item.id for item in [*first.packets, *rest.packets]) == sorted(pushed)
        with pytest.raises(ValueError):
            client.ls(limit=501)


def test_the_team_calls_and_their_refusals(team_server: Running) -> None:
    owner, other = client_of(team_server), client_of(team_server)
    team = f"team-{time.monotonic_ns() % 10**9}"
    made = owner.create_team(team)
    assert made.name == team
    assert team in [t.name for t in owner.teams()]
    with pytest.raises(Conflict) as taken:
        other.create_team(team)
    assert str(taken.value) == "server returned 409: team name already taken"
    with pytest.raises(BadRequest) as bad:
        owner.create_team("Bad Name")
    assert bad.value.status == 400 and "team name must match" in str(bad.value)

    invite = owner.invite(team)
    assert invite.url == f"{team_server.base}/v1/invites/{invite.code}"
    joined = other.join(invite.url)  # the same server: as the caller, no new token
    assert joined.team == team and joined.token is None
    with pytest.raises(Gone) as used:
        other.join(invite.code)  # a bare code: this client's server
    assert used.value.status == 410

    members = owner.members(team)
    assert [m.role for m in members] == ["owner", "member"]
    with pytest.raises(Forbidden) as forbidden:
        other.delete_team(team)
    assert forbidden.value.status == 403
    other.leave(team)
    assert [m.role for m in owner.members(team)] == ["owner"]
    with pytest.raises(NotFound):
        other.members(team)  # not a member any more: 404, as a team that does not exist

    again = other.join(owner.invite(team).url)
    owner.remove_member(team, again.user_id)
    owner.delete_team(team)
    assert team not in [t.name for t in owner.teams()]


def test_a_bad_token_is_unauthorized_and_a_missing_one_never_sent(team_server: Running) -> None:
    with Client(team_server.base, "not-a-token") as client:
        with pytest.raises(Unauthorized) as rejected:
            client.ls()
        assert str(rejected.value) == "server returned 401: invalid token"
    with Client(team_server.base) as anonymous:
        assert anonymous.healthz()["ok"] is True
        with pytest.raises(NotConfigured):
            anonymous.ls()


def test_the_server_refusals_422_and_413(team_server: Running) -> None:
    with client_of(team_server) as client:
        leaky = fresh(f"Rotate {AWS} first.")
        with pytest.raises(Unprocessable) as refused:
            client.push(leaky, allow_unredacted=True)  # sent, as asked: our server refuses it
        assert refused.value.status == 422 and AWS not in str(refused.value) and "AKIA…" in str(refused.value)
        invite = client.invite(client.create_team(f"big-{leaky.id[-8:].lower()}").name)
    with Client(team_server.base) as newcomer, pytest.raises(PayloadTooLarge) as large:
        newcomer.join(invite.url, display="x" * 2000)  # an acceptance body over 1,024 bytes
    assert large.value.status == 413


@pytest.mark.parametrize("leak", ["goal", "author"])
def test_the_pre_flight_refuses_before_any_connection(leak: str, raw_server: Callable[..., RawServer]) -> None:
    """A key in the goal (the format's pre-flight) or in a string only the writer's rule reads:
    refused, one masked line, and the server never even saw a connection."""
    listening = raw_server(lambda connection, head: connection.sendall(http_answer("201 Created", b"{}")) or 0)
    packet: cmp.Packet | str = fresh(f"Rotate {AWS} first.") if leak == "goal" else with_author(GITHUB)
    with Client(listening.base, "t" * 48) as client, pytest.raises(PushRefused) as refused:
        client.push(packet)
    message = str(refused.value)
    assert message.startswith("not sent: ") and "\n" not in message
    assert AWS not in message and GITHUB not in message
    assert ("AKIA…" if leak == "goal" else "ghp_…") in message
    assert listening.requests == []


def test_a_pulled_packet_is_checked_before_the_caller_gets_it(raw_server: Callable[..., RawServer]) -> None:
    good = fresh()
    leaky = fresh(f"Rotate {AWS} first.")
    answers = {
        "not-conforming": json.dumps({"ltm_version": "0.2", "id": good.id}).encode(),
        "another": cmp.dumps(fresh("Another packet.")),
        "leaky": cmp.dumps(leaky),
    }
    for case, body in answers.items():
        listening = raw_server(lambda connection, head, body=body: connection.sendall(http_answer("200 OK", body)))
        with Client(listening.base, "t" * 48) as client, pytest.raises(BadAnswer) as refused:
            client.pull(leaky.id if case == "leaky" else good.id)
        assert AWS not in str(refused.value), case
    listening = raw_server(lambda connection, head: connection.sendall(http_answer("200 OK", cmp.dumps(leaky))))
    with Client(listening.base, "t" * 48) as client:
        assert client.pull(leaky.id, allow_unredacted=True) == leaky


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (http_answer("200 OK", b"<html>not json</html>"), BadAnswer),
        (http_answer("200 OK", b'{"packets": [{"id": 7}]}'), BadAnswer),
        (http_answer("200 OK", b"[" * 100_000), BadAnswer),  # nested past any packet: the intake's bound
        (http_answer("500 Internal Server Error", b'{"error": "internal error"}'), ServerError),
        (http_answer("503 Service Unavailable", b"busy", "Content-Type: text/plain\r\n"), ServerError),
        (b'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"packets": [', ConnectionLost),
        (b"not http at all\r\n\r\n", ConnectionLost),
    ],
    ids=["html", "wrong-shape", "deep", "500", "503", "cut-short", "not-http"],
)
def test_garbage_and_failures_are_typed_errors(
    answer: bytes, error: type[Exception], raw_server: Callable[..., RawServer]
) -> None:
    listening = raw_server(lambda connection, head: connection.sendall(answer))
    with Client(listening.base, "t" * 48, retries=0) as client, pytest.raises(error) as failed:
        client.ls()
    assert "\n" not in str(failed.value)


def test_a_server_that_echoes_the_token_or_a_key_has_its_words_masked(raw_server: Callable[..., RawServer]) -> None:
    token = "T0ken" * 9 + "xyz"
    echoed = json.dumps({"error": f"bad token {token} near {AWS}"}).encode()
    listening = raw_server(lambda connection, head: connection.sendall(http_answer("400 Bad Request", echoed)))
    with Client(listening.base, token) as client, pytest.raises(BadRequest) as refused:
        client.teams()
    assert token not in str(refused.value) and AWS not in str(refused.value)
    assert b"Authorization: Bearer " + token.encode() in listening.requests[0]


def _ten_megabytes(declared: bool) -> Callable[[socket.socket, bytes], int]:
    def answer(connection: socket.socket, head: bytes) -> int:
        size = 10 * 1024 * 1024
        length = f"Content-Length: {size}\r\n" if declared else ""
        connection.sendall(f"HTTP/1.1 200 OK\r\n{length}Connection: close\r\n\r\n".encode())
        sent = 0
        block = b" " * 65536
        try:
            while sent < size:
                connection.sendall(block)
                sent += len(block)
        except OSError:
            pass
        return sent

    return answer


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "until-close"])
def test_ten_megabytes_are_never_read(declared: bool, raw_server: Callable[..., RawServer]) -> None:
    listening = raw_server(_ten_megabytes(declared))
    with Client(listening.base, "t" * 48) as client, pytest.raises(AnswerTooLarge):
        client.pull(fresh().id)
    if not declared:  # the client stopped reading: the server could not write it all
        deadline = time.monotonic() + 30
        while not listening.sent and time.monotonic() < deadline:
            time.sleep(0.05)
        assert listening.sent[0] < 10 * 1024 * 1024


def test_a_silent_server_times_out(raw_server: Callable[..., RawServer]) -> None:
    def silent(connection: socket.socket, head: bytes) -> int:
        connection.recv(1)  # until the client gives up and closes
        return 0

    listening = raw_server(silent)
    with Client(listening.base, "t" * 48, timeout=0.5) as client, pytest.raises(TimedOut) as slow:
        client.ls()
    assert str(slow.value) == f"{listening.base} did not answer within 0.5 s"
    assert len(listening.requests) == 1  # a timeout is not retried


def test_a_trickling_server_times_out_too(raw_server: Callable[..., RawServer]) -> None:
    def trickle(connection: socket.socket, head: bytes) -> int:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
        try:
            for _ in range(200):
                connection.sendall(b" ")
                time.sleep(0.05)
        except OSError:
            pass
        return 0

    listening = raw_server(trickle)
    with Client(listening.base, "t" * 48, timeout=0.5) as client, pytest.raises(TimedOut):
        client.ls()


def test_connection_errors_are_retried_a_bounded_number_of_times(raw_server: Callable[..., RawServer]) -> None:
    dropping = raw_server(lambda connection, head: 0)  # reads the request, closes without a word
    with Client(dropping.base, "t" * 48, retries=2) as client:
        with pytest.raises(ConnectionLost):
            client.ls()  # safe to repeat: three tries
        assert len(dropping.requests) == 3
        with pytest.raises(ConnectionLost):
            client.create_team("once")  # not safe to repeat: one try
        assert len(dropping.requests) == 4
    with Client(f"http://127.0.0.1:{free_port()}", "t" * 48) as client, pytest.raises(Unreachable) as refused:
        client.ls()
    assert str(refused.value).startswith("cannot connect to http://127.0.0.1:")


def test_tls_failure_is_its_own_error(raw_server: Callable[..., RawServer]) -> None:
    plain = raw_server(lambda connection, head: 0, greet=b"HTTP/1.1 400 Bad Request\r\n\r\n")
    with Client(f"https://127.0.0.1:{plain.port}", "t" * 48, retries=0) as client, pytest.raises(TLSFailure):
        client.healthz()


def test_join_never_sends_the_token_to_another_server(raw_server: Callable[..., RawServer]) -> None:
    body = json.dumps(
        {"team": {"id": "T1", "name": "elsewhere"}, "user": {"id": "U1", "display": "invited-1"}, "token": "n" * 48}
    ).encode()
    foreign = raw_server(lambda connection, head: connection.sendall(http_answer("201 Created", body)))
    url = f"{foreign.base}/v1/invites/{'ab' * 24}"
    token = "m" * 48
    with Client(f"http://127.0.0.1:{free_port()}", token) as client:
        with pytest.raises(ForeignInvite) as refused:
            client.join(url)
        assert "new_identity=True" in str(refused.value) and token not in str(refused.value)
        assert foreign.requests == []
        joined = client.join(url, new_identity=True)
    assert (joined.server, joined.team, joined.token) == (foreign.base, "elsewhere", "n" * 48)
    assert token.encode() not in foreign.requests[0] and b"authorization" not in foreign.requests[0].lower()
    assert "n" * 48 not in repr(joined)


def test_the_credentials_file_is_the_owners_alone(tmp_path: Path) -> None:
    folder = tmp_path / "config" / "core-memory-packet"
    credentials = CredentialsFile(folder)
    credentials.save("http://127.0.0.1:1", "a" * 48)
    credentials.save("https://packets.example.org", "b" * 48)
    if sys.platform != "win32":
        assert stat.S_IMODE(credentials.path.stat().st_mode) == 0o600
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert credentials.read() == (
        "https://packets.example.org",
        {"http://127.0.0.1:1": "a" * 48, "https://packets.example.org": "b" * 48},
    )
    assert [p.name for p in folder.iterdir()] == ["credentials.json"]  # no temporary file left
    found = login({"CMP_CONFIG_DIR": str(folder)})
    assert (found.server, found.token) == ("https://packets.example.org", "b" * 48)
    assert "b" * 48 not in repr(found)


def test_the_login_order_and_ltms_files_read_only(tmp_path: Path) -> None:
    ltm = tmp_path / "ltm"
    ltm.mkdir()
    (ltm / "config.toml").write_text('host = "http://127.0.0.1:9/"\noutput = "human"\n')
    (ltm / "credentials").write_text("l" * 48 + "\n")
    before = {path.name: path.read_bytes() for path in ltm.iterdir()}
    environ = {"CMP_CONFIG_DIR": str(tmp_path / "ours"), "LTM_CONFIG_DIR": str(ltm)}
    found = login(environ)
    assert (found.server, found.token, found.source) == ("http://127.0.0.1:9", "l" * 48, "ltm's config")
    assert {path.name: path.read_bytes() for path in ltm.iterdir()} == before

    CredentialsFile(tmp_path / "ours").save("http://127.0.0.1:8", "o" * 48)
    assert login(environ).token == "o" * 48  # ours first
    with_env = login({**environ, "CMP_SERVER": "http://127.0.0.1:7", "CMP_TOKEN": "e" * 48})
    assert (with_env.server, with_env.token) == ("http://127.0.0.1:7", "e" * 48)
    # CMP_SERVER alone: the token kept for that very server, never another's.
    assert login({**environ, "CMP_SERVER": "http://127.0.0.1:8/"}).token == "o" * 48
    assert login({**environ, "CMP_SERVER": "http://127.0.0.1:6"}).token is None
    with pytest.raises(NotConfigured):
        login({"CMP_CONFIG_DIR": str(tmp_path / "none"), "LTM_CONFIG_DIR": str(tmp_path / "none")})


def test_httpx_loads_only_with_the_client() -> None:
    probe = (
        "import sys, cmp, cmp.cli._main, cmp.cli._store, cmp.integrations.mcp\n"
        "cmp.check(b'{}')\n"
        "before = 'httpx' in sys.modules\n"
        "cmp.Client\n"
        "print(before, 'httpx' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "False True\n"), done.stderr
