"""Every request parameter has a range: outside it (NaN and infinities included) a request is
refused naming the parameter, the value and the range; inside it the pipeline never fails."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPOSITORY, ROOT
from tests.test_pipeline import dark_is_text, upright, upright_page
from triton_ocr.config.repository import Repository
from triton_ocr.config.requests import REQUEST_PARAMETERS, server_value, with_overrides
from triton_ocr.errors import InvalidRequest
from triton_ocr.pipeline import read_image
from triton_ocr.settings import PipelineSettings
from triton_ocr.tools.samples import Placed, render

ALPHABET = ["", "a", "b"]
PACKS = ("ppocr-v6", "east-str")
SAMPLE = render((Placed("Hello 42 world", (20, 20), 40), Placed("second", (20, 90), 30))).png


def pack_settings(pack: str) -> PipelineSettings:
    return Repository(REPOSITORY, pack).pipeline_settings(alphabet=ALPHABET)


SETTINGS = {pack: pack_settings(pack) for pack in PACKS}


def default_of(name: str, pack: str):
    """The server's value of a parameter for `pack` (KeyError: it does not apply there)."""
    return server_value(SETTINGS[pack], name)


def applies(name: str, pack: str) -> bool:
    try:
        default_of(name, pack)
    except KeyError:
        return False
    return True


def pack_for(name: str) -> str:
    return next(pack for pack in PACKS if applies(name, pack))


NUMERIC = sorted(name for name, r in REQUEST_PARAMETERS.items() if not r.choices)


def recognize(batches):
    """A stand-in recognizer: every row reads 'ab'."""
    out = []
    for batch in batches:
        steps = np.zeros((len(batch), 8), np.int64)
        steps[:, 1], steps[:, 3] = 1, 2
        out.append((steps, np.full(steps.shape, 0.9, np.float32)))
    return out


@st.composite
def outside(draw, name: str):
    allowed = REQUEST_PARAMETERS[name]
    high = allowed.high_for(SETTINGS[pack_for(name)])
    kind = type(default_of(name, pack_for(name)))
    if kind is float:
        return draw(
            st.one_of(
                st.floats(max_value=allowed.low, exclude_max=True, allow_nan=False),
                st.floats(min_value=high, exclude_min=True, allow_nan=False),
                st.sampled_from([math.nan, math.inf, -math.inf]),
            )
        )
    return draw(
        st.one_of(st.integers(max_value=int(allowed.low) - 1), st.integers(min_value=int(high) + 1))
    )


@pytest.mark.parametrize("name", NUMERIC)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_values_outside_the_range_are_refused_by_name(name, data):
    value = data.draw(outside(name))
    with pytest.raises(InvalidRequest) as refused:
        with_overrides(SETTINGS[pack_for(name)], {name: value})
    message = str(refused.value)
    assert f"request parameter {name}=" in message and "out of range" in message
    assert re.search(r"between [\d.]+ and ", message)


@st.composite
def inside(draw, pack: str):
    """Any values in range for every parameter that applies to `pack`, min_side <= max_side."""
    s = SETTINGS[pack]
    chosen = {}
    for name, allowed in REQUEST_PARAMETERS.items():
        if not applies(name, pack) or not draw(st.booleans()):
            continue
        if name == "classify_orientation" and s.recognizer_input.channels != 3:
            chosen[name] = False  # east-str's gray crops cannot go through the classifier
        elif allowed.choices:
            chosen[name] = draw(st.sampled_from(allowed.choices))
        elif isinstance(default_of(name, pack), int):
            chosen[name] = draw(st.integers(int(allowed.low), int(allowed.high_for(s))))
        else:
            chosen[name] = draw(st.floats(allowed.low, allowed.high_for(s)))
    if "min_side_len" in chosen and "max_side_len" in chosen:
        low, high = sorted((chosen["min_side_len"], chosen["max_side_len"]))
        chosen.update(min_side_len=low, max_side_len=high)
    elif "min_side_len" in chosen:
        chosen["min_side_len"] = min(chosen["min_side_len"], s.detector_input.max_side_len)
    return chosen


@pytest.mark.parametrize("pack", PACKS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_values_inside_the_ranges_never_fail_the_pipeline(pack, data):
    chosen = data.draw(inside(pack))
    settings_ = with_overrides(SETTINGS[pack], chosen)

    def detect(tensor):
        maps = dark_is_text(tensor)
        if settings_.lines.detector == "db":
            return maps
        # EAST: NHWC score and geometry maps of quarter size
        score = maps[0][0, 0, ::4, ::4][None, ..., None]
        geometry = np.full((*score.shape[:3], 5), 4.0, np.float32)
        geometry[..., 4] = 0.0
        return [score, geometry]

    found = read_image(SAMPLE, settings_, detect, recognize, upright, upright_page)
    assert len(found.texts) == len(found.quads) == len(found.scores)


def test_the_api_docs_table_states_every_range():
    """docs/api.md's table of request parameters says what config/requests.py holds."""
    readme = (ROOT / "docs" / "api.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", readme, re.MULTILINE))
    for name, allowed in REQUEST_PARAMETERS.items():
        assert rows.get(name, "").strip() == allowed.describe(), name
