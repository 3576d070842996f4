"""The real images of ../shared/eval through the service: output and a recall figure."""

from __future__ import annotations

import json

from triton_ocr.client import OcrClient

from .text_match import normalize


def test_eval_images_recall(server, shared_eval):
    manifest = json.loads((shared_eval / "manifest.json").read_text())
    found = total = 0
    rows = []
    with OcrClient(server.grpc, "grpc") as client:
        for entry in manifest:
            lines = client.read(shared_eval / entry["file"])
            output = normalize("".join(line.text for line in lines))
            care = [
                t
                for t, c in zip(
                    entry["text"], entry.get("care") or [True] * len(entry["text"]), strict=True
                )
                if c and t != "###"
            ]
            hits = sum(1 for t in care if normalize(t) and normalize(t) in output)
            found, total = found + hits, total + len(care)
            rows.append((entry["file"], entry["kind"], hits, len(care), len(lines)))
            if care and entry["kind"] != "word":
                assert lines, f"{entry['file']}: no text found"
    print(f"\n{'image':55} {'kind':9} found/labelled  lines")
    for file, kind, hits, n, count in rows:
        print(f"{file:55} {kind:9} {hits:>5}/{n:<8} {count:>5}")
    print(f"string recall on ../shared/eval: {found}/{total} = {found / total:.3f}")
    assert found / total > 0.5
