"""The harness protocol as conformance-vectors/README.md settles it: required, optional and
choice findings; error answers; the shape of an answer; base64; JSON values in failure
lines; --impl splitting, --impl-stderr and --format junit.

Implementations here are real subprocesses speaking the protocol, as another
implementation's adapter would.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cmp.cli import main
from cmp.conformance import _implementation, compare, default_vector_dir, respond, vector_input
from tests.conformance.test_conformance import ROOT, VECTORS, run_against, write_adapter
from tests.conformance.test_conformance_hostile import SCHEMA, assert_one_line, cli, fake, folder_with, starts, vector
from tests.support.signals import default_stop_signals
from tests.support.vectors import committed_vectors, vector_folder

ALL = {v["id"]: v for v in committed_vectors()}
CHOICE = "schema-v0.2/method-name-129-chars"
NAME_PATH = "$.methods[0].name"


def finding(path: str, keyword: str | None, code: str = "schema") -> dict[str, Any]:
    return {"code": code, "path": path, "keyword": keyword}


def real_vectors(tmp_path: Path, *ids: str) -> Path:
    """A vector folder holding the real schema and these shipped vectors, one file per area."""
    return vector_folder(tmp_path / "vectors", [ALL[vid] for vid in ids])


def planned(tmp_path: Path, plan: dict[str, dict[str, Any]]) -> str:
    """An implementation that answers as this library does, except that for the ids in
    ``plan`` it replaces members of the answer (``errors``, ``conforming``...) by the plan's."""
    (tmp_path / "plan.json").write_text(json.dumps(plan), "utf-8")
    script = tmp_path / "planned.py"
    script.write_text(
        textwrap.dedent(
            """\
            import base64, json, sys
            from cmp.conformance import respond

            plan = json.load(open(sys.argv[1], encoding="utf-8"))
            for line in sys.stdin:
                request = json.loads(line)
                answer = {"id": request["id"], **respond(base64.b64decode(request["input_base64"]))}
                answer.update(plan.get(request["id"], {}))
                print(json.dumps(answer), flush=True)
            """
        )
    )
    return " ".join(shlex.quote(str(part)) for part in (sys.executable, script, tmp_path / "plan.json"))


def run_folder(folder: Path, command: str, *extra: str) -> tuple[int, list[str]]:
    result = cli("--vectors", str(folder), "--impl", command, *extra)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, result.stdout.splitlines()


# --- required, optional and choice findings --------------------------------------------

WITH_OPTIONAL = sorted(vid for vid, v in ALL.items() if "optional_errors" in v["expect"])
WITH_CHOICES = sorted(vid for vid, v in ALL.items() if "error_choices" in v["expect"])


def test_the_findings_a_validator_strategy_decides_are_marked() -> None:
    """The seven vectors over-specified for a first-failure validator, and the one choice."""
    assert WITH_OPTIONAL == [
        "schema-v0.1/null-attempts[0].outcome",
        "schema-v0.1/null-provenance.confidence",
        "schema-v0.1/type-outcome-number",
        "schema-v0.2/null-attempts[0].confidence",
        "schema-v0.2/null-attempts[0].outcome",
        "schema-v0.2/null-provenance.confidence",
        "schema-v0.2/type-outcome-number",
    ]
    for vid in WITH_OPTIONAL:
        expect = ALL[vid]["expect"]
        path = expect["errors"][0]["path"]
        assert expect["errors"] == [finding(path, "type")] and expect["optional_errors"] == [finding(path, "enum")]
    assert WITH_CHOICES == [CHOICE]
    assert ALL[CHOICE]["expect"]["errors"] == []
    assert ALL[CHOICE]["expect"]["error_choices"] == [[finding(NAME_PATH, "maxLength"), finding(NAME_PATH, "pattern")]]


def _key(error: dict[str, Any]) -> tuple[Any, ...]:
    return (error["code"], error["path"], error["keyword"])


