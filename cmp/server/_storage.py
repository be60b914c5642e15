"""The server's storage: one layer over SQLAlchemy Core, on SQLite (embedded, WAL) or PostgreSQL (psycopg 3).

Every rule that must hold under concurrency is one statement the database serialises: an
insert that does nothing on a taken id, an invite consumed by an update that only an
unconsumed, unexpired row matches. SQLite write transactions begin IMMEDIATE (the write lock
first, so two writers never deadlock upgrading a read lock); PostgreSQL's row locks do the rest.
The statements every push, get and list runs are :class:`Session`'s, run by :class:`Batches`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import re
import secrets
import string
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal, TypeVar

from sqlalchemy import Connection, Engine, and_, create_engine, delete, event, exists, or_, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError
from ulid import ULID

from cmp.server._schema import invites, packets, team_members, teams, tokens, users

# Export's order: each table after the tables its rows point to.
TABLES = (users, tokens, teams, team_members, invites, packets)
EXPORT_FORMAT = "core-memory-packet server export"

INVITE_TTL = timedelta(days=7)
TOKEN_ALPHABET = string.digits + string.ascii_letters  # the reference's: 48 of [0-9a-zA-Z]
TOKEN_LENGTH = 48
_MIGRATIONS = "cmp.server:migrations"

T = TypeVar("T")
PushOutcome = Literal["stored", "same", "different", "taken"]
MoveOutcome = Literal["moved", "not found", "not pusher"]


class StorageError(Exception):
    """The database cannot be used as asked; the message is one line and holds no password."""


class DatabaseUnavailable(StorageError):
    """The database cannot be reached, read or written at all (a path, a connection, permissions)."""


class DatabaseFailed(DatabaseUnavailable):
    """A statement failed in the driver; the message is the driver error's type, never its text (which can
    quote the statement's parameters: packet text)."""


@dataclass(frozen=True, slots=True)
class Team:
    id: str
    name: str
    owner_id: str
    created_at: str


@dataclass(frozen=True, slots=True)
class TokenRow:
    hash8: str
    label: str
    user_id: str
    display: str
    created_at: str
    expires_at: str | None


def stamp(moment: datetime) -> str:
    """An instant as fixed-width UTC text (six fraction digits), whose text order is time order."""
    moment = moment.astimezone(timezone.utc)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond:06d}Z"


def seconds(text: str) -> str:
    """A stored instant as the wire shows it: UTC, whole seconds, ``Z``."""
    return text[:19] + "Z"


def now() -> datetime:
    return datetime.now(timezone.utc)


def hash_token(token: str) -> str:
    """What is stored of a token: its SHA-256 as lowercase hex (the reference's, and its clients' fingerprint)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_id() -> str:
    return str(ULID())


def created_key(instant_ns: int) -> str:
    """The listing key of a packet's created_at instant: UTC text with nine fraction digits."""
    whole, fraction = divmod(instant_ns, 1_000_000_000)
    days, rest = divmod(whole, 86_400)
    # Days since 1970-01-01 to a civil date (H. Hinnant's algorithm): datetime cannot hold year 0.
    days += 719_468
    era = days // 146_097
    day_of_era = days - era * 146_097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    year = year_of_era + era * 400 + (month <= 2)
    hour, rest = divmod(rest, 3600)
    minute, second = divmod(rest, 60)
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{fraction:09d}Z"


def reference_created_at(key: str) -> str:
    """The reference's created_at column: UTC, trailing fraction zeros (and a bare dot) trimmed."""
    head, fraction = key[:19], key[20:-1].rstrip("0")
    return f"{head}.{fraction}Z" if fraction else f"{head}Z"


