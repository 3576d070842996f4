"""Each default is declared once: the service's ports live in triton_ocr/contract.py, and no
other source file of the package writes one as a number or in an address (the CLI, the clients,
the gateway, the plugin and the tools read them from there); so are the callers' timeouts and
the entry queues' policy."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from tests.conftest import ROOT
from tests.test_layers import PARTS
from triton_ocr import contract

PORTS = {contract.HTTP_PORT, contract.GRPC_PORT, contract.METRICS_PORT, contract.REST_PORT}
HOME = ROOT / "triton_ocr" / "contract.py"
# numbers that are not ports: image bombs' pixel sizes
NOT_PORTS = {ROOT / "triton_ocr" / "tools" / "reliability" / "bombs.py"}
# string pieces: f-strings are FSTRING_MIDDLE tokens from Python 3.12
TEXT = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def sources() -> list[Path]:
    return sorted(
        path
        for places in PARTS.values()
        for place in places
        for path in ((ROOT / place).rglob("*.py") if (ROOT / place).is_dir() else [ROOT / place])
    )


def port_literals(path: Path) -> list[str]:
    """`line: token` for each port written as a number, or after a colon in a string."""
    found = []
    address = re.compile(rf":({'|'.join(map(str, PORTS))})\b")
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for token in tokens:
        number = token.type == tokenize.NUMBER and token.string.isdigit()
        if (number and int(token.string) in PORTS and path not in NOT_PORTS) or (
            token.type in TEXT and address.search(token.string)
        ):
            found.append(f"{token.start[0]}: {token.string}")
    return found


def test_the_ports_are_declared_once():
    assert port_literals(HOME)  # the one home has them
    elsewhere = {
        str(path.relative_to(ROOT)): hits
        for path in sources()
        if path != HOME and (hits := port_literals(path))
    }
    assert elsewhere == {}


def test_the_timeouts_and_the_queue_policy_are_read_from_the_contract():
    """A caller's wait (the clients', `read`'s), an upload's (the gateway's, the plugin's) and
    the entry queues' policy (generated into the configs) each come from contract.py."""
    import inspect

    from triton_ocr import ocrmypdf
    from triton_ocr.client.client import ReadOptions
    from triton_ocr.client.ocr_client import ClientOptions
    from triton_ocr.config.repository import Repository
    from triton_ocr.gateway.settings import GatewaySettings

    wait = inspect.signature(ClientOptions.__init__).parameters["timeout"].default
    assert wait == ReadOptions.timeout == contract.REQUEST_TIMEOUT_S
    assert GatewaySettings.timeout_s == ocrmypdf.DEFAULT_TIMEOUT_S == contract.UPLOAD_TIMEOUT_S
    for entry, model in contract.ENTRY_STEPS.items():
        policy = Repository(ROOT / "repository").config(model).dynamic_batching.default_queue_policy
        assert policy.max_queue_size == contract.ENTRY_QUEUE_SIZE, entry
        assert policy.default_timeout_microseconds == contract.REQUEST_TIMEOUT_S * 1e6, entry
