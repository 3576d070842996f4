"""Threads and instances laid out for the cores (pure: no server is started)."""

from pathlib import Path

import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from triton_ocr import contract
from triton_ocr.runtime.backends.engines import THREADS_KEY
from triton_ocr.serving import layout

REPOSITORY = Path(__file__).parents[2] / "repository"


def config(path: Path) -> model_config_pb2.ModelConfig:
    return text_format.Parse(path.read_text(), model_config_pb2.ModelConfig())


@pytest.mark.parametrize("on_openvino", [False, True])
@pytest.mark.parametrize("cores", [1, 2, 3, 4, 6, 8, 12, 16, 32, 64, 128])
def test_no_network_is_given_more_threads_than_cores(cores, on_openvino):
    laid_out = layout.placements(cores, on_openvino)
    assert set(laid_out) == set(contract.MODELS) - {contract.ENSEMBLE_MODEL}
    for model, placement in laid_out.items():
        assert 1 <= placement.instances <= layout.MAX_INSTANCES, model
        if placement.threads is not None:
            assert placement.instances * placement.threads <= cores, model


@pytest.mark.parametrize("on_openvino", [False, True])
def test_more_cores_never_get_fewer_instances_or_threads(on_openvino):
    for fewer, more in zip(range(1, 64), range(2, 65), strict=True):
        for model, placement in layout.placements(fewer, on_openvino).items():
            larger = layout.placements(more, on_openvino)[model]
            assert larger.instances * (larger.threads or 1) >= placement.instances, model


def test_the_recognizer_takes_two_threads_an_instance_where_openvino_runs_it():
    """ONNX Runtime's waiting threads spin: one an instance below 8 cores; OpenVINO's do not."""
    recognizer = contract.TEXT_RECOGNITION
    assert str(layout.placements(2)[recognizer]) == "2x1"
    assert str(layout.placements(2, recognizer_on_openvino=True)[recognizer]) == "1x2"
    assert str(layout.placements(4, recognizer_on_openvino=True)[recognizer]) == "2x2"
    assert str(layout.placements(1, recognizer_on_openvino=True)[recognizer]) == "1x1"
    for cores in (8, 16):
        assert layout.placements(cores, True) == layout.placements(cores, False)
    for cores in (1, 2, 4, 16):  # only the recognizer's layout depends on its runtime
        on, off = layout.placements(cores, True), layout.placements(cores, False)
        assert {m for m in on if on[m] != off[m]} <= {recognizer}


def test_the_committed_configs_are_the_two_core_layout():
    """The files serve as they are (a plain tritonserver on them) on the machine they were
    measured on, an AVX-512 one where OpenVINO runs the networks that name it; `serve` lays
    them out for others. Every pack's recognizer is laid out for the runtime its file names."""
    variants = [
        p
        for model in (contract.TEXT_RECOGNITION, contract.OCR_MODEL)
        for p in (REPOSITORY / model).glob("configs/*.pbtxt")
        if "gpu" not in p.stem
    ]
    assert len(variants) >= 6
    files = [REPOSITORY / model / "config.pbtxt" for model in layout.placements(2)] + variants
    for path in files:
        served = config(path)
        placement = layout.placement_of(served, 2, True)
        assert [g.count for g in served.instance_group] == [placement.instances], path
        if placement.threads is not None:
            threads = served.parameters[THREADS_KEY[served.backend]].string_value
            assert threads == str(placement.threads), path


def test_a_pack_with_light_networks_gets_ocr_instances_beyond_the_cores(tmp_path):
    """The fast pack's `ocr` has one instance more than the cores (Pack.ocr_extra_instances),
    up to MAX_INSTANCES; the default pack's one a core; the other models are alike."""
    for cores in (1, 2, 4, 16):
        plain, extra = layout.placements(cores), layout.placements(cores, ocr_extra=1)
        assert extra[contract.OCR_MODEL].instances == min(
            plain[contract.OCR_MODEL].instances + 1, layout.MAX_INSTANCES
        )
        assert {m for m in plain if plain[m] != extra[m]} <= {contract.OCR_MODEL}
    target = tmp_path / "laid-out"
    layout.laid_out_repository(REPOSITORY, target, 4, openvino=True)
    ocr = target / contract.OCR_MODEL
    assert config(ocr / "config.pbtxt").instance_group[0].count == 4
    assert config(ocr / "configs" / "ppocr-v6-tiny.pbtxt").instance_group[0].count == 5
    assert " ocr 3," in layout.describe(2, True, "ppocr-v6-tiny")
    assert " ocr 2," in layout.describe(2, True, "ppocr-v6")


