"""The public API is what cmp.__all__ and cmp.findings.__all__ name, and every name there resolves."""

from __future__ import annotations

import cmp
import cmp.findings


def test_dir_lists_the_public_api_only() -> None:
    assert dir(cmp) == sorted({*cmp.__all__, "__version__"})
    assert "_pipeline" not in dir(cmp)  # loaded by the import, but not the API


def test_every_public_name_resolves() -> None:
    for module in (cmp, cmp.findings):
        for name in module.__all__:
            assert getattr(module, name) is not None, f"{module.__name__}.{name}"


def test_the_report_keeps_its_policy_values() -> None:
    report = cmp.check(b"{}", lenient=True, rule_set="extended")
    assert (report.policy.lenient, report.policy.allow_unredacted, report.policy.rule_set) == (True, False, "extended")
    assert report.policy.rule_set == "extended" and report.to_json()["rule_set"] == "extended"
    assert "rule_set" not in cmp.check(b"{}").to_json()  # default output stays the reference's
