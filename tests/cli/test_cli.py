"""The command line: exit codes, text and JSON output, odd inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cmp.cli import build_parser, main
from tests.support.cli import run_cli
from tests.support.packets import encode, full, put


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.json"
    path.write_bytes(encode(full()))
    return path


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    path = tmp_path / "bad.json"
    path.write_bytes(encode(put(full(), "tags[0]", "Bad")))
    return path


@pytest.fixture
def leaky(tmp_path: Path) -> Path:
    path = tmp_path / "leaky.json"
    path.write_bytes(encode(put(full(), "goal", "Key AKIAIOSFODNN7EXAMPLE in /home/me/x")))
    return path


def test_ok_file(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(good)]) == 0
    assert capsys.readouterr().out == f"{good}: ok\n"


def test_bad_file_text_output(bad: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(bad)]) == 1
    # FILE:LINE:COLUMN, the form editors and terminals make clickable: where the tag is written.
    assert capsys.readouterr().out == f"{bad}:1:596: $.tags[0]: 'Bad' does not match ^[a-z0-9][a-z0-9-]{{0,31}}$\n"


def test_json_output(good: Path, bad: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--format", "json", str(good), str(bad)]) == 1
    document = json.loads(capsys.readouterr().out)
    first, second = document["results"]
    assert first == {
        "file": str(good),
        "ok": True,
        "conforming": True,
        "accepted": True,
        "version": "0.2",
        "errors": [],
        "redactions": [],
        "error": None,
    }
    assert second["ok"] is False and second["conforming"] is False
    assert second["errors"] == [
        {
            "code": "schema",
            "path": "$.tags[0]",
            "keyword": "pattern",
            "message": "'Bad' does not match ^[a-z0-9][a-z0-9-]{0,31}$",
            "line": 1,
            "column": 596,
        }
    ]


def test_lenient_warns_and_exits_zero(bad: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--lenient", str(bad)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{bad}:1:596: warning: $.tags[0]")
    assert out[-1] == f"{bad}: accepted (not conforming)"


def test_missing_file_exits_2_and_other_files_still_checked(
    good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.json"
    assert main(["check", str(missing), str(good)]) == 2
    captured = capsys.readouterr()
    assert captured.out == f"{good}: ok\n"
    assert captured.err == (
        f"cmp: {missing}: cannot open: No such file or directory\n"
        "cmp: check: 1 packet, 1 accepted; 1 file not read\n"  # the summary, of two sources
    )


def test_a_folder_without_packets_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"cmp: {tmp_path}: no *.json file below it\n"


def test_stdin(good: Path) -> None:
    result = run_cli("check", "-", input=good.read_bytes())
    assert (result.returncode, result.stdout, result.stderr) == (0, b"-: ok\n", b"")


def test_usage_errors_exit_2_with_one_line() -> None:
    for args in (["check"], ["nope"], ["check", "--format", "xml", "x"], []):
        result = run_cli(*args)
        assert result.returncode == 2, args
        assert b"Traceback" not in result.stderr


def test_version_names_the_package_however_started() -> None:
    import cmp

    for flag in ("--version", "-V"):
        result = run_cli(flag)
        assert (result.returncode, result.stdout.decode()) == (0, f"core-memory-packet {cmp.__version__}\n")
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["-V"])
    assert stopped.value.code == 0


@pytest.mark.parametrize("how", ["module", "console"])
def test_usage_and_examples_name_the_program_as_it_was_started(how: str) -> None:
    # `python -m cmp` says so; the console script (main's default) says core-memory-packet.
    if how == "module":
        prog, help_text = "python -m cmp", run_cli("--help").stdout.decode()
    else:
        prog, help_text = "core-memory-packet", build_parser().format_help()
    other = "core-memory-packet" if how == "module" else "python -m cmp"
    assert help_text.startswith(f"usage: {prog} [-h] [-V] COMMAND ...\n")
    examples = help_text[help_text.index("examples:") :]
    commands = [line.strip() for line in examples.splitlines()[1::2]]
    assert len(commands) == 15
    assert all(command.startswith((f"{prog} ", f"cat packet.json | {prog} ")) for command in commands)
    assert other not in help_text


@pytest.mark.parametrize(
    ("command", "own", "not_own"),
    [
        ("check", ["check packet.json", "check --lenient"], ["fmt ", "conformance"]),
        ("fmt", ["fmt packet.json", "fmt --check", "fmt --diff", "fmt --write"], ["check packet", "conformance"]),
        ("gate", ["gate packets/", "gate --strict"], ["check packet", "fmt "]),
        ("conformance", ["conformance --impl", "conformance --filter"], ["check packet", "fmt "]),
    ],
)
def test_each_subcommand_shows_its_own_examples(command: str, own: list[str], not_own: list[str]) -> None:
    result = run_cli(command, "--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    assert text.startswith(f"usage: python -m cmp {command} ")
    examples = text[text.index("examples:") :]
    for snippet in own:
        assert f"python -m cmp {snippet}" in examples
    for snippet in not_own:
        assert snippet not in examples


@pytest.mark.parametrize(
    "command", [[], ["check"], ["fmt"], ["gate"], ["conformance"]], ids=["top", "check", "fmt", "gate", "conformance"]
)
def test_help_fits_an_80_column_terminal(command: list[str]) -> None:
    # Examples and notes keep their lines; a one-paragraph description (conformance's) is wrapped.
    env = {**os.environ, "COLUMNS": "80"}
    result = subprocess.run(
        [sys.executable, "-m", "cmp", *command, "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert "\nexamples:\n  python -m cmp " in result.stdout


def test_check_help_says_what_each_format_prints() -> None:
    text = " ".join(run_cli("check", "--help").stdout.decode().split())
    assert "text (default): one line per finding or redaction hit, 'FILE:LINE:COLUMN: ...', or 'FILE: ok'" in text
    assert "github: one GitHub Actions workflow command (an annotation) per finding" in text
    assert "sarif: one SARIF 2.1.0 log for code scanning" in text
    members = "ok, conforming, accepted, version, errors [{code, path, keyword, message}]"
    assert members in text and "redactions [{field, category, found, at, length, text}] and error" in text


def test_conformance_help_describes_its_formats_as_they_are() -> None:
    text = " ".join(run_cli("conformance", "--help").stdout.decode().split())
    assert '--format json: one document {"passed", "failed", "failures": [{"id", "area", "problems"}]}' in text
    assert '--format text: one "FAIL id: problems" line per failing vector, then "N passed, N failed"' in text
    result = run_cli("conformance", "--filter", "versioning", "--format", "json")
    document = json.loads(result.stdout)
    assert result.returncode == 0 and list(document) == ["passed", "failed", "failures"]
    assert document["passed"] > 0 and document["failed"] == 0
    text_result = run_cli("conformance", "--filter", "versioning")
    assert text_result.stdout.decode() == f"{document['passed']} passed, 0 failed\n"
    assert "--format junit: a JUnit XML report, a <testsuite> per area and a <testcase> per vector" in text
    junit = run_cli("conformance", "--filter", "versioning", "--format", "junit").stdout.decode()
    assert junit.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')
    assert junit.count("<testsuite ") == 1 and junit.count("<testcase ") == document["passed"]


def test_too_large_file_reports_true_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 100_000)
    assert main(["check", str(path)]) == 1
    # The position of a packet too large: the first character past the limit.
    assert capsys.readouterr().out == f"{path}:1:32769: $: packet is 100000 bytes, max is 32768\n"


def test_fifo_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = run_cli("check", str(fifo))
    assert result.returncode == 2
    assert result.stderr == f"cmp: {fifo}: cannot read: not a regular file\n".encode()


def test_non_utf8_output_locale(good: Path, bad: Path) -> None:
    obj = put(full(), "tags[0]", "Bäd")
    path = good.parent / "umlaut.json"
    path.write_bytes(encode(obj))
    env = {**os.environ, "LC_ALL": "C", "PYTHONIOENCODING": "ascii"}
    result = subprocess.run([sys.executable, "-m", "cmp", "check", str(path)], capture_output=True, env=env, timeout=60)
    assert result.returncode == 1 and "Bäd" in result.stdout.decode("utf-8")


def test_redaction_hits_fail(leaky: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(leaky)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{leaky}:1:135: redaction goal/abs-path: /home/me/x at 28",
        f"{leaky}:1:111: redaction goal/aws-key: AKIA… (20 chars) at 4",
    ]
    assert main(["check", "--show-found", str(leaky)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{leaky}:1:135: redaction goal/abs-path: /home/me/x",
        f"{leaky}:1:111: redaction goal/aws-key: AKIAIOSFODNN7EXAMPLE",
    ]


def test_allow_unredacted_warns_and_passes(leaky: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--allow-unredacted", str(leaky)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{leaky}:1:135: warning: redaction goal/abs-path: /home/me/x at 28",
        f"{leaky}:1:111: warning: redaction goal/aws-key: AKIA… (20 chars) at 4",
        f"{leaky}: ok",
    ]


def test_redactions_in_json_output(leaky: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--format", "json", str(leaky)]) == 1
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert result["conforming"] is True and result["ok"] is False
    assert result["redactions"] == [
        {
            "field": "goal",
            "category": "abs-path",
            "found": "/home/me/x",
            "at": 28,
            "length": 10,
            "text": "goal/abs-path: /home/me/x at 28",
            "line": 1,
            "column": 135,
        },
        {
            "field": "goal",
            "category": "aws-key",
            "found": "AKIA…",
            "at": 4,
            "length": 20,
            "text": "goal/aws-key: AKIA… (20 chars) at 4",
            "line": 1,
            "column": 111,
        },
    ]
    assert main(["check", "--format", "json", "--show-found", str(leaky)]) == 1
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert [(r["found"], r["text"]) for r in result["redactions"]] == [
        ("/home/me/x", "goal/abs-path: /home/me/x"),
        ("AKIAIOSFODNN7EXAMPLE", "goal/aws-key: AKIAIOSFODNN7EXAMPLE"),
    ]


def test_lenient_still_blocks_on_redactions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "both.json"
    path.write_bytes(encode(put(put(full(), "tags[0]", "Bad"), "goal", "AKIAIOSFODNN7EXAMPLE")))
    assert main(["check", "--lenient", str(path)]) == 1
    assert main(["check", "--lenient", "--allow-unredacted", str(path)]) == 0


def canonical_bytes(path: Path) -> bytes:
    import cmp

    return cmp.dumps(cmp.loads(path.read_bytes()))


def test_fmt_prints_canonical_bytes_and_one_final_newline(
    good: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["fmt", str(good)]) == 0
    printed = capsysbinary.readouterr().out
    assert printed == canonical_bytes(good) + b"\n"
    assert not canonical_bytes(good).endswith(b"\n")  # the wire bytes have none of their own


def test_fmt_prints_one_file_only(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fmt", str(good), str(good)]) == 2
    assert "one file" in capsys.readouterr().err


def test_fmt_check_lists_non_canonical(good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    canonical = tmp_path / "canonical.json"
    canonical.write_bytes(canonical_bytes(good) + b"\n")
    assert main(["fmt", "--check", str(canonical)]) == 0
    assert main(["fmt", "--check", str(canonical), str(good)]) == 1
    # One line, JSON text on one line: it first differs where the canonical form breaks the line.
    assert capsys.readouterr().out == f"{good}:1:2: not canonical: expected a line end, found '\"'\n"


@pytest.mark.parametrize(
    ("ending", "why"),
    [
        (b"\n", None),
        (b"", "no line end after the packet"),
        (b"\n\n", "more after the packet's final line end"),
        (b"\r\n", "expected a line end, found a carriage return"),
        (b" \n", "expected a line end, found a space"),
    ],
    ids=["one-newline", "no-newline", "two-newlines", "crlf", "space-newline"],
)
def test_fmt_check_takes_exactly_one_final_newline(
    good: Path, tmp_path: Path, ending: bytes, why: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    canonical = why is None
    path = tmp_path / "packet.json"
    path.write_bytes(canonical_bytes(good) + ending)
    assert main(["fmt", "--check", str(path)]) == (0 if canonical else 1)
    # The packet's last line is "}": the file differs from its canonical bytes just after it,
    # or at the start of the line after it when a second line end follows.
    lines = canonical_bytes(good).count(b"\n") + 1
    place = f"{lines + 1}:1" if ending == b"\n\n" else f"{lines}:2"
    assert capsys.readouterr().out == ("" if canonical else f"{path}:{place}: not canonical: {why}\n")
    # --write leaves a canonical file alone and gives any other the one final newline.
    assert main(["fmt", "--write", str(path)]) == 0
    assert capsys.readouterr().out == ("" if canonical else f"{path}: rewritten\n")
    assert path.read_bytes() == canonical_bytes(good) + b"\n"


def test_fmt_check_with_crlf_line_ends_throughout(good: Path, tmp_path: Path) -> None:
    path = tmp_path / "windows.json"
    path.write_bytes((canonical_bytes(good) + b"\n").replace(b"\n", b"\r\n"))
    assert main(["fmt", "--check", str(path)]) == 1
    assert main(["fmt", "--write", str(path)]) == 0
    assert path.read_bytes() == canonical_bytes(good) + b"\n"


def test_fmt_stdin_prints_one_final_newline(good: Path) -> None:
    result = run_cli("fmt", "-", input=canonical_bytes(good) + b"\n\n")
    assert (result.returncode, result.stdout, result.stderr) == (0, canonical_bytes(good) + b"\n", b"")
    assert run_cli("fmt", "--check", "-", input=canonical_bytes(good) + b"\n").returncode == 0
    assert run_cli("fmt", "--check", "-", input=canonical_bytes(good)).returncode == 1


def test_fmt_formats_a_packet_whose_canonical_form_is_the_largest_allowed(tmp_path: Path) -> None:
    import cmp

    # A file of a packet whose canonical form is the largest allowed has no final newline
    # (specification 9.8): with it, the file would be too large for every reader.
    def size(obj: dict[str, object]) -> int:
        try:
            return len(cmp.dumps(cmp.loads(encode(obj))))
        except cmp.PacketError:  # too large
            return cmp.MAX_PACKET_BYTES + 1

    packet = full()
    while size(put(packet, "constraints", [*packet["constraints"], "x" * 1024, "y"])) < cmp.MAX_PACKET_BYTES:
        packet = put(packet, "constraints", [*packet["constraints"], "x" * 1024])
    packet = put(packet, "constraints", [*packet["constraints"], "y"])
    packet = put(packet, "constraints", [*packet["constraints"][:-1], "y" * (1 + cmp.MAX_PACKET_BYTES - size(packet))])
    data = cmp.dumps(cmp.loads(encode(packet)))
    assert len(data) == cmp.MAX_PACKET_BYTES
    path = tmp_path / "largest.json"
    path.write_bytes(encode(packet))
    assert main(["fmt", "--write", str(path)]) == 0
    assert path.read_bytes() == data
    assert main(["fmt", "--check", str(path)]) == 0
    assert main(["check", str(path)]) == 0
    # An editor's final newline makes it one byte too large to check, yet fmt still
    # knows the packet, calls the file not canonical and writes it back without it.
    path.write_bytes(data + b"\n")
    assert main(["check", str(path)]) == 1
    assert main(["fmt", "--check", str(path)]) == 1
    assert main(["fmt", "--write", str(path)]) == 0
    assert path.read_bytes() == data


def test_fmt_write_rewrites_and_keeps_mode(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = canonical_bytes(good) + b"\n"
    good.chmod(0o640)
    assert main(["fmt", "--write", str(good)]) == 0
    assert good.read_bytes() == expected
    assert good.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in good.parent.iterdir()] == [good.name]
    assert main(["fmt", "--write", str(good)]) == 0  # already canonical: nothing to do
    assert capsys.readouterr().out == f"{good}: rewritten\n"


def test_fmt_write_refuses_non_conforming(bad: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = bad.read_bytes()
    assert main(["fmt", "--write", str(bad)]) == 1
    assert bad.read_bytes() == before
    assert "$.tags[0]" in capsys.readouterr().out


def test_fmt_write_refuses_redaction_hits_unless_allowed(leaky: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = leaky.read_bytes()
    assert main(["fmt", "--write", str(leaky)]) == 1
    assert leaky.read_bytes() == before
    assert "--allow-unredacted" in capsys.readouterr().out
    assert main(["fmt", "--write", "--allow-unredacted", str(leaky)]) == 0
    assert leaky.read_bytes() == canonical_bytes(leaky) + b"\n"


@pytest.mark.parametrize("failing", ["fsync", "replace", "chmod"])
def test_fmt_write_failure_leaves_original_intact(
    good: Path, failing: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = good.read_bytes()

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, failing, boom)
    assert main(["fmt", "--write", str(good)]) == 2
    monkeypatch.undo()
    assert good.read_bytes() == before
    assert [p.name for p in good.parent.iterdir()] == [good.name]
    assert "the file is unchanged" in capsys.readouterr().err


def test_fmt_write_refuses_stdin(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fmt", "--write", "-"]) == 2


def test_unreadable_file_exits_2(
    good: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Root reads files whatever their mode, so the refusal is injected where the OS would raise it.
    real_open = os.open

    def refuse(path: str, *args: int) -> int:
        if path == str(good):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args)

    monkeypatch.setattr(os, "open", refuse)
    assert main(["check", str(good)]) == 2
    assert capsys.readouterr().err == f"cmp: {good}: cannot open: Permission denied\n"


def test_endless_stdin_is_read_only_to_the_limit() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "cmp", "check", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    written = 0
    try:
        while written < 10_000_000:
            process.stdin.write(b" " * 65536)
            written += 65536
    except BrokenPipeError:
        pass
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 1
    assert out == b"-:1:32769: $: packet is more than 32768 bytes, max is 32768\n"
    assert written < 10_000_000  # the reader stopped and closed the pipe


# VmHWM, unlike ru_maxrss, starts afresh at exec: it measures this process alone.
HIGH_WATER_MARK = (
    "import sys\nfrom cmp.cli import main\ncode = main(sys.argv[1:])\n"
    "status = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
    "print(status, file=sys.stderr)\nsys.exit(code)\n"
)


def test_one_gigabyte_file_reports_its_size_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with open(path, "wb") as stream:
        stream.truncate(1 << 30)  # sparse: costs no disk
    argv = [sys.executable, "-c", HIGH_WATER_MARK, "check", str(path)]
    result = subprocess.run(argv, capture_output=True, timeout=60)
    assert result.returncode == 1
    assert result.stdout == f"{path}:1:32769: $: packet is 1073741824 bytes, max is 32768\n".encode()
    assert int(result.stderr) < 200_000  # KiB: nowhere near a gigabyte


def test_symlink_loop_and_non_utf8_name(tmp_path: Path, good: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    odd = os.path.join(os.fsencode(tmp_path), b"caf\xe9.json")
    with open(odd, "wb") as stream:
        stream.write(good.read_bytes())
    result = subprocess.run(
        [sys.executable, "-m", "cmp", "check", os.fsencode(loop), odd, os.fsencode(good)],
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"cmp: {loop}: cannot open: Too many levels of symbolic links\n"
        "cmp: check: 2 packets, 2 accepted; 1 file not read\n"
    ).encode()
    assert result.stdout == f"{tmp_path}/caf\\xe9.json: ok\n{good}: ok\n".encode()


SUMMARY_ONE_NOT_READ = b"cmp: check: 1 packet, 1 accepted; 1 file not read\n"


def test_closed_stdin(good: Path) -> None:
    result = subprocess.run(f"{sys.executable} -m cmp check - {good} <&-", shell=True, capture_output=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr == b"cmp: -: cannot read stdin: it is closed\n" + SUMMARY_ONE_NOT_READ
    assert result.stdout == f"{good}: ok\n".encode()


def test_closed_stdout(good: Path) -> None:
    result = subprocess.run(
        f"{sys.executable} -m cmp check {good} {good} >&-", shell=True, capture_output=True, timeout=60
    )
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
    assert result.stderr.decode().count("\n") == 1


def test_stdout_pipe_closed_early(good: Path) -> None:
    files = " ".join([good.name] * 2000)
    result = subprocess.run(
        f"{sys.executable} -m cmp check {files} | head -0",
        shell=True,
        capture_output=True,
        timeout=120,
        executable="/bin/bash",
        cwd=good.parent,
    )
    assert b"Traceback" not in result.stderr
    assert result.stderr.decode().count("\n") <= 1


def test_fmt_write_through_a_symlink_keeps_the_link(good: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(good)
    assert main(["fmt", "--write", str(link)]) == 0
    assert link.is_symlink()
    assert good.read_bytes() == canonical_bytes(good) + b"\n"


ON_FIRST_USE = (
    "cmp.conformance",
    "cmp._authoring",
    "cmp._chain",
    "cmp._lint",
    "cmp._migrate",
    "cmp._scrub",
    "cmp.cli._new",
    "cmp._example",
    "cmp._audit",
    "cmp.integrations",
    "cmp.cli._dask",
    "hmac",  # a baseline's fingerprints
    "secrets",  # a new baseline's salt
)


def test_check_and_fmt_do_not_load_the_runner_or_the_writers_toolkit(good: Path) -> None:
    """The runner and the writer's toolkit are imported when used (cmp.cli._main,
    cmp.__getattr__), not at every start-up."""
    probe = (
        "import sys\n"
        "from cmp.cli import main\n"
        "statuses = [main(['check', sys.argv[1]]), main(['fmt', '--check', sys.argv[1]])]\n"
        f"print(statuses, sorted(m for m in sys.modules if m.startswith({ON_FIRST_USE!r})))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe, str(good)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].endswith("] []"), result.stdout
    conformance = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nfrom cmp.cli import main\nmain(['conformance', '--filter', 'versioning'])\n"
            "print('cmp.conformance' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert conformance.stdout.splitlines()[-1] == "True", conformance.stdout
