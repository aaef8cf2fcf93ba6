"""Imports point downward only (docs/architecture.md, "Layers"): a module may import its
own package and the layers below it; a component never imports a sibling component. Lazy
imports inside functions count too.

Within a package, modules import each other without a loop (an import under
``if TYPE_CHECKING:`` is an edge like any other: a loop hidden from the interpreter is
still one module needing the other), and only the composition layers (cli, cluster, sim),
which load components on demand, import kvert modules inside functions."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import kvert

ROOT = Path(kvert.__file__).parent

# lowest first; packages on one line are one layer
LAYERS = [
    ("clock",),
    ("api",),
    ("store",),
    ("auth",),
    ("registry",),
    ("client",),
    ("apiserver", "scheduler", "kubelet", "controllers", "vpa"),   # the components
    ("cluster",),
    ("sim",),
    ("cli",),
]
LEVEL = {package: i for i, layer in enumerate(LAYERS) for package in layer}


# the layers allowed to import kvert modules inside functions (they load what a command uses)
LAZY_IMPORTERS = ("cli", "cluster", "sim")
# Below them, a kvert module is imported inside a function only to put off a heavy third-party
# library until it is used; each such import is listed here with its reason.
LAZY_ALLOWED = {
    ("kvert.api.validation.dra", "kvert.api.cel"):
        "the CEL library (celpy and lark, some 180 modules) is loaded when a DRA selector is first "
        "validated, not by every process that imports the registry",
    ("kvert.client", "kvert.client.inprocess"):
        "the in-process client brings the write path (registry, validation, admission, token "
        "signing); a component that only names the Client protocol does not load it",
}


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def violations(root: Path = ROOT) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if len(parts) == 1:
            continue                                 # kvert/__init__.py, kvert/__main__.py
        package = parts[0]
        assert package in LEVEL, f"{package}: add the new package to LAYERS"
        for line, module in _imports(path):
            names = module.split(".")
            if names[0] != "kvert" or len(names) < 2 or names[1] == package:
                continue
            target = names[1]
            if target not in LEVEL:
                continue                             # kvert.__version__ and the like
            if LEVEL[target] > LEVEL[package]:
                out.append(f"{path.relative_to(root)}:{line}: {package} imports the higher {module}")
            elif LEVEL[target] == LEVEL[package]:
                out.append(f"{path.relative_to(root)}:{line}: component {package} imports its "
                           f"sibling {module}")
    return out


def test_imports_point_downward_only():
    assert violations() == []


def test_the_check_catches_upward_and_sibling_imports(tmp_path):
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "x.py").write_text("def f():\n    from kvert.scheduler import y\n")
    (tmp_path / "vpa").mkdir()
    (tmp_path / "vpa" / "z.py").write_text("import kvert.kubelet.agent\nfrom kvert.client import c\n")
    found = violations(tmp_path)
    assert found == ["api/x.py:2: api imports the higher kvert.scheduler",
                     "vpa/z.py:1: component vpa imports its sibling kvert.kubelet.agent"]


# ---- import loops and function-level imports -----------------------------------------------


def _module_names(root: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(["kvert", *parts])] = path
    return out


def _targets(node: ast.AST, module: str, is_package: bool, known: dict[str, Path]) -> list[str]:
    """The kvert modules an import statement loads (``from pkg import mod`` names ``pkg.mod``)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        names = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source
                 for a in node.names]
    else:
        return []
    out = []
    for name in names:
        while name not in known and "." in name:
            name = name.rsplit(".", 1)[0]          # kvert.api.meta.name_of -> kvert.api.meta
        if name in known and name != module:
            out.append(name)
    return out


@functools.lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    """A source file's syntax tree, parsed once for all the checks here."""
    return ast.parse(path.read_text(), str(path))


def _inside_functions(tree: ast.AST) -> set[int]:
    """The ids of the nodes inside a function or lambda, in one walk."""
    inside: set[int] = set()
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, nested = stack.pop()
        if nested:
            inside.add(id(node))
        nested = nested or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        stack.extend((child, nested) for child in ast.iter_child_nodes(node))
    return inside


@functools.lru_cache(maxsize=None)
def import_graph(root: Path = ROOT) -> tuple[dict[str, set[str]], list[str]]:
    """Each module's kvert imports wherever they are written, and the imports written inside
    a function (``path:line: module imports target``)."""
    known = _module_names(root)
    graph: dict[str, set[str]] = {m: set() for m in known}
    nested: list[str] = []
    for module, path in known.items():
        tree = _tree(path)
        in_function = _inside_functions(tree)
        for node in ast.walk(tree):
            for target in _targets(node, module, path.name == "__init__.py", known):
                graph[module].add(target)
                if id(node) in in_function:
                    nested.append(f"{path.relative_to(root)}:{node.lineno}: {module} imports "
                                  f"{target} inside a function")
    return graph, nested


def import_loops(root: Path = ROOT) -> list[list[str]]:
    """The strongly connected sets of two or more modules (Tarjan's algorithm, iterative)."""
    graph, _ = import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    loops.append(sorted(members))
    return sorted(loops)


def function_level_imports(root: Path = ROOT) -> list[str]:
    _, nested = import_graph(root)
    return [line for line in nested
            if line.split("/", 1)[0].split(":", 1)[0] not in LAZY_IMPORTERS
            and tuple(line.split(": ", 1)[1].split(" imports ")[0:1]
                      + line.split(" imports ", 1)[1].split(" inside", 1)[0:1]) not in LAZY_ALLOWED]


def test_no_import_loops():
    assert import_loops() == []


def test_function_level_imports_only_in_the_composition_layers():
    assert function_level_imports() == []


def test_the_checks_catch_a_loop_and_a_function_level_import(tmp_path):
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "__init__.py").write_text("")
    (tmp_path / "api" / "a.py").write_text("from kvert.api import b\n")
    (tmp_path / "api" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kvert.api.a import x\n")
    (tmp_path / "api" / "c.py").write_text("def f():\n    from . import b\n    return b\n")
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "d.py").write_text("def main():\n    import kvert.api.c\n")
    assert import_loops(tmp_path) == [["kvert.api.a", "kvert.api.b"]]
    assert function_level_imports(tmp_path) == [
        "api/c.py:2: kvert.api.c imports kvert.api.b inside a function"]
