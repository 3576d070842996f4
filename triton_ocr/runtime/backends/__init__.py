"""The network backends the pytriton wheel lacks, in Python: engines.py (ONNX Runtime and
OpenVINO, configured as the C++ backends are; argmax.py: ArgMax as OpenVINO runs it fast),
shim.py (Triton's side), and one `<backend>/model.py` per backend name, copied into the
server's backend directory."""
