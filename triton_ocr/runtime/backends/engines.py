"""The network runtimes behind a model config's `backend`: ONNX Runtime and OpenVINO.

One `Engine` per model file, built from the config's `parameters` with the meaning the NGC
container's C++ backends give them, so the same config runs alike there and here:
  - onnxruntime: `intra_op_thread_count`, `inter_op_thread_count`; the CUDA provider on a GPU
    instance when the installed onnxruntime has it (TensorRT first where the config's `tensorrt`
    gpu_execution_accelerator asks and it is there; KIND_GPU without CUDA is an error, not a
    silent CPU run); `enable_mem_arena`, `enable_mem_pattern` (1/0, true/false) and
    `memory.enable_memory_arena_shrinkage` (a run option, e.g. `cpu:0`) as the C++ backend
    reads them. On a CPU instance, the `openvino` cpu_execution_accelerator runs the whole graph
    on OpenVINO, as the container's ONNX Runtime (built with the OpenVINO execution provider)
    does. The container's backend passes that accelerator no parameters (device CPU, FP32);
    here, its parameters `INFERENCE_PRECISION_HINT` (f32, the default and the container's; bf16;
    auto: OpenVINO's own choice for the CPU, BF16 on AMX CPUs), `CPU_RUNTIME_CACHE_CAPACITY`
    (compiled shapes kept) and `ENABLE_CPU_PINNING` are read (docs/benchmarks.md, "Precision
    and memory levers", "Which runtime, by CPU");
  - openvino (CPU only, as in Triton's openvino backend): `INFERENCE_NUM_THREADS`,
    `COMPILATION_NUM_THREADS`, `NUM_STREAMS` (a number, AUTO or NUMA), `PERFORMANCE_HINT`
    (LATENCY, THROUGHPUT, CUMULATIVE_THROUGHPUT) and `HINT_BF16` (YES; without it OpenVINO's
    default precision, BF16 on AMX CPUs, as there); any other key is an error here.
Used by the Python-based backends (backends/<name>/model.py) and by the bench's in-process floor,
which must run the networks on the runtime the configs name. OpenVINO's threads are not pinned
to cores unless a config says so (see openvino_engine).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from triton_ocr.errors import InvalidRequest
from triton_ocr.runtime.backends.argmax import first_max_indices

# What a run returns: the wanted outputs, in the order asked.
Run = Callable[[Sequence[str], Mapping[str, np.ndarray]], list[np.ndarray]]


class BadInput(InvalidRequest):
    """The runtime refused a request's tensors (shape or type): the caller's error."""


@dataclass(frozen=True)
class Engine:
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    run: Run
    describe: str  # runtime, device and precision, for the load log


def onnxruntime_engine(
    path: Path,
    parameters: Mapping[str, str],
    kind: str = "CPU",
    device_id: int = 0,
    cpu_accelerators: Mapping[str, Mapping[str, str]] | Sequence[str] = (),
    gpu_accelerators: Mapping[str, Mapping[str, str]] | None = None,
    require_gpu: bool = False,
) -> Engine:
    if kind == "CPU" and "openvino" in cpu_accelerators:
        # Here ONNX Runtime would hand every node to the OpenVINO provider, which compiles the
        # graph for OpenVINO's CPU plugin (at FP32 in the container); this runs OpenVINO so
        # directly. The provider leaves threads to OpenVINO; we keep the config's
        # intra_op_thread_count so instances do not oversubscribe the cores.
        given = cpu_accelerators["openvino"] if isinstance(cpu_accelerators, Mapping) else {}
        properties = accelerator_properties(given or {})
        threads = parameters.get("intra_op_thread_count")
        if threads:
            properties["INFERENCE_NUM_THREADS"] = int(threads)
        return openvino_engine(path, properties)
    import onnxruntime as ort

    options = ort.SessionOptions()
    for key, attribute in (
        ("intra_op_thread_count", "intra_op_num_threads"),
        ("inter_op_thread_count", "inter_op_num_threads"),
    ):
        if key in parameters:
            setattr(options, attribute, int(parameters[key]))
    for key, attribute in (
        ("enable_mem_arena", "enable_cpu_mem_arena"),
        ("enable_mem_pattern", "enable_mem_pattern"),
    ):
        if key in parameters:
            setattr(options, attribute, parse_bool(key, parameters[key]))
    run_options = None
    shrinkage = parameters.get(ARENA_SHRINKAGE)
    if shrinkage:
        run_options = ort.RunOptions()
        run_options.add_run_config_entry(ARENA_SHRINKAGE, shrinkage)
    providers = providers_for(ort.get_available_providers(), kind, device_id, gpu_accelerators)
    if require_gpu and providers[0] == "CPUExecutionProvider":
        raise RuntimeError(
            f"{path.name}: the config asks for KIND_GPU, but this onnxruntime has no CUDA "
            "provider (install onnxruntime-gpu of the same version, or serve in the NGC container)"
        )
    session = ort.InferenceSession(str(path), options, providers=providers)
    refused = (ort.capi.onnxruntime_pybind11_state.InvalidArgument, ValueError)

    def run(wanted: Sequence[str], feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        try:
            return session.run(list(wanted), dict(feeds), run_options)
        except refused as exc:
            raise BadInput(str(exc)) from exc

    return Engine(
        inputs=tuple(i.name for i in session.get_inputs()),
        outputs=tuple(o.name for o in session.get_outputs()),
        run=run,
        describe=f"onnxruntime {ort.__version__} {session.get_providers()[0]}",
    )


def providers_for(
    available: Sequence[str],
    kind: str,
    device_id: int,
    gpu_accelerators: Mapping[str, Mapping[str, str]] | None,
) -> list:
    """ONNX Runtime providers for an instance: on a GPU, TensorRT (when the config asks for it
    and this onnxruntime has it) before CUDA, with the C++ backend's parameter meanings."""
    providers: list = ["CPUExecutionProvider"]
    if kind != "GPU" or "CUDAExecutionProvider" not in available:
        return providers
    providers.insert(0, ("CUDAExecutionProvider", {"device_id": device_id}))
    tensorrt = (gpu_accelerators or {}).get("tensorrt")
    if tensorrt is not None and "TensorrtExecutionProvider" in available:
        options: dict[str, object] = {"device_id": device_id}
        for key, value in tensorrt.items():
            if key == "precision_mode":
                options["trt_fp16_enable"] = value.upper() == "FP16"
                options["trt_int8_enable"] = value.upper() == "INT8"
            elif key == "max_workspace_size_bytes":
                options["trt_max_workspace_size"] = int(value)
            else:  # trt_* keys are the provider's own option names
                options[key] = value
        providers.insert(0, ("TensorrtExecutionProvider", options))
    return providers


