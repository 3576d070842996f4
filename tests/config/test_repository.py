"""Static checks of the model repository: model names, the ensemble wiring, the client's
contract, and what Repository reads for every pack."""

import dataclasses

import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from tests.conftest import REPOSITORY
from triton_ocr import contract
from triton_ocr.config.packs import DEFAULT_PACK, GPU_VARIANTS, PACKS, model_config_name
from triton_ocr.config.repository import Repository
from triton_ocr.settings import Grouping, ImageLimits, ManyImages

MODELS = sorted(p.parent.name for p in REPOSITORY.glob("*/config.pbtxt"))


def test_the_contract_names_every_model_of_the_repository():
    assert sorted(contract.MODELS) == MODELS


@pytest.mark.parametrize("pack", PACKS)
@pytest.mark.parametrize("model", MODELS)
def test_config_name_matches_folder(model, pack):
    assert Repository(REPOSITORY, pack).config(model).name == model


# Models every pack serves alike: one config.pbtxt, which Triton uses when a model has no
# configs/<pack>.pbtxt (the east-str e2e tests load it so).
SHARED_BY_ALL_PACKS = set(contract.SHARED_NETWORKS)


@pytest.mark.parametrize("model", MODELS)
def test_every_model_has_a_config_for_every_pack(model):
    for pack in PACKS:
        path = Repository(REPOSITORY, pack).config_path(model)
        assert path.is_file()
        if pack != DEFAULT_PACK:
            variant = path.parent.name == "configs"
            assert variant != (model in SHARED_BY_ALL_PACKS), (model, pack)


def test_unknown_packs_are_refused():
    with pytest.raises(ValueError, match="unknown pack 'ppocr-v9'"):
        Repository(REPOSITORY, "ppocr-v9")


@pytest.mark.parametrize("pack", PACKS)
def test_client_contract_matches_ensemble(pack):
    configs = Repository(REPOSITORY, pack)
    ensemble = configs.config(contract.ENSEMBLE_MODEL)
    assert [i.name for i in ensemble.input] == [contract.INPUT_IMAGE]
    assert list(ensemble.input[0].dims) == [-1]
    assert ensemble.input[0].data_type == model_config_pb2.TYPE_UINT8
    assert tuple(o.name for o in ensemble.output) == contract.OUTPUTS
    ocr = configs.config(contract.OCR_MODEL)
    assert [i.name for i in ocr.input] == [contract.OCR_INPUT_IMAGES]
    assert tuple(o.name for o in ocr.output) == contract.OCR_ALL_OUTPUTS


@pytest.mark.parametrize("pack", PACKS)
def test_ensemble_steps_use_declared_tensors(pack):
    configs = Repository(REPOSITORY, pack)
    ensemble = configs.config(contract.ENSEMBLE_MODEL)
    available = {i.name for i in ensemble.input}
    for step in ensemble.ensemble_scheduling.step:
        model = configs.config(step.model_name)
        assert set(step.input_map) == {i.name for i in model.input}, step.model_name
        assert set(step.output_map) <= {o.name for o in model.output}, step.model_name
        assert set(step.input_map.values()) <= available, step.model_name
        available |= set(step.output_map.values())
    assert {o.name for o in ensemble.output} <= available


# Where OpenVINO's FP32 CPU accelerator measured faster than ONNX Runtime's CPU provider
# (docs/benchmarks.md); elsewhere ONNX Runtime runs alone.
OPENVINO_ON_CPU = {
    "ppocr-v6": {contract.TEXT_DETECTION, contract.TEXT_RECOGNITION},
    "ppocr-v6-tiny": {contract.TEXT_DETECTION, contract.TEXT_RECOGNITION},
    "ppocr-v6-int8": {contract.TEXT_DETECTION, contract.TEXT_RECOGNITION},
    "ppocr": {contract.TEXT_DETECTION, contract.TEXT_RECOGNITION},
    "east-str": set(),
}


def cpu_accelerators(config) -> list[str]:
    return [a.name for a in config.optimization.execution_accelerators.cpu_execution_accelerator]


