"""The conformance runner: our vectors against this library or any other implementation.

Protocol for ``--impl COMMAND`` (the full text is conformance-vectors/README.md, "The
harness protocol"): the command is split into words by POSIX shell rules and started
once, without a shell; it reads one JSON line per vector on stdin and answers with one.
A crash, or a malformed, late, missing or wrongly labelled answer fails that vector and
the implementation is restarted; an error answer fails the vector only.
"""

from __future__ import annotations

from cmp.conformance._compare import compare
from cmp.conformance._implementation import MAX_ANSWER_BYTES, Implementation, split_command
from cmp.conformance._protocol import request_line, respond, strict_b64decode
from cmp.conformance._report import junit_lines, report
from cmp.conformance._runner import GIVE_UP_AFTER, VectorResult, run
from cmp.conformance._vectors import (
    MAX_VECTOR_FILE_BYTES,
    SCHEMA_FILE,
    VectorError,
    default_vector_dir,
    load_vectors,
    vector_input,
)

__all__ = [
    "GIVE_UP_AFTER",
    "MAX_ANSWER_BYTES",
    "MAX_VECTOR_FILE_BYTES",
    "SCHEMA_FILE",
    "Implementation",
    "VectorError",
    "VectorResult",
    "compare",
    "default_vector_dir",
    "junit_lines",
    "load_vectors",
    "report",
    "request_line",
    "respond",
    "run",
    "split_command",
    "strict_b64decode",
    "vector_input",
]
