"""The perf-analyzer command's pieces, without a server or the binary: the --input-data files,
the command line, the CSV reader and one run with a stand-in binary."""

import base64
import json
import struct

import pytest

from tests.conftest import REPOSITORY
from triton_ocr import contract
from triton_ocr.config.repository import Repository
from triton_ocr.tools.perf_analyzer import (
    PerfRow,
    input_data,
    parse_csv,
    perf_analyzer_command,
    run_model,
)

IMAGES = [b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3, b"\xff\xd8\xff\xe0" + b"\x00\xfe" * 50]

# perf_analyzer 2.41's -f CSV over gRPC (server statistics on), rows sorted by throughput, times
# in microseconds (client repo r23.12, src/c++/perf_analyzer/report_writer.cc)
CSV = (
    "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
    "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,"
    "p50 latency,p90 latency,p95 latency,p99 latency\n"
    "1,1.1,95,410,12,30,905000,20,15,902000,1010000,1040000,1100000\n"
    "2,1.8,96,420,15,31,1080000,21,16,1105000,1300000,1350000,1420000\n"
    "4,1.9,97,430,1020000,32,1070000,22,17,2080000,2400000,2450000,2600000\n"
    "3,1.85,98,425,520000,33,1075000,23,18,1600000,1900000,1950000,2050000\n"
)
# the same without server statistics (the server answered none), as perf_analyzer 2.41 wrote it
CSV_CLIENT_ONLY = (
    "Concurrency,Inferences/Second,Client Send,Client Recv,p50 latency,p90 latency,p95 latency,"
    "p99 latency\n"
    "1,74.4363,50,7,12951,15281,16432,17916\n"
    "2,151.065,30,5,12649,15119,17153,19915\n"
)


def decoded(entry: dict) -> bytes:
    return base64.b64decode(entry["content"]["b64"])


@pytest.mark.parametrize(("max_batch_size", "batch"), [(1, []), (0, [1])])
def test_ensemble_input_data_sends_each_image_as_uint8_bytes(max_batch_size, batch):
    data = input_data(contract.ENSEMBLE_MODEL, IMAGES, max_batch_size)["data"]
    assert len(data) == len(IMAGES)
    for entry, image in zip(data, IMAGES, strict=True):
        assert list(entry) == [contract.INPUT_IMAGE]
        tensor = entry[contract.INPUT_IMAGE]
        assert tensor["shape"] == [*batch, len(image)]
        assert decoded(tensor) == image


def test_ocr_input_data_sends_one_serialized_element_per_request():
    data = input_data(contract.OCR_MODEL, IMAGES, 1)["data"]
    assert len(data) == len(IMAGES)
    for entry, image in zip(data, IMAGES, strict=True):
        assert list(entry) == [contract.OCR_INPUT_IMAGES]
        tensor = entry[contract.OCR_INPUT_IMAGES]
        assert tensor["shape"] == [1]
        raw = decoded(tensor)  # a BYTES tensor's raw contents: 4-byte LE length, then the bytes
        assert struct.unpack("<I", raw[:4]) == (len(image),) and raw[4:] == image


def test_the_input_data_follows_the_repository_configs():
    """Both entry points batch (max_batch_size 1): perf_analyzer adds the batch dimension."""
    repository = Repository(REPOSITORY)
    for model in contract.ENTRY_POINTS:
        data = input_data(model, IMAGES[:1], repository.config(model).max_batch_size)
        ((tensor,),) = (entry.values() for entry in data["data"])
        expected = [len(IMAGES[0])] if model == contract.ENSEMBLE_MODEL else [1]
        assert tensor["shape"] == expected
    with pytest.raises(ValueError):
        input_data("text_detection", IMAGES, 0)
    with pytest.raises(ValueError, match="max_batch_size 1"):
        input_data(contract.OCR_MODEL, IMAGES, 0)


def test_the_command_names_the_model_protocol_url_and_data(tmp_path):
    data = tmp_path / "ocr.input.json"
    command = perf_analyzer_command(tmp_path / "pa", "ocr", "127.0.0.1:8001", data, "ocr.csv")
    assert command[0] == str(tmp_path / "pa")
    pairs = dict(zip(command[1::2], command[2::2], strict=True))
    assert pairs["-m"] == "ocr" and pairs["-i"] == "grpc" and pairs["-u"] == "127.0.0.1:8001"
    assert pairs["--input-data"] == str(data) and pairs["-f"] == "ocr.csv"
    assert pairs["--concurrency-range"] == "1:4"


def test_the_csv_gives_rows_by_concurrency_in_milliseconds():
    rows = parse_csv(CSV)
    assert [r.concurrency for r in rows] == [1, 2, 3, 4]
    assert rows[0] == PerfRow(1, 1.1, 902.0, 1010.0, 1100.0)
    assert rows[3].throughput == 1.9 and rows[3].p99_ms == 2600.0
    assert parse_csv(CSV_CLIENT_ONLY) == [
        PerfRow(1, 74.4363, 12.951, 15.281, 17.916),
        PerfRow(2, 151.065, 12.649, 15.119, 19.915),
    ]
    with pytest.raises(ValueError, match="p99 latency"):
        parse_csv("Concurrency,Inferences/Second,p50 latency,p90 latency\n1,1.0,5,6\n")


def test_a_run_writes_the_data_and_reads_the_csv_in_the_output_folder(tmp_path):
    """A stand-in binary that writes the CSV named by -f into its working folder."""
    fake = tmp_path / "perf_analyzer"
    fake.write_text(
        "#!/bin/sh\n"
        'while [ $# -gt 0 ]; do [ "$1" = -f ] && out=$2; shift; done\n'
        f"printf '%s' '{CSV}' > \"$out\"\n"
        "echo measured\n"
    )
    fake.chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    run = run_model(fake, contract.OCR_MODEL, "127.0.0.1:1", IMAGES, 1, out)
    assert run.returncode == 0 and [r.concurrency for r in run.rows] == [1, 2, 3, 4]
    assert (out / "ocr.csv").is_file() and "measured" in (out / "ocr.log").read_text()
    written = json.loads((out / "ocr.input.json").read_text())
    assert written == input_data(contract.OCR_MODEL, IMAGES, 1)
    assert str((out / "ocr.input.json").resolve()) in run.command