def encode_cursor(key: str, packet_id: str) -> str:
    return base64.urlsafe_b64encode(f"{key}\n{packet_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str] | None:
    """The (key, id) a cursor names, None for text no listing gave out."""
    if len(cursor) > 200:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    key, newline, packet_id = text.partition("\n")
    if not newline or len(key) != 30 or not packet_id:
        return None
    return key, packet_id


def default_database() -> Path:
    """The embedded database's file: ``$CMP_SERVER_DB``, else the user's data folder."""
    named = os.environ.get("CMP_SERVER_DB")
    if named:
        return Path(named)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "core-memory-packet" / "server.db"


def database_url(db: str | os.PathLike[str] | None) -> str:
    """``--db``'s value as an SQLAlchemy URL: a path is SQLite's file; ``postgresql://`` goes through psycopg 3."""
    if db is None or str(db) == "":
        return f"sqlite:///{default_database()}"
    text = os.fspath(db)
    scheme, separator, _ = text.partition("://")
    if not separator:
        return f"sqlite:///{Path(text).absolute()}"
    if scheme in ("postgresql", "postgres"):
        return "postgresql+psycopg://" + text.partition("://")[2]
    if scheme in ("postgresql+psycopg", "sqlite"):
        return text
    raise StorageError(f"--db takes a file path, sqlite:///PATH or postgresql://…, not a {scheme}:// URL")


def shown_url(url: str) -> str:
    """The URL as it may be printed: its password masked."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(unreadable database URL)"


class Storage:
    """A server database. Methods are synchronous (the app runs the rarer ones in worker threads); what
    every request runs, the app runs through :attr:`batches`."""

    def __init__(self, db: str | os.PathLike[str] | None = None) -> None:
        self.url = database_url(db)
        try:
            parsed = make_url(self.url)
        except ArgumentError:
            raise StorageError("--db is not a database URL this server can use") from None
        self.engine: Engine
        self.path: Path | None
        if parsed.get_backend_name() == "sqlite":
            self.path = Path(parsed.database or "")
            # timeout: how long a writer waits for another's lock (sqlite3's busy handler).
            self.engine = create_engine(self.url, connect_args={"timeout": 10, "check_same_thread": False})
            event.listen(self.engine, "connect", _sqlite_connected)
            event.listen(self.engine, "begin", _sqlite_begin)
        else:
            self.path = None
            try:
                self.engine = create_engine(self.url, pool_size=8, max_overflow=8, pool_pre_ping=True)
            except (ArgumentError, ImportError) as exc:
                raise StorageError(f"cannot use {shown_url(self.url)}: {type(exc).__name__}") from None
        self._writer = self.engine.execution_options(cmp_write=True)
        self.dialect = self.engine.dialect.name
        self._dbapi_error: type[Exception] = self.engine.dialect.loaded_dbapi.Error
        self._batches: Batches | None = None

    def __repr__(self) -> str:
        return f"Storage({shown_url(self.url)!r})"

    @property
    def shown(self) -> str:
        return str(self.path) if self.path is not None else shown_url(self.url)

    def close(self) -> None:
        if self._batches is not None:
            self._batches.stop()
            self._batches = None
        self.engine.dispose()

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        with self._writer.begin() as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            yield conn

    @contextmanager
    def _session(self, *, write: bool = False) -> Iterator[Session]:
        """A :class:`Session` on a pooled connection, in a write transaction of its own when ``write``."""
        with self._write() if write else self._read() as conn:
            cursor = conn.connection.cursor()
            try:
                yield Session(cursor, self.dialect, self._dbapi_error)
            finally:
                cursor.close()

    def conninfo(self) -> str:
        """PostgreSQL: the URL as libpq reads it (psycopg's own connections, not SQLAlchemy's)."""
        return make_url(self.url).set(drivername="postgresql").render_as_string(hide_password=False)

    @property
    def batches(self) -> Batches:
        """The hot requests' worker thread (made on first use, stopped by :meth:`close`)."""
        with _BATCHES_MADE:
            if self._batches is None:
                self._batches = Batches(self)
            return self._batches

    def dedicated_connection(self) -> Any:
        """A DBAPI connection of its own, out of the pool, set up as the pool's are (SQLite's pragmas), in
        autocommit mode: its owner begins and commits transactions itself."""
        pooled = self.engine.raw_connection()
        connection: Any = pooled.driver_connection
        pooled.detach()
        if self.dialect == "postgresql":
            connection.autocommit = True
        return connection

    # -- migrations --------------------------------------------------------------------------

    def _alembic(self) -> Any:
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", _MIGRATIONS)
        return config

    def head(self) -> str:
        from alembic.script import ScriptDirectory

        found: str | None = ScriptDirectory.from_config(self._alembic()).get_current_head()
        assert found is not None
        return found

    def revision(self) -> str | None:
        """The schema's recorded revision, None for a database no migration ran on."""
        from alembic.runtime.migration import MigrationContext

        try:
            with self._read() as conn:
                current: str | None = MigrationContext.configure(conn).get_current_revision()
                return current
        except SQLAlchemyError as exc:
            raise DatabaseUnavailable(f"cannot read {self.shown}: {_reason(exc)}") from None

    def needs_migration(self) -> bool:
        return self.revision() != self.head()

    def migrate(self, target: str = "head") -> tuple[str | None, str | None]:
        """Apply every migration not applied yet, up to ``target`` (a revision, or the newest):
        (the revision before, the revision now)."""
        from alembic import command

        if self.path is not None:
            try:
                self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError as exc:
                raise DatabaseUnavailable(f"cannot make the folder of {self.path}: {exc.strerror}") from None
        before = self.revision()
        config = self._alembic()
        try:
            with self._write() as conn:
                config.attributes["connection"] = conn
                command.upgrade(config, target)
        except SQLAlchemyError as exc:
            raise DatabaseUnavailable(f"cannot migrate {self.shown}: {_reason(exc)}") from None
        return before, self.revision()

    def check_ready(self) -> None:
        """StorageError unless the database is at the newest schema (a server refuses to start otherwise)."""
        if self.path is not None and not self.path.exists():  # reading would make an empty file
            # A missing file is I/O, as a path that cannot be opened: exit 2 in the CLI.
            raise DatabaseUnavailable(f"no database at {self.path}: run 'core-memory-packet server init' first")
        current, head = self.revision(), self.head()
        if current != head:
            raise StorageError(
                f"the database {self.shown} is at schema {current or 'none'} and this server needs {head}: "
                "run 'core-memory-packet server migrate' first"
            )

    def ping(self) -> bool:
        """Whether the database answers a query (readiness)."""
        try:
            with self._read() as conn:
                conn.execute(select(1)).scalar()
            return True
        except SQLAlchemyError:
            return False

    # -- export and import ---------------------------------------------------------------------

    def export(self) -> Iterator[dict[str, Any]]:
        """The whole database as JSON-ready records: a header, then one record a row, each table in
        dependency order and by primary key (a packet's body as base64: its exact bytes)."""
        yield {"format": EXPORT_FORMAT, "version": 1, "schema": self.revision()}
        # One transaction, one snapshot of every table while servers write on (SQLite's read
        # transaction in WAL mode is one already).
        snapshot = {"isolation_level": "REPEATABLE READ"} if self.dialect == "postgresql" else {}
        with self.engine.connect().execution_options(**snapshot) as conn:
            for table in TABLES:
                for row in conn.execute(select(table).order_by(*table.primary_key.columns)).mappings():
                    record = dict(row)
                    if table is packets:
                        record["body"] = base64.b64encode(record["body"]).decode()
                    yield {"table": table.name, "row": record}

    def import_(self, records: Iterator[dict[str, Any]]) -> int:
        """Load an export into this database, which must be at the same schema and hold no users:
        all rows or none. The number of rows; StorageError for a record this schema has no place for."""
        header = next(records, None)
        if not isinstance(header, dict) or header.get("format") != EXPORT_FORMAT or header.get("version") != 1:
            raise StorageError("not a server export (its first line is not an export header)")
        if header.get("schema") != self.revision():
            raise StorageError(f"the export is of schema {header.get('schema')}, this database of {self.revision()}")
        by_name = {table.name: table for table in TABLES}
        count = 0
        with self._write() as conn:
            if conn.execute(select(users.c.id).limit(1)).first() is not None:
                raise StorageError(f"{self.shown} holds users already: import into a new database")
            for number, record in enumerate(records, start=2):
                table = by_name.get(str(record.get("table"))) if isinstance(record, dict) else None
                row = record.get("row") if table is not None else None
                if table is None or not isinstance(row, dict) or not set(row) <= set(table.columns.keys()):
                    raise StorageError(f"line {number}: not a row of this schema")
                if table is packets:
                    try:
                        row = {**row, "body": base64.b64decode(row["body"], validate=True)}
                    except (ValueError, TypeError, KeyError):
                        raise StorageError(f"line {number}: a packet's body is not base64") from None
                try:
                    conn.execute(table.insert().values(row))
                except SQLAlchemyError as exc:
                    raise StorageError(f"line {number}: {type(exc).__name__}") from None
                count += 1
        self.analyze()
        return count

    def analyze(self) -> None:
        """Refresh the planner's statistics: after a bulk load, PostgreSQL plans listings without its
        indexes until autovacuum has come by (a list of 50 took 130 ms in place of 0.1 ms)."""
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("ANALYZE")

    # -- users and tokens ----------------------------------------------------------------------

    def has_users(self) -> bool:
        with self._read() as conn:
            return conn.execute(select(users.c.id).limit(1)).first() is not None

    def create_user(self, display: str, email: str | None = None, *, conn: Connection | None = None) -> str:
        user_id = new_id()
        values = {"id": user_id, "email": email, "display": display, "created_at": stamp(now())}
        if conn is not None:
            conn.execute(users.insert().values(values))
            return user_id
        with self._write() as writing:
            writing.execute(users.insert().values(values))
        return user_id

    def init(self) -> str:
        """The first user, ``root``, and its token; StorageError when the database has users already."""
        with self._write() as conn:
            if conn.execute(select(users.c.id).limit(1)).first() is not None:
                raise StorageError(
                    f"{self.shown} is initialized already: 'server issue-token' gives more tokens, "
                    "'server tokens' lists them"
                )
            user_id = self.create_user("root", conn=conn)
            return self._issue(conn, user_id, "root", None)

    def find_user(self, ref: str) -> str | None:
        """A user's id by id, email or display name; StorageError when a display names several."""
        with self._read() as conn:
            for column in (users.c.id, users.c.email, users.c.display):
                found = conn.execute(select(users.c.id).where(column == ref).limit(2)).scalars().all()
                if len(found) > 1:
                    raise StorageError("several users have that display name: name the user by id or email")
                if found:
                    return str(found[0])
        return None

    def display(self, user_id: str) -> str:
        with self._read() as conn:
            return str(conn.execute(select(users.c.display).where(users.c.id == user_id)).scalar_one())

    def issue_token(self, user_id: str, label: str, expires_at: datetime | None = None) -> str:
        with self._write() as conn:
            return self._issue(conn, user_id, label, expires_at)

    def _issue(self, conn: Connection, user_id: str, label: str, expires_at: datetime | None) -> str:
        token = "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(TOKEN_LENGTH))
        conn.execute(
            tokens.insert().values(
                token_hash=hash_token(token),
                label=label,
                created_at=stamp(now()),
                user_id=user_id,
                expires_at=None if expires_at is None else stamp(expires_at),
            )
        )
        return token

    def user_for_token(self, token: str) -> str | None:
        """The user a live token belongs to; None for an unknown, revoked or expired one."""
        with self._session() as session:
            return finish(session.user_for_token(token))

    def list_tokens(self) -> list[TokenRow]:
        query = (
            select(tokens, users.c.display)
            .join(users, users.c.id == tokens.c.user_id)
            .order_by(tokens.c.created_at, tokens.c.token_hash)
        )
        with self._read() as conn:
            return [
                TokenRow(row.token_hash[:8], row.label, row.user_id, row.display, row.created_at, row.expires_at)
                for row in conn.execute(query)
            ]

    def revoke_token(self, ref: str) -> int:
        """Delete the token whose hash starts with ``ref`` (8 to 64 hex digits) or whose label is ``ref``:
        how many went (0 or 1); StorageError when ``ref`` names several."""
        ref = ref.strip()
        hexdigits = len(ref) >= 8 and all(c in "0123456789abcdef" for c in ref)
        match = tokens.c.token_hash.startswith(ref, autoescape=True) if hexdigits else tokens.c.label == ref
        with self._write() as conn:
            found = conn.execute(select(tokens.c.token_hash).where(match).limit(2)).scalars().all()
            if len(found) > 1:
                raise StorageError("that names several tokens: give more of the hash 'server tokens' shows")
            if not found:
                return 0
            conn.execute(delete(tokens).where(tokens.c.token_hash == found[0]))
            return 1

    # -- packets -------------------------------------------------------------------------------

    def push(
        self, user_id: str, team_id: str | None, packet_id: str, key: str, goal: str, body: bytes, flags: str = ""
    ) -> PushOutcome:
        """Store a judged packet's canonical ``body`` under its id, in the caller's scope (``team_id`` None:
        personal): :meth:`Session.push`, in a transaction of its own."""
        with self._session(write=True) as session:
            return finish(session.push(user_id, team_id, packet_id, key, goal, body, flags))

    def _insert_ignoring(self, table: Any, values: dict[str, Any]) -> Any:
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            return pg_insert(table).values(values).on_conflict_do_nothing()
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table).values(values).on_conflict_do_nothing()

    @staticmethod
    def _readable(user_id: str) -> Any:
        member = exists().where(team_members.c.team_id == packets.c.team_id, team_members.c.user_id == user_id)
        return and_(
            packets.c.deleted_at.is_(None),
            or_(and_(packets.c.team_id.is_(None), packets.c.owner_id == user_id), member),
        )

    def get_packet(self, user_id: str, packet_id: str) -> bytes | None:
        """The canonical bytes of a live packet the caller may read; None otherwise (whatever the reason)."""
        found = self.get_flagged(user_id, packet_id)
        return None if found is None else found[0]

    def get_flagged(self, user_id: str, packet_id: str) -> tuple[bytes, str] | None:
        """:meth:`get_packet`'s bytes, and the packet's flags."""
        with self._session() as session:
            return finish(session.get_flagged(user_id, packet_id))

    def list_packets(
        self, user_id: str, team_id: str | None, limit: int, after: tuple[str, str] | None
    ) -> list[tuple[str, str, str, str]]:
        """(id, created_key, goal, flags) of live packets in one scope: :meth:`Session.list_packets`."""
        with self._session() as session:
            return finish(session.list_packets(user_id, team_id, limit, after))

    def delete_packet(self, user_id: str, packet_id: str) -> bool:
        """Soft-delete: a personal packet by its owner, a team packet by its pusher or the team's owner."""
        team_owner = exists().where(teams.c.id == packets.c.team_id, teams.c.owner_id == user_id)
        allowed = or_(
            and_(packets.c.team_id.is_(None), packets.c.owner_id == user_id),
            and_(packets.c.team_id.is_not(None), or_(packets.c.owner_id == user_id, team_owner)),
        )
        statement = (
            update(packets)
            .where(packets.c.id == packet_id, packets.c.deleted_at.is_(None), allowed)
            .values(deleted_at=stamp(now()))
        )
        with self._write() as conn:
            return bool(conn.execute(statement).rowcount == 1)

    def move_packet(self, user_id: str, packet_id: str, team_id: str | None) -> MoveOutcome:
        """Move a live packet the caller pushed and can read into personal scope or a team (metadata only)."""
        with self._write() as conn:
            row = conn.execute(
                select(packets.c.owner_id).where(packets.c.id == packet_id, self._readable(user_id)).with_for_update()
            ).first()
            if row is None:
                return "not found"
            if row.owner_id != user_id:
                return "not pusher"
            conn.execute(update(packets).where(packets.c.id == packet_id).values(team_id=team_id))
            return "moved"

    # -- teams ---------------------------------------------------------------------------------

    def team_for(self, user_id: str, name: str) -> tuple[Team, str] | None:
        """The team ``name`` and the caller's role in it; None when it does not exist or the caller is not in it."""
        with self._session() as session:
            return finish(session.team_for(user_id, name))

    def create_team(self, user_id: str, name: str) -> Team | None:
        """A new team owned by the caller; None when the name is taken."""
        moment = stamp(now())
        team = Team(new_id(), name, user_id, moment)
        try:
            with self._write() as conn:
                conn.execute(teams.insert().values(id=team.id, name=name, owner_id=user_id, created_at=moment))
                conn.execute(
                    team_members.insert().values(team_id=team.id, user_id=user_id, role="owner", joined_at=moment)
                )
        except IntegrityError:
            return None
        return team

    def list_teams(self, user_id: str) -> list[Team]:
        query = (
            select(teams)
            .join(team_members, team_members.c.team_id == teams.c.id)
            .where(team_members.c.user_id == user_id)
            .order_by(teams.c.created_at, teams.c.id)
        )
        with self._read() as conn:
            return [Team(row.id, row.name, row.owner_id, row.created_at) for row in conn.execute(query)]

    def delete_team(self, team_id: str) -> None:
        """In one transaction: its live packets soft-deleted and made their pushers' (personal, deleted),
        its invites and memberships gone, the team gone (its name free again)."""
        with self._write() as conn:
            conn.execute(
                update(packets)
                .where(packets.c.team_id == team_id, packets.c.deleted_at.is_(None))
                .values(deleted_at=stamp(now()))
            )
            conn.execute(update(packets).where(packets.c.team_id == team_id).values(team_id=None))
            conn.execute(delete(invites).where(invites.c.team_id == team_id))
            conn.execute(delete(team_members).where(team_members.c.team_id == team_id))
            conn.execute(delete(teams).where(teams.c.id == team_id))

    def members(self, team_id: str) -> list[dict[str, str]]:
        query = (
            select(
                team_members.c.user_id, team_members.c.role, team_members.c.joined_at, users.c.display, users.c.email
            )
            .join(users, users.c.id == team_members.c.user_id)
            .where(team_members.c.team_id == team_id)
            .order_by(team_members.c.joined_at, team_members.c.user_id)
        )
        with self._read() as conn:
            rows = conn.execute(query).all()
        found = []
        for row in rows:
            item = {
                "user_id": row.user_id,
                "display": row.display,
                "role": row.role,
                "joined_at": seconds(row.joined_at),
            }
            if row.email:
                item["email"] = row.email
            found.append(item)
        return found

    def remove_member(self, team_id: str, user_id: str) -> bool:
        """Take a member (never the owner) out of a team; False when they were not in it."""
        statement = delete(team_members).where(
            team_members.c.team_id == team_id, team_members.c.user_id == user_id, team_members.c.role != "owner"
        )
        with self._write() as conn:
            return bool(conn.execute(statement).rowcount == 1)

    def create_invite(self, team_id: str, user_id: str) -> tuple[str, datetime]:
        """A single-use code (48 hex characters) for the team, and when it expires (7 days on)."""
        code = secrets.token_hex(24)
        created = now()
        expires = created + INVITE_TTL
        with self._write() as conn:
            conn.execute(
                invites.insert().values(
                    code=code, team_id=team_id, created_by=user_id, created_at=stamp(created), expires_at=stamp(expires)
                )
            )
        return code, expires

    def _consume(self, conn: Connection, code: str, user_id: str) -> Team | None:
        moment = stamp(now())
        consumed = conn.execute(
            update(invites)
            .where(invites.c.code == code, invites.c.consumed_at.is_(None), invites.c.expires_at > moment)
            .values(consumed_at=moment, consumed_by=user_id)
        )
        if consumed.rowcount != 1:
            return None
        row = conn.execute(
            select(teams).join(invites, invites.c.team_id == teams.c.id).where(invites.c.code == code)
        ).one()
        conn.execute(
            self._insert_ignoring(
                team_members, {"team_id": row.id, "user_id": user_id, "role": "member", "joined_at": moment}
            )
        )
        return Team(row.id, row.name, row.owner_id, row.created_at)

    def accept_invite(self, code: str, user_id: str) -> Team | None:
        """An existing user joins through an invite (a member already keeps their role); None when the
        code is unknown, used, expired or its team gone."""
        with self._write() as conn:
            return self._consume(conn, code, user_id)

    def accept_invite_as_new_user(self, code: str, display: str) -> tuple[str, str, Team, str] | None:
        """A new user, their token and their membership, all or nothing: (user id, display, team, token)."""

        user_id = new_id()
        display = display or "invited-" + user_id[-6:]
        try:
            with self._write() as conn:
                conn.execute(users.insert().values(id=user_id, email=None, display=display, created_at=stamp(now())))
                team = self._consume(conn, code, user_id)
                if team is None:
                    raise _InviteGone  # rolls the new user back
                token = self._issue(conn, user_id, display, None)
        except _InviteGone:
            return None
        return user_id, display, team, token


