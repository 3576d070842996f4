"""`serve --entry-points ocr --cores 1` on a server of its own: only the models `ocr` calls are
loaded, each laid out for one core, and the client still reads the server's limits and pages
through it."""

from __future__ import annotations

from pathlib import Path

import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from triton_ocr import contract
from triton_ocr.client import OcrClient
from triton_ocr.serving.flags import MALLOC_ENVIRONMENT, ServerOptions, free_ports
from triton_ocr.serving.layout import SHAPE_CACHE, openvino_pays
from triton_ocr.serving.processes import stubs
from triton_ocr.serving.server import running_server
from triton_ocr.tools.evaluation.metrics import normalize
from triton_ocr.tools.samples import render


def test_ocr_alone_on_one_core_loads_only_what_it_calls_and_reads(repository, tmp_path):
    http, grpc, metrics = free_ports(3)
    opts = ServerOptions(
        repository,
        "127.0.0.1",
        http,
        grpc,
        metrics,
        entry_points=("ocr",),
        cores=1,
        keep_shapes=True,
    )
    sample = render()
    with running_server(opts, log_file=tmp_path / "server.log") as process:
        instances = [stub.model for stub in stubs(process.pid)]
        assert set(instances) == set(contract.ENTRY_POINT_MODELS[contract.OCR_MODEL])
        for step in (contract.DETECTION_PREPROCESSING, contract.GROUPED_RECOGNITION):
            assert step not in instances  # ensemble steps, not loaded
        # the committed configs hold two instances of these (the 2-core layout); one core: one
        assert (
            instances.count(contract.TEXT_RECOGNITION) == instances.count(contract.OCR_MODEL) == 1
        )
        served = httpclient.InferenceServerClient(f"127.0.0.1:{http}")
        detector = served.get_model_config(contract.TEXT_DETECTION)
        threads = detector["parameters"]["intra_op_thread_count"]["string_value"]
        assert threads == "1"  # 2 in the file
        accelerators = detector.get("optimization", {}).get("execution_accelerators", {})
        named = [a["name"] for a in accelerators.get("cpu_execution_accelerator", [])]
        assert ("openvino" in named) is openvino_pays()  # the runtime fitted to this CPU
        for accelerator in accelerators.get("cpu_execution_accelerator", []):
            assert SHAPE_CACHE not in accelerator.get("parameters", {})  # --keep-shapes: dropped
        served.close()
        environ = Path(f"/proc/{process.pid}/environ").read_bytes().split(b"\0")
        for key, value in MALLOC_ENVIRONMENT.items():  # the stubs inherit it
            assert f"{key}={value}".encode() in environ
        with OcrClient(f"127.0.0.1:{grpc}", "grpc", model=contract.OCR_MODEL) as client:
            assert client.limits().max_image_bytes > 0  # from `ocr`'s own config
            page = client.read_document(sample.png).pages[0]
            read = normalize(" ".join(line.text for line in page.lines))
            assert all(normalize(text) in read for text in sample.texts)
        with (
            OcrClient(f"127.0.0.1:{grpc}", "grpc", retries=0) as client,
            pytest.raises(InferenceServerException, match="ensemble_model"),
        ):
            client.read(sample.png)  # ensemble_model is not served here
