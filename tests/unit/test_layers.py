"""Imports run one way: the pure pre/postprocessing functions know nothing of Triton, the
runtime or the tools, and the runtime (serving, its supervisor, the backend shim, the model
adapters) imports no tool (bench, tune, eval, soak, faults)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = (
    "triton_ocr.bench",
    "triton_ocr.tuning",
    "triton_ocr.workload",
    "triton_ocr.evaluation",
    "triton_ocr.reliability",
)
TRITON = ("tritonclient", "triton_python_backend_utils", "pytriton")
RUNTIME_MODULES = (
    "server",
    "supervisor",
    "processes",
    "timeouts",
    "triton_adapter",
    "packs",
    "params",
    "pipeline",
)
RUNTIME = [
    *(ROOT / "triton_ocr" / f"{name}.py" for name in RUNTIME_MODULES),
    *(ROOT / "triton_ocr" / "backends").rglob("*.py"),
    *(ROOT / "repository").glob("*/1/model.py"),
]
PURE = [*(ROOT / "preprocessing").rglob("*.py"), *(ROOT / "postprocessing").rglob("*.py")]
NOT_IN_PURE = (
    *TRITON,
    *TOOLS,
    *(f"triton_ocr.{name}" for name in RUNTIME_MODULES if name not in ("params",)),
    "triton_ocr.backends",
    "triton_ocr.cli",
)


def imported(path: Path) -> set[str]:
    """Every module `path` imports, at the top or inside a function (absolute names only:
    relative imports stay inside their own package)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def offending(path: Path, banned: tuple[str, ...]) -> list[str]:
    return sorted(n for n in imported(path) if any(n == b or n.startswith(b + ".") for b in banned))


def test_the_layers_have_their_files():
    assert all(path.is_file() for path in RUNTIME) and len(RUNTIME) > len(RUNTIME_MODULES)
    assert len(PURE) > 5


@pytest.mark.parametrize("path", RUNTIME, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_runtime_imports_no_tool(path):
    assert offending(path, TOOLS) == []


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_pre_and_postprocessing_import_no_triton_runtime_or_tool(path):
    assert offending(path, NOT_IN_PURE) == []


def test_the_check_sees_lazy_imports(tmp_path):
    """A tool imported inside a function counts as much as one at the top."""
    module = tmp_path / "module.py"
    module.write_text("def f():\n    from triton_ocr.bench import run_row\n")
    assert offending(module, TOOLS) == ["triton_ocr.bench"]
