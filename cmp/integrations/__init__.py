"""This library inside other frameworks: pydantic, Starlette and FastAPI, the Model Context Protocol.

Each integration calls the public :mod:`cmp` API (a core module only for the example packet and
the rule-set check) and is imported only by who uses it, so its framework stays an optional extra.
"""
