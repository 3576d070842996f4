"""Memory figures of a process from /proc (what the soak samples)."""

import os

from triton_ocr.serving.processes import pss_bytes, rss_bytes


def test_proportional_memory_is_at_most_resident_memory():
    pid = os.getpid()
    assert 0 < pss_bytes(pid) <= rss_bytes(pid)


def test_a_process_that_is_gone_takes_nothing():
    assert pss_bytes(2**22 + 1) == 0 == rss_bytes(2**22 + 1)  # above Linux's pid_max limit
