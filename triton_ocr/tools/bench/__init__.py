"""`triton-ocr bench`: every way to run the same OCR, measured side by side in one run.

Rows (same images, interleaved rounds so drift hits all rows alike):
  A  RapidOCR in-process: the release the pack's models come from, with its default settings
     and angle classifier (triton_ocr.tools.reference) -- what users would otherwise do: pip
     install and call it;
  B  this project's pipeline + onnxruntime in-process, no server            -- the compute floor;
     A and B each in a process of their own, started fresh (worker.py), and row A once more
     alone before the server starts: the bench says whether A matched that within 5%;
  C  the Triton tutorial's Part-1 design: pre/post-processing in the client, two network calls
     (text_detection, then text_recognition with all crops padded to the widest);
  then `ensemble_model` and `ocr` over HTTP and gRPC at several concurrencies;
  then the REST gateway's cost (gateway.py): `ocr` over gRPC against the same requests through
  `triton-ocr gateway`, at concurrency 4 (`--only gateway`: that section alone).
Prints images/s, p50/p95 latency and ratios to A and B; writes JSON and a PNG chart.
"""
