"""The team server: the ltm HTTP protocol (REFERENCE-SERVER.md) on SQLite or PostgreSQL.

Needs the ``server`` extra (Starlette, uvicorn, SQLAlchemy, Alembic, psycopg 3)::

    from cmp.server import create_app

    app = create_app("postgresql://cmp@db/cmp", external_url="https://packets.example.org")

:func:`create_app` is an ASGI app to serve (``core-memory-packet server``) or to mount in a
Starlette or FastAPI app; :class:`Storage` is its database (``migrate``, ``init``, tokens).
"""

from __future__ import annotations

try:
    from cmp.server._app import REDACTION_MODES, create_app
    from cmp.server._storage import (
        DatabaseUnavailable,
        Storage,
        StorageError,
        TokenRow,
        database_url,
        default_database,
        shown_url,
    )
except ImportError as exc:  # pragma: no cover - the extra is installed where this is tested
    raise ImportError(
        "cmp.server needs its libraries "
        "(the server extra): pip install 'starlette>=0.37' 'uvicorn[standard]>=0.30' 'sqlalchemy>=2.0' 'alembic>=1.13' 'psycopg[binary]>=3.1'"  # noqa: E501
    ) from exc

__all__ = [
    "REDACTION_MODES",
    "DatabaseUnavailable",
    "Storage",
    "StorageError",
    "TokenRow",
    "create_app",
    "database_url",
    "default_database",
    "shown_url",
]
