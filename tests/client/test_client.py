"""The client's retry rule: transient failures again with backoff, within the deadline."""

import pytest
from tritonclient.utils import InferenceServerException

from triton_ocr.client.ocr_client import is_transient, with_retries


class FakeClock:
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def failing(errors, result="ok", clock=None, spend=0.0):
    calls = []

    def call(seconds_left):
        calls.append(seconds_left)
        if clock:
            clock.now += spend
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return result

    return call, calls


UNAVAILABLE = InferenceServerException("stub restarting", status="StatusCode.UNAVAILABLE")
INTERNAL = InferenceServerException("Stub process is not healthy", status="500")
INVALID = InferenceServerException("cannot decode image", status="400")


def test_transient_errors_are_told_from_bad_input():
    assert is_transient(UNAVAILABLE) and is_transient(INTERNAL)
    bug = InferenceServerException("KeyError: 'x'", status="StatusCode.INTERNAL")
    assert not is_transient(bug) and not is_transient(InferenceServerException("bug", status="500"))
    assert is_transient(InferenceServerException("deadline", status="StatusCode.DEADLINE_EXCEEDED"))
    reloading = "Request for unknown model: 'ocr' has no available versions"
    assert is_transient(InferenceServerException(reloading, status="StatusCode.NOT_FOUND"))
    unknown = "Request for unknown model: 'orc' is not found"
    assert not is_transient(InferenceServerException(unknown, status="StatusCode.NOT_FOUND"))
    assert is_transient(ConnectionRefusedError()) and not is_transient(INVALID)
    assert not is_transient(ValueError("image 0: empty image"))


def test_transient_failures_are_retried_with_growing_waits():
    clock = FakeClock()
    call, calls = failing([UNAVAILABLE, INTERNAL], clock=clock)
    assert with_retries(call, 30.0, 3, 0.5, clock, clock.sleep) == "ok"
    assert len(calls) == 3 and len(clock.sleeps) == 2
    assert 0.25 <= clock.sleeps[0] <= 0.5 and 0.5 <= clock.sleeps[1] <= 1.0
    assert calls[0] == 30.0 and calls[2] < calls[1] < 30.0  # each attempt gets what is left


def test_bad_input_is_never_retried():
    clock = FakeClock()
    call, calls = failing([INVALID], clock=clock)
    with pytest.raises(InferenceServerException, match="cannot decode"):
        with_retries(call, 30.0, 3, 0.5, clock, clock.sleep)
    assert len(calls) == 1 and clock.sleeps == []


def test_retries_stop_at_the_count_and_at_the_deadline():
    clock = FakeClock()
    call, calls = failing([UNAVAILABLE] * 10, clock=clock)
    with pytest.raises(InferenceServerException):
        with_retries(call, 1000.0, 2, 0.5, clock, clock.sleep)
    assert len(calls) == 3
    clock = FakeClock()
    call, calls = failing([UNAVAILABLE] * 10, clock=clock, spend=0.9)
    with pytest.raises(InferenceServerException):
        with_retries(call, 2.0, 10, 0.5, clock, clock.sleep)
    assert clock.now < 2.0 + 0.9  # no wait that would end past the deadline


def test_inputs_are_files_folders_and_stdin_lists(tmp_path):
    import io

    from triton_ocr.client.client import collect_inputs

    scans = tmp_path / "scans"
    (scans / "2024" / "march").mkdir(parents=True)
    for name in ("b.PNG", "a.jpg", "2024/march/c.tiff", "2024/notes.txt", "2024/march/d.pdf.bak"):
        (scans / name).write_bytes(b"x")
    single = tmp_path / "single.webp"
    single.write_bytes(b"x")
    listed = io.StringIO(f"{single}\n\n  {tmp_path / 'gone.png'}  \n")
    found = collect_inputs([str(scans), str(single), "-"], listed)
    assert found == [
        scans / "2024" / "march" / "c.tiff",  # recursive, sorted, image suffixes in any case
        scans / "a.jpg",
        scans / "b.PNG",
        single,  # once, though given twice
        tmp_path / "gone.png",  # kept: reading it reports that it is missing
    ]
