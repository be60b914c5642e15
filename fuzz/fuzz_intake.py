"""atheris target: arbitrary bytes through check(); only a Report may come back."""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    import cmp
    import cmp.explain  # imported lazily by cmp; instrument it (and jsonschema) up front
    import cmp.fastpath


def test_one_input(data: bytes) -> None:
    report = cmp.check(data)
    for finding in report.errors:
        assert finding.code in cmp.FINDING_CODES, finding
        assert "\n" not in finding.message and len(finding.message) < 400, finding
    if report.packet is not None:
        assert report.conforming


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
