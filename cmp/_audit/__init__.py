"""The audit's wing, private: re-checking what the reference Go server stores.

:mod:`cmp._audit.reference_db` reads its SQLite database, read-only; :mod:`cmp._audit.rules`
judges each packet; :mod:`cmp.cli._audit` runs them.
"""
