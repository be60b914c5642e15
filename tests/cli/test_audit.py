"""audit: a real SQLite store in WAL mode, with the reference server's table, re-checked
read-only (also while another connection writes to it), every reported finding checked."""

from __future__ import annotations

import datetime
import json
import sqlite3
import threading
from functools import partial
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import cmp
from tests.support.cli import run_cli
from tests.support.packets import full, put

AWS = "AKIAIOSFODNN7EXAMPLE"
TABLE = (
    "CREATE TABLE packets(id TEXT PRIMARY KEY, created_at TEXT NOT NULL, goal TEXT NOT NULL, "
    "body BLOB NOT NULL, deleted_at TEXT, owner_id TEXT, team_id TEXT)"
)
COUNT = 2000


def _packet(number: int, **changes: Any) -> dict[str, Any]:
    obj = full()
    obj["id"] = f"01J9X8K2QZ7N4M0WXY{number:08d}"
    obj["created_at"] = f"2026-04-21T10:{number // 60 % 60:02d}:{number % 60:02d}+02:00"
    obj.update(changes)
    return obj


def _row(obj: dict[str, Any], body: bytes, **row: Any) -> tuple[Any, ...]:
    if row.get("parse", True):  # the server's form: UTC, nine fraction digits
        when = cmp.loads(body).created_at_datetime.astimezone(datetime.timezone.utc)
        utc = when.strftime("%Y-%m-%dT%H:%M:%S.000000000Z")
    else:
        utc = ""
    return (
        row.get("id", obj["id"]),
        row.get("created_at", utc),
        row.get("goal", obj["goal"]),
        body,
        row.get("deleted_at"),
        "owner-1",
        "team-1",
    )


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, dict[str, set[str]]]:
    """A store of COUNT packets, and what the audit must report for each packet that has something."""
    path = tmp_path / "ltm.db"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute(TABLE)
    expected: dict[str, set[str]] = {}
    for number in range(COUNT):
        obj = _packet(number)
        body = cmp.dumps(cmp.loads(json.dumps(obj)))
        row: dict[str, Any] = {}
        if number % 97 == 1:  # a secret the server stored with the override
            obj = put(obj, "constraints[0]", f"The key {AWS} is old.")
            body = cmp.dumps(cmp.loads(json.dumps(obj)))
            expected[obj["id"]] = {"redaction aws-key"}
        elif number % 97 == 2:  # written by something other than the canonical writer
            body = json.dumps(obj).encode()
            expected[obj["id"]] = {"not-canonical"}
        elif number % 97 == 3:  # deleted: audited only with --include-deleted
            obj = put(obj, "goal", f"Deleted with {AWS} in it.")
            body = cmp.dumps(cmp.loads(json.dumps(obj)))
            row["deleted_at"] = "2026-05-01T00:00:00Z"
            expected["deleted:" + obj["id"]] = {"redaction aws-key"}
        elif number % 97 == 4:  # stored by a writer that skipped validation
            obj = put(obj, "tags[0]", "Bad Tag")
            body = json.dumps(obj, indent=2).encode()
            row["parse"] = False
            row["created_at"] = "2026-04-21T08:00:00Z"
            expected[obj["id"]] = {"pattern"}
        rows = [_row(obj, body, **row)]
        connection.executemany("INSERT INTO packets VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    # One row whose id, one whose goal and one whose created_at disagree with the body.
    connection.execute("UPDATE packets SET id = 'not-the-body-id' WHERE id = ?", (_packet(10)["id"],))
    expected["not-the-body-id"] = {"row-id"}
    connection.execute("UPDATE packets SET goal = 'another goal' WHERE id = ?", (_packet(11)["id"],))
    expected[_packet(11)["id"]] = {"row-goal"}
    connection.execute(
        "UPDATE packets SET created_at = '2026-04-21T10:00:12.000000001Z' WHERE id = ?", (_packet(12)["id"],)
    )
    expected[_packet(12)["id"]] = {"row-created_at"}
    connection.commit()
    connection.close()
    return path, expected


_audit = partial(run_cli, "audit", text=True, timeout=300)


def _reported(document: dict[str, Any]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for result in document["results"]:
        kinds = {e["keyword"] for e in result["errors"]} | {f"redaction {r['category']}" for r in result["redactions"]}
        kinds |= {a["keyword"] for a in result["audit"]}
        found[("deleted:" if result["deleted"] else "") + result["id"]] = kinds
    return found


def test_the_audit_reports_every_planted_problem_and_nothing_else(store: tuple[Path, dict[str, set[str]]]) -> None:
    path, expected = store
    before = path.read_bytes()
    result = _audit(str(path), "--format", "json")
    assert result.returncode == 1, result.stderr
    live = {key: kinds for key, kinds in expected.items() if not key.startswith("deleted:")}
    assert _reported(json.loads(result.stdout)) == live
    assert AWS[4:] not in result.stdout, "hits masked"
    every = _audit(str(path), "--format", "json", "--include-deleted")
    assert _reported(json.loads(every.stdout)) == expected
    assert path.read_bytes() == before, "the store is never written"
    text = _audit(str(path))
    assert text.stderr.startswith(f"cmp: audit: {COUNT - 21} packets, {len(live)} with findings: ")
    assert text.stderr.count("\n") == 1 and "audit: " not in text.stdout
    assert f"{path}[not-the-body-id]: $.id: the row's id is 'not-the-body-id'" in text.stdout


def test_the_audit_reads_while_the_server_writes(store: tuple[Path, dict[str, set[str]]]) -> None:
    path, expected = store
    stop = threading.Event()
    written = 0

    def server() -> None:
        nonlocal written
        connection = sqlite3.connect(path, timeout=30)
        number = COUNT
        while not stop.is_set():
            obj = _packet(number)
            body = cmp.dumps(cmp.loads(json.dumps(obj)))
            connection.execute("INSERT INTO packets VALUES (?, ?, ?, ?, ?, ?, ?)", _row(obj, body))
            connection.commit()
            number += 1
            written += 1
        connection.close()

    writer = threading.Thread(target=server)
    writer.start()
    try:
        result = _audit(str(path), "--format", "json")
    finally:
        stop.set()
        writer.join()
    assert result.returncode == 1, result.stderr
    live = {key: kinds for key, kinds in expected.items() if not key.startswith("deleted:")}
    assert _reported(json.loads(result.stdout)) == live, "the new good packets add nothing"
    assert written > 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        (b"not a database at all" * 100, "not an SQLite database, so not an ltm store (audit reads "),
        (b"x", "not an SQLite database, so not an ltm store (audit reads "),
        (b'{"ltm_version": "0.2"}\n', "not an SQLite database, so not an ltm store (audit reads "),
        (b"", "an empty file, so not an ltm store (audit reads "),
        ("CREATE TABLE notes(x)", "an SQLite database, but not an ltm store: it has no packets table (audit reads "),
        ("CREATE TABLE packets(id, created_at, goal)", "not an ltm store: its packets table has no columns body, "),
        (
            "CREATE TABLE packets(id, created_at, goal, body, deleted_at, owner_id)",
            "not an ltm store: its packets table has no column team_id\n",
        ),
    ],
)
def test_a_store_that_is_not_one_is_one_line_exit_2(tmp_path: Path, content: bytes | str | None, message: str) -> None:
    """A file that is no database, or a database that is no ltm store, is said to be that:
    before, SQLite took a file of a byte or none for an empty database, and each missing column was named."""
    path = tmp_path / "store.db"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:  # a database of this schema
        connection = sqlite3.connect(path)
        connection.execute(content)
        connection.commit()
        connection.close()
    result = _audit(str(path))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"cmp: {path}: {message}") and result.stderr.count("\n") == 1


