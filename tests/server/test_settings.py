"""The operator's settings, each on a server of its own (SQLite, uvicorn in a thread, real HTTP):
invite links from the external URL or, only behind a trusted proxy, the forwarded headers (flaw 8);
redaction off; the body deadline; the app mounted in another app; a start refused on an old schema."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

from cmp.server import Storage, StorageError, create_app
from tests.server.conftest import cli, free_port

AKIA = "AKIAIOSFODNN7EXAMPLE"


@contextmanager
def serving(app: Any) -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", proxy_headers=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def storage(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Storage]:
    made = Storage(tmp_path_factory.mktemp("settings") / "server.db")
    made.migrate()
    made.init()
    yield made
    made.close()


def owner_and_team(storage: Storage, name: str) -> dict[str, str]:
    user_id = storage.create_user(name)
    assert storage.create_team(user_id, name) is not None
    return {"Authorization": "Bearer " + storage.issue_token(user_id, name)}


def test_flaw8_invite_links_from_the_external_url_or_a_trusted_proxy(storage: Storage) -> None:
    forwarded = {"X-Forwarded-Host": "packets.example.org", "X-Forwarded-Proto": "https"}
    headers = owner_and_team(storage, "links")
    with serving(create_app(storage, external_url="https://team.example.com/ltm/")) as base:
        url = httpx.post(f"{base}/v1/teams/links/invites", headers={**headers, **forwarded}).json()["url"]
        assert url.startswith("https://team.example.com/ltm/v1/invites/")
    with serving(create_app(storage)) as base:
        url = httpx.post(f"{base}/v1/teams/links/invites", headers={**headers, **forwarded}).json()["url"]
        assert url.startswith(f"{base}/v1/invites/")
    with serving(create_app(storage, trust_proxy=True)) as base:
        url = httpx.post(f"{base}/v1/teams/links/invites", headers={**headers, **forwarded}).json()["url"]
        assert url.startswith("https://packets.example.org/v1/invites/")


def test_redaction_off_stores_what_on_refuses(storage: Storage) -> None:
    headers = owner_and_team(storage, "redaction")
    body = json.dumps(
        {
            "ltm_version": "0.2",
            "id": "01JREDACTIONOFF000000000001",
            "created_at": "2026-04-21T10:00:00Z",
            "goal": "Rotate the key.",
            "next_step": f"Replace {AKIA} in the vault.",
        }
    ).encode()
    with serving(create_app(storage)) as base:
        assert httpx.post(f"{base}/v1/packets", content=body, headers=headers).status_code == 422
    with serving(create_app(storage, redaction="off")) as base:
        assert httpx.post(f"{base}/v1/packets", content=body, headers=headers).status_code == 201


def test_a_slow_body_is_408(storage: Storage) -> None:
    headers = owner_and_team(storage, "slow")
    with serving(create_app(storage, body_deadline=0.5)) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            head = (
                f"POST /v1/packets HTTP/1.1\r\nHost: x\r\nAuthorization: {headers['Authorization']}\r\n"
                "Content-Length: 100\r\n\r\n{"
            )
            sock.sendall(head.encode())
            answer = sock.recv(4096).decode()
        assert answer.startswith("HTTP/1.1 408")


def test_the_app_mounts_in_another_app(storage: Storage) -> None:
    headers = owner_and_team(storage, "mounted")
    outer = Starlette(routes=[Mount("/ltm", app=create_app(storage))])
    with serving(outer) as base:
        assert httpx.get(f"{base}/ltm/v1/healthz").json() == {"ok": True, "version": "0.2"}
        url = httpx.post(f"{base}/ltm/v1/teams/mounted/invites", headers=headers).json()["url"]
        assert url.startswith(f"{base}/ltm/v1/invites/")
        assert httpx.post(url + "/accept").status_code == 201


def test_a_database_needing_migration_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "old.db"
    Storage(empty).revision()  # an empty file: no schema at all
    with pytest.raises(StorageError, match="server migrate"):
        create_app(empty.as_posix())
    refused = cli("server", "--db", str(empty), "--addr", f"127.0.0.1:{free_port()}", check=False)
    assert refused.returncode == 1 and "run 'core-memory-packet server migrate' first" in refused.stderr
    missing = cli("server", "--db", str(tmp_path / "none.db"), check=False)
    assert missing.returncode == 2 and "no database at" in missing.stderr
    assert not (tmp_path / "none.db").exists()


def _raw(packet_id: str, **members: object) -> bytes:
    return json.dumps({"ltm_version": "0.2", "id": packet_id, "created_at": "2026-04-21T10:00:00Z", **members}).encode()


def test_lenient_mode_and_redaction_flag_mode_store_flagged_packets(storage: Storage) -> None:
    headers = owner_and_team(storage, "flags")
    loose = _raw("01JLENIENT0000000000000001", goal="No next step.")  # schema error: next_step missing
    leaky = _raw("01JFLAGGED0000000000000001", goal="Rotate the key.", next_step=f"Replace {AKIA}.")
    with serving(create_app(storage)) as base:  # strict: both refused
        assert httpx.post(f"{base}/v1/packets", content=loose, headers=headers).status_code == 400
        assert httpx.post(f"{base}/v1/packets", content=leaky, headers=headers).status_code == 422
    with serving(create_app(storage, lenient=True, redaction="flag")) as base:
        assert httpx.post(f"{base}/v1/packets", content=loose, headers=headers).status_code == 201
        assert httpx.post(f"{base}/v1/packets", content=leaky, headers=headers).status_code == 201
        got = httpx.get(f"{base}/v1/packets/01JLENIENT0000000000000001", headers=headers)
        assert got.content == loose and got.headers["x-cmp-flags"] == "not-conforming"  # as it came
        assert httpx.get(f"{base}/v1/packets/01JFLAGGED0000000000000001", headers=headers).headers["x-cmp-flags"] == (
            "redaction"
        )
        listed = {p["id"]: p.get("flags") for p in httpx.get(f"{base}/v1/packets", headers=headers).json()["packets"]}
        assert listed == {"01JLENIENT0000000000000001": ["not-conforming"], "01JFLAGGED0000000000000001": ["redaction"]}
        no_id = httpx.post(f"{base}/v1/packets", content=b'{"ltm_version": "0.2", "goal": 5}', headers=headers)
        assert no_id.status_code == 400 and "needs an id" in no_id.json()["error"]
        assert httpx.post(f"{base}/v1/packets", content=b"{bad", headers=headers).status_code == 400  # not schema


def test_a_database_at_an_older_schema_is_refused_until_migrated(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    old = Storage(db)
    assert old.migrate("v1") == (None, "v1")
    with old.engine.begin() as conn:  # a v1 row: no flags column yet
        conn.exec_driver_sql("INSERT INTO users VALUES ('U1', NULL, 'root', '2026-01-01T00:00:00.000000Z')")
        conn.exec_driver_sql(
            "INSERT INTO packets (id, created_at, goal, body, owner_id, created_key) VALUES "
            "('01JOLD00000000000000000001', '2026-01-01T00:00:00Z', 'Old.', X'7B7D', 'U1', "
            "'2026-01-01T00:00:00.000000000Z')"
        )
    old.close()
    refused = cli("server", "--db", str(db), check=False)
    assert refused.returncode == 1 and "is at schema v1 and this server needs v2" in refused.stderr
    migrated = cli("server", "migrate", "--db", str(db))
    assert "schema v1 → v2" in migrated.stderr
    new = Storage(db)
    try:
        new.check_ready()
        assert new.list_packets("U1", None, 5, None) == [
            ("01JOLD00000000000000000001", "2026-01-01T00:00:00.000000000Z", "Old.", "")
        ]
    finally:
        new.close()


def test_metrics_only_when_asked_counted_by_route_template(storage: Storage) -> None:
    headers = owner_and_team(storage, "metrics")
    with serving(create_app(storage)) as base:
        assert httpx.get(f"{base}/metrics").status_code == 404
    with serving(create_app(storage, metrics=True)) as base:
        httpx.get(f"{base}/v1/packets/01JSECRETID000000000000001", headers=headers)
        httpx.post(f"{base}/v1/invites/{'a' * 48}/accept")
        httpx.request("BREW", f"{base}/v1/healthz")
        scraped = httpx.get(f"{base}/metrics")
        assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
        text = scraped.text
        assert 'cmp_server_requests_total{method="GET",route="/v1/packets/{id}",status="404"} 1' in text
        assert 'cmp_server_requests_total{method="POST",route="/v1/invites/{code}/accept",status="410"} 1' in text
        assert 'method="other",route="/v1/healthz",status="405"' in text
        assert 'cmp_server_request_duration_seconds_count{method="GET",route="/v1/packets/{id}"} 1' in text
        assert "01JSECRETID" not in text and "a" * 48 not in text


GHP = "ghp_" + "Zq3xW8vB2nM6kL1pR9tY4uI7oA5sD0fG3hJ2"


def test_the_writer_rule_refuses_a_credential_in_any_string(storage: Storage) -> None:
    headers = owner_and_team(storage, "writer")
    body = json.dumps(
        {
            "ltm_version": "0.2",
            "id": "01JWRITERRULE0000000000001",
            "created_at": "2026-04-21T10:00:00Z",
            "project": {"name": "repo", "ref": f"https://x-access-token:{GHP}@github.com/example/repo"},
            "goal": "Fix the export.",
            "next_step": "Time it.",
        }
    ).encode()
    with serving(create_app(storage)) as base:
        refused = httpx.post(f"{base}/v1/packets", content=body, headers=headers)
        assert refused.status_code == 422 and "project.ref/gh-token: ghp_…" in refused.json()["error"]
        assert GHP not in refused.text
    with serving(create_app(storage, redaction="off")) as base:
        assert httpx.post(f"{base}/v1/packets", content=body, headers=headers).status_code == 201


def test_a_database_failure_is_500_logged_by_type_and_the_next_request_reconnects(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A statement the database refuses (here: its packets table gone under the server) is 500 for
    that request alone, logged by the driver error's type (never its text); once the table is back,
    the server's own connection, discarded on the failure, is made anew and answers."""
    storage = Storage(tmp_path / "server.db")
    storage.migrate()
    headers = {"Authorization": "Bearer " + storage.init()}
    try:
        with serving(create_app(storage)) as base, caplog.at_level(logging.ERROR, logger="cmp.server"):
            assert httpx.get(base + "/v1/packets", headers=headers).status_code == 200
            with storage.engine.begin() as conn:
                conn.exec_driver_sql("ALTER TABLE packets RENAME TO packets_away")
            failed = httpx.get(base + "/v1/packets", headers=headers)
            assert (failed.status_code, failed.json()) == (500, {"error": "internal error"})
            assert "database error: the database failed: OperationalError" in caplog.text
            assert "packets" not in caplog.text
            with storage.engine.begin() as conn:
                conn.exec_driver_sql("ALTER TABLE packets_away RENAME TO packets")
            assert httpx.get(base + "/v1/packets", headers=headers).json() == {"packets": []}
    finally:
        storage.close()
