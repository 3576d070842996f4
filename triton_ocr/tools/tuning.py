"""Measure serving settings side by side: `triton-ocr tune` (a benchmark, not a test).

Each variant is the default ppocr repository with text_recognition's dynamic batching, the
recognizer width bucket, the `ocr` model's images in flight and the orientation classifier's use
changed; every variant gets its
own server, in interleaved passes, and the same workload: `ocr` over gRPC at several
concurrencies and images per request. Texts are compared with the first variant's, since
padding can change what the recognizer reads.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from triton_ocr import contract
from triton_ocr.client import OcrClient
from triton_ocr.config.packs import DEFAULT_PACK
from triton_ocr.config.repository import Repository
from triton_ocr.tools.workload import Row, bench_images, run_row


@dataclass(frozen=True)
class Variant:
    bucket: int  # detection_postprocessing's rec_width_bucket
    delay_us: int | None  # text_recognition's max_queue_delay_microseconds; None: no batcher
    in_flight: int  # the ocr model's images_in_flight
    orientation: bool = True  # grouped_recognition's classify_orientation

    @property
    def name(self) -> str:
        batcher = "no batcher" if self.delay_us is None else f"batcher delay {self.delay_us} us"
        classifier = "" if self.orientation else ", no orientation classifier"
        return f"bucket {self.bucket}, {batcher}, {self.in_flight} in flight{classifier}"

    @staticmethod
    def parse(text: str) -> Variant:
        """`BUCKET:DELAY_US:IN_FLIGHT[:nocls]`, DELAY_US `none` for no batcher, e.g. `64:0:2`;
        `nocls` turns the orientation classifier off."""
        bucket, delay, in_flight, *rest = text.split(":")
        if rest not in ([], ["nocls"]):
            raise ValueError(f"variant {text!r}: the fourth field can only be 'nocls'")
        delay_us = None if delay == "none" else int(delay)
        return Variant(int(bucket), delay_us, int(in_flight), not rest)


def parse_load(text: str) -> tuple[int, int]:
    """`CONCURRENCYxIMAGES_PER_REQUEST`, e.g. `4x1`."""
    try:
        concurrency, per_request = (int(x) for x in text.split("x"))
    except ValueError:
        raise ValueError(f"load {text!r} is not CONCURRENCYxIMAGES_PER_REQUEST") from None
    return concurrency, per_request


@dataclass(frozen=True)
class TuneOptions:
    repository: Repository  # the pack whose settings vary (its models exported)
    out_dir: Path  # tuning.json
    shared_eval: Path | None  # labelled real images added to the rendered ones, if present
    variants: Sequence[Variant]  # the first is the reference the others' texts are compared with
    loads: Sequence[tuple[int, int]]  # (concurrency, images per request) of `ocr` over gRPC
    passes: int  # interleaved passes over all variants


def write_variant(source: Path, target: Path, variant: Variant, pack: str = DEFAULT_PACK) -> Path:
    """A copy of the repository with the variant's settings in the pack's configs."""
    copy = Repository(source, pack).copy_to(target)
    post = copy.config(contract.DETECTION_POSTPROCESSING)
    post.parameters["rec_width_bucket"].string_value = str(variant.bucket)
    recognizer = copy.config(contract.TEXT_RECOGNITION)
    if variant.delay_us is None:
        recognizer.ClearField("dynamic_batching")
    else:
        recognizer.dynamic_batching.max_queue_delay_microseconds = variant.delay_us
    ocr = copy.config(contract.OCR_MODEL)
    ocr.parameters["images_in_flight"].string_value = str(variant.in_flight)
    grouped = copy.config(contract.GROUPED_RECOGNITION)
    grouped.parameters["classify_orientation"].string_value = str(variant.orientation).lower()
    edited = (
        (contract.DETECTION_POSTPROCESSING, post),
        (contract.TEXT_RECOGNITION, recognizer),
        (contract.OCR_MODEL, ocr),
        (contract.GROUPED_RECOGNITION, grouped),
    )
    for model, config in edited:
        copy.write_config(model, config)
    return target


def run_load(url: str, images: Sequence[bytes], per_request: int, row: Row) -> None:
    """Every image once, `per_request` images per `ocr` request, `row.concurrency` in flight."""
    chunks = [list(images[i : i + per_request]) for i in range(0, len(images), per_request)]
    clients: list[OcrClient] = []

    def reader():
        clients.append(OcrClient(url, "grpc"))
        return clients[-1].read_many

    run_row(row, reader, chunks, count=len(images))
    for client in clients:
        client.close()


def texts_per_image(url: str, images: Sequence[bytes]) -> list[list[str]]:
    with OcrClient(url, "grpc") as client:
        return [[line.text for line in client.read_many([data])[0]] for data in images]


def run_tuning(options: TuneOptions) -> dict:
    """One server per variant, interleaved passes of every load; writes and prints the table."""
    from triton_ocr.serving.flags import ServerOptions, free_ports
    from triton_ocr.serving.server import running_server

    pack = options.repository.pack
    variants, loads, passes = options.variants, options.loads, options.passes
    images = [data for _, data in bench_images(options.shared_eval)]
    rows = {
        (v, load): Row(f"{v.name} c={load[0]} x{load[1]}", load[0])
        for v in variants
        for load in loads
    }
    texts: dict[Variant, list[list[str]]] = {}
    with tempfile.TemporaryDirectory(prefix="triton-ocr-tune-") as tmp:
        for variant_index, variant in enumerate(variants):
            write_variant(options.repository.path, Path(tmp) / f"v{variant_index}", variant, pack)
        for pass_index in range(passes):
            for variant_index, variant in enumerate(variants):
                http, grpc, metrics = free_ports(3)
                repo = Path(tmp) / f"v{variant_index}"
                opts = ServerOptions(repo, "127.0.0.1", http, grpc, metrics, pack=pack)
                url = f"127.0.0.1:{grpc}"
                with running_server(opts, log_file=Path(tmp) / f"v{variant_index}.log"):
                    if variant not in texts:  # also warms every model up
                        texts[variant] = texts_per_image(url, images)
                    else:
                        texts_per_image(url, images[:1])
                    for load in loads:
                        row = rows[variant, load]
                        run_load(url, images, load[1], row)
                        print(
                            f"pass {pass_index + 1}/{passes} {row.name}: "
                            f"{row.throughput:.2f} img/s",
                            file=sys.stderr,
                        )
    base = texts[variants[0]]
    result = {
        "command": " ".join(sys.argv),
        "images": len(images),
        "passes": passes,
        "variants": [
            {
                "variant": v.name,
                "bucket": v.bucket,
                "delay_us": v.delay_us,
                "images_in_flight": v.in_flight,
                "classify_orientation": v.orientation,
                "images_differing_from_first_variant": sum(
                    a != b for a, b in zip(texts[v], base, strict=True)
                ),
                "loads": [
                    {
                        "concurrency": c,
                        "images_per_request": k,
                        "images_per_s": round(rows[v, (c, k)].throughput, 3),
                        "p50_ms": round(rows[v, (c, k)].percentile(50) * 1000, 1),
                    }
                    for c, k in loads
                ],
            }
            for v in variants
        ],
    }
    options.out_dir.mkdir(parents=True, exist_ok=True)
    (options.out_dir / "tuning.json").write_text(json.dumps(result, indent=2))
    print_tuning(result)
    return result


def print_tuning(result: dict) -> None:
    loads = result["variants"][0]["loads"]
    header = " | ".join(f"c={x['concurrency']} x{x['images_per_request']}" for x in loads)
    print(f"| variant | {header} | images read differently |")
    print("|---|" + "---:|" * (len(loads) + 1))
    for v in result["variants"]:
        cells = " | ".join(f"{x['images_per_s']:.2f}" for x in v["loads"])
        print(f"| {v['variant']} | {cells} | {v['images_differing_from_first_variant']} |")
