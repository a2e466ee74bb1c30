"""The package's layout holds: imports point one way, from the entry points down to the model.

Layers, lowest first: ``errors``/``config``, ``tracking``, ``data``, ``model``, ``serving``,
``evaluation``, ``training``, ``cli``, then the ``python -m`` entry modules. A module may import
its own layer and the ones below, never one above; and no two modules import each other,
directly or around a cycle.
"""

from __future__ import annotations

import ast

from support.configs import REPO

PACKAGE = REPO / "wgangp"
LAYERS = {
    "errors": 0,
    "config": 0,
    "tracking": 1,
    "data": 2,
    "model": 3,
    "serving": 4,
    "evaluation": 5,
    "training": 6,
    "cli": 7,
    "train": 8,
    "sample": 8,
    "schema": 8,
    "evaluate": 8,
    "report": 8,
    "sync": 8,
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
    parts = module.split(".")
    return LAYERS[parts[1]] if len(parts) > 1 else -1


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
