"""The command line against our own team server over HTTP on 127.0.0.1: REFERENCE-SERVER.md's demo
session with two users in two config folders (its transcript printed, tokens elided), every command,
the exit statuses, join's host rule, the reference client's stored login, save --push and sync."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import cmp
from cmp.client import Client
from tests.client.conftest import RawServer, config_env, http_answer, new_user
from tests.server.conftest import ROOT, Running, free_port

AWS = "AKIA" + "IOSFODNN7EXAMPLE"


class Shell:
    """``core-memory-packet`` run as one user, in a config folder of its own; a transcript kept."""

    def __init__(self, name: str, folder: Path, transcript: list[str], secrets: list[str], **env: str) -> None:
        self.name, self.folder, self.transcript, self.secrets = name, folder, transcript, secrets
        folder.mkdir(parents=True, exist_ok=True)
        self.env = config_env(folder, **env)

    def __call__(self, *args: str, stdin: str | None = None, status: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "cmp", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=self.folder,
            env=self.env,
        )
        shown = " ".join(args)
        for secret in self.secrets:
            shown = shown.replace(secret, "<token>")
            assert secret not in done.stdout and secret not in done.stderr, f"{shown}: a token was printed"
        self.transcript.append(f"[{self.name}] $ core-memory-packet {shown}" + (" < token" if stdin else ""))
        self.transcript.extend(f"    {line}" for line in (done.stdout + done.stderr).splitlines())
        if done.returncode:
            self.transcript.append(f"    (exit {done.returncode})")
        assert done.returncode == status, f"{shown}: exit {done.returncode}\n{done.stdout}{done.stderr}"
        return done

    def write_packet(self, name: str, goal: str) -> cmp.Packet:
        packet = cmp.Packet.new(goal=goal, next_step="Run the tests.")
        (self.folder / name).write_bytes(cmp.dumps(packet) + b"\n")
        return packet


def test_the_team_flow_of_two_users_in_two_config_folders(team_server: Running, tmp_path: Path) -> None:
    transcript: list[str] = []
    alice_token, bob_token = new_user(team_server, "alice"), new_user(team_server, "bob")
    secrets = [alice_token, bob_token]
    alice = Shell("alice", tmp_path / "alice", transcript, secrets)
    bob = Shell("bob", tmp_path / "bob", transcript, secrets)
    carol = Shell("carol", tmp_path / "carol", transcript, secrets)
    base = team_server.base
    team = f"demo-{os.getpid() % 100000}"

    alice("auth", base + "/", "not-a-token", status=1)
    assert "token rejected by server: invalid token" in transcript[-2]
    alice("auth", base + "/", alice_token)
    bob("auth", base, stdin=bob_token + "\n")  # the token on stdin: in no shell history
    for user in (alice, bob):
        kept = user.folder / "cmp-config" / "credentials.json"
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
        assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert "server: " + base in alice("whoami").stdout

    assert alice("teams", "create", team).stdout == f"created team {team}\n"
    alice("teams", "create", "Bad", status=1)
    assert team in alice("teams", "ls").stdout
    invite = alice("invite", "-t", team).stdout.strip()
    assert invite.startswith(f"{base}/v1/invites/")
    assert bob("join", invite).stdout == f"joined team {team}\n"  # as bob: his token, his own server
    bob("join", invite, status=1)
    assert "invite expired or already consumed" in transcript[-2]
    # carol has no login at all: the invite makes her a new user, whose token is kept for her.
    joined = carol("join", alice("invite", "-t", team).stdout.strip()).stdout
    assert f"authenticated to {base} as a new user" in joined and f"joined team {team}" in joined
    kept = json.loads((carol.folder / "cmp-config" / "credentials.json").read_text())
    secrets.append(kept["tokens"][base])
    members = alice("teams", "members", team).stdout.splitlines()
    assert members[0].split() == ["DISPLAY", "ROLE", "JOINED", "USER"] and len(members) == 4

    packet = bob.write_packet("handoff.json", "Demo <goal> & more")
    assert bob("push", "handoff.json", "-t", team).stdout == packet.id + "\n"
    assert bob("ls", "--remote").stdout == ""  # not in bob's personal scope
    listed = alice("ls", "--remote", "-t", team).stdout
    assert listed.startswith(f"{packet.id}  ") and listed.rstrip().endswith("Demo <goal> & more")
    alice("pull", packet.id, "-o", "pulled.json")
    assert (alice.folder / "pulled.json").read_bytes() == cmp.dumps(packet) + b"\n"
    assert carol("pull", packet.id).stdout == cmp.dumps(packet).decode() + "\n"
    carol("rm", packet.id, status=1)  # a member, not the pusher nor the owner
    bob("push", "handoff.json", "-t", "nosuch", status=1)
    alice("teams", "leave", team, status=1)
    assert alice("rm", packet.id).stdout == f"deleted {packet.id}\n"  # the team's owner may
    alice("rm", packet.id, status=1)
    assert alice("ls", "--remote", "-t", team).stdout == ""
    bob("teams", "rm", team, status=1)  # a member, not the owner: 403
    assert "server returned 403" in transcript[-2]
    bob("teams", "leave", team)
    listed = json.loads(alice("teams", "members", team, "--json").stdout)["members"]
    newcomer = next(m["user_id"] for m in listed if m["display"].startswith("invited-"))
    alice("teams", "remove", team, newcomer)
    assert [m["role"] for m in json.loads(alice("teams", "members", team, "--json").stdout)["members"]] == ["owner"]
    assert alice("teams", "rm", team).stdout == f"deleted team {team}\n"

    text = "\n".join(transcript)
    print(text.replace(base, "http://127.0.0.1:PORT"))
    assert all(secret not in text for secret in secrets)


def test_refusals_exit_1_and_usage_and_io_exit_2(
    team_server: Running, tmp_path: Path, raw_server: Callable[..., RawServer]
) -> None:
    transcript: list[str] = []
    nowhere = Shell("nobody", tmp_path / "nobody", transcript, [])
    nowhere.write_packet("p.json", "Ship it.")
    nowhere("push", "p.json", status=2)
    assert "no server configured" in transcript[-2]
    nowhere("push", "missing.json", status=2)
    nowhere("ls", "-t", "team", status=2)  # a team is the server's: --remote
    nowhere("ls", "--remote", "--limit", "0", status=2)

    listening = raw_server(lambda connection, head: connection.sendall(http_answer("201 Created", b"{}")) or 0)
    token = "t" * 48
    leaky = Shell("leaky", tmp_path / "leaky", transcript, [token], CMP_SERVER=listening.base, CMP_TOKEN=token)
    data = cmp.Packet.new(goal=f"Rotate {AWS} first.", next_step="Run the tests.").to_dict()
    (leaky.folder / "leak.json").write_text(json.dumps(data))
    done = leaky("push", "leak.json", status=1)
    assert "goal/aws-key: AKIA… (20 chars)" in done.stderr and "push: leak.json: not sent" in done.stderr
    assert AWS not in done.stderr
    leaky("push", "-", stdin=json.dumps(data), status=1)
    assert listening.requests == []  # refused before any connection

    gone = Shell(
        "gone", tmp_path / "gone", transcript, [token], CMP_SERVER=f"http://127.0.0.1:{free_port()}", CMP_TOKEN=token
    )
    gone("ls", "--remote", status=2)
    assert "cannot connect to" in transcript[-2]
    failing = raw_server(lambda connection, head: connection.sendall(http_answer("500 Oops", b"{}")) or 0)
    Shell("five", tmp_path / "five", transcript, [token], CMP_SERVER=failing.base, CMP_TOKEN=token)(
        "teams", "ls", status=2
    )
    server = Shell("user", tmp_path / "user", transcript, [], CMP_SERVER=team_server.base, CMP_TOKEN="bad")
    server("whoami", status=1)
    server("pull", "01JDEMO0000000000000000999", status=1)


def test_join_sends_a_token_only_to_its_own_server(
    team_server: Running, tmp_path: Path, raw_server: Callable[..., RawServer]
) -> None:
    body = json.dumps(
        {"team": {"id": "T1", "name": "elsewhere"}, "user": {"id": "U1", "display": "invited-1"}, "token": "n" * 48}
    ).encode()
    foreign = raw_server(lambda connection, head: connection.sendall(http_answer("201 Created", body)) or 0)
    token = new_user(team_server)
    user = Shell("dave", tmp_path / "dave", [], [token, "n" * 48])
    user("auth", team_server.base, token)
    invite = f"{foreign.base}/v1/invites/{'cd' * 24}"
    refused = user("join", invite, status=1)
    assert "not sent to another server" in refused.stderr and "--new-identity" in refused.stderr
    assert foreign.requests == []
    joined = user("join", invite, "--new-identity").stdout
    assert f"authenticated to {foreign.base} as a new user" in joined and "joined team elsewhere" in joined
    assert b"authorization" not in foreign.requests[0].lower()
    kept = json.loads((user.folder / "cmp-config" / "credentials.json").read_text())
    assert kept == {"server": foreign.base, "tokens": {team_server.base: token, foreign.base: "n" * 48}}
    user("auth", team_server.base)  # back: the token kept for that server, none read
    assert json.loads((user.folder / "cmp-config" / "credentials.json").read_text())["server"] == team_server.base


def test_the_reference_clients_login_serves_when_none_of_ours_is_set(team_server: Running, tmp_path: Path) -> None:
    token = new_user(team_server)
    user = Shell("ltm-user", tmp_path / "ltm-user", [], [token])
    ltm = user.folder / "ltm-config"
    ltm.mkdir()
    (ltm / "config.toml").write_text(f'host = "{team_server.base}"\noutput = "human"\n')
    (ltm / "credentials").write_text(token + "\n")
    before = {path.name: path.read_bytes() for path in ltm.iterdir()}
    assert user("whoami").stdout == f"server: {team_server.base} (from ltm's config)\n" + (
        f"token: sha256 {cmp.client.fingerprint(token)}…, accepted\n"
    )
    user.write_packet("p.json", "From ltm's login.")
    user("push", "p.json")
    assert {path.name: path.read_bytes() for path in ltm.iterdir()} == before
    assert not (user.folder / "cmp-config").exists()  # read only: nothing of ours written
    from_env = Shell("ci", tmp_path / "ci", [], [token], CMP_SERVER=team_server.base, CMP_TOKEN=token)
    assert "(from CMP_SERVER)" in from_env("whoami").stdout


def test_save_push_push_by_id_and_sync(team_server: Running, tmp_path: Path) -> None:
    token = new_user(team_server)
    user = Shell("erin", tmp_path / "erin", [], [token], CMP_SERVER=team_server.base, CMP_TOKEN=token)
    store = str(user.folder / "store")
    saved = user.write_packet("saved.json", "Saved and pushed.")
    done = user("save", "--push", "saved.json", "--store", store)
    assert done.stdout == saved.id + "\n" and f"pushed {saved.id}" in done.stderr
    only_here = user.write_packet("local.json", "Only in the store.")
    user("save", "local.json", "--store", store)
    by_id = user.write_packet("by-id.json", "Pushed by its id.")
    user("save", "by-id.json", "--store", store)
    assert user("push", by_id.id, "--store", store).stdout == by_id.id + "\n"
    only_there = cmp.Packet.new(goal="Only on the server.", next_step="Pull it.")
    with Client(team_server.base, token) as client:
        client.push(only_there)

    synced = user("sync", "--store", store)
    assert synced.stdout == f"pushed {only_here.id}\npulled {only_there.id}\n"
    assert "1 pushed, 1 pulled, 2 on both" in synced.stderr
    again = user("sync", "--store", store)
    assert again.stdout == "" and "0 pushed, 0 pulled, 4 on both" in again.stderr
    assert only_there.id in user("ls", "--store", store).stdout
    other_store = str(user.folder / "other-store")
    assert user("pull", only_there.id, "--save", "--store", other_store).stdout == cmp.dumps(only_there).decode() + "\n"
    assert user("ls", "--store", other_store).stdout.startswith(only_there.id)
    user("rm", only_here.id)  # remote only: the store keeps its file
    assert only_here.id in user("ls", "--store", store).stdout


def test_every_new_command_answers_help() -> None:
    for command in ("auth", "whoami", "push", "pull", "rm", "teams", "invite", "join", "sync"):
        done = subprocess.run(
            [sys.executable, "-m", "cmp", command, "--help"], capture_output=True, text=True, cwd=ROOT, timeout=60
        )
        assert done.returncode == 0 and "CMP_SERVER" in done.stdout, command
