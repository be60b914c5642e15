"""atheris target: arbitrary bytes through check(); only a Report may come back.

It is also differential: the quick path and the long way must give the same report.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    import cmp
    import cmp._compiler
    import cmp._explain  # imported lazily by cmp; instrument it up front

from cmp._pipeline import check_long


def long_way(data: bytes) -> cmp.Report:
    return check_long(data)


def test_one_input(data: bytes) -> None:
    report = cmp.check(data)
    slow = long_way(data)
    assert report == slow, (report, slow)
    if report.packet is not None and slow.packet is not None:
        assert cmp.dumps(report.packet) == cmp.dumps(slow.packet)
    for finding in report.errors:
        assert finding.code in cmp.findings.CODES, finding
        assert "\n" not in finding.message and len(finding.message) < 400, finding
    if report.packet is not None:
        assert report.conforming
        written = cmp.dumps(report.packet)  # conforming always means dumps succeeds
        assert cmp.check(written).conforming


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
