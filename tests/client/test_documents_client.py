"""The clients' requests and answers, against a fake server: what travels, what comes back, and
what the pre-check refuses (documents go to `ocr`, never to `ensemble_model`)."""

from __future__ import annotations

import asyncio
import io
import re

import numpy as np
import pytest
from PIL import Image
from tritonclient.utils import InferenceServerException

from tests.conftest import ROOT
from triton_ocr import contract
from triton_ocr.client import AsyncOcrClient, Document, ImageDecodeError, OcrClient
from triton_ocr.client.ocr_client import OCR_ALL_OUTPUTS
from triton_ocr.settings import ImageLimits

from .outputs import LINES, PAGES, WORDS, box, ocr_outputs

LIMITS = ImageLimits(10_000_000, 50_000_000)
PDF = b"%PDF-1.7\n1 0 obj << >> endobj\n%%EOF\n"


def encoded(fmt: str, size=(8, 8)) -> bytes:
    out = io.BytesIO()
    Image.new("L", size, 255).save(out, format=fmt)
    return out.getvalue()


class Result:
    def __init__(self, outputs):
        self.outputs = outputs

    def as_numpy(self, name):
        return self.outputs.get(name)


ENSEMBLE = {
    contract.OUTPUT_TEXT: np.array([[b"one", b"two"]], np.object_),
    contract.OUTPUT_POLYGONS: np.array([[box(0, 0, 4, 2), box(0, 3, 4, 5)]], np.float32),
    contract.OUTPUT_SCORES: np.array([[0.9, 0.8]], np.float32),
}


def batched(outputs: dict) -> dict:
    """`ocr`'s outputs as the server sends them: each with the request's batch dimension."""
    return {name: array[None] for name, array in outputs.items()}


class FakeTriton:
    """tritonclient's client, answering from prepared outputs; `errors` first, if any."""

    def __init__(self, outputs, errors=()):
        self.outputs, self.errors, self.calls, self.closed = outputs, list(errors), [], False

    def infer(self, model, inputs, outputs=None, parameters=None, **extra):
        self.calls.append((model, inputs, [o.name() for o in outputs], parameters, extra))
        if self.errors:
            raise self.errors.pop(0)
        return Result(self.outputs)

    def close(self):
        self.closed = True


class FakeAsyncTriton(FakeTriton):
    async def infer(self, *args, **kwargs):
        await asyncio.sleep(0)
        return FakeTriton.infer(self, *args, **kwargs)

    async def close(self):
        self.closed = True


@pytest.fixture(params=["http", "grpc"])
def client(request):
    found = OcrClient(protocol=request.param, limits=LIMITS, retries=2, backoff=0.001)
    found._client = FakeTriton(batched(ocr_outputs(LINES, PAGES, WORDS)))
    return found


def test_documents_travel_to_ocr_in_one_call_with_every_output(client, tmp_path):
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(PDF)
    scan_doc, image_doc = client.read_documents(
        [scan, encoded("PNG")], word_boxes=True, pdf_dpi=150
    )
    ((model, (tensor,), outputs, parameters, extra),) = client._client.calls
    assert model == contract.OCR_MODEL
    assert (tensor.name(), tensor.shape(), tensor.datatype()) == ("images", [1, 2], "BYTES")
    assert outputs == list(OCR_ALL_OUTPUTS) and len(outputs) == 25
    assert parameters == {"pdf_dpi": 150, "word_boxes": True}
    assert ("client_timeout" in extra) == (client.protocol == "grpc")
    assert 0 < extra["timeout"] <= client.timeout * 1e6  # the deadline travels, in microseconds
    assert scan_doc.source == str(scan) and image_doc.source is None
    assert len(scan_doc) == 3 and [w.text for w in scan_doc[0].lines[0].words] == ["Invoice", "42"]


def test_word_boxes_are_asked_for_only_when_wanted(client):
    client.read_documents([encoded("PNG"), encoded("JPEG")])
    client.read_documents([encoded("PNG"), encoded("JPEG")], word_boxes=False, text_score=0.3)
    assert [call[3] for call in client._client.calls] == [None, {"text_score": 0.3}]


def test_read_many_gives_each_items_lines_in_page_order(client):
    lines = client.read_many([PDF, encoded("PNG")])
    assert [[line.text for line in item] for item in lines] == [
        ["Invoice 42", "Total: 12 €", "Page three"],
        [LINES[3][2]],
    ]
    assert client.read_many([]) == [] and len(client._client.calls) == 1


def test_a_refused_image_is_named_by_its_index_and_nothing_travels(client):
    with pytest.raises(ImageDecodeError, match=r"^image 1: unsupported image format GIF"):
        client.read_documents([PDF, encoded("GIF")])
    with pytest.raises(ImageDecodeError, match=r"^image 0: empty image"):
        client.read_many([b"", PDF])
    assert client._client.calls == []