@pytest.mark.parametrize("vid", sorted(ALL))
def test_this_library_reports_every_listed_finding(vid: str) -> None:
    """Our own library is held to the full list: required, optional and every choice member."""
    expect = ALL[vid]["expect"]
    listed = [*expect.get("errors", []), *expect.get("optional_errors", [])]
    listed += [error for group in expect.get("error_choices", []) for error in group]
    reported = respond(vector_input(ALL[vid]))["errors"]
    assert Counter(map(_key, reported)) == Counter(map(_key, listed))


@pytest.mark.slow
@pytest.mark.parametrize("keyword", ["maxLength", "pattern"])
def test_a_first_failure_validator_passes(tmp_path: Path, keyword: str) -> None:
    """Only `type` where enum is optional, and either one of the choice: every vector passes."""
    plan = {vid: {"errors": ALL[vid]["expect"]["errors"]} for vid in WITH_OPTIONAL}
    plan[CHOICE] = {"errors": [finding(NAME_PATH, keyword)]}
    code, out = run_folder(real_vectors(tmp_path, *WITH_OPTIONAL, CHOICE), planned(tmp_path, plan))
    assert (code, out) == (0, ["8 passed, 0 failed"])


@pytest.mark.slow
def test_what_the_relaxed_comparison_still_refuses(tmp_path: Path) -> None:
    outcome, confidence = "$.attempts[0].outcome", "$.provenance.confidence"
    plan = {
        CHOICE: {"errors": []},
        "schema-v0.2/null-provenance.confidence": {
            "errors": [finding(confidence, "type"), finding(confidence, "enum"), finding(confidence, "enum")]
        },
        "schema-v0.2/type-outcome-number": {"errors": [finding(outcome, "type"), finding("$.goal", "minLength")]},
        "schema-v0.1/null-provenance.confidence": {"errors": [finding(confidence, "enum")]},
        "schema-v0.1/type-outcome-number": {"errors": [finding(outcome, "type"), finding(outcome, "type")]},
    }
    code, out = run_folder(real_vectors(tmp_path, *plan), planned(tmp_path, plan))
    assert code == 1
    assert out == [
        'FAIL schema-v0.1/null-provenance.confidence: errors: missing required [["schema", '
        '"$.provenance.confidence", "type"]]',
        'FAIL schema-v0.1/type-outcome-number: errors: unexpected [["schema", "$.attempts[0].outcome", "type"]]',
        'FAIL schema-v0.2/method-name-129-chars: errors: none of the choice [["schema", "$.methods[0].name", '
        '"maxLength"], ["schema", "$.methods[0].name", "pattern"]], one of which is required',
        "FAIL schema-v0.2/null-provenance.confidence: errors: reported more than once, allowed at most once "
        '[["schema", "$.provenance.confidence", "enum"]]',
        'FAIL schema-v0.2/type-outcome-number: errors: unexpected [["schema", "$.goal", "minLength"]]',
        "0 passed, 5 failed",
    ]


def test_both_choice_members_once_each_pass_and_twice_fail() -> None:
    both = [finding(NAME_PATH, "maxLength"), finding(NAME_PATH, "pattern")]
    assert compare(ALL[CHOICE], {"conforming": False, "errors": both}) == []
    assert compare(ALL[CHOICE], {"conforming": False, "errors": [*both, both[1]]}) == [
        'errors: reported more than once, allowed at most once [["schema", "$.methods[0].name", "pattern"]]'
    ]


@pytest.mark.slow
def test_a_finding_listed_in_two_places_is_refused(tmp_path: Path) -> None:
    """Required and optional at once would make "missing" and "at most once" ambiguous."""
    error = finding("$.ltm_version", None, "version-missing")
    expects = {
        "in both errors and optional_errors": {"conforming": False, "errors": [error], "optional_errors": [error]},
        "in both optional_errors and error_choices/0": {
            "conforming": False,
            "errors": [],
            "optional_errors": [error],
            "error_choices": [[error, finding("$", None, "json")]],
        },
    }
    for says, expect in expects.items():
        folder = tmp_path / says.replace(" ", "-").replace("/", "-")
        folder.mkdir()
        shutil.copy(SCHEMA, folder)
        (folder / "t.json").write_text(json.dumps({"area": "t", "vectors": [vector(expect=expect)]}))
        assert_one_line(cli("--vectors", str(folder)), "t.json: vectors/0: expect: the finding", says)


