"""The package's layout holds: imports point one way, from the entry points down to the model.

Layers, lowest first: ``errors``/``config``/``files``, ``tracking`` beside ``privacy`` (the
accountant, and the mechanisms the data layer releases statistics through), ``data``, ``model``,
then ``step`` (the compiled training step) beside ``serving`` (the shipped model),
``evaluation`` beside ``histories`` (transaction histories' behavioral measures), ``synthesis``
(select, assemble, export), ``training`` (the run's lifecycle), ``cli`` beside ``overrides``
(the training command's overrides, checked), then the ``python -m`` entry modules. A module may
import its own layer and the ones below, never one above; and no two modules import each other,
directly or around a cycle.
"""

from __future__ import annotations

import ast

from support.configs import REPO

PACKAGE = REPO / "wgangp"
LAYERS = {
    "errors": 0,
    "config": 0,
    "files": 0,
    "redaction": 0,
    "tracking": 1,
    "privacy": 1,
    "data": 2,
    "model": 3,
    "step": 4,
    "serving": 4,
    "evaluation": 5,
    "histories": 5,
    "synthesis": 6,
    "training": 7,
    "cli": 8,
    "overrides": 8,
    "train": 9,
    "sample": 9,
    "evaluate": 9,
    "report": 9,
    "sync": 9,
    "schema": 9,
    "api": 10,
    "__main__": 10,  # ``wgangp <command>``: every command behind one name
}


def _modules() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
                imported.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        graph[name] = imported
    return {
        name: {m for m in imports if m in graph and m != name} for name, imports in graph.items()
    }


def _layer(module: str) -> int:
    """A module's layer; the package itself (``import wgangp``: ``wgangp.fit``, lazily) is the
    facade above every layer."""
    parts = module.split(".")
    return LAYERS[parts[1]] if len(parts) > 1 else max(LAYERS.values()) + 1


def test_every_top_level_name_has_a_layer() -> None:
    names = {path.stem for path in PACKAGE.glob("*.py")} | {
        path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()
    }
    assert names - {"__init__"} == set(LAYERS)


def test_imports_never_reach_up_a_layer() -> None:
    upward = [
        f"{module} imports {target}"
        for module, targets in _modules().items()
        for target in targets
        if _layer(target) > _layer(module)
    ]
    assert upward == []


def test_no_import_cycles() -> None:
    graph = _modules()
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            raise AssertionError(
                "import cycle: " + " -> ".join([*path[path.index(module) :], module])
            )
        if module in done:
            return
        for target in sorted(graph[module]):
            if not target.startswith(module + "."):  # a package importing its own submodule
                visit(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])


# -- scripts/ ------------------------------------------------------------------------------------
# Scripts sit above the package: they may import ``wgangp``, never the other way round. The
# benchmark's peers run in their own environments (an older TensorFlow, PyTorch, no ``wgangp``),
# so they import neither ``wgangp`` nor any of ``scripts`` outside ``scripts.bench.peers``.

PEERS_PACKAGE = "scripts.bench.peers"


def _imports_under(folder: str) -> dict[str, set[str]]:
    """Each module under ``folder`` (of the repo) and every module name it imports (relative
    ones resolved), wherever the import sits: in a function, or under ``if TYPE_CHECKING``."""
    graph: dict[str, set[str]] = {}
    for path in (REPO / folder).rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts).removesuffix(".__init__")
        package = parts[:-1]
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
                module = ".".join(p for p in (base, node.module or "") if p)
                imported.add(module)
                imported.update(f"{module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        graph[name] = imported
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle among the graph's own modules (a package importing its own submodule
    does not count), or an empty list."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str]:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return []
        for target in sorted(graph[module]):
            if target in graph and target != module and not target.startswith(module + "."):
                found = visit(target, [*path, module])
                if found:
                    return found
        done.add(module)
        return []

    for module in sorted(graph):
        found = visit(module, [])
        if found:
            return found
    return []


def test_cycle_finder_sees_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"a.b", "b"}, "a.b": set(), "b": set()}) == []


def test_scripts_have_no_import_cycles() -> None:
    graph = _imports_under("scripts")
    assert "scripts.bench.harness" in graph
    assert _cycle(graph) == []


def test_wgangp_never_imports_scripts() -> None:
    reaching = [
        f"{module} imports {target}"
        for module, targets in _imports_under("wgangp").items()
        for target in targets
        if target == "scripts" or target.startswith("scripts.")
    ]
    assert reaching == []


def test_peers_import_neither_wgangp_nor_the_rest_of_scripts() -> None:
    graph = _imports_under("scripts/bench/peers")
    assert f"{PEERS_PACKAGE}.record" in graph
    reaching = [
        f"{module} imports {target}"
        for module, targets in graph.items()
        for target in targets
        if target.split(".")[0] in ("wgangp", "scripts")
        and not (target == PEERS_PACKAGE or target.startswith(PEERS_PACKAGE + "."))
    ]
    assert reaching == []


def test_an_entry_points_main_guard_comes_last() -> None:
    """``python -m wgangp.X`` runs the module top to bottom: a function defined after the
    ``if __name__ == "__main__"`` block does not exist yet when ``main()`` calls it (a merge once
    put one there; every in-process test passed, the command failed)."""
    late = []
    for path in sorted([*PACKAGE.rglob("*.py"), *(REPO / "scripts").rglob("*.py")]):
        body = ast.parse(path.read_text()).body
        guards = [
            i
            for i, node in enumerate(body)
            if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
        ]
        if guards and guards[-1] != len(body) - 1:
            late.append(str(path.relative_to(REPO)))
    assert late == []