def test_laid_out_repository_sets_cpu_groups_and_keeps_gpu_variants(tmp_path):
    target = tmp_path / "laid-out"
    layout.laid_out_repository(REPOSITORY, target, 16, openvino=True)
    laid_out = layout.placements(16)
    recognizer = target / contract.TEXT_RECOGNITION
    assert (recognizer / "1").is_symlink()
    assert (recognizer / "1").resolve() == (REPOSITORY / contract.TEXT_RECOGNITION / "1").resolve()
    expected = laid_out[contract.TEXT_RECOGNITION]
    for variant in ("config.pbtxt", "configs/ppocr-v6-tiny.pbtxt", "configs/east-str.pbtxt"):
        served = config(recognizer / variant)
        assert [g.count for g in served.instance_group] == [expected.instances], variant
        assert served.parameters["intra_op_thread_count"].string_value == str(expected.threads)
    gpu = recognizer / "configs" / "gpu.pbtxt"
    assert config(gpu) == config(REPOSITORY / contract.TEXT_RECOGNITION / "configs" / "gpu.pbtxt")
    ensemble = contract.ENSEMBLE_MODEL
    assert (target / ensemble / "config.pbtxt").read_text() == (
        REPOSITORY / ensemble / "config.pbtxt"
    ).read_text()
    ocr = config(target / contract.OCR_MODEL / "config.pbtxt")
    assert ocr.instance_group[0].count == laid_out[contract.OCR_MODEL].instances == 8
    # everything but the counts and threads is the file's
    original = config(REPOSITORY / contract.OCR_MODEL / "config.pbtxt")
    original.instance_group[0].count = 8
    assert ocr == original


@pytest.mark.parametrize(
    ("cpu_max", "expected"), [("150000 100000", 2), ("50000 100000", 1), ("max 100000", None)]
)
def test_a_cgroup_quota_holds_the_cores(tmp_path, monkeypatch, cpu_max, expected):
    (tmp_path / "cpu.max").write_text(cpu_max + "\n")
    monkeypatch.setattr(layout, "CGROUP_V2_MAX", tmp_path / "cpu.max")
    monkeypatch.setattr(layout.os, "sched_getaffinity", lambda _: set(range(8)))
    assert layout.cgroup_cores() == (None if expected is None else int(cpu_max.split()[0]) / 1e5)
    assert layout.available_cores() == (expected or 8)


def test_describe_names_each_model_once_and_the_runtime():
    line = layout.describe(16, openvino=True)
    assert line.startswith("layout for 16 cores: text_detection 4x4, text_recognition 8x2")
    assert line.count(" ocr ") == 1
    assert line.endswith("networks on the runtimes their configs name")
    two = layout.describe(2, openvino=True)
    assert "text_recognition 2x1 (1x2 on OpenVINO)" in two
    assert "ONNX Runtime's CPU provider" in layout.describe(2, openvino=False)
    assert "on OpenVINO" not in layout.describe(2, openvino=False)
    int8 = layout.describe(2, openvino=False, pack="ppocr-v6-int8")
    assert "text_recognition 2x1 (1x2 on OpenVINO)" in int8
    assert int8.endswith("; the INT8 recognizer on OpenVINO")


@pytest.mark.parametrize(
    ("flags", "openvino", "shapes"),
    [
        ("fpu avx2 avx512f avx512bw amx_tile amx_bf16", True, True),
        ("fpu avx2 avx512f avx512_bf16", True, False),
        ("fpu avx2 fma", False, False),
        ("", False, False),
    ],
)
def test_openvino_on_avx512_and_its_shapes_kept_on_amx(
    tmp_path, monkeypatch, flags, openvino, shapes
):
    (tmp_path / "cpuinfo").write_text(f"processor\t: 0\nflags\t\t: {flags}\n\n")
    monkeypatch.setattr(layout, "CPUINFO", tmp_path / "cpuinfo")
    layout.cpu_flags.cache_clear()
    try:
        assert layout.openvino_pays() is openvino
        assert layout.shapes_pay() is shapes
    finally:
        layout.cpu_flags.cache_clear()


