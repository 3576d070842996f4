"""The tritonserver command line the local runtime builds (pure: no server is started)."""

from pathlib import Path

import pytest

from triton_ocr import contract
from triton_ocr.serving.distribution import TritonDistribution
from triton_ocr.serving.errors import ServerError
from triton_ocr.serving.flags import (
    ADMIN_HEADER,
    ADMIN_KEY_ENV,
    RESTRICTED_APIS,
    ServerOptions,
    admin_key,
    container_command,
    server_command,
)

DIST = TritonDistribution(Path("/opt/pytriton/tritonserver"), Path("/opt/libs"))


def command(**kwargs) -> list[str]:
    return server_command(DIST, Path("/tmp/backends"), ServerOptions(Path("repository"), **kwargs))


def test_default_pack_uses_config_pbtxt():
    args = command()
    assert args[0] == "/opt/pytriton/tritonserver/bin/tritonserver"
    assert not any(a.startswith("--model-config-name") for a in args)
    assert "--backend-directory=/tmp/backends" in args


def test_east_str_pack_selects_its_config_variant():
    assert "--model-config-name=east-str" in command(pack="east-str")


def test_the_gpu_variant_is_a_config_name_of_its_pack():
    assert "--model-config-name=gpu" in command(gpu=True)
    assert "--model-config-name=ppocr-v6-tiny-gpu" in command(pack="ppocr-v6-tiny", gpu=True)
    with pytest.raises(ValueError, match="GPU variant"):
        command(pack="ppocr", gpu=True)


def loaded(**kwargs) -> list[str]:
    return [a.split("=", 1)[1] for a in command(**kwargs) if a.startswith("--load-model=")]


def test_both_entry_points_load_every_model():
    assert loaded() == ["*"]
    assert loaded(entry_points=(contract.OCR_MODEL, contract.ENSEMBLE_MODEL)) == ["*"]


def test_one_entry_point_loads_only_the_models_it_calls():
    ocr = loaded(entry_points=(contract.OCR_MODEL,))
    assert set(contract.NETWORKS) < set(ocr) and contract.OCR_MODEL in ocr
    assert contract.ENSEMBLE_MODEL not in ocr and contract.GROUPED_RECOGNITION not in ocr
    ensemble = loaded(entry_points=(contract.ENSEMBLE_MODEL,))
    assert contract.OCR_MODEL not in ensemble
    assert set(ensemble) == set(contract.MODELS) - {contract.OCR_MODEL}


def test_unknown_entry_points_are_refused():
    for bad in ((), ("ocr", "ensemble")):
        with pytest.raises(ServerError, match="entry points must be among"):
            command(entry_points=bad)


def test_every_model_loads_at_once():
    # Triton loads 4 at a time by default
    (flag,) = [a for a in command() if a.startswith("--model-load-thread-count=")]
    assert int(flag.split("=")[1]) >= len(contract.MODELS)


def test_binds_where_told_and_loopback_by_default():
    assert "--http-address=127.0.0.1" in command() and "--grpc-address=127.0.0.1" in command()
    args = command(host="0.0.0.0", http_port=9000)
    assert "--http-address=0.0.0.0" in args and "--http-port=9000" in args


def test_admin_apis_need_the_key_from_the_environment(monkeypatch):
    monkeypatch.setenv(ADMIN_KEY_ENV, "k3y")
    flags = [a for a in command() if "restricted" in a]
    assert flags == [
        f"--http-restricted-api={','.join(RESTRICTED_APIS)}:{ADMIN_HEADER}=k3y",
        f"--grpc-restricted-protocol={','.join(RESTRICTED_APIS)}:{ADMIN_HEADER}=k3y",
    ]
    assert {"model-repository", "shared-memory"} <= set(RESTRICTED_APIS)
    assert not {"inference", "health", "metadata"} & set(RESTRICTED_APIS)


def test_without_a_key_the_admin_apis_get_one_nobody_knows(monkeypatch):
    monkeypatch.delenv(ADMIN_KEY_ENV, raising=False)
    first, second = admin_key(None), admin_key(None)
    assert first != second and len(first) >= 32
    assert admin_key("given") == "given"


def test_a_key_that_would_break_the_flag_is_refused():
    for bad in ("a:b", "a,b", "a=b", "a b", "é"):
        with pytest.raises(ServerError, match=ADMIN_KEY_ENV):
            admin_key(bad)


def test_the_container_runs_its_own_tritonserver_with_the_same_flags(monkeypatch):
    monkeypatch.setenv(ADMIN_KEY_ENV, "k3y")
    opts = ServerOptions(Path("/models"), pack="east-str")
    args = container_command(opts)
    assert args[0] == "tritonserver" and not any("--backend-directory" in a for a in args)
    assert args[1:] == server_command(DIST, Path("/tmp/b"), opts)[2:]