# -- the hot statements, and the thread that batches them ------------------------------------------
#
# A request's database work costs far more through SQLAlchemy's pool, its transaction events and a
# thread per call (half a millisecond for a token lookup) than the statement itself (ten microseconds
# on SQLite). The statements every push, get and list runs are therefore plain SQL on a DBAPI cursor,
# in one place (:class:`Session`): :class:`Storage`'s methods run them on a pooled connection,
# :class:`Batches` on the one connection its thread owns.

_STATEMENTS = {
    "token": "SELECT user_id FROM tokens WHERE token_hash = %(hash)s AND (expires_at IS NULL OR expires_at > %(now)s)",
    "team": "SELECT teams.id, teams.name, teams.owner_id, teams.created_at, team_members.role FROM teams"
    " JOIN team_members ON team_members.team_id = teams.id"
    " WHERE teams.name = %(name)s AND team_members.user_id = %(user)s",
    "get": "SELECT body, flags FROM packets WHERE id = %(id)s AND deleted_at IS NULL"
    " AND ((team_id IS NULL AND owner_id = %(user)s) OR EXISTS (SELECT 1 FROM team_members"
    " WHERE team_members.team_id = packets.team_id AND team_members.user_id = %(user)s))",
    # A get's two statements in one (one round trip): the token's user, and the packet it may read.
    "token and get": "SELECT tokens.user_id, packets.body, packets.flags FROM tokens LEFT JOIN packets"
    " ON packets.id = %(id)s AND packets.deleted_at IS NULL AND ((packets.team_id IS NULL AND packets.owner_id"
    " = tokens.user_id) OR EXISTS (SELECT 1 FROM team_members WHERE team_members.team_id = packets.team_id"
    " AND team_members.user_id = tokens.user_id))"
    " WHERE tokens.token_hash = %(hash)s AND (tokens.expires_at IS NULL OR tokens.expires_at > %(now)s)",
    "list": "SELECT id, created_key, goal, flags FROM packets WHERE {scope} AND deleted_at IS NULL{after}"
    " ORDER BY created_key DESC, id DESC LIMIT %(limit)s",
    "insert": "INSERT INTO packets (id, created_at, goal, body, owner_id, team_id, created_key, flags)"
    " VALUES (%(id)s, %(created_at)s, %(goal)s, %(body)s, %(owner_id)s, %(team_id)s, %(created_key)s, %(flags)s)"
    " ON CONFLICT DO NOTHING",
    "held": "SELECT owner_id, team_id, deleted_at, body FROM packets WHERE id = %(id)s{lock}",
    "revive": "UPDATE packets SET created_at = %(created_at)s, goal = %(goal)s, body = %(body)s,"
    " owner_id = %(owner_id)s, team_id = %(team_id)s, created_key = %(created_key)s, flags = %(flags)s,"
    " deleted_at = NULL WHERE id = %(id)s",
}


