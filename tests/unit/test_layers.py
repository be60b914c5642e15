"""The import graph: data flows one way, and no module imports one above it.

Read from the source with ``ast``, so imports inside functions (the lazy ones) and under
TYPE_CHECKING count too. The layers below are the ones docs/architecture.md shows (its
table is checked against them here); a module may import from its own layer or lower
ones, never higher, and the graph has no cycle.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "cmp"

# Lowest first.
LAYERS: tuple[tuple[str, ...], ...] = (
    # the leaves: the public finding types, the bounded memo, generated code, the redaction patterns (both tables),
    # durable file writes
    (
        "cmp.findings",
        "cmp._memo",
        "cmp._codegen",
        "cmp._patterns",
        "cmp._extended_patterns",
        "cmp._deepjson",
        "cmp._matcher",
        "cmp.schema",
        "cmp._display",
        "cmp._files",
    ),
    # what messages show of packet text (they ask both pattern tables first); created_at rules; bytes to Python data
    ("cmp._messages", "cmp._timestamps", "cmp._intake"),
    # typed model; schema compiled into a builder, schema explained; the canonical writer generated from the schemas
    ("cmp.model", "cmp._compiler", "cmp._explain", "cmp._writer"),
    ("cmp._validation",),  # version routing and the schema of the routed version
    # the redaction wing, lowest first: its finding; the format's scan; the extended rules; the rule sets by name
    ("cmp._redaction", "cmp._redaction._hit"),
    ("cmp._redaction._scan",),
    ("cmp._redaction._extended", "cmp._lint"),  # the extended rules; the writing rules' advice
    ("cmp._redaction._rules",),
    ("cmp._canonical", "cmp._positions"),  # typed packet to canonical bytes; findings placed in the text
    ("cmp._quick", "cmp._authoring"),  # the quick path; writing packets: values in, a conforming packet out
    # check, loads; scrub; migrate; chains; the example packet of each version; the audit's wing and the
    # server's store it reads, read-only
    (
        "cmp._pipeline",
        "cmp._scrub",
        "cmp._migrate",
        "cmp._chain",
        "cmp._example",
        "cmp._audit",
        "cmp._audit.reference_db",
    ),
    ("cmp._audit.rules",),  # what the audit finds in a stored packet: check's findings, and its row's or file's
    ("cmp._resume",),  # the resume block: a judged, scrubbed packet as the next session's context
    # the local store: a folder of packet files, checked and chained as they are read; its index of what
    # each file held, a cache it checks against the files
    ("cmp.store", "cmp._store_index"),
    ("cmp", "cmp._toolkit"),  # the public API; what the CLI and the integrations use beyond it
    # the team server's client, over the public API: its errors and the login it finds; the HTTP calls; its names
    ("cmp.client._errors", "cmp.client._credentials"),
    ("cmp.client._http",),
    ("cmp.client",),
    # the integrations, over the public API: this library inside other frameworks
    (
        "cmp.integrations",
        "cmp.integrations.pydantic",  # cmp.Packet as a pydantic type (and a FastAPI body)
        "cmp.integrations.starlette",  # the raw-bytes HTTP intake for Starlette and FastAPI apps
        "cmp.integrations._mcp_stdio",  # the MCP server's bounded stdio transport
        "cmp.integrations._mcp_remote",  # the MCP server's push, pull and teams, over cmp.client
        "cmp.integrations.mcp",  # the MCP server's tools, for an agent that writes packets
        "cmp.integrations._backing",  # a local store or a team server, as the framework integrations keep packets
    ),
    (
        "cmp.integrations.langgraph",  # packets as a LangGraph store, and a graph's resume and save nodes
        "cmp.integrations.openai_agents",  # an Agents SDK session that starts from the resume block; the hand-off
        "cmp.integrations.google_adk",  # an ADK memory service whose entries are packets
    ),
    # the team server, over the public API and the Starlette intake, lowest first: its tables and migrations;
    # its storage (SQLite or PostgreSQL); its HTTP routes; its public names
    (
        "cmp.server._schema",
        "cmp.server.migrations",
        "cmp.server.migrations.env",
        "cmp.server.migrations.versions",
        "cmp.server.migrations.versions.v1_schema",
        "cmp.server.migrations.versions.v2_flags",
    ),
    ("cmp.server._storage", "cmp.server._metrics"),
    ("cmp.server._app",),
    ("cmp.server",),
    # programs: the conformance runner (a library the adapter and the CLI use), lowest first
    ("cmp.conformance._protocol",),  # the messages: a request, this library's answer, reading another's
    ("cmp.conformance._compare",),  # an answer against a vector's expectation
    ("cmp.conformance._vectors", "cmp.conformance._implementation"),  # the vector folder; another program
    ("cmp.conformance._runner",),  # every vector, one result each
    ("cmp.conformance._report",),  # the results as text, JSON or JUnit XML
    ("cmp.conformance",),  # the runner's public names
    ("cmp.adapter",),  # this library behind the harness protocol: python -m cmp.adapter
    # programs: the command line, lowest first; data flows args -> sources -> judge/batch -> output
    ("cmp.cli._policy",),  # what fails a CI run: rules left out, a baseline's known hits, refused packets scanned
    (
        "cmp.cli._output",  # where the CLI writes: escaped lines, the streamed JSON document, exit statuses
        "cmp.cli._progress",  # the terminal's progress line
        "cmp.cli._signals",  # stop signals raised where the code is
        "cmp.cli._sources",  # files, stdin, JSON Lines: one Source record each
        "cmp.cli._render",  # what every format says of a result alike: its place, its tone; check's text lines
        "cmp.cli._catalog",  # every rule a result can name: ids, descriptions, help texts, links
        "cmp.cli._difference",  # where a file first differs from its canonical bytes, and the diff
    ),
    ("cmp.cli.reporters",),  # the output formats by name (--format's choices and help), and their protocol
    # each format's reporter: text lines, GitHub workflow commands, the JSON document, the SARIF log;
    # a run's summary line (left out in a document format)
    (
        "cmp.cli.reporters.text",
        "cmp.cli.reporters.github",
        "cmp.cli.reporters.json",
        "cmp.cli.reporters.sarif",
        "cmp.cli._summary",
    ),
    # one source (and one share) judged; fmt --write; where a run's results go
    ("cmp.cli._judge", "cmp.cli._rewrite", "cmp.cli._results"),
    # many sources, worker processes, input order; the parser
    ("cmp.cli._batch", "cmp.cli._args", "cmp.cli._config"),
    ("cmp.cli._dask",),  # the same shares on a Dask cluster
    ("cmp.cli._runners",),  # where a run's shares go: this process, worker processes, or a cluster
    (  # the commands
        "cmp.cli._check",
        "cmp.cli._fmt",
        "cmp.cli._conformance",
        "cmp.cli._chain",
        "cmp.cli._new",
        "cmp.cli._transform",  # scrub and migrate
        "cmp.cli._lint",
        "cmp.cli._gate",  # check, canonical form and lint in one pass: the pre-commit hook
        "cmp.cli._schema",
        "cmp.cli._mcp",
        "cmp.cli._audit",
        "cmp.cli._baseline",  # baseline: the hits packets hold now, as fingerprints for check --baseline
        "cmp.cli._store",  # save, ls, show: the local store
        "cmp.cli._hooks",  # Claude Code hooks: their input, and the hand-off saved at PreCompact or SessionEnd
        "cmp.cli._resume",  # resume: the block, and a Claude Code SessionStart hook's answer
        "cmp.cli._rules",  # rules: the rule catalog as text, JSON or docs/rules.md
        "cmp.cli._server",  # server: serve the team server, and administer its database
        "cmp.cli._remote",  # auth, push, pull, ls --remote, rm, teams, invite, join, sync: the team server's client
    ),
    ("cmp.cli._main",),  # parse, run the command, exit status
    ("cmp.cli", "cmp.__main__"),  # the entry points: main, main_exit; python -m cmp
)
LAYER_OF = {module: number for number, layer in enumerate(LAYERS) for module in layer}

# The upward edges: the typed model's validating methods (Packet.new, from_dict, replace,
# validate) are a facade over the authoring layer, and its two pydantic hooks one over the
# pydantic integration, imported inside each method.
# The public API's cmp.Client is the client wing's, loaded on first use (its import under
# TYPE_CHECKING is for mypy alone).
FACADE_EDGES = {
    ("cmp.model", "cmp._authoring"),
    ("cmp.model", "cmp.integrations.pydantic"),
    ("cmp", "cmp.client"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(path: Path, known: set[str]) -> set[str]:
    """The cmp modules a file imports, wherever the import statement is."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "cmp")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "cmp":
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in known else node.module)
    return found & known


