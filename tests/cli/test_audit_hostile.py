"""audit of hostile and odd stores: text columns that are not UTF-8, rows without a packet,
a store swapped under the workers, a packets that is no table or that SQLite reads for
ever, bodies of a hundred megabytes, WAL stores and read-only folders, hot journals and
link loops. Every store is a real SQLite file, every run a real ``python -m cmp``."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

import cmp
from cmp.cli._sources import SHARE_BYTES
from tests.support.cli import run_cli
from tests.support.packets import put
from tests.support.running import under_way
from tests.support.signals import default_stop_signals
from tests.support.stores import (
    TABLE,
    endless_store,
    packet,
    packet_row,
    store_of,
    wait_until_reading,
    without_override,
)

AWS = "AKIAIOSFODNN7EXAMPLE"
LEAK = AWS[4:12]  # eight characters past the key's public prefix: where none shows, nothing leaked

_audit = partial(run_cli, "audit", text=True, timeout=300)


def _canonical_rows(count: int) -> list[tuple[object, ...]]:
    return [packet_row(obj, cmp.dumps(cmp.loads(json.dumps(obj)))) for obj in map(packet, range(count))]


def _files(folder: Path) -> dict[str, str]:
    """Every file in ``folder`` by name, with the SHA-256 of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if not p.is_symlink()}


@pytest.mark.parametrize("form", ["text", "json", "sarif"])
def test_a_text_column_that_is_not_utf8_is_a_finding_and_the_audit_reads_on(tmp_path: Path, form: str) -> None:
    # SQLite hands back what a TEXT column holds; decoding it in Python raised an error that
    # quoted the column whole (a key in it, too), and the audit stopped there.
    path = store_of(tmp_path / "ltm.db", _canonical_rows(3000))
    connection = sqlite3.connect(path)
    not_utf8 = f"CAST(X'{AWS.encode().hex()}ff' AS TEXT)"
    for column, rowid in (("goal", 10), ("id", 20), ("owner_id", 2999)):
        connection.execute(f"UPDATE packets SET {column} = {not_utf8} WHERE rowid = ?", (rowid,))
    connection.commit()
    connection.close()
    result = _audit(str(path), "--format", form)
    summary = "cmp: audit: 3000 packets, 3 with findings: 3 row-text\n" if form == "text" else ""
    assert (result.returncode, result.stderr) == (1, summary)
    assert LEAK not in result.stdout
    if form == "json":
        results = json.loads(result.stdout)["results"]
        assert [[a["keyword"] for a in r["audit"]] + r["errors"] for r in results] == [["row-text"]] * 3
        messages = [r["audit"][0]["message"] for r in results]
        assert messages == [f"the row's {column} is not UTF-8 text" for column in ("goal", "id", "owner_id")]
        assert results[1]["id"] == "(not shown: 24 characters matching aws-key)"
    elif form == "sarif":
        (run,) = json.loads(result.stdout)["runs"]
        assert [item["properties"]["keyword"] for item in run["results"]] == ["row-text"] * 3
    else:
        assert len(result.stdout.splitlines()) == 3


def test_no_sqlite_message_that_may_quote_row_data_is_shown() -> None:
    from cmp._audit.reference_db import sqlite_words

    quoting = sqlite3.OperationalError(f"Could not decode to UTF-8 column 'goal' with text '{AWS}\ufffd'")
    assert sqlite_words(quoting) == "OperationalError"
    assert sqlite_words(sqlite3.DatabaseError(f"bad {AWS} here")) == "DatabaseError"
    assert sqlite_words(sqlite3.DatabaseError("database disk image is malformed")) == (
        "database disk image is malformed"
    )


def test_a_row_without_a_packet_is_not_ok_in_any_format(tmp_path: Path) -> None:
    path = tmp_path / "odd.db"
    rows = [("null-body", None), ("int-body", 7), ("real-body", 1.5)]
    store_of(
        path, [(ident, "", "", body, None, None, None) for ident, body in rows], table=TABLE.replace(" NOT NULL", "")
    )
    document = json.loads(_audit(str(path), "--format", "json").stdout)
    for result in document["results"]:
        assert (result["ok"], result["conforming"], result["accepted"]) == (False, False, False), result["id"]
        assert [(e["code"], e["keyword"]) for e in result["errors"]] == [("audit", "row-body")]
    assert [r["id"] for r in document["results"]] == [ident for ident, _ in rows]
    (run,) = json.loads(_audit(str(path), "--format", "sarif").stdout)["runs"]
    assert [(item["ruleId"], item["level"]) for item in run["results"]] == [("audit", "error")] * 3
    text = _audit(str(path))
    assert text.stdout.splitlines() == [
        f"{path}[null-body]: $: the body is NULL, not the packet's bytes [row-body]",
        f"{path}[int-body]: $: the body is an integer, not the packet's bytes [row-body]",
        f"{path}[real-body]: $: the body is a real number, not the packet's bytes [row-body]",
    ]
    assert text.stderr == "cmp: audit: 3 packets, 3 with findings: 3 row-body\n"


