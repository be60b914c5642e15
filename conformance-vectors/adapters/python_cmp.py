#!/usr/bin/env python3
"""Exposes the `cmp` library through the conformance protocol (see ../README.md).

Run by the runner as: python -m cmp conformance --impl 'python3 conformance-vectors/adapters/python_cmp.py'
One JSON request per stdin line, one JSON response per stdout line, flushed each time.
"""

from __future__ import annotations

import base64
import json
import sys

from cmp.conformance import respond


def main() -> int:
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            data = base64.b64decode(request["input_base64"], validate=True)
        except (ValueError, KeyError, TypeError) as exc:
            answer = {"id": None, "error": f"bad request: {exc}"}
        else:
            answer = {"id": request.get("id"), **respond(data)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
