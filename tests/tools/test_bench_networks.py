"""How bench-networks turns a served config into each runtime's config."""

from triton_ocr.tools.bench.networks import RUNTIMES, runtime_config

SERVED = {
    "name": "text_detection",
    "backend": "onnxruntime",
    "parameters": {
        "intra_op_thread_count": {"string_value": "2"},
        "inter_op_thread_count": {"string_value": "1"},
    },
    "optimization": {
        "execution_accelerators": {"cpu_execution_accelerator": [{"name": "openvino"}]}
    },
}


def test_each_runtime_keeps_the_served_thread_count():
    plain, accelerated, openvino = (runtime_config(SERVED, r) for r in RUNTIMES)
    assert plain["backend"] == accelerated["backend"] == "onnxruntime"
    assert "optimization" not in plain
    assert accelerated["optimization"] == SERVED["optimization"]
    assert plain["parameters"] == {"intra_op_thread_count": {"string_value": "2"}}
    assert openvino["backend"] == "openvino"
    assert openvino["parameters"] == {"INFERENCE_NUM_THREADS": {"string_value": "2"}}
    assert SERVED["backend"] == "onnxruntime" and "optimization" in SERVED  # not edited
