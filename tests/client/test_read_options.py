"""`triton-ocr read` and `python client/client.py` are one command: the same declaration of
options (client/client.py's parser), so the same help and the same refusals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

CLI = str(Path(sys.executable).parent / "triton-ocr")
SCRIPT = [sys.executable, str(ROOT / "client" / "client.py")]


def run(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def words(help_text: str, program: str) -> list[str]:
    return help_text.replace(program, "PROG").split()


def test_both_entries_declare_the_same_options():
    script = run([*SCRIPT, "--help"])
    command = run([CLI, "read", "--help"])
    assert script.returncode == command.returncode == 0
    # the program's name is all that differs (argparse wraps the usage to its length)
    assert "--redo-ocr" in command.stdout and "--pdf-dpi" in command.stdout
    assert words(script.stdout, "client.py") == words(command.stdout, "triton-ocr read")


def test_both_entries_refuse_the_same_way(tmp_path):
    for arguments in (["--bogus", "x.png"], ["--redo-ocr", "--force-ocr", "x.png"]):
        script = run([*SCRIPT, *arguments])
        command = run([CLI, "read", *arguments])
        assert script.returncode == command.returncode == 2
        assert script.stderr.split(": error: ")[1] == command.stderr.split(": error: ")[1]
