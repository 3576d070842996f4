"""What runs inside Triton's stub processes: what the model adapters share (the Triton side of
the model.py files, BLS calls with timeouts, the admission gate, a request's pages read with
deadlines) and the Python-based backends that stand in for the container's C++ ones. The host
side (starting and supervising the server) is triton_ocr.serving.

  adapter.py   tensors in and out, BLS calls, counters, one error policy
  gate.py      the ensemble's admission gate; timeouts.py: deadlines for awaited work
  pages.py     a request's pages decoded in a thread, each within its timeout
  backends/    the onnxruntime and openvino stand-ins (engines.py, shim.py)

Imports nothing from triton_ocr.tools, triton_ocr.serving or triton_ocr.cli
(tests/test_layers.py checks it).
"""
