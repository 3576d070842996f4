"""The network engines behind the Python-based backends and the bench's floor, on a tiny ONNX
graph: every runtime a config can name gives the same outputs, refuses bad tensors as the
caller's error, and reads the parameters the container's C++ backends read."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from triton_ocr.runtime.backends.engines import (
    BadInput,
    accelerator_properties,
    accelerators,
    open_engine,
    openvino_properties,
    parse_bool,
    providers_for,
)

WEIGHTS = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 - 0.5


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """x [n, 3] -> y = x @ W [n, 4], z = relu(y)."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n", 4]),
        ],
        [numpy_helper.from_array(WEIGHTS, "w")],
    )
    path = tmp_path_factory.mktemp("model") / "tiny.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def config(
    backend: str,
    accelerator: str | None = None,
    accelerator_parameters: dict[str, str] | None = None,
    **parameters: str,
) -> dict:
    out = {
        "backend": backend,
        "parameters": {k: {"string_value": v} for k, v in parameters.items()},
    }
    if accelerator:
        listed: dict = {"name": accelerator}
        if accelerator_parameters:
            listed["parameters"] = accelerator_parameters
        out["optimization"] = {"execution_accelerators": {"cpu_execution_accelerator": [listed]}}
    return out


CONFIGS = {
    "onnxruntime": config("onnxruntime", intra_op_thread_count="1"),
    "onnxruntime+openvino": config("onnxruntime", "openvino", intra_op_thread_count="1"),
    "openvino": config("openvino", NUM_STREAMS="1", INFERENCE_NUM_THREADS="1"),
}