def test_by_owner_counts_the_packets_with_findings(store: tuple[Path, dict[str, set[str]]]) -> None:
    path, expected = store
    live = [key for key in expected if not key.startswith("deleted:")]
    lines = _audit(str(path), "--by", "owner").stderr.splitlines()
    assert lines[-1] == f"cmp: audit: owner owner-1: {len(live)} packets with findings"


def test_a_folder_of_exports_is_audited_file_by_file_and_line_by_line(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    (folder / "2026").mkdir(parents=True)
    good = cmp.dumps(cmp.loads(json.dumps(_packet(1))))
    leaky = json.dumps(put(_packet(2), "constraints[0]", f"The key {AWS} is old."))
    (folder / "2026" / "a.json").write_bytes(good + b"\n")  # as fmt writes it: canonical
    (folder / "2026" / "b.json").write_bytes(json.dumps(_packet(3)).encode())  # conforming, not canonical
    (folder / "c.jsonl").write_bytes(json.dumps(_packet(4)).encode() + b"\n" + leaky.encode() + b"\n")
    (folder / "notes.txt").write_text("not a packet")
    result = _audit(str(folder), "--format", "json")
    assert result.returncode == 1, result.stderr
    reported = {
        (r.get("file"), r.get("line")): {a["keyword"] for a in r["audit"]} | {h["category"] for h in r["redactions"]}
        for r in json.loads(result.stdout)["results"]
    }
    assert reported == {
        (str(folder / "2026" / "b.json"), None): {"not-canonical"},
        (str(folder / "c.jsonl"), 2): {"aws-key"},
    }
    text = _audit(str(folder))
    assert text.stderr == "cmp: audit: 4 packets, 2 with findings: 1 not-canonical, 1 redaction aws-key\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = _audit(str(empty))
    assert nothing.returncode == 2 and nothing.stderr == f"cmp: {empty}: no *.json or *.jsonl file below it\n"


def test_workers_audit_what_one_process_audits(store: tuple[Path, dict[str, set[str]]], tmp_path: Path) -> None:
    path, _ = store
    export = tmp_path / "export"
    export.mkdir()
    bodies = [cmp.dumps(cmp.loads(json.dumps(_packet(n)))) for n in range(300)]
    leaky = json.dumps(put(_packet(7), "constraints[0]", f"The key {AWS} is old.")).encode()
    for n, body in enumerate(bodies):
        (export / f"p{n:03d}.json").write_bytes(body + b"\n" if n % 50 else json.dumps(json.loads(body)).encode())
    lines = [json.dumps(json.loads(body)).encode() for body in bodies]
    (export / "lines.jsonl").write_bytes(b"\n".join([*lines, leaky] * 4))
    for where in (str(path), str(export)):
        for form in ("text", "json", "sarif"):
            single = _audit(where, "--format", form, "--include-deleted")
            spread = _audit(where, "--format", form, "--include-deleted", "--jobs", "2")
            assert (spread.returncode, spread.stdout, spread.stderr) == (1, single.stdout, single.stderr), (where, form)
    # The export: six files not canonical, four leaky lines, every packet counted once.
    summary = _audit(str(export), "--jobs", "2").stderr
    assert summary == "cmp: audit: 1504 packets, 10 with findings: 6 not-canonical, 4 redaction aws-key\n"


def test_the_audit_as_sarif_validates_and_points_at_each_packet(store: tuple[Path, dict[str, set[str]]]) -> None:
    from tests.cli.test_cli_formats import _sarif_schema

    path, expected = store
    result = _audit(str(path), "--format", "sarif", "--jobs", "2")
    assert result.returncode == 1, result.stderr
    log = json.loads(result.stdout)
    jsonschema.validate(log, _sarif_schema())
    (run,) = log["runs"]
    found: dict[str, set[str]] = {}
    for item in run["results"]:
        (location,) = item["locations"]
        assert location["physicalLocation"]["artifactLocation"]["uri"] == f"file://{path}"
        (logical,) = location["logicalLocations"]
        kind = item["properties"].get("keyword") or item["ruleId"].replace("redaction/", "redaction ")
        found.setdefault(logical["name"], set()).add(kind)
        assert run["tool"]["driver"]["rules"][item["ruleIndex"]]["id"] == item["ruleId"]
    live = {key: kinds for key, kinds in expected.items() if not key.startswith("deleted:")}
    assert found == live
    assert AWS[4:] not in result.stdout


def test_workers_audit_while_the_server_writes(store: tuple[Path, dict[str, set[str]]]) -> None:
    path, expected = store
    stop = threading.Event()

    def server() -> None:
        connection = sqlite3.connect(path, timeout=30)
        number = COUNT
        while not stop.is_set():
            obj = _packet(number)
            connection.execute(
                "INSERT INTO packets VALUES (?, ?, ?, ?, ?, ?, ?)", _row(obj, cmp.dumps(cmp.loads(json.dumps(obj))))
            )
            connection.commit()
            number += 1
        connection.close()

    writer = threading.Thread(target=server)
    writer.start()
    try:
        result = _audit(str(path), "--format", "json", "--jobs", "2")
    finally:
        stop.set()
        writer.join()
    live = {key: kinds for key, kinds in expected.items() if not key.startswith("deleted:")}
    assert result.returncode == 1, result.stderr
    assert _reported(json.loads(result.stdout)) == live


def test_a_store_that_breaks_mid_run_is_one_line(store: tuple[Path, dict[str, set[str]]]) -> None:
    path, _ = store
    data = bytearray(path.read_bytes())
    page = 4096
    data[5 * page : 9 * page] = b"\xff" * (4 * page)  # pages of the table's rows, past its schema
    path.write_bytes(bytes(data))
    runs = [_audit(str(path), "--jobs", jobs) for jobs in ("1", "2")]
    for result in runs:
        assert result.returncode == 2, result.stderr
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"cmp: {path}: cannot read on (") and line.endswith(" packets were audited"), line
    # Workers audit the rows one process reads before the bad page, no fewer.
    assert runs[0].stdout == runs[1].stdout and runs[0].stderr == runs[1].stderr
    document = json.loads(_audit(str(path), "--format", "json", "--jobs", "2").stdout)
    assert document["results"][-1]["error"].startswith("cannot read on (")