# Rows of which the audit prints a line each (their bodies are not canonical), so that the
# run's output fills the pipe the test leaves unread and holds the run up a few shares in.
SWAP_ROWS = 30_000


@pytest.mark.parametrize("swap", ["rename", "symlink"])
def test_a_store_swapped_under_the_workers_is_named_not_mixed(tmp_path: Path, swap: str) -> None:
    first = store_of(tmp_path / "a.db", [packet_row(packet(n)) for n in range(SWAP_ROWS)])
    other = tmp_path / "other.db"
    source = store_of(tmp_path / "source.db", [packet_row(packet(n, "01J9X8K2QZ7N4M0WXZ")) for n in range(SWAP_ROWS)])
    with sqlite3.connect(source) as connection:
        connection.execute("VACUUM INTO ?", (str(other),))  # a restore: another database, written whole
    connection.close()
    path = tmp_path / "ltm.db"
    if swap == "rename":
        first.rename(path)
    else:
        path.symlink_to(first)
    run, started = under_way("audit", str(path), "--jobs", "2")
    try:
        if swap == "rename":
            os.replace(other, path)
        else:
            (tmp_path / "next.db").symlink_to(other)
            os.replace(tmp_path / "next.db", path)
        rest, err = run.communicate(timeout=300)
    finally:
        run.kill()
        run.wait()
    assert run.returncode == 2
    lines = (started + rest).decode().splitlines()
    # What was printed is the first store's rows, in order, and nothing of the other's.
    expected = [
        f"{path}[{packet(n)['id']}]: $: the body is not the packet's canonical bytes [not-canonical]"
        for n in range(len(lines))
    ]
    assert lines == expected and 0 < len(lines) < SWAP_ROWS
    why = "changed while it was read: another file took its name"
    assert err.decode() == f"cmp: {path}: {why}; {len(lines)} packets were audited\n"  # no summary: cut short


def test_an_export_changed_under_the_workers_is_named_once(tmp_path: Path) -> None:
    # Every share of the file left failed the same way, and each said so on a line of its own.
    folder = tmp_path / "export"
    folder.mkdir()
    path = folder / "live.jsonl"
    line = json.dumps(put(packet(1), "tags[0]", "Bad Tag")).encode()
    count = 8 * SHARE_BYTES // len(line)
    path.write_bytes(b"\n".join([line] * count) + b"\n")
    run, started = under_way("audit", str(folder), "--jobs", "2")
    try:
        other = tmp_path / "other.jsonl"
        other.write_bytes(b'{"another": "file"}\n' * 200_000)
        os.replace(other, path)
        rest, err = run.communicate(timeout=300)
    finally:
        run.kill()
        run.wait()
    assert run.returncode == 2
    lines = (started + rest).decode().splitlines()
    said = err.decode().splitlines()
    assert 0 < len(lines) < count and len(said) == 2
    assert said[1].startswith(f"cmp: audit: {len(lines)} packets, {len(lines)} with findings")
    assert all(text.startswith(f"{path}:{number}: $.tags[0]: ") for number, text in enumerate(lines, 1))
    assert said[0] == f"cmp: {path}: changed while it was read: another file took its name"


