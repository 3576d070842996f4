"""The GPU check's verdict (the run itself needs a GPU: `make gpu-check`)."""

from triton_ocr.tools.gpu_check import NETWORKS, problems_of

ON_GPU = {"kinds": ["KIND_GPU"], "gpu_accelerators": ["tensorrt"]}
ANSWERED = {model: {"requests": 3} for model in NETWORKS}
HOLDING = [{"pid": 1, "name": "tritonserver", "mib": 900.0}]


def test_a_gpu_run_has_no_problems():
    assert problems_of(dict.fromkeys(NETWORKS, ON_GPU), HOLDING, ANSWERED) == []


def test_each_way_off_the_gpu_is_named():
    placement = dict.fromkeys(NETWORKS, ON_GPU)
    placement[NETWORKS[0]] = {"kinds": ["KIND_CPU"], "gpu_accelerators": []}
    stats = {**ANSWERED, NETWORKS[1]: {"requests": 0}}
    problems = problems_of(placement, [{"pid": 1, "name": "x", "mib": 0.0}], stats)
    assert problems == [
        f"{NETWORKS[0]} loaded as ['KIND_CPU'], not KIND_GPU",
        f"{NETWORKS[0]} has no tensorrt accelerator",
        f"{NETWORKS[1]} answered no request",
        "no process holds GPU memory (nvidia-smi)",
    ]
