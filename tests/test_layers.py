"""Imports run one way, from the pure functions up to the command line, and never in a circle.

Each part of the package may import only the parts listed for it below (and itself): the pure
pre/postprocessing and the pipeline know nothing of Triton, the configs, the runtime or the
tools; the runtime inside the stubs (the adapters' helpers, the backend shim) and the serving
host side (the server, its supervisor) import no tool; the client needs neither the runtime nor
the pipeline.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

# part -> where its files are (the installed name of each top-level folder: pyproject.toml)
PARTS = {
    "errors": ["triton_ocr/errors.py"],
    "contract": ["triton_ocr/contract.py"],
    "settings": ["triton_ocr/settings.py"],
    "preprocessing": ["preprocessing"],
    "postprocessing": ["postprocessing"],
    "pipeline": ["triton_ocr/pipeline.py"],
    "ocr_request": ["triton_ocr/ocr_request.py"],
    "config": ["triton_ocr/config"],
    "runtime": ["triton_ocr/runtime"],
    "serving": ["triton_ocr/serving"],
    "adapters": ["repository"],
    "client": ["client"],
    "export": ["export"],
    "tools": ["triton_ocr/tools"],
    "cli": ["triton_ocr/cli.py"],
    "ocrmypdf": ["triton_ocr/ocrmypdf.py"],
    "gateway": ["triton_ocr/gateway"],
}
MODULES = {  # part -> its import names
    "errors": ("triton_ocr.errors",),
    "contract": ("triton_ocr.contract",),
    "settings": ("triton_ocr.settings",),
    "preprocessing": ("triton_ocr.preprocessing",),
    "postprocessing": ("triton_ocr.postprocessing",),
    "pipeline": ("triton_ocr.pipeline",),
    "ocr_request": ("triton_ocr.ocr_request",),
    "config": ("triton_ocr.config",),
    "runtime": ("triton_ocr.runtime",),
    "serving": ("triton_ocr.serving",),
    "adapters": (),  # loaded by Triton from their files, imported by nobody
    "client": ("triton_ocr.client",),
    "export": ("triton_ocr.export",),
    "tools": ("triton_ocr.tools",),
    "cli": ("triton_ocr.cli",),
    "ocrmypdf": ("triton_ocr.ocrmypdf",),
    "gateway": ("triton_ocr.gateway",),
}
PURE = ("errors", "contract", "settings", "preprocessing", "postprocessing", "pipeline")
MAY_IMPORT = {
    "errors": (),
    "contract": (),
    "settings": ("errors",),
    # block types are named by the contract (a leaf: names only)
    "postprocessing": ("errors", "contract", "settings"),
    # crops are cut from the boxes' geometry: data flows from boxes to crops, not back
    "preprocessing": ("errors", "settings", "postprocessing"),
    "pipeline": ("errors", "settings", "preprocessing", "postprocessing"),
    "config": ("errors", "contract", "settings", "postprocessing"),
    # what runs inside Triton's stubs; the host side (serving) starts the server and may know
    # the stubs' runtime (the backends' thread keys), never the other way round
    "runtime": ("errors", "contract", "settings", "config"),
    "serving": ("errors", "contract", "settings", "config", "runtime"),
    # one `ocr` request's life: the pipeline's pages under the stub's deadlines
    "ocr_request": PURE + ("runtime",),
    "adapters": PURE + ("config", "runtime", "ocr_request"),
    "client": ("errors", "contract", "settings", "config", "preprocessing"),
    "export": PURE + ("config",),
    "tools": PURE + ("config", "runtime", "serving", "client", "export"),
    "cli": PURE + ("config", "runtime", "serving", "client", "export", "tools", "gateway"),
    # the OCRmyPDF plugin is a client of the service, like any other (and reads the packs'
    # languages from their registry)
    "ocrmypdf": ("errors", "contract", "config", "client"),
    # the REST gateway: a client of the service, like the plugin; its page's previews are the
    # pages decoded by the server's own decoder (preprocessing.documents) with its settings
    "gateway": ("errors", "contract", "client", "settings", "preprocessing"),
}
TRITON = ("tritonclient", "triton_python_backend_utils", "pytriton", "google.protobuf")


def files(part: str) -> list[Path]:
    found = []
    for place in PARTS[part]:
        path = ROOT / place
        found.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return found


def module_name(path: Path) -> str:
    """The import name of a file of the package (pyproject.toml maps folders to triton_ocr.*)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] != "triton_ocr":
        parts.insert(0, "triton_ocr")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path) -> set[str]:
    """Every module `path` imports, at the top or inside a function, relative ones resolved."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)  # maybe submodules
    return names


def part_of(name: str) -> str | None:
    for part, prefixes in MODULES.items():
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return part
    return None


def test_every_file_of_the_package_belongs_to_a_part():
    listed = {path for part in PARTS for path in files(part)}
    package = {
        *(ROOT / "triton_ocr").rglob("*.py"),
        *(
            p
            for f in ("preprocessing", "postprocessing", "client", "export")
            for p in (ROOT / f).rglob("*.py")
        ),
    }
    top = ROOT / "triton_ocr" / "__init__.py"  # the namespace itself: imports nothing
    assert package - listed == {top} and imported(top) == set()
    assert all(files(part) for part in PARTS)


@pytest.mark.parametrize("part", list(PARTS))
def test_each_part_imports_only_the_parts_below_it(part):
    allowed = {part, *MAY_IMPORT[part]}
    wrong = sorted(
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files(part)
        for name in imported(path)
        if (target := part_of(name)) is not None and target not in allowed
    )
    assert wrong == []


@pytest.mark.parametrize("part", PURE)
def test_the_pure_parts_import_nothing_of_triton(part):
    wrong = sorted(
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files(part)
        for name in imported(path)
        if any(name == t or name.startswith(t + ".") for t in TRITON)
    )
    assert wrong == []


def test_no_modules_import_each_other_in_a_circle():
    paths = {module_name(p): p for part in PARTS if part != "adapters" for p in files(part)}
    graph = {
        name: {n for n in imported(path) if n in paths and n != name}
        for name, path in paths.items()
    }
    state: dict[str, str] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = "open"
        for target in sorted(graph[name]):
            if state.get(target) == "open":
                raise AssertionError(" -> ".join([*trail, name, target]))
            if target not in state:
                visit(target, [*trail, name])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [])


def test_the_check_sees_lazy_and_relative_imports(tmp_path, monkeypatch):
    """A tool imported inside a function counts as much as one at the top."""
    source = "def f():\n    from triton_ocr.tools.bench import run\nfrom .timeouts import run\n"
    fake = tmp_path / "triton_ocr" / "runtime" / "fake.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(source)
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    names = imported(fake)
    assert {"triton_ocr.tools.bench", "triton_ocr.runtime.timeouts"} <= names
    assert part_of("triton_ocr.tools.bench.run") == "tools"