@pytest.mark.slow
@pytest.mark.parametrize(
    "expect",
    [
        {"conforming": False, "errors": []},  # nothing that must be reported
        {"conforming": False, "errors": [], "error_choices": [[finding("$", None, "json")]]},  # a choice of one
        {"conforming": True, "redactions": [], "canonical": "{}", "optional_errors": [finding("$", None, "json")]},
        {"conforming": False, "optional_errors": [finding("$", None, "json")]},  # errors left out
    ],
)
def test_the_vector_schema_refuses_unusable_expectations(tmp_path: Path, expect: dict[str, Any]) -> None:
    assert_one_line(cli("--vectors", str(folder_with(tmp_path, vector(expect=expect)))), "t.json", "vectors/0")


# --- the shape of an answer --------------------------------------------------------------

CONFORMING = {"id": "t/ok", "expect": {"conforming": True, "redactions": [], "canonical": "???"}}
REFUSED = {"id": "t/no", "expect": {"conforming": False, "errors": [finding("$.ltm_version", None, "version-missing")]}}
GOOD_B64 = base64.b64encode(b"???").decode()  # "Pz8/": the alphabet's "/" included


@pytest.mark.parametrize(
    "answer",
    [
        {"conforming": True, "canonical_base64": GOOD_B64},  # errors and redactions absent
        {"conforming": True, "errors": None, "redactions": None, "canonical_base64": GOOD_B64},  # a Go nil slice
        {"conforming": True, "errors": [], "redactions": [], "canonical_base64": GOOD_B64},
    ],
)
def test_a_conforming_answer_may_leave_out_empty_lists(answer: dict[str, Any]) -> None:
    assert compare(CONFORMING, answer) == []


@pytest.mark.parametrize(
    "answer",
    [
        {"conforming": False, "errors": [{"code": "version-missing", "path": "$.ltm_version"}]},  # keyword absent
        {"conforming": False, "errors": [{**finding("$.ltm_version", None, "version-missing"), "message": "why"}]},
        {"conforming": False, "errors": REFUSED["expect"]["errors"], "redactions": None, "canonical_base64": None},
        {"conforming": False, "errors": REFUSED["expect"]["errors"], "redactions": [1], "canonical_base64": "!"},
    ],
)
def test_a_refusal_is_judged_by_its_findings_alone(answer: dict[str, Any]) -> None:
    """A missing keyword is null; a message is not read; redactions and canonical bytes
    of a refused packet are not read at all."""
    assert compare(REFUSED, answer) == []


def test_findings_on_a_conforming_answer_or_none_on_a_refusal_fail() -> None:
    extra = finding("$.goal", "minLength")
    assert compare(CONFORMING, {"conforming": True, "errors": [extra], "canonical_base64": GOOD_B64}) == [
        'errors: unexpected [["schema", "$.goal", "minLength"]]'
    ]
    missing = 'errors: missing required [["version-missing", "$.ltm_version", null]]'
    assert compare(REFUSED, {"conforming": False}) == [missing]
    assert compare(REFUSED, {"conforming": False, "errors": "none"}) == ['errors: expected a list, got "none"']


@pytest.mark.parametrize(
    ("canonical", "encoded"),
    [
        ("???", "Pz8_"),  # the URL-safe alphabet
        ("???", "Pz\n8/"),  # a line break
        ("???", "Pz8/\n"),
        ("???", " Pz8/"),
        ("???", "Pz8/===="),
        ("???", "Pz８/"),  # a fullwidth digit
        ("??", "Pz8"),  # padding left out
        ("??", "Pz9="),  # pad bits not zero: "??" to a lax decoder
    ],
)
def test_canonical_bytes_in_anything_but_standard_padded_base64_fail(canonical: str, encoded: str) -> None:
    vector = {"id": "t/x", "expect": {"conforming": True, "redactions": [], "canonical": canonical}}
    standard = base64.b64encode(canonical.encode()).decode()
    assert compare(vector, {"conforming": True, "canonical_base64": standard}) == []
    assert compare(vector, {"conforming": True, "canonical_base64": encoded}) == [
        "canonical_base64: not base64 (RFC 4648 standard alphabet, = padding, no line breaks): "
        + json.dumps(encoded, ensure_ascii=False)
    ]


