"""The package's import graph has no circles, and no module imports another's private names.

The graph holds every import that runs: at module level and inside functions (a lazy import
that closes a circle is still a circle: the two modules cannot be understood, moved or tested
apart). Imports under `if TYPE_CHECKING:` are left out: they never run, and a Protocol's
signatures must name the types of the modules that implement it (a backend takes a `Config`,
and the settings check reads the backends' registry).

`from pkg import mod` depends on `pkg.mod` only (Python imports the package `pkg` in any
case); `from pkg import name` also depends on `pkg`'s own module when `name` is defined there.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from pathlib import Path

PACKAGE = "autopilot_codex"
SOURCE = Path(__file__).resolve().parents[2] / "bridge" / PACKAGE


def modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package)."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _imports(body: Sequence[ast.AST]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: nested in functions, classes, try and if blocks,
    except the body of `if TYPE_CHECKING:`."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _imports(node.orelse)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    yield from _imports([c for c in children if isinstance(c, ast.AST)])


def _source_module(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def graph() -> tuple[dict[str, set[str]], list[str]]:
    """Edges between the package's modules, and the private names imported across modules."""
    known = modules()
    edges: dict[str, set[str]] = {name: set() for name in known}
    private = []
    for importer, (path, is_package) in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _imports(tree.body):
            if isinstance(node, ast.Import):
                edges[importer] |= {a.name for a in node.names if a.name in known}
                continue
            source = _source_module(importer, is_package, node)
            if not source.startswith(PACKAGE):
                continue
            for alias in node.names:
                if f"{source}.{alias.name}" in known:
                    edges[importer].add(f"{source}.{alias.name}")
                else:
                    edges[importer].add(source)
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        private.append(f"{importer}:{node.lineno} imports {source}.{alias.name}")
        edges[importer].discard(importer)
    return edges, private


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_package_has_no_import_circles() -> None:
    edges, _ = graph()
    assert circles(edges) == []


def test_no_module_imports_another_modules_private_names() -> None:
    _, private = graph()
    assert private == []


def test_the_finder_sees_a_lazy_circle_and_a_private_import() -> None:
    # The two circles this test was written for: each closed by an import inside a function.
    edges = {"gate": {"hookrun"}, "hookrun": {"gate", "hookio"}, "hookio": set()}
    assert circles(edges) == [["gate", "hookrun"]]
    lazy = ast.parse("def f():\n    from .hookrun import _config\n").body
    assert [n.lineno for n in _imports(lazy)] == [2]
    type_only = ast.parse("if TYPE_CHECKING:\n    from .config import Config\n").body
    assert list(_imports(type_only)) == []
