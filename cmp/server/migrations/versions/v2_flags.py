"""Flags on a stored packet: what the server let in that a strict server would refuse.

Revision ID: v2
Revises: v1
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "v2"
down_revision = "v1"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Comma-separated: "not-conforming" (lenient mode let it in), "redaction" (redaction flag mode).
    with op.batch_alter_table("packets") as batch:
        batch.add_column(sa.Column("flags", sa.Text, nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("packets") as batch:
        batch.drop_column("flags")