def _statements(dialect: str) -> dict[str, str]:
    """The statements in a dialect's placeholders (psycopg's ``%(name)s``, sqlite3's ``:name``)."""
    found: dict[str, str] = {}
    for name, text in _STATEMENTS.items():
        if name == "list":
            scopes = (("personal", "team_id IS NULL AND owner_id = %(user)s"), ("team", "team_id = %(team)s"))
            for scope, where in scopes:
                for after, tail in (("", ""), (" after", " AND (created_key, id) < (%(after_key)s, %(after_id)s)")):
                    found[f"list {scope}{after}"] = text.format(scope=where, after=tail)
        elif name == "held":  # the row the push goes on with, locked on PostgreSQL (SQLite's whole file is)
            found[name] = text.format(lock=" FOR UPDATE" if dialect == "postgresql" else "")
        else:
            found[name] = text
    if dialect != "postgresql":
        found = {name: re.sub(r"%\((\w+)\)s", r":\1", text) for name, text in found.items()}
    return found


_DIALECT_STATEMENTS: dict[str, dict[str, str]] = {}


class Session:
    """The hot statements on one cursor: a DBAPI one, or psycopg's asynchronous one. A driver's error is
    :class:`DatabaseFailed`, by its type alone. Its methods are coroutines either way; on a synchronous
    cursor they never suspend, and :func:`finish` runs them to their end at once.

    Within one session a token is looked up once (``user_for_token`` remembers it): a session lives for
    one request, or one batch of writes that had all arrived before it began, so a revocation that
    committed before a request arrived is always seen."""

    def __init__(self, cursor: Any, dialect: str, errors: type[Exception], *, asynchronous: bool = False) -> None:
        self.cursor = cursor
        self.errors = errors
        self.asynchronous = asynchronous
        if dialect not in _DIALECT_STATEMENTS:
            _DIALECT_STATEMENTS[dialect] = _statements(dialect)
        self.sql = _DIALECT_STATEMENTS[dialect]
        self._users: dict[str, str | None] = {}

    async def execute(self, name: str, params: dict[str, Any], fetch: str = "") -> Any:
        """Run a statement (by name, or a bare one such as COMMIT); ``fetch`` "one" or "all" its rows."""
        try:
            if self.asynchronous:
                await self.cursor.execute(self.sql.get(name, name), params)
                if fetch:
                    return await (self.cursor.fetchone() if fetch == "one" else self.cursor.fetchall())
            else:
                self.cursor.execute(self.sql.get(name, name), params)
                if fetch:
                    return self.cursor.fetchone() if fetch == "one" else self.cursor.fetchall()
        except self.errors as exc:
            raise DatabaseFailed(f"the database failed: {type(exc).__name__}") from None
        return self.cursor

    async def user_for_token(self, token: str) -> str | None:
        """The user a live token belongs to; None for an unknown, revoked or expired one."""
        if token not in self._users:
            row = await self.execute("token", {"hash": hash_token(token), "now": stamp(now())}, "one")
            self._users[token] = None if row is None else str(row[0])
        return self._users[token]

    async def team_for(self, user_id: str, name: str) -> tuple[Team, str] | None:
        """The team ``name`` and the caller's role in it; None when it does not exist or the caller is not in it."""
        row = await self.execute("team", {"name": name, "user": user_id}, "one")
        return None if row is None else (Team(row[0], row[1], row[2], row[3]), row[4])

    async def get_flagged(self, user_id: str, packet_id: str) -> tuple[bytes, str] | None:
        """The canonical bytes and flags of a live packet the caller may read; None otherwise (whatever the reason)."""
        row = await self.execute("get", {"id": packet_id, "user": user_id}, "one")
        return None if row is None else (bytes(row[0]), row[1])

    async def token_and_packet(self, token: str, packet_id: str) -> tuple[str | None, tuple[bytes, str] | None]:
        """(:meth:`user_for_token`, then :meth:`get_flagged` for that user, or None without one) in one
        statement; tests/server/test_batches.py holds it to the two."""
        params = {"id": packet_id, "hash": hash_token(token), "now": stamp(now())}
        row = await self.execute("token and get", params, "one")
        self._users[token] = None if row is None else str(row[0])
        if row is None or row[1] is None:
            return self._users[token], None
        return self._users[token], (bytes(row[1]), row[2])

    async def list_packets(
        self, user_id: str, team_id: str | None, limit: int, after: tuple[str, str] | None
    ) -> list[tuple[str, str, str, str]]:
        """(id, created_key, goal, flags) of live packets in one scope, newest instant first, then id; ``after``
        a (key, id) the listing goes on past. One more row than ``limit`` tells that more follow."""
        name = "list personal" if team_id is None else "list team"
        params: dict[str, Any] = {"user": user_id, "team": team_id, "limit": limit + 1}
        if after is not None:
            name += " after"
            params["after_key"], params["after_id"] = after
        return [(row[0], row[1], row[2], row[3]) for row in await self.execute(name, params, "all")]

    async def push(
        self, user_id: str, team_id: str | None, packet_id: str, key: str, goal: str, body: bytes, flags: str = ""
    ) -> PushOutcome:
        """Store a judged packet's canonical ``body`` under its id, in the caller's scope (``team_id`` None:
        personal), within the transaction the caller began. ``stored`` when new or when it brings back the
        caller's own deleted packet; ``same`` when those bytes are there already; ``different`` when other
        bytes are, in the caller's scope; ``taken`` when the id belongs to another scope (nothing more is
        told of it). An insert that does nothing on a taken id decides it: the database serialises it."""
        values = {
            "id": packet_id,
            "created_at": reference_created_at(key),
            "goal": goal,
            "body": body,
            "owner_id": user_id,
            "team_id": team_id,
            "created_key": key,
            "flags": flags,
        }
        if (await self.execute("insert", values)).rowcount == 1:
            return "stored"
        owner_id, held_team_id, deleted_at, held_body = await self.execute("held", {"id": packet_id}, "one")
        if held_team_id != team_id or (team_id is None and owner_id != user_id):
            return "taken"
        if deleted_at is not None:
            await self.execute("revive", values)
            return "stored"
        return "same" if bytes(held_body) == body else "different"


