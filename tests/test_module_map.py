"""docs/architecture.md's module map names every module of the package, and only modules that
exist: a newcomer's map of the tree stays the tree."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT

MAP = ROOT / "docs" / "architecture.md"
# the top-level folders installed as triton_ocr.* (pyproject.toml's package-dir), and the adapters
FOLDERS = ("triton_ocr", "preprocessing", "postprocessing", "client", "export")


def mapped() -> set[Path]:
    """Every path the module map's first column names. A row's later names that do not start at
    a top-level folder are beside its first (`postprocessing/db.py`, `east.py`); a name ending
    in / is a folder."""
    text = MAP.read_text().split("## Module map", 1)[1].split("\n## ", 1)[0]
    found = set()
    for row in text.splitlines():
        if not row.startswith("| `"):
            continue
        names = re.findall(r"`([^`]+)`", row.split(" | ", 1)[0])
        folder = Path(names[0]).parent if not names[0].endswith("/") else Path(names[0])
        for name in names:
            path = Path(name) if Path(name).parts[0] in (*FOLDERS, "repository") else folder / name
            found.add(path)
    return found


def package_files() -> set[Path]:
    files = {
        p.relative_to(ROOT)
        for folder in FOLDERS
        for p in (ROOT / folder).rglob("*.py")
        if p.name != "__init__.py"
    }
    return files | {p.relative_to(ROOT) for p in (ROOT / "repository").glob("*/1/model.py")}


def covered(path: Path, names: set[Path]) -> bool:
    if path in names:
        return True
    if path.parts[0] == "repository":  # one row: repository/<model>/1/model.py
        return Path("repository/<model>/1/model.py") in names
    return any(name.suffix == "" and path.is_relative_to(name) for name in names)


def test_every_module_is_on_the_map():
    names = mapped()
    assert sorted(str(p) for p in package_files() if not covered(p, names)) == []


def test_the_map_names_nothing_that_is_gone():
    gone = [str(name) for name in mapped() if "<" not in str(name) and not (ROOT / name).exists()]
    assert gone == []
