"""The server database's schema migrations (Alembic): env.py runs them, versions/ holds one file each."""