@pytest.mark.parametrize("pack", PACKS)
@pytest.mark.parametrize("model", contract.NETWORKS)
def test_networks_run_on_onnxruntime_with_kind_auto(model, pack):
    config = Repository(REPOSITORY, pack).config(model)
    assert config.backend == "onnxruntime"
    assert [g.kind for g in config.instance_group] == [
        model_config_pb2.ModelInstanceGroup.KIND_AUTO
    ]
    expected = ["openvino"] if model in OPENVINO_ON_CPU[pack] else []
    assert cpu_accelerators(config) == expected


def variant_config(model: str, variant: str):
    """The config Triton reads for `model` under --model-config-name=`variant`."""
    path = REPOSITORY / model / "configs" / f"{variant}.pbtxt"
    path = path if path.is_file() else REPOSITORY / model / "config.pbtxt"
    return text_format.Parse(path.read_text(), model_config_pb2.ModelConfig())


@pytest.mark.parametrize("pack", GPU_VARIANTS)
@pytest.mark.parametrize("model", contract.NETWORKS)
def test_the_gpu_variant_serves_the_same_model_on_tensorrt(model, pack):
    default = Repository(REPOSITORY, pack).config(model)
    gpu = variant_config(model, GPU_VARIANTS[pack])
    # the same file, tensors and batch limit: only where and how it runs differ
    for field in ("name", "default_model_filename", "backend", "max_batch_size", "input", "output"):
        assert getattr(gpu, field) == getattr(default, field), (model, field)
    assert [g.kind for g in gpu.instance_group] == [model_config_pb2.ModelInstanceGroup.KIND_GPU]
    assert cpu_accelerators(gpu) == []
    (tensorrt,) = gpu.optimization.execution_accelerators.gpu_execution_accelerator
    assert tensorrt.name == "tensorrt" and tensorrt.parameters["precision_mode"] == "FP16"
    # one TensorRT profile over every shape the pipeline sends (no engine rebuilds)
    assert {"trt_profile_min_shapes", "trt_profile_max_shapes"} <= set(tensorrt.parameters)
    assert gpu.HasField("dynamic_batching") == (model == contract.TEXT_RECOGNITION)


@pytest.mark.parametrize("pack", GPU_VARIANTS)
def test_the_page_classifiers_profile_takes_one_look_and_four(pack):
    # the first look goes alone, the three turned ones together, or all four (pipeline.turn_page)
    gpu = variant_config(contract.PAGE_ORIENTATION, GPU_VARIANTS[pack])
    (tensorrt,) = gpu.optimization.execution_accelerators.gpu_execution_accelerator
    assert tensorrt.parameters["trt_profile_min_shapes"] == "x:1x3x224x224"
    assert tensorrt.parameters["trt_profile_max_shapes"] == "x:4x3x224x224"


@pytest.mark.parametrize("pack", GPU_VARIANTS)
@pytest.mark.parametrize("model", sorted(set(MODELS) - set(contract.NETWORKS)))
def test_the_gpu_variant_keeps_the_packs_python_steps(model, pack):
    # one --model-config-name names every model's file: a step without its variant would fall
    # back to config.pbtxt, the default pack's settings
    assert variant_config(model, GPU_VARIANTS[pack]) == Repository(REPOSITORY, pack).config(model)


def test_gpu_variants_are_prepared_for_two_packs():
    assert model_config_name(DEFAULT_PACK, gpu=True) == "gpu"
    assert model_config_name("ppocr-v6-tiny", gpu=True) == "ppocr-v6-tiny-gpu"
    with pytest.raises(ValueError, match="GPU variant"):
        model_config_name("ppocr", gpu=True)


@pytest.mark.parametrize("pack", PACKS)
def test_recognition_groups_fit_the_recognizer_batch(pack):
    configs = Repository(REPOSITORY, pack)
    grouping = configs.step(contract.GROUPED_RECOGNITION)[Grouping]
    configs.check_group_size(grouping)  # the shipped configs agree
    limit = configs.config(contract.TEXT_RECOGNITION).max_batch_size
    with pytest.raises(ValueError, match="max_batch_size"):
        configs.check_group_size(dataclasses.replace(grouping, recognition_group_size=limit + 1))
    with pytest.raises(ValueError, match="between 1"):
        configs.check_group_size(Grouping(0, 3200))