def test_the_ensemble_refuses_documents_and_says_where_to_send_them(client):
    client._client = FakeTriton(ENSEMBLE)
    with pytest.raises(ImageDecodeError) as refused:
        client.read(PDF)
    message = str(refused.value)
    assert message.startswith("a PDF document: ")
    assert contract.ENSEMBLE_MODEL in message and f"`{contract.OCR_MODEL}`" in message
    tiff = io.BytesIO()
    frames = [Image.new("L", (8, 8)) for _ in range(3)]
    frames[0].save(tiff, format="TIFF", save_all=True, append_images=frames[1:])
    with pytest.raises(ImageDecodeError, match="^a TIFF with 3 pages: ensemble_model reads one"):
        client.read(tiff.getvalue())
    assert client._client.calls == []
    assert [line.text for line in client.read(encoded("PNG"))] == ["one", "two"]
    assert client._client.calls[0][0] == contract.ENSEMBLE_MODEL


def test_a_transient_failure_is_retried(client):
    client._client.errors = [
        InferenceServerException("restarting", status="StatusCode.UNAVAILABLE")
    ]
    client._client.outputs = batched(ocr_outputs(LINES[:3], PAGES[:3]))  # one item: the 3-page scan
    assert len(client.read_document(encoded("PNG"))) == 3
    assert len(client._client.calls) == 2


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_the_async_client_reads_as_the_blocking_one(protocol, tmp_path):
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(PDF)

    async def main():
        async with AsyncOcrClient(protocol=protocol, limits=LIMITS, backoff=0.001) as client:
            fake = client._client = FakeAsyncTriton(batched(ocr_outputs(LINES, PAGES, WORDS)))
            fake.errors = [InferenceServerException("overloaded", status="StatusCode.UNAVAILABLE")]
            documents = await client.read_documents([scan, encoded("PNG")], word_boxes=True)
            lines = await client.read_many([PDF, encoded("PNG")])
            together = await asyncio.gather(*(client.read_many([PDF, PDF]) for _ in range(3)))
            with pytest.raises(ImageDecodeError, match="^image 1: unsupported image format GIF"):
                await client.read_documents([PDF, encoded("GIF")])
            with pytest.raises(ImageDecodeError, match="send documents to the `ocr` model"):
                await client.read(PDF)
            fake.outputs = ENSEMBLE
            read = await client.read(encoded("PNG"))
        assert fake.closed and client._client is None
        return fake, documents, lines, together, read

    fake, documents, lines, together, read = run(main())
    assert [d.source for d in documents] == [str(scan), None]
    assert isinstance(documents[0], Document) and len(documents[0]) == 3
    assert fake.calls[0][3] == {"word_boxes": True} and len(fake.calls) == 7  # one retried
    assert fake.calls[0][2] == list(OCR_ALL_OUTPUTS)
    assert len(lines[0]) == 3 and len(together) == 3
    assert [line.text for line in read] == ["one", "two"]
    assert fake.calls[-1][0] == contract.ENSEMBLE_MODEL


def test_the_async_client_fetches_each_entry_points_limits_once_from_its_first_model():
    def config_of(model: str, max_bytes: int) -> dict:
        text = (ROOT / "repository" / model / "config.pbtxt").read_text()
        found = re.findall(r'key: "(\w+)" value: \{ string_value: "([^"]*)" \}', text)
        parameters = {key: {"string_value": value} for key, value in found}
        parameters["max_image_bytes"] = {"string_value": str(max_bytes)}
        parameters["max_image_pixels"] = {"string_value": "1000000"}
        return {"name": model, "parameters": parameters}

    # `ocr` is served without detection_preprocessing (--entry-points ocr): its own config
    # holds its limits; the ensemble's are its first step's
    configs = {
        contract.OCR_MODEL: config_of(contract.OCR_MODEL, 1000),
        contract.DETECTION_PREPROCESSING: config_of(contract.DETECTION_PREPROCESSING, 2000),
    }

    class Configured(FakeAsyncTriton):
        fetched: list[str] = []

        async def get_model_config(self, name, **kwargs):
            Configured.fetched.append(name)
            config = configs[name]
            return {"config": config} if kwargs.get("as_json") else config

    async def main(protocol):
        client = AsyncOcrClient(protocol=protocol)
        client._client = Configured(batched(ocr_outputs([], [(0, 8, 8)])))
        with pytest.raises(ImageDecodeError, match="exceeds the limit of 1000 bytes"):
            await client.read_document(b"\0" * 1001)
        await client.read_document(encoded("PNG"))
        with pytest.raises(ImageDecodeError, match="exceeds the limit of 2000 bytes"):
            await client.read(b"\0" * 2001)
        return await client.limits(contract.OCR_MODEL), await client.limits()

    for protocol in ("http", "grpc"):
        ocr, ensemble = run(main(protocol))
        assert (ocr.max_image_bytes, ocr.max_image_pixels) == (1000, 1_000_000)
        assert ensemble.max_image_bytes == 2000
    assert Configured.fetched == [contract.OCR_MODEL, contract.DETECTION_PREPROCESSING] * 2


def test_the_protocol_is_checked():
    with pytest.raises(ValueError, match="protocol must be 'http' or 'grpc'"):
        AsyncOcrClient(protocol="https")


def test_the_model_is_checked():
    # each entry point's decode limits are read from its own first model: a client must name one
    with pytest.raises(ValueError, match="model must be one of"):
        AsyncOcrClient(model=contract.TEXT_DETECTION)
