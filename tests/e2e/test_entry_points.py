"""`serve --entry-points ocr` on a server of its own: only the models `ocr` calls are loaded,
and the client still reads the server's limits and pages through it."""

from __future__ import annotations

import pytest
from tritonclient.utils import InferenceServerException

from triton_ocr import contract
from triton_ocr.client import OcrClient
from triton_ocr.runtime.flags import ServerOptions, free_ports
from triton_ocr.runtime.processes import stubs
from triton_ocr.runtime.server import running_server
from triton_ocr.tools.evaluation.metrics import normalize
from triton_ocr.tools.samples import render


def test_ocr_alone_loads_only_what_it_calls_and_reads(repository, tmp_path):
    http, grpc, metrics = free_ports(3)
    opts = ServerOptions(repository, "127.0.0.1", http, grpc, metrics, entry_points=("ocr",))
    sample = render()
    with running_server(opts, log_file=tmp_path / "server.log") as process:
        models = {stub.instance.rsplit("_", 2)[0] for stub in stubs(process.pid)}
        assert models == set(contract.ENTRY_POINT_MODELS[contract.OCR_MODEL])
        assert contract.GROUPED_RECOGNITION not in models  # an ensemble step, not loaded
        with OcrClient(f"127.0.0.1:{grpc}", "grpc", model=contract.OCR_MODEL) as client:
            assert client.limits().max_image_bytes > 0  # detection_preprocessing's config
            page = client.read_document(sample.png).pages[0]
            read = normalize(" ".join(line.text for line in page.lines))
            assert all(normalize(text) in read for text in sample.texts)
        with (
            OcrClient(f"127.0.0.1:{grpc}", "grpc", retries=0) as client,
            pytest.raises(InferenceServerException, match="ensemble_model"),
        ):
            client.read(sample.png)  # ensemble_model is not served here
