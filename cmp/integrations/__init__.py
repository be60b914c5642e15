"""This library inside other frameworks: pydantic, Starlette and FastAPI, the Model Context Protocol.

Each integration calls the public :mod:`cmp` API (a core module only for what it has no
name for: the example packet, the rule-set check) and is imported only by who uses it,
so the framework it needs stays an optional extra.
"""
