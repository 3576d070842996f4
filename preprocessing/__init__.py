"""Pure pre-processing: bytes -> image -> detector tensor. No Triton imports."""
