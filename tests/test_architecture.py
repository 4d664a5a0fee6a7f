"""The library's module graph: no import cycle, and the estimator stays thin.

Every import of a ``bayesnb`` module counts, at module level or inside a function (a lazy
import still ties the two modules together)."""

from __future__ import annotations

import ast
from pathlib import Path

import bayesnb

PACKAGE = Path(bayesnb.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """The bayesnb modules ``path`` imports (``from . import x`` names module x)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("bayesnb")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("bayesnb"):
                continue
            subs = {f"{target}.{a.name}" for a in node.names} & modules
            found |= subs or {target}
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {name: _imports(path, name, modules) for name, path in paths.items()}


def _cycle(graph):
    """One import cycle as a list of modules, or None (depth-first search)."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            # a package's __init__ importing its own submodules is how packages work
            if nxt.startswith(node + "."):
                continue
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_graph_reader_sees_a_cycle():
    graph = {"bayesnb.a": {"bayesnb.b"}, "bayesnb.b": {"bayesnb.c"}, "bayesnb.c": {"bayesnb.a"}}
    assert _cycle(graph) == ["bayesnb.a", "bayesnb.b", "bayesnb.c", "bayesnb.a"]
    graph = import_graph()
    assert "bayesnb.fitted" in graph["bayesnb.estimator"]  # lazy and eager imports are read
    assert "bayesnb.inference" in graph["bayesnb.estimator"]


def test_no_import_cycle_among_library_modules():
    graph = import_graph()
    # a package importing the modules it re-exports is not a cycle; any other edge back is
    graph = {m: {d for d in deps if not (m in ("bayesnb", "bayesnb.families") and
                                         d.startswith(m + "."))}
             for m, deps in graph.items()}
    assert _cycle(graph) is None, f"import cycle: {' -> '.join(_cycle(graph))}"


def _code_statements(tree: ast.Module) -> int:
    """The statements of a module other than docstrings and imports: its code, however its
    lines are wrapped, documented (docstrings with their examples) or annotated."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                docstrings.add(id(first))
    return sum(1 for node in ast.walk(tree) if isinstance(node, ast.stmt)
               and id(node) not in docstrings and not isinstance(node, ast.Import | ast.ImportFrom))


def test_the_statement_count_leaves_out_docstrings_and_imports():
    tree = ast.parse('''"""Module."""
import os
def f(x: int) -> int:
    """Doc."""
    y = x + 1
    return y
''')
    assert _code_statements(tree) == 3  # def, assignment, return


def test_estimator_is_thin():
    """The estimator's code stays thin: at most 157 statements (148, its count when the file
    was at its former bound of 360 lines, docstrings included, plus the scikit-learn tag saying
    sparse input is accepted and the 8 of the four one-line decision and credal methods);
    documentation and imports do not count."""
    code = _code_statements(ast.parse((PACKAGE / "estimator.py").read_text()))
    assert code <= 157, f"estimator.py has {code} statements outside docstrings and imports"