def test_a_store_locked_by_another_connection_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute(TABLE)
    connection.execute("BEGIN EXCLUSIVE")  # a rollback-journal writer in the middle of its transaction
    try:
        result = _audit(str(path))
    finally:
        connection.execute("ROLLBACK")
        connection.close()
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"cmp: {path}: locked by another connection for 5 s (database is locked)\n"


def test_odd_rows_are_findings_not_crashes(tmp_path: Path) -> None:
    """Columns holding what the server never writes: numbers or NULL for a body, BLOBs and numbers
    for an owner, a secret in an id, a row at the largest rowid right after a full share."""
    path = tmp_path / "odd.db"
    connection = sqlite3.connect(path)
    connection.execute(TABLE.replace("body BLOB NOT NULL", "body BLOB"))
    good = _packet(1)
    body = cmp.dumps(cmp.loads(json.dumps(good)))
    rows = [_row(_packet(n), cmp.dumps(cmp.loads(json.dumps(_packet(n))))) for n in range(999)]
    connection.executemany("INSERT INTO packets VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    odd = [
        ("int-body", 10**12),  # bytes(10**12) would have asked for a terabyte
        ("negative-body", -3),
        ("real-body", 1.5),
        ("null-body", None),
    ]
    for ident, value in odd:
        connection.execute("INSERT INTO packets VALUES (?, '', '', ?, NULL, ?, NULL)", (ident, value, b"\xffowner"))
    leaky_id = f"key-{AWS}-x"
    connection.execute(
        "INSERT INTO packets(rowid, id, created_at, goal, body, owner_id, team_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (2**63 - 1, leaky_id, _row(good, body)[1], good["goal"], body, 7, "team-1"),
    )
    connection.commit()
    connection.close()
    runs = {
        (form, jobs): _audit(str(path), "--format", form, "--jobs", jobs, "--by", "owner")
        for form in ("text", "json", "sarif")
        for jobs in ("1", "2")
    }
    for (form, jobs), result in runs.items():
        assert result.returncode == 1 and (result.stderr == "") == (form != "text"), (form, jobs, result.stderr)
        assert AWS[4:] not in result.stdout + result.stderr, (form, jobs)
        assert (result.stdout, result.stderr) == (runs[(form, "1")].stdout, runs[(form, "1")].stderr)
    text = runs[("text", "1")].stdout
    summary = runs[("text", "1")].stderr
    for ident, kind in [("int-body", "an integer"), ("real-body", "a real number"), ("null-body", "NULL")]:
        assert f"{path}[{ident}]: $: the body is {kind}, not the packet's bytes [row-body]" in text
    assert "(not shown: 26 characters matching aws-key)" in text
    results = json.loads(runs[("json", "1")].stdout)["results"]
    assert {r["owner_id"] for r in results} >= {"\\xffowner", "7"}
    assert "cmp: audit: owner \\xffowner: 4 packets with findings\n" in summary


