"""The server's tables, as SQLAlchemy Core sees them (the migrations create them; this reads and writes them).

The packets table keeps the reference's columns (``id``, ``created_at``, ``goal``, ``body``,
``deleted_at``, ``owner_id``, ``team_id``), so ``audit`` reads our database as it reads the
reference's. Every instant is fixed-width UTC text, so text order is time order on both engines.
"""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Index, LargeBinary, MetaData, PrimaryKeyConstraint, Table, Text

# Byte order, not the database's locale: an id or an instant sorts the same on every engine.
ORDERED_TEXT = Text().with_variant(Text(collation="C"), "postgresql")

metadata = MetaData()

users = Table(
    "users",
    metadata,
    Column("id", Text, primary_key=True),
    Column("email", Text, unique=True),
    Column("display", Text, nullable=False),
    Column("created_at", Text, nullable=False),
)

tokens = Table(
    "tokens",
    metadata,
    Column("token_hash", Text, primary_key=True),  # sha256 hex: the token itself is never stored
    Column("label", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("user_id", Text, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("expires_at", Text),
)

teams = Table(
    "teams",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("owner_id", Text, ForeignKey("users.id"), nullable=False),
    Column("created_at", ORDERED_TEXT, nullable=False),
)

team_members = Table(
    "team_members",
    metadata,
    Column("team_id", Text, ForeignKey("teams.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", Text, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("role", Text, nullable=False),
    Column("joined_at", ORDERED_TEXT, nullable=False),
    PrimaryKeyConstraint("team_id", "user_id"),
)

invites = Table(
    "invites",
    metadata,
    Column("code", Text, primary_key=True),
    Column("team_id", Text, ForeignKey("teams.id", ondelete="CASCADE"), nullable=False),
    Column("created_by", Text, ForeignKey("users.id"), nullable=False),
    Column("created_at", Text, nullable=False),
    Column("expires_at", Text, nullable=False),
    Column("consumed_at", Text),
    Column("consumed_by", Text, ForeignKey("users.id")),
)

packets = Table(
    "packets",
    metadata,
    Column("id", ORDERED_TEXT, primary_key=True),
    Column("created_at", Text, nullable=False),  # the reference's: UTC, fraction zeros trimmed
    Column("goal", Text, nullable=False),
    Column("body", LargeBinary, nullable=False),  # the canonical bytes
    Column("deleted_at", Text),
    Column("owner_id", Text, ForeignKey("users.id")),  # who pushed it
    Column("team_id", Text, ForeignKey("teams.id", ondelete="SET NULL")),
    # The instant of created_at, UTC with all nine fraction digits: listing order (then id).
    Column("created_key", ORDERED_TEXT, nullable=False),
    # What the server let in that a strict one would refuse, comma-separated (migration v2):
    # "not-conforming" (lenient mode), "redaction" (redaction's flag mode). Clients read them.
    Column("flags", Text, nullable=False, server_default=""),
)

Index("idx_packets_owner_order", packets.c.owner_id, packets.c.created_key, packets.c.id)
Index("idx_packets_team_order", packets.c.team_id, packets.c.created_key, packets.c.id)
Index("idx_tokens_user", tokens.c.user_id)
Index("idx_members_user", team_members.c.user_id)
