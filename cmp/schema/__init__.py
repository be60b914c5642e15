"""The JSON Schema of each supported version, shipped beside this file as data.

The version list is stated here once: a version is supported exactly when its schema
ships with the package.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

SUPPORTED_VERSIONS: tuple[str, ...] = ("0.1", "0.2")


@functools.cache
def load_schema(version: str) -> dict[str, Any]:
    """The packaged JSON Schema document of ``version`` (shared: do not mutate it)."""
    # A plain file read: importlib.resources would double check()'s start-up time,
    # and the schemas always ship as files inside the package.
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"core-memory.v{version}.json")
    with open(path, encoding="utf-8") as stream:
        schema: dict[str, Any] = json.load(stream)
    return schema