def test_a_without_rowid_table_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "norowid.db"
    connection = sqlite3.connect(path)
    connection.execute(TABLE + " WITHOUT ROWID")
    connection.close()
    result = _audit(str(path))
    assert result.returncode == 2
    why = "the packets table has no rowid (it is WITHOUT ROWID), and the audit reads rows in rowid order"
    assert result.stderr == f"cmp: {path}: {why}\n"


def test_the_store_gives_the_rows_within_the_bounds_in_rowid_order(tmp_path: Path) -> None:
    """cmp._audit.reference_db.rows: ``[first, last]`` with both ends in and None for no bound, deleted rows
    only when asked for; a path opened on the first row asked for, a connection given left open."""
    from cmp._audit.reference_db import DatabaseError, Row, database_rows, open_database

    path = tmp_path / "ltm.db"
    connection = sqlite3.connect(path)
    connection.execute(TABLE)
    for number in range(1, 7):  # rowids 10, 20, ... 60; the row at 30 deleted
        obj = _packet(number)
        values = _row(
            obj, cmp.dumps(cmp.loads(json.dumps(obj))), deleted_at="2026-05-01T00:00:00Z" if number == 3 else None
        )
        connection.execute(
            "INSERT INTO packets(rowid, id, created_at, goal, body, deleted_at, owner_id, team_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (10 * number, *values),
        )
    connection.commit()
    connection.close()
    every = [(10 * number, _packet(number)["id"]) for number in range(1, 7)]
    kept = [each for each in every if each[0] != 30]

    def ids(*args: Any, **kwargs: Any) -> list[tuple[int, str]]:
        return [(rowid, row.id) for rowid, row in database_rows(*args, **kwargs)]

    assert ids(str(path)) == kept and ids(str(path), include_deleted=True) == every
    assert ids(str(path), 20, 40, include_deleted=True) == every[1:4]
    assert ids(str(path), 15, 45) == [every[1], every[3]]
    assert ids(str(path), 50) == every[4:] and ids(str(path), None, 20) == every[:2]
    assert ids(str(path), 61) == [] and ids(str(path), 40, 30) == []
    store = open_database(str(path))
    try:
        assert ids(store, 40) == every[3:] and ids(store, last=10) == every[:1]
        assert store.one("SELECT count(*) FROM packets") == (6,)  # still open
    finally:
        store.close()
    first = _packet(1)
    body = cmp.dumps(cmp.loads(json.dumps(first)))
    created_at = _row(first, body)[1]
    assert list(database_rows(str(path), last=10)) == [
        (10, Row(first["id"], created_at, first["goal"], body, False, "owner-1", "team-1"))
    ]
    unopened = database_rows(str(tmp_path / "missing.db"))  # nothing is opened before a row is asked for
    with pytest.raises(DatabaseError, match="no such file"):
        next(unopened)
