"""`triton-ocr bench`: every way to run the same OCR, measured side by side in one run.

Rows (same images, interleaved rounds so drift hits all rows alike):
  A  RapidOCR in-process: the release the pack's models come from, with its default settings
     and angle classifier (triton_ocr.tools.reference) -- what users would otherwise do: pip
     install and call it;
  A' the same release with Det, Cls and Rec on OpenVINO (`engine_type: openvino`), the rest its
     defaults -- what a speed-minded RapidOCR user sets; the stronger of A and A' is the peer
     the headline compares with (RapidOCR 3.x packs only);
  B  this project's pipeline + onnxruntime in-process, no server            -- the compute floor;
     A, A' and B each in a process of their own, started fresh (worker.py), and row A once more
     alone before the server starts and after it stops: the bench says whether A matched;
  C  the Triton tutorial's Part-1 design: pre/post-processing in the client, two network calls
     (text_detection, then text_recognition with all crops padded to the widest);
  then `ensemble_model` and `ocr` over HTTP and gRPC at several concurrencies;
  then the REST gateway's cost (gateway.py): `ocr` over gRPC against the same requests through
  `triton-ocr gateway`, at concurrency 4 (`--only gateway`: that section alone).
Every reader reads all the images once, untimed, before its timed rounds (workload.warm_up): a
first pass compiles OpenVINO's kernels for each new page size, in RapidOCR and the server alike.
Prints images/s, p50/p95 latency, ratios to A, A' and B and the share of the machine's CPU other
processes took during each row, under the CPU's name and flags; writes JSON and a PNG chart.
"""