@pytest.mark.parametrize("pack", PACKS)
def test_tensor_names_come_from_the_configs(pack):
    configs = Repository(REPOSITORY, pack)
    detector = configs.config(contract.TEXT_DETECTION)
    assert configs.detector_tensors() == (
        detector.input[0].name,
        [o.name for o in detector.output],
    )
    name, outputs = configs.recognizer_tensors()
    assert outputs == [contract.BEST_CLASS, contract.BEST_SCORE]
    assert name == configs.config(contract.TEXT_RECOGNITION).input[0].name
    classifier = configs.classifier()
    assert (classifier.size.height, classifier.size.width) == (48, 192)


@pytest.mark.parametrize("pack", PACKS)
def test_the_bls_timeout_is_stated_once(pack):
    configs = Repository(REPOSITORY, pack)
    holders = [m for m in MODELS if "bls_timeout_s" in configs.config(m).parameters]
    assert holders == [contract.GROUPED_RECOGNITION]
    assert configs.bls().bls_timeout_s > 0


@pytest.mark.parametrize("pack", PACKS)
def test_each_entry_point_states_the_same_decode_limits_where_its_clients_look(pack):
    configs = Repository(REPOSITORY, pack)
    for first in contract.ENTRY_STEPS.values():
        limits = configs.step(first)[ImageLimits]
        assert limits.max_image_bytes > 1 << 20 and limits.max_image_pixels > 10**6
        assert limits == configs.image_limits() == configs.pipeline_settings(["a"]).limits


def test_entry_points_that_would_read_an_image_differently_are_refused(tmp_path):
    copy = Repository(REPOSITORY).copy_to(tmp_path / "repository")
    config = copy.config(contract.OCR_MODEL)
    config.parameters["max_image_bytes"].string_value = "1000"
    copy.write_config(contract.OCR_MODEL, config)
    with pytest.raises(ValueError, match="decode limits differ"):
        copy.pipeline_settings(["a"])


def test_copies_take_edited_configs(tmp_path):
    copy = Repository(REPOSITORY).copy_to(tmp_path / "repository")
    config = copy.config(contract.OCR_MODEL)
    config.parameters["images_in_flight"].string_value = "5"
    copy.write_config(contract.OCR_MODEL, config)
    many = copy.step(contract.OCR_MODEL)[ManyImages]
    assert many.images_in_flight == 5
    many = Repository(REPOSITORY).step(contract.OCR_MODEL)[ManyImages]
    assert many.images_in_flight != 5


@pytest.mark.parametrize("pack", PACKS)
@pytest.mark.parametrize("model", contract.NETWORKS)
def test_the_openvino_accelerators_parameters_are_ones_the_engine_reads(model, pack):
    from triton_ocr.runtime.backends.engines import accelerator_properties

    for accelerator in (
        Repository(REPOSITORY, pack)
        .config(model)
        .optimization.execution_accelerators.cpu_execution_accelerator
    ):
        accelerator_properties(dict(accelerator.parameters))  # raises on a key or value it lacks


@pytest.mark.parametrize("model", sorted(OPENVINO_ON_CPU[DEFAULT_PACK]))
def test_the_default_packs_networks_run_at_openvinos_own_precision(model):
    # auto: BF16 on AMX CPUs, where it kept the scores (docs/benchmarks.md, "Precision and memory
    # levers"); the NGC container's onnxruntime backend passes no parameters (FP32 there)
    (accelerator,) = (
        Repository(REPOSITORY, DEFAULT_PACK)
        .config(model)
        .optimization.execution_accelerators.cpu_execution_accelerator
    )
    assert dict(accelerator.parameters)["INFERENCE_PRECISION_HINT"] == "auto"


def test_the_default_packs_detector_keeps_no_compiled_shapes_and_its_recognizer_does():
    # pages come in many sizes; crop widths fall in a few buckets that recur (docs/benchmarks.md,
    # "Where the memory goes")
    def parameters(model):
        config = Repository(REPOSITORY, DEFAULT_PACK).config(model)
        (accelerator,) = config.optimization.execution_accelerators.cpu_execution_accelerator
        return dict(accelerator.parameters)

    assert parameters("text_detection")["CPU_RUNTIME_CACHE_CAPACITY"] == "0"
    assert "CPU_RUNTIME_CACHE_CAPACITY" not in parameters("text_recognition")