# ONNX Runtime's run option that returns the CPU arena's unused chunks after each run.
ARENA_SHRINKAGE = "memory.enable_memory_arena_shrinkage"

# The openvino accelerator's INFERENCE_PRECISION_HINT values: OpenVINO's, and auto (its own
# choice for the CPU: bf16 where the CPU has AMX or AVX-512 BF16, f32 elsewhere).
PRECISIONS = ("f32", "bf16", "auto")


def parse_bool(key: str, raw: str) -> bool:
    """A boolean parameter as Triton's backends read one (true/false, 1/0, yes/no, on/off)."""
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{key} must be true or false (1 or 0), got {raw!r}")


def accelerator_properties(parameters: Mapping[str, str]) -> dict[str, object]:
    """The `openvino` cpu_execution_accelerator's parameters as OpenVINO CPU properties:
    FP32 unless INFERENCE_PRECISION_HINT says otherwise (the container's provider: FP32)."""
    properties: dict[str, object] = {"INFERENCE_PRECISION_HINT": "f32"}
    for key, raw in parameters.items():
        value = raw.strip().lower()
        if key == "INFERENCE_PRECISION_HINT":
            if value not in PRECISIONS:
                raise ValueError(
                    f"INFERENCE_PRECISION_HINT must be one of {', '.join(PRECISIONS)}, got {raw!r}"
                )
            if value == "auto":
                del properties[key]
            else:
                properties[key] = value
        elif key == "CPU_RUNTIME_CACHE_CAPACITY":
            if not value.isdigit():
                raise ValueError(f"{key} must be a non-negative number, got {raw!r}")
            properties[key] = int(value)
        elif key == "ENABLE_CPU_PINNING":
            properties[key] = parse_bool(key, raw)
        else:
            raise ValueError(
                f"the parameter {key!r} is not supported by the openvino accelerator "
                "(INFERENCE_PRECISION_HINT, CPU_RUNTIME_CACHE_CAPACITY, ENABLE_CPU_PINNING)"
            )
    return properties


def openvino_properties(parameters: Mapping[str, str]) -> dict[str, object]:
    """The openvino backend's config parameters as OpenVINO CPU properties (values are
    case-insensitive there, as here)."""
    properties: dict[str, object] = {}
    for key, raw in parameters.items():
        value = raw.strip().upper()
        if key in ("INFERENCE_NUM_THREADS", "COMPILATION_NUM_THREADS"):
            if not value.isdigit():
                raise ValueError(f"{key} must be a non-negative number, got {raw!r}")
            properties[key] = int(value)
        elif key == "HINT_BF16":
            if value != "YES":
                raise ValueError(f"HINT_BF16 must be YES, got {raw!r}")
            properties["INFERENCE_PRECISION_HINT"] = "bf16"
        elif key == "NUM_STREAMS":
            if value not in ("AUTO", "NUMA") and not value.isdigit():
                raise ValueError(f"NUM_STREAMS must be AUTO, NUMA or a number, got {raw!r}")
            properties[key] = int(value) if value.isdigit() else value
        elif key == "PERFORMANCE_HINT":
            if value not in ("LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"):
                raise ValueError(
                    "PERFORMANCE_HINT must be LATENCY, THROUGHPUT or CUMULATIVE_THROUGHPUT, "
                    f"got {raw!r}"
                )
            properties[key] = value
        else:
            raise ValueError(f"the parameter {key!r} is not supported by the openvino backend")
    return properties


