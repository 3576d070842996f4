"""Model packs: one model repository, one config variant per pack.

Every model folder holds `config.pbtxt` (the default pack, ppocr-v6: PP-OCRv6 small) and
`configs/<pack>.pbtxt` for the others (ppocr-v6-tiny: PP-OCRv6 tiny, the fast pack; ppocr:
PP-OCRv4 mobile, the lighter pack; east-str);
Triton picks the variant with `--model-config-name=<pack>`. The model.py adapters are shared;
what differs between packs (tensor names, parameters, model file names) is config data.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_PACK = "ppocr-v6"
PACKS = ("ppocr-v6", "ppocr-v6-tiny", "ppocr", "east-str")
# GPU variants: configs/<variant>.pbtxt of the networks (KIND_GPU, TensorRT at FP16, dynamic
# batching of recognition). The default pack's Python steps keep config.pbtxt, as Triton falls
# back to it; the fast pack's link configs/<variant>.pbtxt to their ppocr-v6-tiny.pbtxt, and its
# classifiers to the shared gpu.pbtxt (one --model-config-name names every model's file).
GPU_VARIANTS = {DEFAULT_PACK: "gpu", "ppocr-v6-tiny": "ppocr-v6-tiny-gpu"}


def check_pack(pack: str) -> str:
    if pack not in PACKS:
        raise ValueError(f"unknown pack {pack!r}; choose from {list(PACKS)}")
    return pack


def config_path(repository: Path, model: str, pack: str = DEFAULT_PACK) -> Path:
    """The config file Triton reads for `model` when serving `pack`."""
    variant = repository / model / "configs" / f"{check_pack(pack)}.pbtxt"
    return (
        variant
        if pack != DEFAULT_PACK and variant.is_file()
        else repository / model / "config.pbtxt"
    )


def model_config_name(pack: str, gpu: bool = False) -> str | None:
    """The value of tritonserver's --model-config-name for `pack` (None for the default), or
    for its GPU variant."""
    if gpu:
        if check_pack(pack) not in GPU_VARIANTS:
            prepared = " and ".join(GPU_VARIANTS)
            raise ValueError(f"a GPU variant is prepared for {prepared} only, not {pack}")
        return GPU_VARIANTS[pack]
    return None if check_pack(pack) == DEFAULT_PACK else pack