VIEW = (
    "CREATE VIEW packets(id, created_at, goal, body, deleted_at, owner_id, team_id) AS "
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x, '', '', x'00', NULL, NULL, NULL FROM n"
)


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            VIEW,
            "packets is a view, not a table: the audit reads only a table (a view runs a query of the store's "
            "choosing, which may never end)",
        ),
        (
            "CREATE VIRTUAL TABLE packets USING fts5(id, created_at, goal, body, deleted_at, owner_id, team_id)",
            "packets is a virtual table, not a table: the audit reads only a table (a virtual table runs a "
            "module's code)",
        ),
        (
            TABLE.replace("goal TEXT NOT NULL", "goal TEXT GENERATED ALWAYS AS (upper(id)) VIRTUAL"),
            "the packets column goal is computed when read (a virtual generated column), not stored: the audit "
            "reads only stored columns",
        ),
    ],
    ids=["view", "virtual-table", "generated-column"],
)
def test_a_packets_that_is_no_table_of_stored_columns_is_refused(
    tmp_path: Path, schema: str, message: str, jobs: str
) -> None:
    path = tmp_path / "ltm.db"
    connection = sqlite3.connect(path)
    connection.execute(schema)
    connection.commit()
    connection.close()
    result = _audit(str(path), "--jobs", jobs, timeout=60)  # the view was read for ever, signals ignored
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"cmp: {path}: {message}\n")


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="watches the run through /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_stop_signal_ends_a_read_that_never_ends(tmp_path: Path, signum: signal.Signals) -> None:
    # SQLite runs the statement in C, where Python's signal handlers never ran: Ctrl-C did
    # nothing, and SIGTERM killed the process without its one line.
    path = endless_store(tmp_path / "endless.db")
    process = subprocess.Popen(
        [sys.executable, "-m", "cmp", "audit", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=default_stop_signals,  # SIGINT's default even in a shell's background job
    )
    try:
        wait_until_reading(process, path)
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 128 + signum
    assert out == b""
    assert err == (b"cmp: interrupted\n" if signum == signal.SIGINT else f"cmp: stopped by {signum.name}\n".encode())


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_deadline_ends_a_read_that_never_ends(tmp_path: Path, jobs: str) -> None:
    path = endless_store(tmp_path / "endless.db")
    result = _audit(str(path), "--deadline", "1", "--jobs", jobs, timeout=120)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == f"cmp: {path}: stopped at the deadline: --deadline 1 s passed; 0 packets were audited\n"
    document = _audit(str(path), "--deadline", "1", "--jobs", jobs, "--format", "json", timeout=120)
    (entry,) = json.loads(document.stdout)["results"]
    assert (entry["file"], entry["error"]) == (
        str(path),
        "stopped at the deadline: --deadline 1 s passed; 0 packets were audited",
    )


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_deadline_that_is_none_is_a_usage_error(tmp_path: Path, value: str) -> None:
    path = store_of(tmp_path / "ltm.db", _canonical_rows(1))
    result = _audit(str(path), f"--deadline={value}")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "cmp: --deadline must be a number of seconds above 0\n"


# Runs its arguments and prints, as JSON, their exit status, output and peak memory (in KiB):
# its one child is the audit, so the children's peak is the audit's.
MEASURED = """
import json, resource, subprocess, sys
run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps([run.returncode, run.stdout, run.stderr, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))
"""
BODY_BYTES = 96 << 20


@pytest.mark.parametrize(
    "kind",
    [
        "blob",
        pytest.param(
            "text",
            marks=pytest.mark.skipif(sys.version_info < (3, 11), reason="blob reads of a TEXT value need Python 3.11"),
        ),
    ],
)
def test_a_body_too_large_is_reported_without_being_read(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "large.db"
    body = f"zeroblob({BODY_BYTES})" if kind == "blob" else f"CAST(zeroblob({BODY_BYTES}) AS TEXT)"
    connection = sqlite3.connect(path)
    connection.execute(TABLE)
    connection.execute(f"INSERT INTO packets VALUES ('large', '', '', {body}, NULL, NULL, NULL)")
    connection.commit()
    connection.close()
    try:
        measured = subprocess.run(
            [sys.executable, "-c", MEASURED, sys.executable, "-m", "cmp", "audit", str(path)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        status, out, err, peak_kib = json.loads(measured.stdout)
    finally:
        path.unlink()  # 96 MiB: not left for pytest's kept temporary folders
    assert (status, err) == (1, "cmp: audit: 1 packets, 1 with findings: 1 size\n")
    assert out.splitlines() == [f"{path}[large]: $: packet is {BODY_BYTES} bytes, max is 32768"]
    # The body was read whole, and copied twice (peak 2.2 times the body); now it is not read.
    assert peak_kib * 1024 < BODY_BYTES // 2


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_wal_store_no_writer_holds_is_read_with_nothing_left_beside_it(tmp_path: Path, jobs: str) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    path = store_of(folder / "ltm.db", _canonical_rows(2500), wal=True)
    before = _files(folder)
    assert list(before) == ["ltm.db"]
    result = _audit(str(path), "--jobs", jobs)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == "cmp: audit: 2500 packets, 0 with findings: nothing to report\n"
    assert _files(folder) == before, "no -wal or -shm left, the database byte for byte as it was"


def test_a_wal_store_in_a_folder_the_auditor_may_not_write_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    path = store_of(folder / "ltm.db", _canonical_rows(10), wal=True)
    folder.chmod(0o555)
    try:
        probe = subprocess.run(
            [sys.executable, "-c", f"open({str(folder / 'probe')!r}, 'w')"],
            preexec_fn=without_override,
            capture_output=True,
        )
        if probe.returncode == 0:
            pytest.skip("this process cannot give up writing to read-only folders")
        result = subprocess.run(
            [sys.executable, "-m", "cmp", "audit", str(path)],
            capture_output=True,
            text=True,
            preexec_fn=without_override,
            timeout=120,
        )
    finally:
        folder.chmod(0o755)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == "cmp: audit: 10 packets, 0 with findings: nothing to report\n"
    assert sorted(p.name for p in folder.iterdir()) == ["ltm.db"]


def test_a_store_the_auditor_may_not_read_says_so(tmp_path: Path) -> None:
    path = store_of(tmp_path / "ltm.db", _canonical_rows(3))
    path.chmod(0o000)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "cmp", "audit", str(path)],
            capture_output=True,
            text=True,
            preexec_fn=without_override,
            timeout=120,
        )
    finally:
        path.chmod(0o644)
    if result.returncode == 0:
        pytest.skip("this process cannot give up reading files it has no permission for")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"cmp: {path}: cannot open: Permission denied\n"


def test_a_log_without_its_index_is_refused_saying_why(tmp_path: Path) -> None:
    # A copy of a live store (a backup taken with cp): its -wal holds the rows, and its -shm
    # is missing; SQLite would create one beside the store to read them.
    live = tmp_path / "live.db"
    writer = sqlite3.connect(live)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute(TABLE)
    writer.executemany("INSERT INTO packets VALUES (?, ?, ?, ?, ?, ?, ?)", _canonical_rows(10))
    writer.commit()
    folder = tmp_path / "copy"
    folder.mkdir()
    shutil.copy(live, folder / "ltm.db")
    shutil.copy(f"{live}-wal", folder / "ltm.db-wal")
    writer.close()
    before = _files(folder)
    result = _audit(str(folder / "ltm.db"))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"cmp: {folder / 'ltm.db'}: its write-ahead log (ltm.db-wal) holds transactions not yet in the database "
        "file, and without ltm.db-shm SQLite reads them only by creating that file beside the store, which the "
        "audit does not do; let a process that may write the folder checkpoint it first (sqlite3 ltm.db "
        "'PRAGMA wal_checkpoint')\n"
    )
    assert _files(folder) == before


def test_a_wal_and_shm_that_are_symbolic_links_are_refused_and_left_alone(tmp_path: Path) -> None:
    path = store_of(tmp_path / "ltm.db", _canonical_rows(3), wal=True)
    for suffix in ("wal", "shm"):
        (tmp_path / f"victim-{suffix}").write_bytes(b"not SQLite's to write")
        (tmp_path / f"ltm.db-{suffix}").symlink_to(tmp_path / f"victim-{suffix}")
    before = _files(tmp_path)
    result = _audit(str(path))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"cmp: {path}: ltm.db-wal beside it is a symbolic link, which SQLite refuses to open (it could point "
        "anywhere); the store was not read\n"
    )
    assert _files(tmp_path) == before


