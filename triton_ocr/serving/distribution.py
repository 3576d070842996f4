"""Where Triton's parts come from: the `nvidia-pytriton` wheel's tritonserver, without Docker.

The wheel ships `tritonserver`, its Python backend and one backend stub per Python version. We lay
out a private backend directory (in a temporary folder, never the working directory) holding:
  python/       the Python backend library, utils and the stub for this interpreter's version;
  onnxruntime/, openvino/  our Python-based backends of those names (model.py, backends/shim.py),
                standing in for the container's C++ ones.
The stub links against the shared libpython of the same version, which many systems lack:
`check_stub` names it and `ensure_libpython` (`triton-ocr doctor --fix`) installs it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from triton_ocr.serving.errors import ServerError

# the backends run inside the stubs (triton_ocr.runtime); found, not imported, from here
BACKENDS = Path(__file__).parents[1] / "runtime" / "backends"
NETWORK_BACKENDS = ("onnxruntime", "openvino")  # each a folder of BACKENDS with a model.py
LIBPYTHON_PACKAGE = "libpython{major}.{minor}"  # Debian/Ubuntu package of the shared runtime
GHOSTSCRIPT_PACKAGE = "ghostscript"  # Debian/Ubuntu: OCRmyPDF's PDF/A backend and JPEG optimiser


@dataclass(frozen=True)
class TritonDistribution:
    """Where the pytriton wheel put the server binary, its libraries and backend parts."""

    root: Path  # site-packages/pytriton/tritonserver
    libs: Path  # site-packages/nvidia_pytriton.libs

    @property
    def binary(self) -> Path:
        return self.root / "bin" / "tritonserver"

    @property
    def python_backend(self) -> Path:
        return self.root / "backends" / "python"

    def stub(self, version: tuple[int, int] = sys.version_info[:2]) -> Path:
        return (
            self.root
            / "python_backend_stubs"
            / f"{version[0]}.{version[1]}"
            / ("triton_python_backend_stub")
        )


def find_distribution() -> TritonDistribution:
    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        raise ServerError(
            "the local Triton server comes from the nvidia-pytriton wheel: "
            "pip install 'triton-ocr[serve]' (or make demo)"
        )
    package = Path(next(iter(spec.submodule_search_locations)))
    dist = TritonDistribution(package / "tritonserver", package.parent / "nvidia_pytriton.libs")
    if not dist.binary.is_file():
        raise ServerError(f"{dist.binary} is missing: reinstall nvidia-pytriton==0.7.0")
    return dist


def missing_libraries(binary: Path, library_path: Path) -> list[str]:
    """Shared libraries `binary` needs that the dynamic loader cannot find (via ldd)."""
    env = {**os.environ, "LD_LIBRARY_PATH": str(library_path)}
    try:
        out = subprocess.run(
            ["ldd", str(binary)], capture_output=True, text=True, env=env, check=False
        ).stdout
    except FileNotFoundError:
        return []
    return [line.split()[0] for line in out.splitlines() if "not found" in line]


def check_stub(dist: TritonDistribution) -> Path:
    """The stub for this Python, with a precise message if it or its libpython is missing."""
    major, minor = sys.version_info[:2]
    stub = dist.stub()
    if not stub.is_file():
        raise ServerError(
            f"nvidia-pytriton ships no Python backend stub for Python {major}.{minor}"
        )
    missing = missing_libraries(stub, dist.libs)
    if missing:
        package = LIBPYTHON_PACKAGE.format(major=major, minor=minor)
        raise ServerError(
            f"the Python backend stub needs {', '.join(missing)}: the shared Python runtime of "
            f"the same version. Install it: `apt-get install {package}` (Debian/Ubuntu), "
            "`dnf install python3-libs` (Fedora/RHEL), or run `triton-ocr doctor --fix`"
        )
    return stub


def ensure_libpython(fix: bool) -> str:
    """Check the local runtime's prerequisites; with `fix`, apt-get install a missing libpython."""
    dist = find_distribution()
    try:
        check_stub(dist)
        return "ok: tritonserver, the python backend stub and its libpython are present"
    except ServerError:
        if not fix or shutil.which("apt-get") is None or os.geteuid() != 0:
            raise
    package = LIBPYTHON_PACKAGE.format(major=sys.version_info[0], minor=sys.version_info[1])
    code = apt_install(package)
    if code != 0:  # e.g. a Python the distribution does not ship (pyenv)
        raise ServerError(
            f"apt-get could not install {package} (exit {code}): use a Python "
            "whose shared runtime the system has, e.g. `make PYTHON=/usr/bin/python3`"
        )
    check_stub(dist)
    return f"ok: installed {package}"


def apt_install(package: str) -> int:
    """apt-get install `package` (its lists updated first); apt-get's exit code."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    return subprocess.run(["apt-get", "install", "-y", "-qq", package], env=env).returncode


def ensure_ghostscript(fix: bool) -> str:
    """Where OCRmyPDF is installed (the ocrmypdf extra: the plugin), check for Ghostscript,
    which it needs for --output-type pdfa* through its Ghostscript backend and uses to optimise
    JPEG images; with `fix`, apt-get install it (as root). Optional: without it OCRmyPDF makes
    PDF/A with its internal backend and leaves JPEG images as they are."""
    if importlib.util.find_spec("ocrmypdf") is None:
        return "ok: no OCRmyPDF here, so no Ghostscript needed"
    if shutil.which("gs") is not None:
        return "ok: Ghostscript is there for OCRmyPDF"
    if fix and shutil.which("apt-get") is not None and os.geteuid() == 0:
        code = apt_install(GHOSTSCRIPT_PACKAGE)
        if code == 0:
            return f"ok: installed {GHOSTSCRIPT_PACKAGE} for OCRmyPDF"
    return (
        f"note: OCRmyPDF is installed but Ghostscript is not (apt-get install "
        f"{GHOSTSCRIPT_PACKAGE}): it then makes PDF/A with its internal backend only"
    )


def build_backend_dir(dist: TritonDistribution, target: Path) -> Path:
    """Populate `target` with the python backend and our Python-based network backends."""
    python_dir = target / "python"
    python_dir.mkdir(parents=True)
    # Copies, not symlinks: Triton refuses backend files whose real path leaves the directory.
    # The copied stub finds its libraries through LD_LIBRARY_PATH (server_environment).
    for item in ("libtriton_python.so", "triton_python_backend_utils.py"):
        shutil.copy2(dist.python_backend / item, python_dir / item)
    shutil.copy2(check_stub(dist), python_dir / "triton_python_backend_stub")
    for backend in NETWORK_BACKENDS:
        (target / backend).mkdir()
        shutil.copy2(BACKENDS / backend / "model.py", target / backend / "model.py")
    return target


def server_environment(dist: TritonDistribution) -> dict[str, str]:
    """The stub runs isolated from PYTHONPATH; it finds our packages through `python3` on PATH."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(dist.libs), env.get("LD_LIBRARY_PATH", "")) if p
    )
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env.get("PATH", "")))
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the model repository
    return env
