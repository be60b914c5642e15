"""``server``: serve the team server (:mod:`cmp.server`), and administer its database.

``server`` serves; ``server migrate`` brings the schema up to date; ``server init`` makes the
first user and token (once); ``server issue-token``, ``server tokens``, ``server revoke-token``
manage tokens; ``server export`` and ``server import`` move a whole server as JSON Lines.
A token is printed once, alone on stdout; everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from datetime import datetime, timedelta, timezone
from typing import Any

from cmp._toolkit import visible
from cmp.cli._output import EXIT_FAIL, EXIT_USAGE, Output, error_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.server import Storage

DEFAULT_ADDR = "127.0.0.1:8080"
_HINT = (
    "the server needs its libraries (the server extra): "
    "pip install 'starlette>=0.37' 'uvicorn[standard]>=0.30' 'sqlalchemy>=2.0' 'alembic>=1.13' 'psycopg[binary]>=3.1'"
)


def _note(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def parse_addr(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` (every interface) or ``[IPv6]:PORT``; ValueError otherwise."""
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--addr takes HOST:PORT, not {text!r}")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return host or "0.0.0.0", int(port)


def run_server(args: argparse.Namespace, out: Output) -> int:
    try:
        import cmp.server as server
    except ImportError:
        error_line(_HINT)
        return EXIT_USAGE
    from sqlalchemy.exc import SQLAlchemyError

    action = args.action or "serve"
    try:  # a usage error before any database is touched
        address = parse_addr(args.addr or DEFAULT_ADDR)
    except ValueError as exc:
        error_line(str(exc))
        return EXIT_USAGE
    try:
        storage = server.Storage(args.db or os.environ.get("CMP_SERVER_DB") or None)
    except server.StorageError as exc:
        error_line(str(exc))
        return EXIT_USAGE
    try:
        if action == "migrate":
            before, after = storage.migrate()
            _note(
                f"database {storage.shown}: schema {before or 'none'} → {after}"
                if before != after
                else f"database {storage.shown}: schema {after}, up to date"
            )
            return 0
        if action == "init":
            storage.migrate()
            token = storage.init()
            _note(f"core-memory-packet server initialized.\ndatabase: {storage.shown}\n")
            _note("root token (shown once — copy it now):\n")
            out.line(token)
            _note("\nauthenticate an ltm client with:\n  ltm auth http://<this-host>:8080 <token>")
            return 0
        storage.check_ready()
        if action == "issue-token":
            return _issue_token(args, out, storage)
        if action == "tokens":
            for row in storage.list_tokens():
                expires = row.expires_at[:19] + "Z" if row.expires_at else "never"
                out.line(
                    f"{row.hash8}  {row.user_id}  {visible(row.display)}  {visible(row.label)}  "
                    f"{row.created_at[:19]}Z  expires {expires}"
                )
            return 0
        if action == "export":
            for record in storage.export():
                out.line(json.dumps(record, ensure_ascii=False, sort_keys=True))
            return 0
        if action == "import":
            return _import(args, storage)
        if action == "revoke-token":
            if storage.revoke_token(args.ref) == 0:
                error_line("no token has that hash prefix or label ('server tokens' lists them)")
                return EXIT_FAIL
            _note("revoked 1 token")
            return 0
        return _serve(args, storage, address)
    except server.DatabaseUnavailable as exc:
        error_line(str(exc))
        return EXIT_USAGE
    except server.StorageError as exc:
        error_line(str(exc))
        return EXIT_FAIL
    except SQLAlchemyError as exc:  # the database went away under a command
        error_line(f"the database {storage.shown} failed: {type(exc).__name__}")
        return EXIT_USAGE
    finally:
        storage.close()


def _import(args: argparse.Namespace, storage: Storage) -> int:
    try:
        with open(args.file, encoding="utf-8") as lines:
            count = storage.import_(json.loads(line) for line in lines if line.strip())
    except OSError as exc:
        error_line(f"cannot read {visible(args.file)}: {exc.strerror}")
        return EXIT_USAGE
    except (ValueError, RecursionError):
        error_line(f"{visible(args.file)} is not JSON Lines")
        return EXIT_USAGE
    _note(f"imported {count} rows into {storage.shown}")
    return 0


