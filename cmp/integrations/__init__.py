"""This library inside other frameworks: pydantic, Starlette and FastAPI, the Model Context Protocol.

Each integration is written over the public :mod:`cmp` API and imported only by who
uses it, so the framework it needs stays an optional extra.
"""
