"""Accuracy evaluation: labelled sets, metrics, and the `triton-ocr eval` runner."""