# OpenVINO pins a compiled model's threads to cores as if its process had the machine alone.
# Every instance is a process of its own here, beside the others' threads: pinned, they crowd
# onto the same cores and the server slows down (docs/benchmarks.md, "Which runtime, by CPU").
UNPINNED = {"ENABLE_CPU_PINNING": False}


def openvino_engine(path: Path, properties: Mapping[str, object]) -> Engine:
    """OpenVINO's CPU plugin with these properties (OpenVINO's own names), its threads left to
    the operating system unless `properties` pin them."""
    import openvino as ov

    core = ov.Core()
    model = core.read_model(str(path))
    rewritten = first_max_indices(model)
    compiled = core.compile_model(model, "CPU", {**UNPINNED, **properties})
    del model  # the compiled model holds what it needs
    request = compiled.create_infer_request()
    outputs = tuple(o.get_any_name() for o in compiled.outputs)

    shapes = {i.get_any_name(): i.get_partial_shape() for i in compiled.inputs}

    def run(wanted: Sequence[str], feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        # OpenVINO does not always check a fixed dimension itself (it may compute garbage)
        for name, value in feeds.items():
            if name in shapes and not shapes[name].compatible(ov.PartialShape(list(value.shape))):
                raise BadInput(f"input {name!r} has shape {list(value.shape)}, not {shapes[name]}")
        try:
            # the outputs stay in the request's memory; only the wanted ones are copied out (the
            # next run reuses that memory), not a recognizer's whole class probabilities
            results = request.infer(dict(feeds), share_outputs=True)
        except (RuntimeError, TypeError, ValueError) as exc:
            raise BadInput(str(exc).strip().splitlines()[-1]) from exc  # the check that failed
        return [np.array(results[compiled.output(name)]) for name in wanted]

    precision = compiled.get_property("INFERENCE_PRECISION_HINT").to_string()
    pinned = ", threads pinned" if compiled.get_property("ENABLE_CPU_PINNING") else ""
    return Engine(
        inputs=tuple(i.get_any_name() for i in compiled.inputs),
        outputs=outputs,
        run=run,
        describe=f"openvino {ov.get_version().split('-')[0]}{pinned} CPU {precision}"
        + (f", {rewritten} ArgMax as reductions" if rewritten else ""),
    )


# Each runtime's key for "threads one run may use", for callers that set it (the bench's floor).
THREADS_KEY = {"onnxruntime": "intra_op_thread_count", "openvino": "INFERENCE_NUM_THREADS"}


def accelerators(config: Mapping[str, Any], device: str = "cpu") -> dict[str, dict[str, str]]:
    """A config's `<device>_execution_accelerator` list (JSON-like config dict): name ->
    parameters."""
    listed = config.get("optimization", {}).get("execution_accelerators", {})
    return {
        a["name"]: dict(a.get("parameters", {}))
        for a in listed.get(f"{device}_execution_accelerator", [])
    }


def parameters_of(config: Mapping[str, Any]) -> dict[str, str]:
    return {k: v["string_value"] for k, v in config.get("parameters", {}).items()}


def open_engine(
    config: Mapping[str, Any],
    path: Path,
    kind: str = "CPU",
    device_id: int = 0,
    threads: int | None = None,
) -> Engine:
    """The engine a model config (JSON-like dict, as Triton hands it over) asks for, on its
    `backend` with its `parameters`; `threads` overrides the config's thread count."""
    backend = config.get("backend", "")
    if backend not in THREADS_KEY:
        raise ValueError(f"no engine for backend {backend!r}; known: {sorted(THREADS_KEY)}")
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing (run `triton-ocr export`)")
    parameters = parameters_of(config)
    if threads is not None:
        parameters[THREADS_KEY[backend]] = str(threads)
    if backend == "openvino":
        return openvino_engine(path, openvino_properties(parameters))
    require_gpu = any(g.get("kind") == "KIND_GPU" for g in config.get("instance_group", []))
    return onnxruntime_engine(
        path,
        parameters,
        kind,
        device_id,
        accelerators(config),
        accelerators(config, "gpu"),
        require_gpu,
    )
