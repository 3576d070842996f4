"""The tritonserver command line the local runtime builds (pure: no server is started)."""

from pathlib import Path

from triton_ocr.server import ServerOptions, TritonDistribution, server_command

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


def test_binds_where_told_and_loopback_by_default():
    assert "--http-address=127.0.0.1" in command() and "--grpc-address=127.0.0.1" in command()
    args = command(host="0.0.0.0", http_port=9000)
    assert "--http-address=0.0.0.0" in args and "--http-port=9000" in args
