"""Imports point downward only (docs/architecture.md, "Layers"): a module may import its
own package and the layers below it; a component never imports a sibling component. Lazy
imports inside functions count too."""

from __future__ import annotations

import ast
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


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
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
