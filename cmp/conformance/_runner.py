"""Every vector put to this library or to another implementation, one result each."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cmp.conformance._compare import compare
from cmp.conformance._implementation import Implementation
from cmp.conformance._protocol import respond
from cmp.conformance._vectors import vector_input


@dataclass(frozen=True, slots=True)
class VectorResult:
    """One vector's result: the problems that failed it, none if it passed."""

    vector_id: str
    area: str
    problems: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return not self.problems


# After this many deaths in a row without an answer, the remaining vectors fail at once.
GIVE_UP_AFTER = 3


def run(vectors: list[dict[str, Any]], implementation: Implementation | None) -> list[VectorResult]:
    """Each vector answered by this library (``implementation`` None) or by the implementation, in order."""
    results: list[VectorResult] = []
    silent_failures = 0
    try:
        for vector in vectors:
            data = vector_input(vector)
            if implementation is None:
                response: Any = respond(data)
                failure = None
            elif silent_failures >= GIVE_UP_AFTER:
                response, failure = None, f"not run: the implementation failed {GIVE_UP_AFTER} times in a row"
            else:
                response, failure = implementation.ask(vector["id"], data)
                silent_failures = silent_failures + 1 if failure else 0
            problems = [failure] if failure else compare(vector, response)
            results.append(VectorResult(vector["id"], vector["area"], tuple(problems)))
    finally:
        if implementation is not None:
            implementation.stop()
    return results
