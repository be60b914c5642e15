"""The server's administration commands as a user runs them: tokens per user, named, listed, revoked,
expiring, stored only as hashes; one-line errors, never a traceback."""

from __future__ import annotations

import hashlib
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from cmp.server import Storage
from cmp.server._schema import tokens
from tests.server.conftest import cli, free_port, wait_until_up


def test_tokens_issued_listed_and_revoked(tmp_path: Path) -> None:
    db = str(tmp_path / "admin" / "server.db")
    root = cli("server", "init", "--db", db).stdout.strip()
    laptop = cli("server", "issue-token", "laptop", "--user", "root", "--expires-in", "30", "--db", db).stdout.strip()
    alice = cli("server", "issue-token", "alice", "--email", "alice@example.org", "--db", db).stdout.strip()
    again = cli("server", "issue-token", "alice-ci", "--email", "alice@example.org", "--db", db).stdout.strip()
    storage = Storage(db)
    try:
        assert storage.user_for_token(laptop) == storage.user_for_token(root)  # a second token, one user
        assert storage.user_for_token(again) == storage.user_for_token(alice) != storage.user_for_token(root)
        with storage.engine.connect() as conn:
            stored = set(conn.execute(select(tokens.c.token_hash)).scalars())
        assert stored == {hashlib.sha256(t.encode()).hexdigest() for t in (root, laptop, alice, again)}
        listed = cli("server", "tokens", "--db", db).stdout
        assert all(t not in listed for t in (root, laptop, alice, again))
        assert "laptop" in listed and "expires 20" in listed and "expires never" in listed
        prefix = hashlib.sha256(laptop.encode()).hexdigest()[:8]
        assert prefix in listed
        assert cli("server", "revoke-token", prefix, "--db", db).returncode == 0
        assert storage.user_for_token(laptop) is None and storage.user_for_token(root) is not None
        assert cli("server", "revoke-token", "alice-ci", "--db", db).returncode == 0
        assert storage.user_for_token(again) is None
        missing = cli("server", "revoke-token", "nosuchlabel", "--db", db, check=False)
        assert missing.returncode == 1 and missing.stderr.count("\n") == 1
        unknown = cli("server", "issue-token", "x", "--user", "nobody", "--db", db, check=False)
        assert unknown.returncode == 1 and unknown.stdout == ""
    finally:
        storage.close()


@pytest.mark.parametrize(
    "args",
    [
        ["server", "migrate", "--db", "/proc/no-such-folder/server.db"],
        ["server", "--db", "postgresql://cmp:synthetic-password@127.0.0.1:1/none"],
        ["server", "--db", "mysql://host/name"],
        ["server", "--addr", "nowhere", "--db", "/proc/no-such-folder/server.db"],
    ],
)
def test_a_database_or_address_that_cannot_be_used_is_one_line_exit_2(args: list[str]) -> None:
    done = cli(*args, check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "synthetic-password" not in done.stderr


def test_export_then_import_into_the_other_engine_keeps_every_row(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A whole server as JSON Lines, from SQLite into a new PostgreSQL database: the same export
    back, and the tokens still work; a second import is refused, all or nothing."""
    source = str(tmp_path / "source.db")
    root = cli("server", "init", "--db", source).stdout.strip()
    storage = Storage(source)
    user_id = storage.user_for_token(root)
    assert user_id is not None
    team = storage.create_team(user_id, "backup")
    assert team is not None
    storage.create_invite(team.id, user_id)
    storage.push(user_id, team.id, "01JEXPORT00000000000000001", "2026-04-21T10:00:00.000000000Z", "Goal.", b'{"x":1}')
    storage.close()
    exported = cli("server", "export", "--db", source).stdout
    (tmp_path / "dump.jsonl").write_text(exported, encoding="utf-8")
    target = request.getfixturevalue("postgres").new_database()
    cli("server", "migrate", "--db", target)
    imported = cli("server", "import", str(tmp_path / "dump.jsonl"), "--db", target)
    assert "imported 6 rows" in imported.stderr
    assert cli("server", "export", "--db", target).stdout == exported
    restored = Storage(target)
    try:
        assert restored.user_for_token(root) == user_id
        assert restored.get_packet(user_id, "01JEXPORT00000000000000001") == b'{"x":1}'
    finally:
        restored.close()
    again = cli("server", "import", str(tmp_path / "dump.jsonl"), "--db", target, check=False)
    assert again.returncode == 1 and "holds users already" in again.stderr


def test_the_core_library_loads_none_of_the_servers_libraries() -> None:
    code = (
        "import sys, cmp, cmp.cli; cmp.check(b'{}'); cmp.Store('.'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('sqlalchemy', 'alembic', 'psycopg', 'starlette', 'uvicorn') or m.startswith('cmp.server')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"


def test_workers_serve_one_address_from_several_processes(tmp_path: Path) -> None:
    """--workers 2: two processes answer on the one port, over one database (a push through one
    connection is read through others, whichever process each lands on); SIGTERM stops them all."""
    db = str(tmp_path / "server.db")
    token = cli("server", "init", "--db", db).stdout.strip()
    refused = cli("server", "--db", db, "--workers", "2", "--metrics", check=False)
    assert refused.returncode == 2
    assert refused.stderr.endswith(": --metrics counts one process's requests: use it with --workers 1\n")
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "cmp", "server", "--db", db, "--addr", f"127.0.0.1:{port}", "--workers", "2"],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base, process, log)
        packet = (Path(__file__).resolve().parents[2] / "examples" / "typical-v0.2.json").read_bytes()
        headers = {"Authorization": f"Bearer {token}"}
        assert httpx.post(base + "/v1/packets", content=packet, headers=headers).status_code == 201
        packet_id = httpx.get(base + "/v1/packets", headers=headers).json()["packets"][0]["id"]
        answers = {httpx.get(f"{base}/v1/packets/{packet_id}", headers=headers).status_code for _ in range(20)}
        assert answers == {200}
        assert "2 processes" in log.read_text()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