# Parsed once a test process: the parametrized test below asks for it once a module, and
# parsing the whole package every time cost about half a second each (40 s of the suite).
@functools.cache
def _graph() -> Mapping[str, frozenset[str]]:
    """Every module's imports, less the facade edges (which the test below holds apart)."""
    modules = _modules()
    graph = {name: _imports(path, set(modules)) - {name} for name, path in modules.items()}
    for source, target in FACADE_EDGES:
        graph[source].discard(target)
    return MappingProxyType({name: frozenset(targets) for name, targets in graph.items()})


def test_the_facade_edges_exist_and_are_imports_inside_functions() -> None:
    modules = _modules()
    for source, target in sorted(FACADE_EDGES):
        tree = ast.parse(modules[source].read_text(encoding="utf-8"))
        top_level = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert not any(node.module == target for node in top_level if isinstance(node, ast.ImportFrom)), source
        assert target in _imports(modules[source], set(modules)), f"{source} no longer imports {target}: drop the edge"


def test_every_module_has_a_layer() -> None:
    assert set(_modules()) == set(LAYER_OF), "add the new module to LAYERS (and to docs/architecture.md's table)"


@pytest.mark.parametrize("module", sorted(LAYER_OF))
def test_no_module_imports_a_higher_layer(module: str) -> None:
    upward = sorted(target for target in _graph()[module] if LAYER_OF[target] > LAYER_OF[module])
    assert not upward, f"{module} (layer {LAYER_OF[module]}) imports {upward} from above"


