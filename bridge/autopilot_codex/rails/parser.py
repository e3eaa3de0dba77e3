"""tree-sitter-bash, loaded on first use from the packages' compiled bindings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

_PARSER: Any = None


def parse(line: str) -> Any:
    global _PARSER
    try:
        if _PARSER is None:
            _PARSER = load()
        return _PARSER.parse(line.encode("utf-8", "surrogatepass")).root_node
    except Exception:  # noqa: BLE001 - no parser, or one that failed: the word fallback judges
        return None


def load() -> Any:
    """The parser, from the two packages' compiled bindings.

    Their `__init__` modules import `typing` and `importlib.resources` (for query files the
    rails never use), about 15 ms of every shell PreToolUse; the bindings alone cost 2 ms.
    """
    try:
        binding, grammar = _binding("tree_sitter"), _binding("tree_sitter_bash")
    except (ImportError, OSError):
        import tree_sitter as binding
        import tree_sitter_bash as grammar
    return binding.Parser(binding.Language(grammar.language()))


def _binding(package: str) -> Any:
    import importlib.machinery
    import importlib.util

    spec = importlib.util.find_spec(package)
    for where in (spec.submodule_search_locations or []) if spec else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(where) / f"_binding{suffix}"
            found = importlib.util.spec_from_file_location(f"{package}._binding", path)
            if path.exists() and found is not None and found.loader is not None:
                module = importlib.util.module_from_spec(found)
                found.loader.exec_module(module)
                return module
    raise ImportError(f"no compiled binding in {package}")