@pytest.mark.slow
def test_failure_lines_show_json_values(tmp_path: Path) -> None:
    wrong = {
        "versioning/absent": {
            "conforming": True,
            "errors": [finding("$.ltm_version", False, "version-missing")],
        },
        "versioning/minimal-0.2": {"conforming": None, "redactions": [True], "canonical_base64": None},
    }
    code, out = run_folder(real_vectors(tmp_path, *wrong), planned(tmp_path, wrong))
    assert code == 1
    assert out == [
        "FAIL versioning/absent: conforming: expected false, got true; "
        'errors: missing required [["version-missing", "$.ltm_version", null]]; '
        'errors: unexpected [["version-missing", "$.ltm_version", false]]',
        "FAIL versioning/minimal-0.2: conforming: expected true, got null; redactions: expected [], got [true]; "
        "canonical_base64: expected a string, got null",
        "0 passed, 2 failed",
    ]
    assert not any(word in line for line in out for word in ("None", "True", "False"))


# --- error answers ----------------------------------------------------------------------


@pytest.mark.slow
def test_an_error_answer_fails_its_vector_and_the_implementation_keeps_running(tmp_path: Path) -> None:
    command = write_adapter(
        tmp_path,
        """\
        if count == 0:
            open(sys.argv[0] + ".starts", "a").write("x")
        if request["id"] == "versioning/absent":
            print(json.dumps({"id": request["id"], "error": "cannot read\\nthis \\u0001 request"}), flush=True)
        elif request["id"] == "versioning/missing-null":
            print(json.dumps({"id": None, "error": "bad request: not JSON"}), flush=True)
        elif request["id"] == "versioning/missing-number":
            print(json.dumps({"id": "versioning/missing-number", "error": {"why": 1}}), flush=True)
        elif request["id"] == "versioning/missing-integer":
            print(json.dumps({"id": "someone-else", "error": "x"}), flush=True)
        else:
            print(json.dumps(answer), flush=True)
    """,
    )
    code, out = run_against(command)
    assert code == 1
    assert out[:4] == [
        "FAIL versioning/absent: the implementation answered with an error: cannot read this \\x01 request",
        "FAIL versioning/missing-null: the implementation answered with an error: bad request: not JSON",
        'FAIL versioning/missing-number: the implementation answered with an error: {"why": 1}',
        'FAIL versioning/missing-integer: answer is for id "someone-else", not "versioning/missing-integer"',
    ]
    total = len(committed_vectors(["versioning"]))
    assert out[-1] == f"{total - 4} passed, 4 failed"
    # Started once, and once more only after the wrongly labelled answer.
    assert (tmp_path / "broken.py.starts").read_text() == "xx"


@pytest.mark.slow
def test_an_implementation_that_answers_only_errors_is_never_given_up_on(tmp_path: Path) -> None:
    command = fake(
        tmp_path,
        """\
        for line in sys.stdin:
            print(json.dumps({"id": json.loads(line)["id"], "error": "not implemented"}), flush=True)
        """,
    )
    code, out = run_against(command)
    total = len(committed_vectors(["versioning"]))
    assert code == 1 and out[-1] == f"0 passed, {total} failed"
    assert all(line.endswith(": the implementation answered with an error: not implemented") for line in out[:-1])
    assert starts(tmp_path) == 1


# --- --impl is split by shell rules and run without a shell -----------------------------


