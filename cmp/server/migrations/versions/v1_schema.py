"""The first schema: users, their hashed tokens, teams, members, invites and packets.

Revision ID: v1
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "v1"
down_revision = None
branch_labels = None
depends_on = None

# Byte order on PostgreSQL (SQLite's default is byte order already).
_ORDERED = sa.Text().with_variant(sa.Text(collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("email", sa.Text, unique=True),
        sa.Column("display", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
    )
    op.create_table(
        "tokens",
        sa.Column("token_hash", sa.Text, primary_key=True),
        sa.Column("label", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("expires_at", sa.Text),
    )
    op.create_index("idx_tokens_user", "tokens", ["user_id"])
    op.create_table(
        "teams",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, nullable=False, unique=True),
        sa.Column("owner_id", sa.Text, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("created_at", _ORDERED, nullable=False),
    )
    op.create_table(
        "team_members",
        sa.Column("team_id", sa.Text, sa.ForeignKey("teams.id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_id", sa.Text, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("joined_at", _ORDERED, nullable=False),
        sa.PrimaryKeyConstraint("team_id", "user_id"),
    )
    op.create_index("idx_members_user", "team_members", ["user_id"])
    op.create_table(
        "invites",
        sa.Column("code", sa.Text, primary_key=True),
        sa.Column("team_id", sa.Text, sa.ForeignKey("teams.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_by", sa.Text, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("expires_at", sa.Text, nullable=False),
        sa.Column("consumed_at", sa.Text),
        sa.Column("consumed_by", sa.Text, sa.ForeignKey("users.id")),
    )
    op.create_table(
        "packets",
        sa.Column("id", _ORDERED, primary_key=True),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("goal", sa.Text, nullable=False),
        sa.Column("body", sa.LargeBinary, nullable=False),
        sa.Column("deleted_at", sa.Text),
        sa.Column("owner_id", sa.Text, sa.ForeignKey("users.id")),
        sa.Column("team_id", sa.Text, sa.ForeignKey("teams.id", ondelete="SET NULL")),
        sa.Column("created_key", _ORDERED, nullable=False),
    )
    op.create_index("idx_packets_owner_order", "packets", ["owner_id", "created_key", "id"])
    op.create_index("idx_packets_team_order", "packets", ["team_id", "created_key", "id"])


def downgrade() -> None:
    for table in ("packets", "invites", "team_members", "teams", "tokens", "users"):
        op.drop_table(table)
