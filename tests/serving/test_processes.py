"""The server seen through /proc: memory figures of a process (what the soak samples) and
its stub processes (what the supervisor watches)."""

import os
import subprocess
import sys
import time

from triton_ocr.serving.processes import STUB, pss_bytes, rss_bytes, stubs
from triton_ocr.serving.supervisor import StubSupervisor


def test_proportional_memory_is_at_most_resident_memory():
    pid = os.getpid()
    assert 0 < pss_bytes(pid) <= rss_bytes(pid)


def test_a_process_that_is_gone_takes_nothing():
    assert pss_bytes(2**22 + 1) == 0 == rss_bytes(2**22 + 1)  # above Linux's pid_max limit


def stub_like(tmp_path, name: str) -> subprocess.Popen:
    """A child process that looks like a Python backend stub named `name` in /proc: a Python
    interpreter called through a link named as the stub, its model's name 9th on its command
    line."""
    link = tmp_path / STUB
    if not link.exists():
        link.symlink_to(sys.executable)
    code = f"import time; time.sleep(60)  # the region of {name}"  # 3rd: the shm region
    return subprocess.Popen([str(link), "-c", code, "1", "2", "3", "4", "5", name])


def test_a_loading_models_own_stub_is_no_instance_and_is_not_watched(tmp_path):
    children = [stub_like(tmp_path, "ocr"), stub_like(tmp_path, "text_detection_0_1")]
    try:
        wait = time.monotonic() + 10
        while len(stubs(os.getpid())) < 2 and time.monotonic() < wait:
            time.sleep(0.05)
        found = {s.instance: s for s in stubs(os.getpid())}
        assert set(found) == {"ocr", "text_detection_0_1"}
        assert found["text_detection_0_1"].is_instance and not found["ocr"].is_instance
        assert found["text_detection_0_1"].model == "text_detection"
        supervisor = StubSupervisor(os.getpid(), "127.0.0.1:1", "", "", log=print)
        # the loading model's stub ends by design: only the instance is watched, though the
        # shared-memory regions of both are cleaned up after a crash
        assert list(supervisor._running_stubs()) == ["text_detection_0_1"]
        assert len(supervisor.regions) == 2
    finally:
        for child in children:
            child.kill()
            child.wait()