@pytest.mark.slow
def test_impl_is_split_into_words_and_not_given_to_a_shell(tmp_path: Path) -> None:
    script = tmp_path / "impl.py"
    script.write_text(
        "import json, runpy, sys\n"
        f"open({str(tmp_path / 'argv.json')!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        "sys.argv[1:] = []\n"
        "runpy.run_module('cmp.adapter', run_name='__main__')\n"
    )
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} 'a b' \"c|d\" '$HOME' * e\\ f ';' `x`"
    code, out = run_against(command)
    assert code == 0, out
    assert json.loads((tmp_path / "argv.json").read_text()) == ["a b", "c|d", "$HOME", "*", "e f", ";", "`x`"]


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("sh") and shutil.which("cat")), reason="needs sh and cat")
def test_a_pipe_goes_through_sh_c() -> None:
    adapter = f"{shlex.quote(sys.executable)} -m cmp.adapter"
    code, out = run_against(shlex.join(["sh", "-c", f"{adapter} | cat"]))
    assert code == 0 and out[-1].endswith(" passed, 0 failed")


# --- --impl-stderr ----------------------------------------------------------------------

NOISY = """\
    import base64
    from cmp.conformance import respond
    for line in sys.stdin:
        request = json.loads(line)
        print("noise for", request["id"], file=sys.stderr, flush=True)
        if request["id"] == "versioning/absent":
            sys.exit(3)
        answer = {"id": request["id"], **respond(base64.b64decode(request["input_base64"]))}
        print(json.dumps(answer), flush=True)
    """


@pytest.mark.slow
def test_implementation_stderr_is_discarded_by_default(tmp_path: Path) -> None:
    result = cli("--filter", "versioning", "--impl", fake(tmp_path, NOISY))
    assert result.returncode == 1 and result.stderr == ""


@pytest.mark.slow
def test_implementation_stderr_passed_through(tmp_path: Path) -> None:
    result = cli("--filter", "versioning", "--impl", fake(tmp_path, NOISY), "--impl-stderr", "-")
    assert result.returncode == 1
    total = len(committed_vectors(["versioning"]))
    assert result.stderr.count("noise for ") == total
    assert "noise for versioning/absent\n" in result.stderr


@pytest.mark.slow
def test_implementation_stderr_appended_to_a_file(tmp_path: Path) -> None:
    log = tmp_path / "impl.log"
    log.write_text("earlier\n")
    result = cli("--filter", "versioning", "--impl", fake(tmp_path, NOISY), "--impl-stderr", str(log))
    assert result.returncode == 1 and result.stderr == ""
    lines = log.read_text().splitlines()
    total = len(committed_vectors(["versioning"]))
    # Kept what was there, and holds what both processes wrote (one before and one after the crash).
    assert lines[0] == "earlier" and len(lines) == 1 + total
    assert lines[1] == "noise for versioning/absent" and starts(tmp_path) == 2


@pytest.mark.slow
@pytest.mark.parametrize("where", ["folder", "missing/impl.log"])
def test_implementation_stderr_file_that_cannot_be_opened(tmp_path: Path, where: str) -> None:
    (tmp_path / "folder").mkdir()
    result = cli("--filter", "versioning", "--impl", fake(tmp_path, NOISY), "--impl-stderr", str(tmp_path / where))
    assert_one_line(result, "--impl-stderr: cannot open")
    assert not (tmp_path / "starts.log").exists()  # nothing was run


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_implementation_stderr_fifo_without_reader_is_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    result = cli("--filter", "versioning", "--impl", fake(tmp_path, NOISY), "--impl-stderr", str(tmp_path / "fifo"))
    assert_one_line(result, "--impl-stderr: cannot open")


# --- --format junit ---------------------------------------------------------------------


@pytest.mark.slow
def test_junit_report_of_a_passing_run() -> None:
    result = cli("--filter", "versioning", "--filter", "created-at", "--format", "junit")
    assert result.returncode == 0, result.stderr
    root = ET.fromstring(result.stdout.encode("utf-8"))
    vectors = committed_vectors(["versioning", "created-at"])
    assert root.tag == "testsuites" and root.get("tests") == str(len(vectors)) and root.get("failures") == "0"
    assert [s.get("name") for s in root] == ["created-at", "versioning"]
    cases = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert cases == [(v["area"], v["id"]) for v in vectors]
    assert not list(root.iter("failure"))