def test_the_import_graph_has_no_cycle() -> None:
    graph = _graph()
    done: set[str] = set()

    def visit(module: str, trail: tuple[str, ...]) -> None:
        if module in trail:
            cycle = [*trail[trail.index(module) :], module]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        for target in sorted(graph[module]):
            visit(target, (*trail, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())


def _private_core(module: str) -> bool:
    """A module of the core (not of the command line or the integrations) whose name has a
    private part: cmp._intake, cmp._redaction._scan, cmp.conformance._runner."""
    own = module.startswith(("cmp.cli", "cmp.integrations", "cmp.server", "cmp.client"))
    return not own and any(part.startswith("_") for part in module.split(".")[1:])


@pytest.mark.parametrize(
    "module",
    sorted(m for m in _modules() if m.startswith(("cmp.cli", "cmp.integrations", "cmp.server", "cmp.client"))),
)
def test_the_cli_the_integrations_and_the_server_reach_the_core_through_public_names_and_the_toolkit(
    module: str,
) -> None:
    """What they use beyond the public API is declared once, in cmp._toolkit."""
    private = {target for target in _graph()[module] if _private_core(target)}
    assert private <= {"cmp._toolkit"}, f"{module} imports {sorted(private - {'cmp._toolkit'})}: add it to cmp._toolkit"


def test_the_public_finding_types_import_nothing_from_cmp() -> None:
    """cmp.findings is the vocabulary every layer shares: it depends on no other module of cmp."""
    modules = _modules()
    assert _imports(modules["cmp.findings"], set(modules)) == set()


def _compared_names(tree: ast.AST, names: frozenset[str]) -> list[int]:
    """The lines where a comparison has one of ``names`` as a string constant on a side
    (``rules == "extended"``, ``profile in ("default", "extended")``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            constants = [n for side in sides for n in ast.walk(side) if isinstance(n, ast.Constant)]
            if any(isinstance(c.value, str) and c.value in names for c in constants):
                found.append(node.lineno)
    return found


def test_only_the_redaction_wing_compares_rule_set_names() -> None:
    """Which rule set runs what is cmp._redaction._rules' to say: no other module asks for a name."""

    from cmp._redaction._rules import RULE_SETS

    names = frozenset(RULE_SETS)
    wing = PACKAGE / "_redaction"
    found = {
        _module_name(path): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if wing not in path.parents and (lines := _compared_names(ast.parse(path.read_text(encoding="utf-8")), names))
    }
    assert not found, f"rule-set names compared outside cmp._redaction: {found}"
    probe = ast.parse('if rules != "default": pass\nok = profile in ("extended",)\n')
    assert _compared_names(probe, names) == [1, 2]


def _layer_table() -> str:
    rows = [f"| {number} | {', '.join(f'`{module}`' for module in layer)} |" for number, layer in enumerate(LAYERS)]
    return "\n".join(["| layer | modules |", "|---|---|", *rows])


def test_the_architecture_page_shows_these_layers() -> None:
    """docs/architecture.md's table between its layer markers is LAYERS, row for row."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    start, end = text.index("<!-- layers -->\n"), text.index("<!-- /layers -->")
    shown = text[start + len("<!-- layers -->\n") : end].strip()
    assert shown == _layer_table(), "docs/architecture.md's layer table should read:\n" + _layer_table()


def test_the_checks_see_imports_inside_functions(tmp_path: Path) -> None:
    """A lazy import is an edge too: the walk finds one written inside a function."""
    source = tmp_path / "probe.py"
    source.write_text("def f():\n    from cmp._explain import explain\n    import cmp.findings\n")
    assert _imports(source, {"cmp._explain", "cmp.findings"}) == {"cmp._explain", "cmp.findings"}