def finish(coroutine: Coroutine[Any, Any, T]) -> T:
    """A :class:`Session` coroutine's result on a synchronous cursor, where it never suspends."""
    try:
        coroutine.send(None)
    except StopIteration as finished:
        result: T = finished.value
        return result
    coroutine.close()
    raise RuntimeError("a session on a synchronous cursor suspended")


_BATCHES_MADE = threading.Lock()
READERS = 4  # PostgreSQL: connections a loop reads on at once
Work = Callable[[Session], Coroutine[Any, Any, Any]]


@dataclass(slots=True)
class _Write:
    work: Work
    order: str  # writes run in this order within a batch: a push's packet id
    future: asyncio.Future[Any]


@dataclass(slots=True)
class _Loop:
    """One event loop's connections, and the writes waiting for its next commit."""

    writer: Any = None
    readers: list[Any] = field(default_factory=list)  # PostgreSQL's idle reading connections
    opened: int = 0  # PostgreSQL's reading connections, idle or not
    idle: asyncio.Condition | None = None
    pending: list[_Write] = field(default_factory=list)
    committing: bool = False


class Batches:
    """The hot requests' statements (:class:`Session`) on each event loop's own connections, their writes
    group-committed. No thread: a thread per call, or one thread for them all, costs more in handing the
    GIL to and fro than the statements themselves.

    On SQLite a statement takes microseconds, so it runs on the loop's thread, on the loop's connection:
    a read at once; a write at the end of the loop's turn, when every write that came in that turn runs
    in one transaction. On PostgreSQL they go through psycopg's asynchronous connections: reads on up to
    ``READERS`` at once; writes on one, each transaction taking every write that waits when it begins.

    Invariants, each as one request alone would have it:
    - a write is answered after the transaction that holds it committed, never before;
    - writes of one batch run in the order of their packet ids (two servers' batches on PostgreSQL then
      take row locks in one order and never deadlock each other), each seeing the ones before it, as
      one after another (two pushes of one id in a batch: the first stores, the second is ``same`` or
      ``different``);
    - when a batch's transaction fails, it is rolled back and each of its writes runs again in a
      transaction of its own: one write's failure is its own answer alone;
    - work runs after its request arrived, so a token looked up is looked up later than its request
      came (a revocation committed before is seen): no verdict outlives its request.
    tests/server/test_batches.py holds batched writes to what the same writes one by one give.
    """

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.inline = storage.dialect == "sqlite"
        self._begin = "BEGIN IMMEDIATE" if self.inline else "BEGIN"
        self._loops: dict[asyncio.AbstractEventLoop, _Loop] = {}

    def _session(self, cursor: Any) -> Session:
        return Session(cursor, self.storage.dialect, self.storage._dbapi_error, asynchronous=not self.inline)

    async def read(self, work: Work) -> Any:
        """``work``'s result, run on a session of its own (a token is looked up afresh)."""
        state = self._here()
        if self.inline:
            if state.writer is None:
                state.writer = self.storage.dedicated_connection()
            try:
                return finish(work(self._session(state.writer.cursor())))
            except DatabaseFailed:
                _discard(state.writer)
                state.writer = None
                raise
        connection = await self._reader(state)
        try:
            async with connection.cursor() as cursor:
                result = await work(self._session(cursor))
        except DatabaseFailed:
            _discard(connection)
            connection = None
            raise
        finally:
            await self._release(state, connection)
        return result

    async def _reader(self, state: _Loop) -> Any:
        assert state.idle is not None
        async with state.idle:
            while not state.readers and state.opened >= READERS:
                await state.idle.wait()
            if state.readers:
                return state.readers.pop()
            state.opened += 1
        try:
            return await self._connect()
        except BaseException:
            await self._release(state, None)
            raise

    async def _release(self, state: _Loop, connection: Any) -> None:
        assert state.idle is not None
        async with state.idle:
            if connection is None:
                state.opened -= 1
            else:
                state.readers.append(connection)
            state.idle.notify()

    async def _connect(self) -> Any:
        import psycopg

        try:
            return await psycopg.AsyncConnection.connect(self.storage.conninfo(), autocommit=True)
        except psycopg.Error as exc:
            raise DatabaseFailed(f"the database failed: {type(exc).__name__}") from None

    async def write(self, work: Work, order: str) -> Any:
        """``work``'s result, run in a write transaction, answered once it committed."""
        state = self._here()
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        state.pending.append(_Write(work, order, future))
        if not state.committing:
            state.committing = True
            if self.inline:
                asyncio.get_running_loop().call_soon(self._commit_inline, state)
            else:
                asyncio.get_running_loop().create_task(self._commit_async(state))
        return await future

    def _here(self) -> _Loop:
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            state = self._loops[loop] = _Loop(idle=None if self.inline else asyncio.Condition())
        return state

    def _commit_inline(self, state: _Loop) -> None:
        writes, state.pending, state.committing = state.pending, [], False
        try:
            if state.writer is None:
                state.writer = self.storage.dedicated_connection()
            answers = finish(self._commit(self._session(state.writer.cursor()), writes))
        except Exception as exc:  # the connection itself failed: every write answers it
            answers = [(write, None, DatabaseFailed(f"the database failed: {type(exc).__name__}")) for write in writes]
        if any(isinstance(error, DatabaseFailed) for _, _, error in answers):
            _discard(state.writer)  # it may be broken: the next write connects anew
            state.writer = None
        _settle(answers)

    async def _commit_async(self, state: _Loop) -> None:
        try:
            while state.pending:
                writes, state.pending = state.pending, []
                try:
                    if state.writer is None:
                        state.writer = await self._connect()
                    async with state.writer.cursor() as cursor:
                        answers = await self._commit(self._session(cursor), writes)
                except Exception as exc:  # the connection itself failed: every write answers it
                    failure = DatabaseFailed(f"the database failed: {type(exc).__name__}")
                    answers = [(write, None, failure) for write in writes]
                if any(isinstance(error, DatabaseFailed) for _, _, error in answers):
                    _discard(state.writer)
                    state.writer = None
                _settle(answers)
        finally:
            state.committing = False

    async def _commit(self, session: Session, writes: list[_Write]) -> list[_Answer]:
        """Every write in one transaction, in packet id order; after a failure, each in one of its own."""
        writes = sorted(writes, key=lambda write: write.order)
        try:
            await session.execute(self._begin, {})
            results = [await write.work(session) for write in writes]
            await session.execute("COMMIT", {})
        except Exception:  # run each alone, so that a failure is its own write's
            await _rollback(session)
        else:
            return [(write, result, None) for write, result in zip(writes, results, strict=True)]
        answers: list[_Answer] = []
        for write in writes:
            try:
                await session.execute(self._begin, {})
                answer: _Answer = (write, await write.work(session), None)
                await session.execute("COMMIT", {})
            except Exception as exc:  # the request's own answer (a 500)
                answer = (write, None, exc)
                await _rollback(session)
            answers.append(answer)
        return answers

    def stop(self) -> None:
        """Close every loop's connections (PostgreSQL's without their loop, which may be gone)."""
        for state in self._loops.values():
            for connection in [state.writer, *state.readers]:
                if connection is not None:
                    _discard(connection)
        self._loops.clear()


