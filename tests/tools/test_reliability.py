"""The soak and fault scripts' arithmetic, and the /proc helpers on this very process."""

import os

from triton_ocr.client.ocr_client import TextLine
from triton_ocr.serving.processes import MemorySample, rss_bytes
from triton_ocr.serving.supervisor import running
from triton_ocr.tools.reliability.faults import Outcome, recovery
from triton_ocr.tools.reliability.soak import growth, same_answer

BOX = ((0.0, 0.0), (10.0, 0.0), (10.0, 5.0), (0.0, 5.0))


def test_answers_compare_texts_exactly_and_geometry_up_to_noise():
    a = [TextLine("STOP", BOX, 0.97)]
    nudged = [TextLine("STOP", tuple((x + 0.1, y) for x, y in BOX), 0.9705)]
    assert same_answer(a, nudged) and same_answer([], [])
    assert not same_answer(a, [TextLine("ST0P", BOX, 0.97)])
    assert not same_answer(a, [TextLine("STOP", tuple((x + 3, y) for x, y in BOX), 0.97)])
    assert not same_answer(a, [])


def test_growth_compares_the_first_and_last_tenth_after_warm_up():
    samples = [MemorySample(t, 100 + (t > 50) * 10, 0, 0, 0) for t in range(0, 100, 5)]
    result = growth(samples, warmup_s=20, attribute="server_rss")
    assert result["growth_pct"] == 10.0
    assert growth(samples[:3], warmup_s=0, attribute="server_rss") == {}


def test_recovery_is_the_first_success_after_the_last_failure():
    outcomes = [
        Outcome(-1.0, -0.5, True),  # before the fault: not counted
        Outcome(0.1, 0.2, False, "Stub process 'ocr_0_0' is not healthy."),
        Outcome(0.5, 1.5, False, "no available versions"),
        Outcome(1.2, 1.4, True),  # a success between failures is not recovery yet
        Outcome(1.6, 2.1, True),
    ]
    result = recovery(outcomes)
    assert result["failed"] == 2 and result["last_failure_s"] == 1.5
    assert result["succeeding_again_after_s"] == 2.1
    assert recovery([Outcome(0.1, 0.3, True)])["failed"] == 0


def test_proc_helpers_see_this_process():
    assert running(os.getpid()) and rss_bytes(os.getpid()) > 1 << 20
    assert not running(2**22 + 12345) and rss_bytes(2**22 + 12345) == 0
