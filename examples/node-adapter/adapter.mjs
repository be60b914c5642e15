#!/usr/bin/env node
// A conformance adapter for an implementation that is a command-line program.
//
// The conformance runner (`python -m cmp conformance --impl 'COMMAND'`) starts this
// script once and speaks the JSON-lines protocol of conformance-vectors/README.md
// ("The harness protocol") over its stdin and stdout. For every request this script
// runs the wrapped CLI once to judge the packet and, when the packet conforms, once
// more to get its canonical bytes, then answers with one line.
//
// The worked example wraps this project's own CLI. Point it at another program with
// the CMP_CLI environment variable, split on whitespace (no quoting):
//
//   CMP_CLI='python3 -m cmp' python -m cmp conformance --impl 'node examples/node-adapter/adapter.mjs'
//
// Node 18 or later; no dependencies.

import { spawnSync } from "node:child_process";
import { createInterface } from "node:readline";

const CLI = (process.env.CMP_CLI || "python3 -m cmp").trim().split(/\s+/);

// The runner allows each exchange --timeout seconds (10 by default), and an exchange
// here runs the CLI once or twice. A run that takes longer than this is killed, so that
// both runs fit within the default: a hung CLI then costs one error answer, instead of
// the runner killing this adapter and leaving the hung child behind. Raise it together
// with --timeout for a CLI that is slow to start.
const CLI_TIMEOUT_MS = 4000;

// A failure of the wrapped CLI. Thrown by runCli and answered as {"id", "error"}.
class CliError extends Error {}

// Runs `CLI ...args` with `input` on its stdin and returns its stdout. Failing to start,
// being killed, or an exit status not in `okStatuses` is a CliError.
function runCli(args, input, okStatuses) {
  const [program, ...fixed] = CLI;
  const result = spawnSync(program, [...fixed, ...args], {
    input,
    timeout: CLI_TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  });
  const what = `${CLI.join(" ")} ${args.join(" ")}`;
  // EPIPE only says the program exited before reading all of its input, which a CLI may
  // do (say, once it has seen more bytes than the size limit); its exit status decides.
  const exited = result.error?.code === "EPIPE" && result.status !== null;
  if (result.error && !exited) {
    // ENOENT (no such program), ETIMEDOUT (killed after CLI_TIMEOUT_MS), ENOBUFS ...
    throw new CliError(`${what}: ${result.error.message}`);
  }
  if (!okStatuses.includes(result.status)) {
    const how = result.status === null ? `killed by ${result.signal}` : `exit status ${result.status}`;
    throw new CliError(`${what}: ${how}${lastLine(result.stderr)}`);
  }
  return { stdout: result.stdout, stderr: result.stderr };
}

// The last line the CLI wrote to stderr, as ": line", to explain a failure; "" if none.
function lastLine(stderr) {
  const line = stderr.toString("utf8").trim().split("\n").pop();
  return line ? `: ${line}` : "";
}

// The verdict, findings and redactions, from `check --format json --show-found -`.
// Exit status 0 means accepted and 1 means refused or has redaction findings; both
// are answers. Status 2 means the CLI could not read its input at all. --show-found:
// the protocol compares what each redaction hit found (its 32-character echo), which
// check masks by default.
function judge(bytes) {
  const { stdout, stderr } = runCli(["check", "--format", "json", "--show-found", "-"], bytes, [0, 1]);
  let result;
  try {
    result = JSON.parse(stdout.toString("utf8")).results[0];
  } catch {
    throw new CliError(`check printed something other than its JSON report${lastLine(stderr)}`);
  }
  if (typeof result !== "object" || result === null) {
    throw new CliError("check's JSON report has no result");
  }
  // A result that carries a non-null `error` was never judged (the input was unreadable).
  if (result.error != null) {
    throw new CliError(`check: ${result.error}`);
  }
  const listOfObjects = (value) => Array.isArray(value) && value.every((x) => typeof x === "object" && x !== null);
  if (typeof result.conforming !== "boolean" || !listOfObjects(result.errors) || !listOfObjects(result.redactions)) {
    throw new CliError("check's JSON report lacks conforming, errors or redactions");
  }
  return {
    // The protocol's `conforming` is the report's `conforming`, not its `ok`: `ok` is
    // also false for a conforming packet with redaction findings.
    conforming: result.conforming,
    // The runner compares only code, path and keyword; the message is left out.
    errors: result.errors.map(({ code, path, keyword }) => ({ code, path, keyword })),
    // The protocol wants each redaction as its one-line text: "<field>/<category>: <found>".
    redactions: result.redactions.map((r) => r.text),
  };
}

// The canonical bytes, from `fmt --allow-unredacted -`. The override is needed because a
// conforming packet may still have redaction findings, and the vectors want its
// canonical bytes all the same.
function canonical(bytes) {
  const { stdout } = runCli(["fmt", "--allow-unredacted", "-"], bytes, [0]);
  // Canonical bytes never end in a newline, so a final one is the CLI's line ending.
  // Versions of fmt differ in whether they print it; strip it if it is there.
  const end = stdout.length > 0 && stdout[stdout.length - 1] === 0x0a ? stdout.length - 1 : stdout.length;
  return stdout.subarray(0, end);
}

// The bytes of standard padded base64 (RFC 4648), or null. Node's decoder never fails:
// it skips characters outside the alphabet, accepts the URL-safe one and missing
// padding. Encoding the result again gives back the same text only if it was exact.
function strictBase64(text) {
  if (typeof text !== "string") return null;
  const bytes = Buffer.from(text, "base64");
  return bytes.toString("base64") === text ? bytes : null;
}

// One request line to one answer object. Throws only on a bug in this script.
function answer(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return { id: null, error: "bad request: not JSON" };
  }
  const id = typeof request?.id === "string" ? request.id : null;
  if (id === null) {
    return { id: null, error: "bad request: no string id" };
  }
  const bytes = strictBase64(request.input_base64);
  if (bytes === null) {
    return { id, error: "bad request: input_base64 is not standard padded base64" };
  }
  try {
    const verdict = judge(bytes);
    const bytesOut = verdict.conforming ? canonical(bytes) : null;
    return { id, ...verdict, canonical_base64: bytesOut === null ? null : bytesOut.toString("base64") };
  } catch (error) {
    if (error instanceof CliError) {
      return { id, error: error.message.split("\n")[0] };
    }
    throw error; // a bug in this script: let it crash loudly rather than answer wrongly
  }
}

// Requests are handled strictly one at a time, in order: the runner sends the next only
// after it has read the answer to this one. Each answer is one line, and waiting for
// the write to complete is Node's way to flush it before reading on.
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  const text = JSON.stringify(answer(line)) + "\n";
  await new Promise((done) => process.stdout.write(text, done));
}
