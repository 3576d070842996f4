"""Static checks of the model repository: the ensemble wiring and the client's contract."""

import pytest
from tritonclient.grpc import model_config_pb2

from triton_ocr.client import contract
from triton_ocr.packs import DEFAULT_PACK, PACKS, check_group_size, config_path

from .configs import REPOSITORY, load_config

MODELS = sorted(p.parent.name for p in REPOSITORY.glob("*/config.pbtxt"))


def test_expected_models():
    assert set(MODELS) >= {
        "detection_preprocessing",
        "text_detection",
        "detection_postprocessing",
        "text_recognition",
        "recognition_postprocessing",
        "ensemble_model",
    }


@pytest.mark.parametrize("pack", PACKS)
@pytest.mark.parametrize("model", MODELS)
def test_config_name_matches_folder(model, pack):
    assert load_config(model, pack).name == model


# Models every pack serves alike: one config.pbtxt, which Triton uses when a model has no
# configs/<pack>.pbtxt (the east-str e2e tests load it so).
SHARED_BY_ALL_PACKS = {"text_orientation"}


@pytest.mark.parametrize("model", MODELS)
def test_every_model_has_a_config_for_every_pack(model):
    for pack in PACKS:
        assert config_path(REPOSITORY, model, pack).is_file()
        if pack != DEFAULT_PACK:
            variant = config_path(REPOSITORY, model, pack).parent.name == "configs"
            assert variant != (model in SHARED_BY_ALL_PACKS), (model, pack)


@pytest.mark.parametrize("pack", PACKS)
def test_client_contract_matches_ensemble(pack):
    ensemble = load_config(contract.MODEL_NAME, pack)
    assert [i.name for i in ensemble.input] == [contract.INPUT_IMAGE]
    assert list(ensemble.input[0].dims) == [-1]
    assert ensemble.input[0].data_type == model_config_pb2.TYPE_UINT8
    assert tuple(o.name for o in ensemble.output) == contract.OUTPUTS


@pytest.mark.parametrize("pack", PACKS)
def test_ensemble_steps_use_declared_tensors(pack):
    ensemble = load_config("ensemble_model", pack)
    available = {i.name for i in ensemble.input}
    for step in ensemble.ensemble_scheduling.step:
        model = load_config(step.model_name, pack)
        assert set(step.input_map) == {i.name for i in model.input}, step.model_name
        assert set(step.output_map) <= {o.name for o in model.output}, step.model_name
        assert set(step.input_map.values()) <= available, step.model_name
        available |= set(step.output_map.values())
    assert {o.name for o in ensemble.output} <= available


@pytest.mark.parametrize("pack", PACKS)
@pytest.mark.parametrize("model", ["text_detection", "text_recognition"])
def test_onnx_models_use_kind_auto(model, pack):
    config = load_config(model, pack)
    assert config.backend == "onnxruntime"
    assert [g.kind for g in config.instance_group] == [
        model_config_pb2.ModelInstanceGroup.KIND_AUTO
    ]


@pytest.mark.parametrize("pack", PACKS)
def test_recognition_groups_fit_the_recognizer_batch(pack):
    group = load_config("grouped_recognition", pack).parameters["recognition_group_size"]
    size = int(group.string_value)
    check_group_size(REPOSITORY, pack, size)  # the shipped configs agree
    limit = load_config("text_recognition", pack).max_batch_size
    with pytest.raises(ValueError, match="max_batch_size"):
        check_group_size(REPOSITORY, pack, limit + 1)


@pytest.mark.parametrize("pack", PACKS)
def test_the_client_finds_the_decode_limits_where_it_looks(pack):
    from triton_ocr.params import DetectionPreprocessing, model_parameters

    from .configs import config_dict

    limits = model_parameters(DetectionPreprocessing, config_dict(contract.DECODE_MODEL_NAME, pack))
    assert limits.limits.max_bytes > 1 << 20 and limits.limits.max_pixels > 10**6
