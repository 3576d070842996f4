"""The ensemble's gate: at most its bound admitted at once, a place freed by a done message over
its socket or by the end of a request's lease, a message to a gate that is gone ignored."""

from __future__ import annotations

import time

import pytest

from triton_ocr.runtime.gate import InFlightGate, Overloaded, done


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def eventually(condition, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.01)
    return condition()


def test_beyond_the_bound_a_request_is_refused_as_overloaded():
    gate = InFlightGate(2, Clock())
    gate.admit(60)
    gate.admit(60)
    with pytest.raises(Overloaded, match=r"overloaded: ensemble_model holds .* at once \(2\)"):
        gate.admit(60)
    assert gate.in_flight() == 2


def test_a_done_message_frees_a_place():
    gate = InFlightGate(1)
    gate.admit(60)
    done(gate.token)
    assert eventually(lambda: gate.in_flight() == 0)
    gate.admit(60)  # room again
    other = InFlightGate(1)
    assert other.token != gate.token
    done(other.token)  # another gate's message frees nothing here
    assert eventually(lambda: other.in_flight() == 0) and gate.in_flight() == 1


def test_a_request_never_done_stops_counting_when_its_lease_ends():
    clock = Clock()
    gate = InFlightGate(2, clock)
    gate.admit(5.0)  # e.g. a later step failed: nobody says done
    gate.admit(60.0)
    with pytest.raises(Overloaded):
        gate.admit(60.0)
    clock.now += 5.0
    gate.admit(60.0)  # the first lease ended
    assert gate.in_flight() == 2


def test_done_for_a_gate_that_is_gone_is_ignored():
    done(12345)  # no such gate: nothing raised
    gate = InFlightGate(1)
    gate.release()  # nothing admitted: nothing to free, no error
    assert gate.in_flight() == 0
