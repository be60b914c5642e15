"""The run's results as the chosen ``--format`` prints them: text lines, one JSON document, JUnit XML."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache

from cmp.conformance._runner import VectorResult


# Compiled on first use: every CLI start imports the runner.
@cache
def _not_xml() -> re.Pattern[str]:
    """Code points XML 1.0 cannot hold at all, not even as character references."""
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@cache
def _as_character_reference() -> re.Pattern[str]:
    """Code points XML can hold but a terminal line should not: written as character references."""
    return re.compile("[\t\r\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _xml_text(text: str) -> str:
    return _not_xml().sub("", text)


def junit_lines(results: list[VectorResult]) -> list[str]:
    """A JUnit XML report, as lines: one <testsuite> per area, one <testcase> per vector.
    Code points XML 1.0 cannot hold are left out; no raw control character but line breaks.
    """
    import xml.etree.ElementTree as ET  # only a JUnit report pays for the import

    failed = sum(not r.passed for r in results)
    root = ET.Element(
        "testsuites", {"name": "cmp conformance", "tests": str(len(results)), "failures": str(failed), "errors": "0"}
    )
    suites: dict[str, ET.Element] = {}
    for result in results:
        suite = suites.get(result.area)
        if suite is None:
            suite = suites[result.area] = ET.SubElement(root, "testsuite", {"name": _xml_text(result.area)})
        case = ET.SubElement(
            suite, "testcase", {"classname": _xml_text(result.area), "name": _xml_text(result.vector_id)}
        )
        if not result.passed:
            failure = ET.SubElement(case, "failure", {"message": _xml_text("; ".join(result.problems))})
            failure.text = _xml_text("\n".join(result.problems))
    for area, suite in suites.items():
        in_area = [r for r in results if r.area == area]
        suite.set("tests", str(len(in_area)))
        suite.set("failures", str(sum(not r.passed for r in in_area)))
        suite.set("errors", "0")
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    text = _as_character_reference().sub(lambda m: f"&#x{ord(m.group()):x};", text)
    return ['<?xml version="1.0" encoding="UTF-8"?>', *text.split("\n")]


def report(results: list[VectorResult], form: str, line: Callable[[str], None]) -> None:
    """The run's results in the chosen --format, through ``line``."""
    passed = sum(r.passed for r in results)
    failed = len(results) - passed
    if form == "json":
        document = {
            "passed": passed,
            "failed": failed,
            "failures": [
                {"id": r.vector_id, "area": r.area, "problems": list(r.problems)} for r in results if not r.passed
            ],
        }
        line(json.dumps(document, ensure_ascii=False, indent=2))
    elif form == "junit":
        for text in junit_lines(results):
            line(text)
    else:
        for result in results:
            if not result.passed:
                line(f"FAIL {result.vector_id}: {'; '.join(result.problems)}")
        line(f"{passed} passed, {failed} failed")
