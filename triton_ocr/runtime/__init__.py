"""Serving: locating Triton's parts, the server's flags and admin policy, the process lifecycle
(with the restart loop), the stub supervisor, and what the model adapters share (the Triton
side of the model.py files, BLS calls with timeouts, the onnxruntime backend shim).

  distribution.py  the pytriton wheel's tritonserver, backends and stub; the libpython doctor
  flags.py         ServerOptions, free_ports, the admin-key policy, tritonserver's command line
  server.py        running_server, serve_forever (restart on crash), drain, stop
  supervisor.py    reloads a model whose stub process died; processes.py: /proc and /dev/shm
  errors.py        ServerError

Imports nothing from triton_ocr.tools or triton_ocr.cli (tests/test_layers.py checks it).
"""
