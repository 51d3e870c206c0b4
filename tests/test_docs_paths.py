"""What README.md and docs/ point a reader at exists: every relative link
resolves, and every file of this repository the text names in backticks
(`src/...`, `tests/...`, `kernels/...`; inside the package, `suites/`) is
there, and every test it names as proof (`tests/test_x.py::test_y`) is still
defined. A page that names a file moved or a test renamed since sends a
reader to nothing."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
# A repository path in backticks: starts with one of this tree's top-level
# folders. Paths of other projects (IOR's `src/option.c`) are listed below.
TOP_LEVEL = ("src/", "tests/", "kernels/", "scripts/", "examples/", "suites/", "bench/", "packaging/", "docs/")
BACKTICKED = re.compile(r"`([^`\s]+)`")
OTHER_PROJECTS = {"src/option.c", "src/ior-output.c", "src/aiori.h"}


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        if not (page.parent / target.split("#")[0]).exists():
            broken.append(target)
    return broken


def missing_named_files(page: Path) -> list[str]:
    missing = []
    for token in BACKTICKED.findall(page.read_text()):
        path = token.rstrip(".,:;)")
        if not path.startswith(TOP_LEVEL) or path in OTHER_PROJECTS:
            continue
        if any(c in path for c in "*<>{}$") or path.endswith("_"):
            continue
        file, _, test = path.partition("::")
        found = [ROOT / file, ROOT / "src" / "clusterbench" / file]
        if not any(f.exists() for f in found):
            missing.append(path)
        elif test and not re.search(rf"^def {re.escape(test.split('[')[0])}\(", (ROOT / file).read_text(), re.M):
            missing.append(path)
    return missing


def test_every_relative_link_in_the_docs_resolves():
    broken = {str(p.relative_to(ROOT)): b for p in PAGES if (b := broken_links(p))}
    assert not broken, f"links to nothing: {broken}"


def test_every_repository_file_the_docs_name_exists():
    missing = {str(p.relative_to(ROOT)): m for p in PAGES if (m := missing_named_files(p))}
    assert not missing, f"files named that are not in the tree: {missing}"


def test_the_checks_see_a_broken_link_and_a_moved_file(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("See [there](nowhere.md), `src/clusterbench/no_such_module.py`,\n"
                    "`tests/test_docs_paths.py::test_no_such_test[x]` and\n"
                    "`tests/test_docs_paths.py::test_every_relative_link_in_the_docs_resolves`.\n")
    assert broken_links(page) == ["nowhere.md"]
    assert missing_named_files(page) == ["src/clusterbench/no_such_module.py",
                                         "tests/test_docs_paths.py::test_no_such_test[x]"]
