"""A server started by a process that is killed ends with it, and starting one does not fork
a process that holds gRPC channels (grpc's fork handlers abort such a child: grpc/grpc#43055)."""

import os
import signal
import subprocess
import sys
import time

import pytest

from triton_ocr.serving.server import dying_with_parent

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")

PARENT = """
import subprocess, sys, time
from triton_ocr.serving.server import dying_with_parent
child = subprocess.Popen(dying_with_parent(["sleep", "60"]))
print(child.pid, flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_the_child_ends_when_its_parent_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    time.sleep(0.5)  # the shim has exec'd sleep
    assert _alive(child)
    with open(f"/proc/{child}/cmdline", "rb") as cmdline:
        assert cmdline.read().split(b"\0")[0] == b"sleep"
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_the_command_keeps_its_arguments_and_exit_status():
    done = subprocess.run(
        dying_with_parent(["sh", "-c", "echo $0 $1; exit 3", "a b", "c"]),
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout) == (3, "a b c\n")
