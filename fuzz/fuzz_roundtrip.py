"""atheris target: text fields from the fuzzer in a packet; dumps/loads must round-trip exactly."""

from __future__ import annotations

import dataclasses
import json
import sys

import atheris

with atheris.instrument_imports():
    import cmp
    import cmp._compiler
    import cmp._explain  # imported lazily by cmp; instrument it up front


def test_one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    obj = {
        "ltm_version": "0.2",
        "id": "01J9X8K2QZ7N4M0WXYZV3R8ABC",
        "created_at": "2026-04-21T10:30:00Z",
        "goal": provider.ConsumeUnicodeNoSurrogates(200) or "g",
        "next_step": provider.ConsumeUnicodeNoSurrogates(200) or "n",
        "constraints": [provider.ConsumeUnicodeNoSurrogates(100)],
        "decisions": [{"what": provider.ConsumeUnicodeNoSurrogates(50), "why": "y", "locked": provider.ConsumeBool()}],
    }
    raw = json.dumps(obj, ensure_ascii=provider.ConsumeBool())
    packet = cmp.loads(raw)
    first = cmp.dumps(packet)
    again = cmp.loads(first)
    assert again == packet
    assert cmp.dumps(again) == first
    assert cmp.check(first).conforming
    assert cmp.dumps(dataclasses.replace(packet)) == first  # the escaping pass, forced


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