@pytest.mark.slow
def test_junit_report_of_failures_is_well_formed_xml_whatever_the_text(tmp_path: Path) -> None:
    odd_id = "t/odd&<>\"'\x01\x7f\x9b\u202eé"
    folder = folder_with(tmp_path, vector(), vector(id=odd_id), vector(id="t/fine"))
    text = "bad \x00\x01\ud800 <&]]> \t\u2028\u202e end"
    body = f"""\
        for line in sys.stdin:
            request = json.loads(line)
            if request["id"] == "t/fine":
                answer = {{"id": request["id"], "conforming": False, "errors": [
                    {{"code": "version-missing", "path": "$.ltm_version", "keyword": None}}]}}
            elif request["id"] == "t/one":
                answer = {{"id": request["id"], "error": {text!r}}}
            else:
                answer = {{"id": request["id"], "conforming": True, "errors": [], "redactions": []}}
            print(json.dumps(answer), flush=True)
        """
    result = cli("--vectors", str(folder), "--format", "junit", "--impl", fake(tmp_path, body))
    assert result.returncode == 1, result.stderr
    raw = result.stdout
    assert raw.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    assert not any(ch in raw for ch in "\x00\x01\t\r\x7f\x9b\u2028\u2029\u202e\ud800")  # as references or gone
    root = ET.fromstring(raw.encode("utf-8"))
    assert (root.get("tests"), root.get("failures")) == ("3", "2")
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {"t/one", "t/odd&<>\"'\x7f\x9b\u202eé", "t/fine"}  # \x01 cannot be held in XML 1.0
    assert all(c.get("classname") == "t" for c in cases.values())
    assert cases["t/fine"].find("failure") is None
    one = cases["t/one"].find("failure")
    assert one is not None
    # One line (whitespace runs, \t and U+2028 included, are one space), then without
    # what XML 1.0 cannot hold (NUL, U+0001, a lone surrogate).
    shown = "the implementation answered with an error: bad  <&]]> \u202e end"
    assert one.get("message") == shown and one.text == shown
    odd = cases["t/odd&<>\"'\x7f\x9b\u202eé"].find("failure")
    assert odd is not None
    problems = [
        "conforming: expected false, got true",
        'errors: missing required [["version-missing", "$.ltm_version", null]]',
    ]
    assert odd.get("message") == "; ".join(problems) and odd.text == "\n".join(problems)


# --- where the vectors come from --------------------------------------------------------


def installed_copy(tmp_path: Path, vectors: bool = True, init: bool = False) -> Path:
    """The layout a wheel installs: the package, and the vectors as cmp/vectors package data."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "cmp", site / "cmp", ignore=shutil.ignore_patterns("__pycache__"))
    if vectors:
        (site / "cmp" / "vectors").mkdir()
        for path in [*VECTORS.glob("*.json"), VECTORS / "README.md"]:
            shutil.copy(path, site / "cmp" / "vectors")
        if init:
            (site / "cmp" / "vectors" / "__init__.py").write_text("")
    return site


def from_site(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=str(site)),
    )


def test_a_checkout_uses_its_own_folder() -> None:
    assert default_vector_dir() == VECTORS


@pytest.mark.slow
@pytest.mark.parametrize("init", [False, True], ids=["namespace", "package"])
def test_an_installed_package_uses_its_package_data(tmp_path: Path, init: bool) -> None:
    site = installed_copy(tmp_path, init=init)
    where = from_site(
        site, tmp_path, "-c", "from cmp.conformance import default_vector_dir; print(default_vector_dir())"
    )
    assert where.stdout.strip() == str(site / "cmp" / "vectors"), where.stderr
    result = from_site(site, tmp_path, "-m", "cmp", "conformance", "--filter", "versioning")
    total = len(committed_vectors(["versioning"]))
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{total} passed, 0 failed\n", "")


@pytest.mark.slow
def test_the_working_directory_is_never_used(tmp_path: Path) -> None:
    """A folder named conformance-vectors where the command runs is not picked up silently."""
    site = installed_copy(tmp_path, vectors=False)
    decoy = tmp_path / "conformance-vectors"
    shutil.copytree(VECTORS, decoy)
    result = from_site(site, tmp_path, "-m", "cmp", "conformance", "--filter", "versioning")
    assert_one_line(result, "no conformance vectors found", "pass --vectors DIR")
    result = from_site(site, tmp_path, "-m", "cmp", "conformance", "--filter", "versioning", "--vectors", str(decoy))
    assert result.returncode == 0, result.stderr


def test_help_says_where_the_vectors_come_from(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--vectors DIR vector folder (default: the conformance-vectors folder beside the cmp package" in text
    assert "else the copy installed with the package (cmp.vectors)" in text
    assert "--impl-stderr FILE" in text and "junit" in text


# --- what the implementation started ends with it -----------------------------------------


def _running(pid: int) -> bool:
    """Whether a process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(
    not (shutil.which("sh") and shutil.which("sleep") and Path("/proc").is_dir()), reason="needs sh, sleep, /proc"
)
def test_stopping_the_implementation_ends_the_processes_it_started(tmp_path: Path) -> None:
    """`sh -c` without exec, and an adapter's own children, are killed with it, never left behind."""
    pids = tmp_path / "pids"
    # Starts a child that would outlive it, then never answers: every exchange times out.
    command = shlex.join(["sh", "-c", f"sleep 300 & echo $! >> {shlex.quote(str(pids))}; sleep 300"])
    code, out = run_folder(real_vectors(tmp_path, "versioning/absent"), command, "--timeout", "0.5")
    assert code == 1 and "no answer within 0.5s" in out[0]
    started = [int(p) for p in pids.read_text().split()]
    assert started
    deadline = time.monotonic() + 30
    while any(_running(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in started if _running(pid)], "a process the implementation started is still running"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("sleep") is None, reason="needs sleep")