def _issue_token(args: argparse.Namespace, out: Output, storage: Storage) -> int:
    expires = None
    if args.expires_in is not None:
        expires = datetime.now(timezone.utc) + timedelta(days=args.expires_in)
    user_id = None
    if args.user:
        user_id = storage.find_user(args.user)
        if user_id is None:
            error_line("--user names no user (give a user id, email or display name)")
            return EXIT_FAIL
    elif args.email:
        user_id = storage.find_user(args.email)
    if user_id is None:
        user_id = storage.create_user(args.name, args.email or None)
    token = storage.issue_token(user_id, args.label or args.name, expires)
    _note(f"issued token for {visible(args.name)!r} (user {user_id}; shown once):")
    out.line(token)
    return 0


_WORKER_SETTINGS = "CMP_SERVER_WORKER_SETTINGS"  # --workers: how each worker process makes its app


def _serve(args: argparse.Namespace, storage: Storage, address: tuple[str, int]) -> int:
    import uvicorn

    host, port = address
    if not storage.has_users():
        error_line("the database has no users: run 'core-memory-packet server init' first")
        return EXIT_FAIL
    workers = getattr(args, "workers", 1)
    if workers > 1 and args.metrics:
        error_line("--metrics counts one process's requests: use it with --workers 1")
        return EXIT_USAGE
    settings = {
        "db": storage.url,
        "external_url": args.external_url or os.environ.get("CMP_SERVER_EXTERNAL_URL") or None,
        "trust_proxy": args.trust_proxy,
        "redaction": args.redaction,
        "lenient": args.lenient,
        "metrics": args.metrics,
    }
    shown_host = f"[{host}]" if ":" in host else host
    processes = f", {workers} processes" if workers > 1 else ""
    _note(f"core-memory-packet server listening on http://{shown_host}:{port} (database: {storage.shown}{processes})")
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        # Forwarded headers are the app's to read, and only with --trust-proxy: uvicorn's own reading
        # would take them from any local client.
        "proxy_headers": False,
        "server_header": False,
        "access_log": False,
        "log_level": "warning",
        "timeout_graceful_shutdown": 5,
    }
    if workers == 1:
        uvicorn.run(_app(settings, storage), **options)
        return 0
    # uvicorn's own workers: processes it starts (and restarts) on one listening socket; each makes its
    # app from the settings, handed down through the environment (a process each: nothing shared but
    # the database).
    storage.close()
    os.environ[_WORKER_SETTINGS] = json.dumps(settings)
    uvicorn.run("cmp.cli._server:worker_app", factory=True, workers=workers, **options)
    return 0


def worker_app() -> Any:
    """One worker process's app (``--workers``), from the settings its parent left in the environment."""
    settings = json.loads(os.environ[_WORKER_SETTINGS])
    return _app(settings, settings["db"])


def _app(settings: dict[str, Any], db: str | Storage) -> Any:
    from cmp.server import create_app

    handler = _TurnHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger = logging.getLogger("cmp.server")  # the access log's parent too
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    return create_app(
        db,
        external_url=settings["external_url"],
        trust_proxy=settings["trust_proxy"],
        redaction=settings["redaction"],
        lenient=settings["lenient"],
        metrics=settings["metrics"],
    )


class _TurnHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The access log on stderr, written once a turn of the event loop: one write for the lines of every
    request that turn finished, not a write (a system call) a request. Off the loop, or at exit, at once."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + "\n"
        except Exception:
            self.handleError(record)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the loop's thread: nothing will come to write it later
            self.stream.write(line)
            self.stream.flush()
            return
        if not self._lines:
            loop.call_soon(self.flush)
        self._lines.append(line)

    def flush(self) -> None:
        with self.lock:  # type: ignore[union-attr]
            lines, self._lines = self._lines, []
            if lines:
                self.stream.write("".join(lines))
            super().flush()