def shape_caches(served: model_config_pb2.ModelConfig) -> list[str | None]:
    return [
        a.parameters.get(layout.SHAPE_CACHE)
        for a in served.optimization.execution_accelerators.cpu_execution_accelerator
    ]


def test_keeping_shapes_drops_only_the_detectors_limit(tmp_path):
    assert shape_caches(config(REPOSITORY / contract.TEXT_DETECTION / "config.pbtxt")) == ["0"]
    for keep in (False, True):
        target = tmp_path / str(keep)
        layout.laid_out_repository(REPOSITORY, target, 2, openvino=True, keep_shapes=keep)
        for model in contract.NETWORKS:
            served = config(target / model / "config.pbtxt")
            original = config(REPOSITORY / model / "config.pbtxt")
            if keep and model == contract.TEXT_DETECTION:
                assert shape_caches(served) == [None]  # OpenVINO's own limit
                assert (
                    served.optimization.execution_accelerators.cpu_execution_accelerator[
                        0
                    ].parameters["INFERENCE_PRECISION_HINT"]
                    == "auto"
                )
            else:
                assert shape_caches(served) == shape_caches(original), model
    assert "compiled shapes" in layout.describe(2, True, keep_shapes=True)
    assert "compiled shapes" not in layout.describe(2, True)


def test_without_openvino_the_networks_run_on_onnxruntime_and_keep_all_else(tmp_path):
    named = [
        model
        for model in contract.NETWORKS
        if "openvino" in (REPOSITORY / model / "config.pbtxt").read_text()
    ]
    assert named  # the default pack's detector and recognizer name it
    target = tmp_path / "laid-out"
    layout.laid_out_repository(REPOSITORY, target, 2, openvino=False)
    for model in named:
        served = config(target / model / "config.pbtxt")
        assert not served.HasField("optimization"), model  # nothing else there: no empty block
        original = config(REPOSITORY / model / "config.pbtxt")
        original.ClearField("optimization")
        if model == contract.TEXT_RECOGNITION:  # on ONNX Runtime: 2 instances of 1 thread
            assert [g.count for g in served.instance_group] == [2]
            assert served.parameters["intra_op_thread_count"].string_value == "1"
            original.instance_group[0].count = 2
            original.parameters["intra_op_thread_count"].string_value = "1"
        assert served == original, model  # else the files' own counts and threads
    layout.laid_out_repository(REPOSITORY, tmp_path / "kept", 2, openvino=True)
    for model in named:
        assert config(tmp_path / "kept" / model / "config.pbtxt") == config(
            REPOSITORY / model / "config.pbtxt"
        ), model


def test_an_int8_recognizer_keeps_openvino_on_every_cpu(tmp_path):
    """ONNX Runtime's CPU provider runs QDQ convolutions in float: the INT8 pack's recognizer
    stays on OpenVINO (one instance of two threads) where the float one moves to ONNX Runtime."""
    variant = Path("configs") / "ppocr-v6-int8.pbtxt"
    target = tmp_path / "laid-out"
    layout.laid_out_repository(REPOSITORY, target, 2, openvino=False)
    int8 = config(target / contract.TEXT_RECOGNITION / variant)
    accelerators = int8.optimization.execution_accelerators.cpu_execution_accelerator
    assert [a.name for a in accelerators] == ["openvino"]
    assert [g.count for g in int8.instance_group] == [1]
    assert int8.parameters["intra_op_thread_count"].string_value == "2"
    assert not config(target / contract.TEXT_RECOGNITION / "config.pbtxt").HasField("optimization")
    # the same pack's detector is a float file: ONNX Runtime there
    assert not config(target / contract.TEXT_DETECTION / variant).HasField("optimization")


def test_zero_cores_serves_the_files_as_they_are_and_none_finds_them():
    assert layout.cores_to_lay_out(0) == 0  # running_server then serves the repository itself
    assert layout.cores_to_lay_out(None) == layout.available_cores() >= 1
    assert layout.cores_to_lay_out(5) == 5
    with pytest.raises(ValueError, match="cores must be >= 0"):
        layout.cores_to_lay_out(-1)