def test_a_hot_journal_is_named_and_left_alone(tmp_path: Path) -> None:
    # A writer's transaction caught half-way (a copy taken while it ran): only a connection
    # that may write the store can roll it back.
    source = tmp_path / "source.db"
    writer = sqlite3.connect(source, isolation_level=None)
    writer.execute(TABLE)
    writer.executemany("INSERT INTO packets VALUES (?, ?, ?, ?, ?, ?, ?)", _canonical_rows(20))
    writer.execute("PRAGMA cache_size=1")  # the transaction spills into the file before it commits
    writer.execute("BEGIN")
    writer.execute("UPDATE packets SET body = zeroblob(100000)")
    folder = tmp_path / "copy"
    folder.mkdir()
    shutil.copy(source, folder / "ltm.db")
    shutil.copy(f"{source}-journal", folder / "ltm.db-journal")
    writer.execute("ROLLBACK")
    writer.close()
    before = _files(folder)
    result = _audit(str(folder / "ltm.db"))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"cmp: {folder / 'ltm.db'}: a hot journal (ltm.db-journal) holds a transaction a writer did not finish; "
        "only a connection that may write the store can roll it back (its server, or sqlite3 run by a user who "
        "may write its folder), and the audit opens it read-only\n"
    )
    assert _files(folder) == before


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda link: link.symlink_to(link), "a symbolic link loop (or a chain of links too long to follow)"),
        (lambda link: link.symlink_to(link.parent / "gone.db"), "a symbolic link to nothing"),
    ],
    ids=["loop", "dangling"],
)
def test_a_link_that_leads_nowhere_says_which(tmp_path: Path, make: Callable[[Path], None], message: str) -> None:
    link = tmp_path / "ltm.db"
    make(link)
    result = _audit(str(link))
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"cmp: {link}: {message}\n")
