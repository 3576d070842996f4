"""The light client: a fresh environment with locks/client.txt only (tritonclient, numpy, Pillow
and what they need; `pip install triton-ocr` without the `server` extra) and this package, not
editable, reads the real server exactly as the full environment does, and none of the server's
packages is there to be imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT
from triton_ocr.client import OcrClient
from triton_ocr.tools.samples import render

from .conftest import Endpoints

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib

LOCK = ROOT / "locks" / "client.txt"
# The server extra's modules (and the CLI's): none may be importable next to the client.
SERVER_ONLY = ("cv2", "onnxruntime", "onnx", "typer", "pyclipper", "shapely", "rapidfuzz")

# Runs in the light environment: argv = http address, grpc address, image file.
SCRIPT = textwrap.dedent(
    """
    import importlib.util
    import json
    import struct
    import sys
    import zlib
    from io import BytesIO

    from PIL import Image
    from tritonclient.utils import InferenceServerException

    import triton_ocr
    from triton_ocr.client import ImageDecodeError, OcrClient
    from triton_ocr.settings import ImageLimits

    http, grpc, image = sys.argv[1:4]
    out = {{"importable": [m for m in {server_only!r} if importlib.util.find_spec(m)]}}
    out["package"] = triton_ocr.__file__


    def png_header(width, height):
        def chunk(kind, data):
            crc = struct.pack(">I", zlib.crc32(kind + data))
            return struct.pack(">I", len(data)) + kind + data + crc

        ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
        return b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


    def refusal(call):
        try:
            call()
        except ImageDecodeError as exc:
            return str(exc)
        return None


    gif = BytesIO()
    Image.new("L", (8, 8)).save(gif, format="GIF")
    with OcrClient(http) as client:
        out["http"] = [line.as_dict() for line in client.read(image)]
        limits = client.limits()  # the server's, read from its config by the light client
        out["limits"] = [limits.max_image_bytes, limits.max_image_pixels]
        out["pixels"] = refusal(lambda: client.read(png_header(10_000, 10_000)))
        out["bytes"] = refusal(lambda: client.read(b"\\0" * (limits.max_image_bytes + 1)))
        out["gif"] = refusal(lambda: client.read(gif.getvalue()))
        try:  # a sound header over no pixel data: it travels, and the server names the problem
            client.read(png_header(100, 100))
        except InferenceServerException as exc:
            out["server"] = [str(exc.status()), exc.message()]
    with OcrClient(grpc, "grpc") as client:
        out["grpc"] = [[line.as_dict() for line in lines] for lines in client.read_many([image])]
        out["grpc_pixels"] = refusal(lambda: client.read_many([image, png_header(10_000, 10_000)]))
    # no server behind the address: the pre-check alone refuses, nothing is sent
    offline = OcrClient("127.0.0.1:9", limits=ImageLimits(1000, 1_000_000))
    out["offline"] = refusal(lambda: offline.read(b"\\0" * 1001))
    out["loaded"] = [m for m in {server_only!r} if m in sys.modules]
    print(json.dumps(out))
    """
).format(server_only=SERVER_ONLY)


def run(command: list[str | Path], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(part) for part in command], capture_output=True, text=True, check=False, **kwargs
    )
    assert result.returncode == 0, (
        f"{' '.join(map(str, command))} failed ({result.returncode}):\n"
        f"{result.stdout}\n{result.stderr}"
    )
    return result


def project_sources(target: Path) -> Path:
    """What `pip install .` builds from (the files the Dockerfile copies): pyproject.toml, the
    README and the package folders. A copy, so the build writes nothing into the checkout and no
    stale build/ folder there can slip into the wheel."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    target.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.onnx", "*.egg-info")
    for folder in sorted(set(config["tool"]["setuptools"]["package-dir"].values())):
        shutil.copytree(ROOT / folder, target / folder, ignore=skip)
    return target


@pytest.fixture(scope="module")
def light_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding locks/client.txt (hash-checked, no resolving, as `make` installs)
    and this project, not editable; checked complete with `pip check`."""
    assert LOCK.is_file(), f"{LOCK} is missing: `make lock` writes it"
    base = tmp_path_factory.mktemp("light-client")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    pip = [python, "-m", "pip", "install", "--quiet"]
    run([*pip, "--require-hashes", "--no-deps", "-r", LOCK])
    run([*pip, "--no-deps", "--no-build-isolation", project_sources(base / "src")])
    run([python, "-m", "pip", "check"])
    return python


def test_the_light_client_reads_like_the_full_one(light_python: Path, server: Endpoints, tmp_path):
    image = tmp_path / "sample.png"
    image.write_bytes(render().png)
    # outside the checkout, so `triton_ocr` can only come from the light venv's site-packages
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    result = run(
        [light_python, "-c", SCRIPT, server.http, server.grpc, image], cwd=tmp_path, env=env
    )
    out = json.loads(result.stdout)

    assert Path(out["package"]).is_relative_to(light_python.parents[1]), out["package"]
    assert out["importable"] == [], "the client install holds server packages"
    assert out["loaded"] == []

    with OcrClient(server.http) as client:  # the full environment's client
        expected = [line.text for line in client.read(image)]
    assert expected, "the full client read nothing from the sample"
    assert [line["text"] for line in out["http"]] == expected
    assert [[line["text"] for line in lines] for lines in out["grpc"]] == [expected]

    max_bytes, max_pixels = out["limits"]
    assert out["pixels"] == (
        f"image too large: 10000x10000 = 100000000 pixels exceeds the limit of {max_pixels} pixels"
    )
    assert out["bytes"] == (
        f"image too large: {max_bytes + 1} bytes exceeds the limit of {max_bytes} bytes"
    )
    assert out["gif"].startswith("unsupported image format GIF (supported: ")
    assert out["grpc_pixels"].startswith("image 1: image too large: 10000x10000")
    assert out["offline"] == "image too large: 1001 bytes exceeds the limit of 1000 bytes"
    status, message = out["server"]
    assert status == "400", out["server"]
    assert "corrupt or truncated PNG data" in message, out["server"]