def test_the_layout_page_names_every_module() -> None:
    """docs/layout.md has a line for each file of the package (and no line for one gone)."""
    page = (REPO / "docs" / "layout.md").read_text()
    modules = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py"
    }
    named = {f"{folder}/{name}" if folder else name for folder, name in _named_files(page)}
    assert not modules - named, f"not on docs/layout.md: {sorted(modules - named)}"
    assert not {m for m in named if m.endswith(".py")} - modules, "layout.md names a file gone"


def _named_files(page: str) -> list[tuple[str, str]]:
    """(package folder, file) for each table row of layout.md, by the section it is under."""
    import re

    found = []
    folder = ""
    for line in page.splitlines():
        heading = re.match(r"## `wgangp/([a-z_]*)/?`", line)
        if heading:
            folder = heading.group(1)
        elif line.startswith("## "):
            folder = None
        row = re.match(r"\| `([a-z_/]+\.(?:py|yaml))` \|", line)
        if row and folder is not None:
            name = row.group(1)
            found.append(("", name) if "/" in name else (folder, name))
    return found


def test_only_the_data_source_knows_kaggles_file() -> None:
    """Kaggle's file is one table among others: its shipped schema, its download and its
    simulated stand-in are reached through ``wgangp.data.read.source`` alone (issue 49)."""
    kaggles = {f"wgangp.data.builtin.{name}" for name in ("creditcard", "kaggle", "simulated")}
    knowing = {
        module
        for module, imported in _modules().items()
        if imported & kaggles and module not in kaggles
    }
    assert knowing == {"wgangp.data.read.source"}, knowing


# -- one rule per decision (issue 69) -------------------------------------------------------------
# Each decision below has one home; a second copy of it elsewhere fails here.

#: What reads, infers, matches and validates a table: ``wgangp.data``'s, reached by a command
#: through ``prepare`` (``python -m wgangp.schema`` runs its first half), never by itself.
_TABLE_PIPELINE = {
    "wgangp.data.read.big_tables.read_big_table",
    "wgangp.data.read.big_tables.table_files",
    "wgangp.data.read.table_files.table_files",
    "wgangp.data.read.table_reader.read_table",
    "wgangp.data.schema.inference.infer_table",
    "wgangp.data.schema.inference.infer_schema",
    "wgangp.data.schema.validation.match_table",
    "wgangp.data.schema.validation.label_counts",
    "wgangp.data.schema.validation.validate_table",
    "wgangp.data.schema.validation.validate_entity",
}


def test_commands_read_tables_through_prepare() -> None:
    commands = [m for m in _modules() if _layer(m) >= LAYERS["cli"]]
    assert "wgangp.schema" in commands
    graph = _imports_under("wgangp")
    reaching = sorted(
        f"{module} imports {name}"
        for module in commands
        for name in graph[module] & _TABLE_PIPELINE
    )
    assert reaching == []


def _constants(value: object) -> list[str]:
    """The modules of the package whose code writes ``value`` (a string, or a number as written
    or computed from literals, as ``2**32 - 1``); docstrings do not count."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        inner = {  # a literal's parts (2**32 of 2**32 - 1) are not literals of their own
            id(part)
            for node in ast.walk(tree)
            if isinstance(node, ast.BinOp)
            for part in (node.left, node.right)
        }
        for node in ast.walk(tree):
            if id(node) in docstrings | inner or not isinstance(node, ast.Constant | ast.BinOp):
                continue
            try:
                written = (
                    ast.literal_eval(node)
                    if isinstance(node, ast.Constant)
                    else eval(  # noqa: S307
                        compile(ast.Expression(node), "<literal>", "eval"), {"__builtins__": {}}
                    )
                )
            except Exception:
                continue
            if type(written) is type(value) and written == value:
                found.append(str(path.relative_to(PACKAGE)))
                break
    return found


def test_the_seed_range_is_written_once() -> None:
    """[0, 2**32 - 1] (numpy's legacy seeding): ``config.MAX_SEED``, which the sampling command,
    the synthesizer, the served model and the calibration's offset import."""
    assert _constants(2**32 - 1) == ["config.py"]
    assert _constants(2**32) == []


def test_the_default_label_is_written_once() -> None:
    """``Class`` (Kaggle's label, ``data.label``'s default): ``DataConfig.label`` in code, and
    ``conf/data/creditcard.yaml``, which test_config ties to it."""
    assert _constants("Class") == ["config.py"]


def test_a_repeated_column_name_is_refused_in_one_place() -> None:
    """Files, DataFrames, inference and validation all call ``cells.check_distinct_names``:
    one rule and one line, where four copies of it had drifted apart."""
    writing = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "appear more than once in the header" in path.read_text()
    )
    assert writing == ["data/schema/cells.py"]


def test_one_opener_of_model_uris_and_one_parser_of_run_uris() -> None:
    """A model URI becomes a Synthesizer in ``serving/opening.py`` alone (the commands, the
    notebook API and the evaluation call it), and ``runs:/`` is parsed and written in
    ``serving/bundle.py`` alone."""
    graph = _imports_under("wgangp")
    finding = {"wgangp.serving.bundle.stored_bundle", "wgangp.serving.bundle.local_bundle"}
    openers = sorted(module for module, names in graph.items() if names & finding)
    assert openers == ["wgangp.serving.opening"]
    assert _constants("runs:/") == ["serving/bundle.py"]
