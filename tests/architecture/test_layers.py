"""The package's imports only go down the layers in `layers.py`, and close no circle.

The graph holds every import statement at any depth: at module level, inside functions (a
lazy import that closes a circle is still a circle: the two modules cannot be understood,
moved or tested apart) and under `if TYPE_CHECKING:` (a signature that names a higher layer's
type ties the module to that layer as surely as a call does). Importing `a.b.c` also runs the
`__init__` of `a.b` and `a` unless the importer already lives inside them, so those count too.

`from pkg import mod` depends on `pkg.mod` (and `pkg`); `from pkg import name` depends on
`pkg`'s own module, where `name` is defined.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from .layers import ALLOWED_CIRCLES, ALLOWED_UPWARD, LAYERS, ROOT

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


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def _source_module(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _with_packages(target: str, importer: str, is_package: bool) -> set[str]:
    """`target` and every package whose `__init__` importing it runs: those the importer
    does not already live in."""
    own = importer.split(".") if is_package else importer.split(".")[:-1]
    inside = {".".join(own[:i]) for i in range(1, len(own) + 1)}
    parts = target.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} - inside


def graph() -> tuple[dict[str, set[str]], list[str]]:
    """Edges between the package's modules, and the private names imported across modules."""
    known = modules()
    edges: dict[str, set[str]] = {name: set() for name in known}
    private = []
    for importer, (path, is_package) in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets: set[str] = set()
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name.startswith(PACKAGE)}
                continue
            source = _source_module(importer, is_package, node)
            if not source.startswith(PACKAGE):
                continue
            for alias in node.names:
                if f"{source}.{alias.name}" in known:
                    targets.add(f"{source}.{alias.name}")
                else:
                    targets.add(source)
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        private.append(f"{importer}:{node.lineno} imports {source}.{alias.name}")
        for target in targets:
            edges[importer] |= _with_packages(target, importer, is_package) & known.keys()
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


def short(module: str) -> str:
    """The name `layers.py` uses: relative to the package, the package itself as ROOT."""
    return module[len(PACKAGE) + 1 :] if module != PACKAGE else ROOT


def layer_of(module: str) -> int | None:
    """The index in LAYERS of the entry naming `module`: the module itself, or `pkg.*` for
    the package `pkg` and everything below it (the longest such entry wins)."""
    name = short(module)
    best: tuple[int, int] | None = None
    for level, (_, entries) in enumerate(LAYERS):
        for entry in entries:
            package = entry.removesuffix(".*")
            hit = name == entry or (
                entry.endswith(".*") and (name == package or name.startswith(package + "."))
            )
            if hit and (best is None or len(package) > best[1]):
                best = (level, len(package))
    return None if best is None else best[0]


def upward(edges: dict[str, set[str]]) -> set[str]:
    """Every import from a lower layer to a higher one, as `importer -> imported`."""
    found = set()
    for importer, targets in edges.items():
        low = layer_of(importer)
        for target in targets:
            high = layer_of(target)
            if low is not None and high is not None and high > low:
                found.add(f"{short(importer)} -> {short(target)}")
    return found


def test_every_module_has_a_layer() -> None:
    # A new module is placed in `layers.py` before it lands, so its imports are checked.
    assert [short(m) for m in modules() if layer_of(m) is None] == []


def test_the_package_has_no_import_circles() -> None:
    edges, _ = graph()
    found = [" <-> ".join(short(m) for m in c) for c in circles(edges)]
    assert sorted(found) == sorted(ALLOWED_CIRCLES)


def test_imports_only_go_down_the_layers() -> None:
    edges, _ = graph()
    assert sorted(upward(edges)) == sorted(ALLOWED_UPWARD)


def test_no_module_imports_another_modules_private_names() -> None:
    _, private = graph()
    assert private == []


def test_the_checks_see_what_they_are_meant_to() -> None:
    # A test that cannot fail is worse than none: the graph sees a lazy, a TYPE_CHECKING and
    # a parent package's import, and the layer test an import that climbs.
    edges, _ = graph()
    assert f"{PACKAGE}.gate" in edges[f"{PACKAGE}.cli"]  # inside a function
    assert f"{PACKAGE}.store" in edges[f"{PACKAGE}.announce"]  # under TYPE_CHECKING
    assert f"{PACKAGE}.checks" in edges[f"{PACKAGE}.config"]  # checks.specs's package
    climbing = {f"{PACKAGE}.errors": {f"{PACKAGE}.cli"}, f"{PACKAGE}.cli": set()}
    assert upward(climbing) == {"errors -> cli"}
    assert circles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