@pytest.mark.parametrize("name", CONFIGS)
def test_every_runtime_computes_the_graph(model, name):
    engine = open_engine(CONFIGS[name], model)
    assert engine.inputs == ("x",) and engine.outputs == ("y", "z")
    x = np.array([[1, 2, 3], [-4, 0.5, 2]], np.float32)
    z, y = engine.run(["z", "y"], {"x": x})  # in the order asked
    np.testing.assert_allclose(y, x @ WEIGHTS, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(z, np.maximum(x @ WEIGHTS, 0), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name", CONFIGS)
def test_a_tensor_of_the_wrong_shape_is_the_callers_error(model, name):
    engine = open_engine(CONFIGS[name], model)
    with pytest.raises(BadInput) as refused:
        engine.run(["y"], {"x": np.zeros((2, 5), np.float32)})
    assert str(refused.value).strip()  # a message the client can read


def test_the_openvino_accelerator_runs_fp32_on_a_cpu_instance(model):
    # OpenVINO picks BF16 by itself on AMX CPUs; the accelerator route must not
    assert open_engine(CONFIGS["onnxruntime+openvino"], model).describe.endswith("f32")
    assert "onnxruntime" in open_engine(CONFIGS["onnxruntime"], model).describe


@pytest.mark.parametrize(
    ("hint", "expected"),
    [("bf16", {"bf16", "f32"}), ("F32", {"f32"}), ("auto", {"bf16", "f32"})],
)
def test_the_openvino_accelerator_takes_a_precision(model, hint, expected):
    # bf16 and auto run BF16 only where the CPU has it (AMX, AVX-512 BF16), f32 elsewhere
    chosen = config(
        "onnxruntime", "openvino", {"INFERENCE_PRECISION_HINT": hint}, intra_op_thread_count="1"
    )
    engine = open_engine(chosen, model)
    assert engine.describe.split()[-1] in expected
    x = np.array([[1, 2, 3]], np.float32)
    np.testing.assert_allclose(engine.run(["y"], {"x": x})[0], x @ WEIGHTS, rtol=3e-2, atol=3e-2)


def test_the_openvino_accelerators_parameters_are_checked():
    assert accelerator_properties({}) == {"INFERENCE_PRECISION_HINT": "f32"}
    assert accelerator_properties({"INFERENCE_PRECISION_HINT": "BF16"}) == {
        "INFERENCE_PRECISION_HINT": "bf16"
    }
    assert accelerator_properties(
        {"INFERENCE_PRECISION_HINT": "auto", "CPU_RUNTIME_CACHE_CAPACITY": "8"}
    ) == {"CPU_RUNTIME_CACHE_CAPACITY": 8}  # auto: OpenVINO's own default for the CPU
    assert accelerator_properties({"ENABLE_CPU_PINNING": "yes"})["ENABLE_CPU_PINNING"] is True
    for bad in (
        {"INFERENCE_PRECISION_HINT": "fp16"},
        {"CPU_RUNTIME_CACHE_CAPACITY": "-1"},
        {"ENABLE_CPU_PINNING": "sometimes"},
        {"NUM_STREAMS": "1"},
    ):
        with pytest.raises(ValueError):
            accelerator_properties(bad)


def test_onnxruntime_memory_parameters_mean_what_the_onnxruntime_backend_reads(model):
    assert [parse_bool("k", v) for v in ("1", "true", "YES", "0", "False", "off")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    with pytest.raises(ValueError):
        parse_bool("enable_mem_arena", "maybe")
    x = np.ones((2, 3), np.float32)
    for memory in (
        {"enable_mem_arena": "0", "enable_mem_pattern": "0"},
        {"enable_mem_arena": "1", "memory.enable_memory_arena_shrinkage": "cpu:0"},
    ):
        engine = open_engine(config("onnxruntime", intra_op_thread_count="1", **memory), model)
        np.testing.assert_allclose(engine.run(["y"], {"x": x})[0], x @ WEIGHTS, rtol=1e-5)
    with pytest.raises(ValueError):
        open_engine(config("onnxruntime", enable_mem_arena="maybe"), model)


def test_a_gpu_instance_does_not_take_the_cpu_accelerator(model):
    # no CUDA here: ONNX Runtime falls back to its CPU provider, never to OpenVINO
    engine = open_engine(CONFIGS["onnxruntime+openvino"], model, kind="GPU")
    assert engine.describe.startswith("onnxruntime")


def test_threads_override_the_config(model):
    engine = open_engine(CONFIGS["openvino"], model, threads=2)
    assert engine.run(["y"], {"x": np.ones((1, 3), np.float32)})[0].shape == (1, 4)


def test_accelerators_are_read_from_the_config():
    assert accelerators(CONFIGS["onnxruntime+openvino"]) == {"openvino": {}}
    assert accelerators(CONFIGS["onnxruntime"]) == {}


def test_openvino_parameters_mean_what_the_openvino_backend_reads():
    assert openvino_properties(
        {
            "NUM_STREAMS": "auto",
            "INFERENCE_NUM_THREADS": "2",
            "PERFORMANCE_HINT": "throughput",
            "HINT_BF16": "yes",
        }
    ) == {
        "NUM_STREAMS": "AUTO",
        "INFERENCE_NUM_THREADS": 2,
        "PERFORMANCE_HINT": "THROUGHPUT",
        "INFERENCE_PRECISION_HINT": "bf16",
    }
    for bad in (
        {"NUM_STREAMS": "many"},
        {"INFERENCE_NUM_THREADS": "-1"},
        {"HINT_BF16": "no"},
        {"PERFORMANCE_HINT": "fast"},
        {"intra_op_thread_count": "1"},  # an onnxruntime key: the openvino backend refuses it
    ):
        with pytest.raises(ValueError):
            openvino_properties(bad)


def test_open_engine_names_what_is_missing(model, tmp_path):
    with pytest.raises(FileNotFoundError, match="triton-ocr export"):
        open_engine(CONFIGS["onnxruntime"], tmp_path / "absent.onnx")
    with pytest.raises(ValueError, match="no engine for backend 'tensorrt'"):
        open_engine(config("tensorrt"), model)


def test_a_kind_gpu_config_without_cuda_is_an_error_not_a_silent_cpu_run(model):
    gpu_only = {**CONFIGS["onnxruntime"], "instance_group": [{"kind": "KIND_GPU", "count": 1}]}
    with pytest.raises(RuntimeError, match="no CUDA provider"):
        open_engine(gpu_only, model, kind="GPU")


def test_tensorrt_comes_first_with_the_backends_parameter_meanings():
    tensorrt = {"precision_mode": "FP16", "max_workspace_size_bytes": "1024", "trt_foo": "1"}
    available = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    providers = providers_for(available, "GPU", 1, {"tensorrt": tensorrt})
    assert [p if isinstance(p, str) else p[0] for p in providers] == available
    assert providers[0][1] == {
        "device_id": 1,
        "trt_fp16_enable": True,
        "trt_int8_enable": False,
        "trt_max_workspace_size": 1024,
        "trt_foo": "1",
    }
    assert providers_for(available, "CPU", 0, {"tensorrt": tensorrt}) == ["CPUExecutionProvider"]
    assert [p[0] for p in providers_for(available[1:], "GPU", 0, {"tensorrt": tensorrt})[:1]] == [
        "CUDAExecutionProvider"
    ]


def test_openvinos_threads_are_left_unpinned_unless_a_config_pins_them(model):
    """Each instance is a process beside the others: pinned threads would crowd onto the same
    cores."""
    unpinned = open_engine(CONFIGS["onnxruntime+openvino"], model)
    assert "pinned" not in unpinned.describe
    pinned = config("onnxruntime", "openvino", {"ENABLE_CPU_PINNING": "1"})
    assert ", threads pinned" in open_engine(pinned, model).describe
