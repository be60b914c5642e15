"""Alembic's entry point: run the migrations on the connection the caller handed over.

``cmp.server`` calls Alembic with ``config.attributes["connection"]`` set; there is no
alembic.ini and no URL to read, so no offline mode.
"""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
