"""The rows' readers: each turns encoded bytes into texts its own way.

B  floor_reader: the pipeline's stages in-process, networks on the runtime their configs name;
C  tutorial_reader: the Triton tutorial's Part-1 design, the same stages in the client and
   two network calls, every crop padded to the widest one (no width groups);
served_reader: one of the server's entry points.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from triton_ocr import contract
from triton_ocr.client import OcrClient
from triton_ocr.config.repository import Repository, as_given
from triton_ocr.pipeline import BestPath, locate, prepare, read_image, read_lines
from triton_ocr.postprocessing.recognition import Texts
from triton_ocr.preprocessing.recognition import whole_batch
from triton_ocr.runtime.backends.engines import Engine, open_engine
from triton_ocr.serving.layout import fit_runtime, openvino_pays, shapes_pay
from triton_ocr.settings import PipelineSettings
from triton_ocr.tools.workload import ReadOne


def network_engines(repository: Repository, threads: int) -> tuple[Engine, ...]:
    """Page classifier, detector, recognizer and line classifier on the runtime and parameters
    their configs name, fitted to this CPU as `serve` fits them (what the server runs), each
    with `threads` threads."""

    def engine(model: str) -> Engine:
        config = repository.config(model)
        fit_runtime(config, openvino_pays(), shapes_pay())
        return open_engine(as_given(config), repository.model_file(model), threads=threads)

    return tuple(engine(model) for model in contract.NETWORKS)


def unwrapped(_: str, network: Callable) -> Callable:
    return network


def floor_reader(
    repository: Repository,
    settings: PipelineSettings,
    threads: int,
    wrap: Callable[[str, Callable], Callable] = unwrapped,
) -> ReadOne:
    """The whole pipeline in-process (pipeline.read_image): no server, the compute floor.
    `wrap(name, network)` may wrap each network callable, by its name in pipeline.Networks
    (the stage table times them)."""
    page_classifier, detector, recognizer, classifier = network_engines(repository, threads)
    det_in, det_out = repository.detector_tensors()
    rec_in, best_path = repository.recognizer_tensors()
    orientation = repository.classifier()
    page = repository.classifier(contract.PAGE_ORIENTATION)

    def detect(tensor):
        return detector.run(det_out, {det_in: tensor})

    def recognize(batches):
        return [tuple(recognizer.run(best_path, {rec_in: b})) for b in batches]

    def classify(inputs):
        return [classifier.run([orientation.output], {orientation.input: x})[0] for x in inputs]

    def classify_page(looks):
        return page_classifier.run([page.output], {page.input: looks})[0]

    networks = {
        name: wrap(name, network)
        for name, network in (
            ("detect", detect),
            ("recognize", recognize),
            ("classify", classify),
            ("classify_page", classify_page),
        )
    }
    return lambda data: read_image(data, settings, **networks)


def tutorial_reader(url: str, repository: Repository, settings: PipelineSettings) -> ReadOne:
    """Part-1 design: the client prepares and decodes, Triton only runs the two networks."""
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import np_to_triton_dtype

    client = grpcclient.InferenceServerClient(url)
    detector_input, detector_outputs = repository.detector_tensors()
    recognizer_input, best_path = repository.recognizer_tensors()
    limit = repository.config(contract.TEXT_RECOGNITION).max_batch_size or 1_000_000

    def infer(model: str, name: str, array: np.ndarray, outputs: list[str]) -> list[np.ndarray]:
        # the detector takes the page as uint8, the recognizer its rows as float32
        tensor = grpcclient.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
        tensor.set_data_from_numpy(array)
        wanted = [grpcclient.InferRequestedOutput(n) for n in outputs]
        result = client.infer(model, [tensor], outputs=wanted)
        return [result.as_numpy(n) for n in outputs]

    def read(data: bytes) -> Texts:
        s = settings
        prepared = prepare(data, s.limits, s.detector_input)
        assert prepared.detector_input is not None  # prepare detects by default
        maps = infer(
            contract.TEXT_DETECTION, detector_input, prepared.detector_input, detector_outputs
        )
        found = locate(maps, prepared.image, s.lines, s.boxes, s.recognizer_input, s.blocks)
        if not found.rows:
            return Texts.empty()
        # every crop padded to the widest one, in as few calls as max_batch_size allows
        batch = whole_batch(found.rows, found.padded, s.recognizer_input)
        results = [
            infer(contract.TEXT_RECOGNITION, recognizer_input, batch[i : i + limit], best_path)
            for i in range(0, len(found.rows), limit)
        ]
        best = BestPath(*(np.concatenate(parts) for parts in zip(*results, strict=True)))
        return read_lines(best, found.quads, s.alphabet, s.text_filter, found.rival)

    return read


def served_reader(
    url: str, protocol: str, model: str, parameters: dict[str, str] | None = None
) -> ReadOne:
    """One of the server's entry points; `parameters`: the `ocr` model's request parameters."""
    client = OcrClient(url, protocol)
    if model == contract.OCR_MODEL:
        return lambda data: client.read_many([data], **(parameters or {}))
    return client.read


def compare_entry_points(url: str, images: Sequence[tuple[str, bytes]]) -> list[dict]:
    """Images on which `ocr` and `ensemble_model` return different texts (with the texts)."""
    client = OcrClient(url, "grpc")
    differences = []
    for name, data in images:
        (ocr,) = client.read_many([data])
        ensemble = client.read(data)
        ocr_texts, ensemble_texts = [x.text for x in ocr], [x.text for x in ensemble]
        if ocr_texts != ensemble_texts:
            only_ocr = [t for t in ocr_texts if t not in ensemble_texts]
            only_ensemble = [t for t in ensemble_texts if t not in ocr_texts]
            differences.append({"image": name, "ocr": only_ocr, "ensemble_model": only_ensemble})
    return differences
