"""The public API as a user's type checker sees it: mypy --strict over code that uses it.

What a user's code may write type-checks; what the API refuses (an unknown rule set, a
finding code that does not exist) is a type error, not something found at run time.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

USES = """
import cmp
from cmp.findings import CODES, Finding, PacketError

report: cmp.Report = cmp.check(b"{}", lenient=True, allow_unredacted=False, rule_set="extended")
ok: bool = report.ok and report.accepted and report.conforming
rule_set: str = report.policy.rule_set
errors: tuple[Finding, ...] = report.located().errors
packet: cmp.Packet = cmp.Packet.new(goal="g", next_step="n", tags=["a"])
data: bytes = cmp.dumps(packet)
again: cmp.Packet = cmp.loads(data)
hits: list[cmp.Redaction] = cmp.redact(again, rule_set="default")
clean, replaced = cmp.scrub(again)
advice: list[Finding] = cmp.lint(clean)
digest: str = cmp.state_digest(clean)
described: str = CODES["schema"]
try:
    cmp.loads(b"[]")
except PacketError as exc:
    first: Finding = exc.findings[0]
"""

MISUSES = {
    'cmp.check(b"{}", rule_set="strict")': "rule_set",
    'cmp.redact(cmp.loads(b"{}"), rule_set="everything")': "rule_set",
    'Finding("no-such-code", "$", "m")': "code",
}


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "uses_cmp.py"
    path.write_text(source, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_what_users_write_type_checks(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    result = _mypy(tmp_path, USES)
    assert result.returncode == 0, result.stdout + result.stderr


def test_what_the_api_refuses_is_a_type_error(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    lines = ["import cmp", "from cmp.findings import Finding", *MISUSES]
    result = _mypy(tmp_path, "\n".join(lines) + "\n")
    flagged = {int(line.split(":")[1]) for line in result.stdout.splitlines() if ": error:" in line}
    assert flagged == set(range(3, 3 + len(MISUSES))), result.stdout
