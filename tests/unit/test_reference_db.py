"""cmp._audit.reference_db on real SQLite files: how a store is opened (read without locks only when no
writer holds it), and what a reader notices of a store that changed under it."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

import cmp
from cmp._audit.reference_db import CHANGED_NAME, CHANGED_WRITTEN, DatabaseChanged, database_rows, open_database
from tests.support.stores import INSERT, packet, packet_row, store_of


def _rows(numbers: range) -> list[tuple[object, ...]]:
    return [packet_row(obj, cmp.dumps(cmp.loads(json.dumps(obj)))) for obj in map(packet, numbers)]


def test_a_wal_store_read_without_locks_notices_a_writer_that_checkpoints(tmp_path: Path) -> None:
    path = store_of(tmp_path / "ltm.db", _rows(range(50)), wal=True)
    store = open_database(str(path))
    try:
        assert store.immutable  # no -wal: no writer holds it
        assert len(list(database_rows(store))) == 50
        store.verify()  # nothing changed yet
        writer = sqlite3.connect(path)  # a writer comes, and checkpoints into the file
        writer.executemany(INSERT, _rows(range(50, 60)))
        writer.commit()
        writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        with pytest.raises(DatabaseChanged) as raised:
            store.verify()
        assert raised.value.retry and str(raised.value) == CHANGED_WRITTEN
    finally:
        store.close()
    again = open_database(str(path))  # the writer holds its -wal and -shm: read with locks, through them
    try:
        assert not again.immutable
        assert len(list(database_rows(again))) == 60
        again.verify()
    finally:
        again.close()
        writer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ltm.db"]


def test_a_reader_given_the_store_s_identity_refuses_another_file(tmp_path: Path) -> None:
    path = store_of(tmp_path / "ltm.db", _rows(range(3)))
    first = open_database(str(path))
    identity = first.identity
    first.close()
    other = store_of(tmp_path / "other.db", _rows(range(3, 6)))
    os.replace(other, path)
    with pytest.raises(DatabaseChanged) as raised:
        open_database(str(path), identity=identity)
    assert str(raised.value) == CHANGED_NAME and not raised.value.retry
