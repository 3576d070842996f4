"""The host side of serving, outside Triton's stub processes: locating Triton's parts, the
server's flags and admin policy, the models laid out for the cores, the process lifecycle (with
the restart loop) and the stub supervisor. What runs inside the stubs is triton_ocr.runtime.

  distribution.py  the pytriton wheel's tritonserver, backends and stub; the libpython doctor
  flags.py         ServerOptions, free_ports, the admin-key policy, tritonserver's command line
  layout.py        instances and threads for the cores found; which CPU runtime pays
  server.py        running_server, serve_forever (restart on crash), drain, stop
  supervisor.py    reloads a model whose stub process died; processes.py: /proc and /dev/shm
  errors.py        ServerError

Imports nothing from triton_ocr.tools or triton_ocr.cli (tests/test_layers.py checks it).
"""
