"""Text comparison as ../shared/eval/README.md describes it: NFKC, case-insensitive."""

import re
import unicodedata


def normalize(text: str) -> str:
    """NFKC, lower case, no punctuation or spaces (PP-OCR often drops spaces in Latin text)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"[\W_]+", "", text)


def tokens(text: str) -> list[str]:
    return [t for t in (normalize(w) for w in unicodedata.normalize("NFKC", text).split()) if t]
