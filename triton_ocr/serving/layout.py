"""Threads and instances laid out for the cores the server finds at start.

The committed configs hold the layout measured on a 2-core machine. At start, `serve` copies
the repository's configs into a private folder (the networks' version folders linked, not
copied), with each model's CPU instance count and each network's thread count set for the
cores this process may use (its CPU affinity, held to a cgroup CPU quota), and points Triton
there; the same flags then serve the wheel's binary and the NGC container's. A network's
instances times its threads never exceed the cores, so no runtime oversubscribes them: on 2
cores the layout is the committed one; on 16, the detector runs 4 instances of 4 threads and
the recognizer 8 of 2 (docs/benchmarks.md, "Threads and instances for the cores"). The networks
whose configs name the `openvino` CPU accelerator keep it only on a CPU with AVX-512; on an
AVX2-only CPU they run on ONNX Runtime's CPU provider, which is ahead there (same section).
On a CPU with AMX, OpenVINO also keeps the kernels it compiled for each page size where a
config says to keep none (shapes_pay; `serve --keep-shapes/--no-keep-shapes` decides instead).
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from triton_ocr import contract
from triton_ocr.config.packs import OPENVINO_ON_EVERY_CPU, SHAPES_NOT_KEPT, pack_named
from triton_ocr.runtime.backends.engines import THREADS_KEY

CPUINFO = Path("/proc/cpuinfo")
CGROUP_V2_MAX = Path("/sys/fs/cgroup/cpu.max")
CGROUP_V1_QUOTA = Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
CGROUP_V1_PERIOD = Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
# More instances than this of one model add memory (a process each) without more speed: the
# networks' own threads take the rest of a large machine.
MAX_INSTANCES = 8
# The ensemble's Python steps and the classifiers are light: one instance per this many cores.
CORES_PER_LIGHT_INSTANCE = 4
CORES_PER_CLASSIFIER = 8


@dataclass(frozen=True)
class Placement:
    instances: int  # of each CPU instance group
    threads: int | None = None  # per instance, a network's; None for a Python model

    def __str__(self) -> str:
        return f"{self.instances}x{self.threads}" if self.threads else str(self.instances)


def cgroup_cores() -> float | None:
    """The CPU quota of this process's cgroup, in cores (None: unlimited or unknown)."""
    try:
        if CGROUP_V2_MAX.is_file():
            quota, period = CGROUP_V2_MAX.read_text().split()[:2]
            return None if quota == "max" else int(quota) / int(period)
        if CGROUP_V1_QUOTA.is_file():
            quota_us = int(CGROUP_V1_QUOTA.read_text())
            return None if quota_us < 0 else quota_us / int(CGROUP_V1_PERIOD.read_text())
    except (OSError, ValueError):
        return None
    return None


