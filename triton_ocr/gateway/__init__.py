"""The REST gateway (`triton-ocr gateway`): `POST /v1/ocr` for curl and browsers, a client of
the service's `ocr` entry point over gRPC (app.py; uploads.py reads request bodies)."""
