"""Images the project renders itself, with known text: the demo's page and the bench's rendered
ones (the tests' own rendered pages are in tests/samples.py, built on render)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from PIL import Image, ImageDraw, ImageFont

FONTS = Path("/usr/share/fonts/truetype/dejavu")  # Debian: fonts-dejavu-core and -extra


@dataclass(frozen=True)
class Placed:
    text: str
    xy: tuple[int, int]
    size: int
    angle: float = 0.0  # degrees, counter-clockwise
    face: str | None = None  # a font file in FONTS; None: Pillow's bundled font


@dataclass(frozen=True)
class Sample:
    png: bytes
    lines: tuple[Placed, ...]
    size: tuple[int, int]  # (width, height)
    ink_boxes: tuple[tuple[int, int, int, int], ...]  # per line: left, top, right, bottom

    @property
    def texts(self) -> list[str]:
        return [line.text for line in self.lines]


DEMO_LINES = (
    Placed("Triton OCR demo", (60, 40), 64),
    Placed("Invoice 2024-0917 total 318.40 EUR", (60, 150), 36),
    Placed("small print: serving models on CPU and GPU", (60, 230), 22),
    Placed("rotated line of text", (420, 430), 40, angle=12.0),
)


def font(size: int, face: str | None = None) -> ImageFont.FreeTypeFont:
    """Pillow's bundled scalable font (no system fonts needed), or a DejaVu face."""
    if face is None:
        # given a size, Pillow always loads its FreeType font (the stub says either kind)
        return cast(ImageFont.FreeTypeFont, ImageFont.load_default(size=size))
    path = FONTS / face
    if not path.is_file():
        packages = "fonts-dejavu-core fonts-dejavu-extra"
        raise FileNotFoundError(f"{path} is missing: apt-get install {packages}")
    return ImageFont.truetype(str(path), size)


def render(
    lines: tuple[Placed, ...] = DEMO_LINES,
    size: tuple[int, int] = (1000, 560),
    background: tuple[int, int, int] = (255, 255, 255),
    ink: tuple[int, int, int] = (20, 20, 20),
) -> Sample:
    """Draw `lines` onto a canvas; rotated lines are drawn on their own layer and pasted."""
    canvas = Image.new("RGB", size, background)
    ink_boxes = []
    for line in lines:
        f = font(line.size, line.face)
        left, top, right, bottom = f.getbbox(line.text)
        layer = Image.new("L", (int(right) + 8, int(bottom) + 8), 0)  # whole pixels, typed float
        ImageDraw.Draw(layer).text((4, 4), line.text, font=f, fill=255)
        if line.angle:
            layer = layer.rotate(line.angle, expand=True, resample=Image.Resampling.BICUBIC)
        canvas.paste(Image.new("RGB", layer.size, ink), line.xy, layer)
        drawn = layer.getbbox()
        assert drawn is not None  # a line drawn leaves ink
        left, top, right, bottom = drawn
        ink_boxes.append(
            (left + line.xy[0], top + line.xy[1], right + line.xy[0], bottom + line.xy[1])
        )
    buffer = io.BytesIO()
    canvas.save(buffer, format="PNG")
    return Sample(buffer.getvalue(), lines, size, tuple(ink_boxes))
