"""The audit's wing: re-checking what the reference Go server stores.

:mod:`cmp._audit.reference_db` reads the server's SQLite database, read-only;
:mod:`cmp._audit.rules` judges each packet in it (or in an export) and says what its row
or file disagrees on. The ``audit`` command (:mod:`cmp.cli._audit`) only runs them. Private:
nothing here is the library's public surface.
"""