def test_a_stop_signal_while_the_implementation_starts_still_stops_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worst moment for a stop signal: the implementation runs, and Popen has not yet
    returned it to the runner. The signal waits until the runner holds the process, so the
    cleanup it starts kills that process too, instead of leaving it running unknown."""
    assert threading.current_thread() is threading.main_thread(), "stop signals are handled on the main thread only"
    started: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    def popen_then_stop(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        process: subprocess.Popen[bytes] = real_popen(*args, **kwargs)
        started.append(process)
        os.kill(os.getpid(), signal.SIGTERM)
        return process

    monkeypatch.setattr(_implementation.subprocess, "Popen", popen_then_stop)
    folder = real_vectors(tmp_path, "versioning/absent")
    try:
        status = main(["conformance", "--vectors", str(folder), "--impl", "sleep 300", "--timeout", "60"])
        monkeypatch.undo()
        assert status == 128 + signal.SIGTERM
        assert len(started) == 1
        assert started[0].poll() == -signal.SIGKILL, "the implementation outlived the runner"
    finally:
        for process in started:
            process.kill()
            process.wait()


@pytest.mark.slow
@pytest.mark.skipif(
    not (shutil.which("sh") and shutil.which("sleep") and Path("/proc").is_dir()), reason="needs sh, sleep, /proc"
)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_stopped_runner_takes_the_implementation_with_it(tmp_path: Path, signum: int) -> None:
    pids = tmp_path / "pids"
    command = shlex.join(
        ["sh", "-c", f"echo $$ >> {shlex.quote(str(pids))}; sleep 300 & echo $! >> {shlex.quote(str(pids))}; wait"]
    )
    runner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cmp",
            "conformance",
            "--vectors",
            str(real_vectors(tmp_path, "versioning/absent")),
            "--impl",
            command,
            "--timeout",
            "600",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=default_stop_signals,  # SIGHUP's and SIGINT's defaults even under nohup or in the background
    )
    deadline = time.monotonic() + 60
    while (not pids.exists() or len(pids.read_text().split()) < 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    started = [int(p) for p in pids.read_text().split()]
    runner.send_signal(signum)
    _, err = runner.communicate(timeout=60)
    assert runner.returncode == 128 + signum
    assert err.decode().count("\n") == 1, err
    deadline = time.monotonic() + 30
    while any(_running(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in started if _running(pid)], "the implementation outlived the runner"