def available_cores() -> int:
    """The cores this process may run on: its CPU affinity, held to its cgroup's quota (a
    container limited to 2 CPUs on a 64-core host gets a layout for 2)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    quota = cgroup_cores()
    if quota is not None:
        cores = min(cores or 1, math.ceil(quota))
    return max(1, cores or 1)


def cores_to_lay_out(requested: int | None) -> int:
    """`serve --cores`: None lays out for the cores found, 0 serves the files' own counts and
    threads (a repository tuned by hand), N lays out for N."""
    if requested is not None and requested < 0:
        raise ValueError(f"cores must be >= 0, not {requested}")
    return available_cores() if requested is None else requested


@functools.cache
def cpu_flags() -> frozenset[str]:
    """This CPU's instruction-set flags (/proc/cpuinfo's first processor; none elsewhere)."""
    try:
        text = CPUINFO.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def openvino_pays(flags: frozenset[str] | None = None) -> bool:
    """Whether networks keep the `openvino` CPU accelerator their configs name (`flags`: this
    CPU's when None). OpenVINO's CPU plugin was measured ahead on AVX-512 CPUs, a Xeon with AMX
    and an EPYC with AVX-512 BF16 (its BF16 and AMX paths need AVX-512); on an AVX2-only one
    ONNX Runtime's CPU provider was ahead for every network, most of all on a shape OpenVINO
    has not compiled yet, which real traffic brings."""
    return "avx512f" in (cpu_flags() if flags is None else flags)


# OpenVINO's CPU property for how many compiled primitives a network keeps (per input shape),
# as the packs write it into their configs
SHAPE_CACHE = SHAPES_NOT_KEPT.key


def shapes_pay(flags: frozenset[str] | None = None) -> bool:
    """Whether OpenVINO networks keep the primitives they compiled for each input shape where
    a config says to keep none (`flags`: this CPU's when None). On a CPU with AMX compiling a
    page size's kernels took a third of the detector's time, and keeping them made the median
    request 25% faster where sizes recur; on an AVX-512 EPYC they bought under 5% for the same
    memory (docs/benchmarks.md, "Compiled shapes kept on AMX CPUs")."""
    return "amx_tile" in (cpu_flags() if flags is None else flags)


def placements(
    cores: int, recognizer_on_openvino: bool = False, ocr_extra: int = 0
) -> dict[str, Placement]:
    """Each model's instances (and a network's threads per instance) on `cores` cores, the
    recognizer's for the runtime it runs on, `ocr`'s with the pack's extra instances
    (Pack.ocr_extra_instances)."""
    if cores < 1:
        raise ValueError(f"cores must be >= 1, not {cores}")

    def instances(share: int) -> int:
        return min(MAX_INSTANCES, max(1, cores // share))

    light = instances(CORES_PER_LIGHT_INSTANCE)
    classifier = Placement(instances(CORES_PER_CLASSIFIER), 1)
    # The detector reads one page per run and its layers spread well over threads; the
    # recognizer's runs are small (a group of crops), so more instances of one or two threads
    # keep the cores busy where more threads per run would wait on each other. ONNX Runtime's
    # waiting threads spin, so below 8 cores it gets one thread an instance; OpenVINO's do not,
    # and two threads an instance read as fast with half the processes, each holding its own
    # runtime, weights and compiled shapes.
    detection_threads = min(cores, 4)
    recognition_threads = min(cores, 2) if cores >= 8 or recognizer_on_openvino else 1
    return {
        contract.TEXT_DETECTION: Placement(instances(detection_threads), detection_threads),
        contract.TEXT_RECOGNITION: Placement(instances(recognition_threads), recognition_threads),
        contract.TEXT_ORIENTATION: classifier,
        contract.PAGE_ORIENTATION: classifier,
        # `ocr` drives whole requests (decode, boxes, CTC in Python), one per core and the
        # pack's extra ones
        contract.OCR_MODEL: Placement(min(MAX_INSTANCES, instances(1) + ocr_extra)),
        contract.DETECTION_PREPROCESSING: Placement(light),
        contract.DETECTION_POSTPROCESSING: Placement(light),
        contract.GROUPED_RECOGNITION: Placement(light),
    }


def runs_on_openvino(config: model_config_pb2.ModelConfig, openvino: bool) -> bool:
    """Whether a config's CPU instances run on OpenVINO: it names the accelerator and this CPU
    keeps it (`openvino`: openvino_pays)."""
    accelerators = config.optimization.execution_accelerators.cpu_execution_accelerator
    named = any(a.name == "openvino" for a in accelerators)
    return named and (openvino or openvino_everywhere(config))


def openvino_everywhere(config: model_config_pb2.ModelConfig) -> bool:
    """Whether a config keeps OpenVINO on every CPU (an INT8 file: packs.OPENVINO_ON_EVERY_CPU)."""
    parameter = config.parameters.get(OPENVINO_ON_EVERY_CPU.key)
    return parameter is not None and parameter.string_value == OPENVINO_ON_EVERY_CPU.value


def ocr_extra(pack: str | None) -> int:
    """The `ocr` instances a pack asks beyond one a core (None: none)."""
    return pack_named(pack).ocr_extra_instances if pack else 0


def describe(cores: int, openvino: bool, pack: str | None = None, keep_shapes: bool = False) -> str:
    """One line for the start-up log: instances, or instances x threads for a network (the
    recognizer's on OpenVINO too where it differs), the networks' CPU runtime and whether
    OpenVINO keeps its compiled shapes (shapes_pay), for the pack served (None: a pack without
    extra `ocr` instances or an INT8 recognizer)."""
    extra = ocr_extra(pack)
    int8 = pack is not None and pack_named(pack).recognizer.int8 is not None
    plain = placements(cores, ocr_extra=extra)
    on_openvino = placements(cores, True, extra) if openvino or int8 else plain
    parts = ", ".join(
        f"{model} {placement}"
        + (f" ({on_openvino[model]} on OpenVINO)" if on_openvino[model] != placement else "")
        for model, placement in plain.items()
    )
    runtime = (
        "networks on the runtimes their configs name"
        if openvino
        else "networks on ONNX Runtime's CPU provider (no AVX-512: OpenVINO is behind here)"
        + ("; the INT8 recognizer on OpenVINO" if int8 else "")
    )
    shapes = "; OpenVINO keeps every network's compiled shapes" if keep_shapes and openvino else ""
    return f"layout for {cores} core{'s' if cores != 1 else ''}: {parts}; {runtime}{shapes}"


def fit_runtime(
    config: model_config_pb2.ModelConfig, openvino: bool, keep_shapes: bool = False
) -> None:
    """Drop the `openvino` CPU accelerator from a config where it does not pay (openvino_pays):
    its CPU instances then run on ONNX Runtime's own CPU provider, here and in the container.
    A config that keeps it on every CPU (openvino_everywhere) keeps it, and with `keep_shapes`
    (shapes_pay) without the packs' "keep none" (SHAPES_NOT_KEPT): OpenVINO's own limit then
    holds, and a limit set by hand stays."""
    accelerators = config.optimization.execution_accelerators
    if openvino or openvino_everywhere(config):
        if keep_shapes:
            for accelerator in accelerators.cpu_execution_accelerator:
                if accelerator.parameters.get(SHAPE_CACHE) == SHAPES_NOT_KEPT.value:
                    del accelerator.parameters[SHAPE_CACHE]
        return
    kept = [a for a in accelerators.cpu_execution_accelerator if a.name != "openvino"]
    del accelerators.cpu_execution_accelerator[:]
    accelerators.cpu_execution_accelerator.extend(kept)
    if not kept and not accelerators.gpu_execution_accelerator:
        config.optimization.ClearField("execution_accelerators")
    if not config.optimization.ListFields():
        config.ClearField("optimization")  # no empty `optimization { }` left in the served file


def apply(
    config: model_config_pb2.ModelConfig,
    placement: Placement,
    openvino: bool,
    keep_shapes: bool = False,
) -> None:
    """Set `placement` on a config: the counts of its CPU instance groups (KIND_AUTO runs on the
    CPU where no GPU is), a network's threads and its CPU runtime; a GPU variant's networks keep
    theirs."""
    cpu = [
        g for g in config.instance_group if g.kind != model_config_pb2.ModelInstanceGroup.KIND_GPU
    ]
    if not cpu:
        return
    for group in cpu:
        group.count = placement.instances
    if placement.threads is not None and config.backend in THREADS_KEY:
        config.parameters[THREADS_KEY[config.backend]].string_value = str(placement.threads)
    fit_runtime(config, openvino, keep_shapes)


def placement_of(config: model_config_pb2.ModelConfig, cores: int, openvino: bool) -> Placement:
    """A config's placement on `cores` cores: for the runtime it will run on, and for `ocr`
    the extra instances of the pack it names."""
    named = config.name == contract.OCR_MODEL and "pack" in config.parameters
    extra = ocr_extra(config.parameters["pack"].string_value if named else None)
    return placements(cores, runs_on_openvino(config, openvino), extra)[config.name]


def lay_out(
    config: model_config_pb2.ModelConfig, cores: int, openvino: bool, keep_shapes: bool = False
) -> None:
    """Apply to a config the layout for `cores` of its model (not ensemble_model, which has no
    instances of its own), for the runtime it will run on."""
    apply(config, placement_of(config, cores, openvino), openvino, keep_shapes)


def laid_out_repository(
    source: Path, target: Path, cores: int, openvino: bool, keep_shapes: bool = False
) -> None:
    """Write `source`'s configs (config.pbtxt and every configs/<variant>.pbtxt) into `target`
    with the layout for `cores` (and the CPU runtime: openvino_pays, shapes_pay) applied,
    linking everything else (version folders, model files). Triton serves `target` as it would
    `source`."""
    target.mkdir(parents=True, exist_ok=True)
    for model_dir in sorted(p for p in source.resolve().iterdir() if p.is_dir()):
        if not (model_dir / "config.pbtxt").is_file():
            continue
        into = target / model_dir.name
        into.mkdir()
        for entry in model_dir.iterdir():
            if entry.name == "configs" and entry.is_dir():
                (into / "configs").mkdir()
                for variant in entry.glob("*.pbtxt"):
                    _write_config(
                        variant, into / "configs" / variant.name, cores, openvino, keep_shapes
                    )
            elif entry.name == "config.pbtxt":
                _write_config(entry, into / entry.name, cores, openvino, keep_shapes)
            else:
                (into / entry.name).symlink_to(entry)


def _write_config(
    source: Path, target: Path, cores: int, openvino: bool, keep_shapes: bool
) -> None:
    config = text_format.Parse(source.read_text(), model_config_pb2.ModelConfig())
    if config.name not in placements(cores):  # ensemble_model: the file as it is
        target.write_text(source.read_text())
        return
    lay_out(config, cores, openvino, keep_shapes)
    target.write_text(text_format.MessageToString(config))