_Answer = tuple[_Write, Any, BaseException | None]


async def _rollback(session: Session) -> None:
    try:
        await session.execute("ROLLBACK", {})
    except DatabaseFailed:
        pass


def _discard(connection: Any) -> None:
    """Close a connection; an asynchronous one at libpq's level, which needs no event loop."""
    try:
        pgconn = getattr(connection, "pgconn", None)
        if pgconn is not None:
            pgconn.finish()
        else:
            connection.close()
    except Exception:  # a broken connection may fail to close too
        pass


def _settle(answered: list[_Answer]) -> None:
    for write, result, error in answered:
        if write.future.done():  # its request was cancelled (the client went away)
            continue
        if error is not None:
            write.future.set_exception(error)
        else:
            write.future.set_result(result)


class _InviteGone(Exception):
    pass


def _sqlite_connected(dbapi_connection: Any, _record: Any) -> None:
    # Transactions are ours to begin (below): the driver's own would begin DEFERRED.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    # mmap_size: reads map the file rather than copy each page through a system call (a get of a random
    # packet of 50,000: 30-40 µs of SQLite's time read, 10-17 µs mapped); past 1 GiB it reads as before.
    for pragma in (
        "journal_mode=WAL",
        "foreign_keys=ON",
        "synchronous=NORMAL",
        "busy_timeout=10000",
        "mmap_size=1073741824",
    ):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("cmp_write") else "BEGIN")


def _reason(exc: SQLAlchemyError) -> str:
    """One line of why, without the statement or its parameters (they may hold packet text)."""
    original = getattr(exc, "orig", None)
    text = str(original if original is not None else exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
