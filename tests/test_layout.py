"""The package layout shows the architecture (docs/design.md, "Layout"):
no loose module at the top beyond the command line, the errors and the
kernel catalogue, and no package importing one above it, lazy imports
inside functions included."""
from __future__ import annotations

import ast
from pathlib import Path

import clusterbench

# Lowest first: a package may import its own layer and those below it.
LAYERS = [
    {"output"},
    {"errors", "extensions"},
    {"catalogue", "files"},
    {"results"},
    {"environment", "limits", "tools"},
    {"launch", "store", "conditions"},
    {"analysis", "importers"},
    {"report"},
    {"run"},
    {"suites", "testbed"},
    {"commands"},
    {"cli", "__main__"},
]
TOP_LEVEL_MODULES = {"__init__", "__main__", "cli", "errors", "catalogue"}
PACKAGE = Path(clusterbench.__file__).parent


def layer_of(name: str) -> int:
    return next(i for i, members in enumerate(LAYERS) if name in members)


def imports_of(path: Path) -> set[str]:
    """The top-level clusterbench names one file imports (module or package)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "clusterbench":
                found.update(a.name for a in node.names)
            elif node.module.startswith("clusterbench."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("clusterbench."))
    return found - {"__version__"}


def test_the_top_level_holds_only_the_command_line_errors_and_catalogue():
    loose = {p.stem for p in PACKAGE.glob("*.py")} - TOP_LEVEL_MODULES
    assert not loose, f"modules outside a package: {sorted(loose)}"
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    placed = set().union(*LAYERS)
    assert packages <= placed, f"packages with no layer: {sorted(packages - placed)}"


def test_no_module_imports_a_layer_above_its_own():
    upward = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        owner = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for target in imports_of(path):
            if layer_of(target) > layer_of(owner):
                upward.append(f"{rel} imports clusterbench.{target}")
    assert not upward, "\n".join(sorted(upward))


def test_the_check_sees_an_upward_import(tmp_path):
    """The rule above can fail: a store module importing the report is caught."""
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from clusterbench.report import data\n    import clusterbench.run.plan\n")
    assert imports_of(probe) == {"report", "run"}
    assert layer_of("report") > layer_of("store") and layer_of("run") > layer_of("store")
