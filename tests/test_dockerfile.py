"""The Docker image cannot be built here (no Docker engine): lint the Dockerfile instead."""

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_dockerfile_passes_hadolint():
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    result = subprocess.run(
        [hadolint, str(ROOT / "Dockerfile")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_uses_the_same_triton_as_the_local_runtime():
    text = (ROOT / "Dockerfile").read_text()
    assert "FROM nvcr.io/nvidia/tritonserver:24.10-py3" in text  # Triton 2.51
    assert "triton-ocr export ppocr-v6 --repository /models" in text  # the default pack
    assert "triton-ocr export ppocr --repository /models" in text  # the lighter one
    assert "triton-ocr export ppocr-v6-tiny --repository /models" in text  # the fast one


def test_the_container_starts_through_the_same_flags_as_serve():
    text = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["triton-ocr", "serve", "--container", "--repository", "/models"]' in text
