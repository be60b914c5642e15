"""One migration a file, applied in order from the empty database (Alembic skips this file)."""
