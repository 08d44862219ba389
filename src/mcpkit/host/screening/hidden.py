"""Hidden characters: what renders as nothing (or reorders what does) in text a model reads.

Removed: Unicode tag characters (U+E0000-E007F, "ASCII smuggling"; kept only as an emoji's
subdivision flag, U+1F3F4 then a few lowercase tags and the cancel tag), every other format
character (category Cf: bidirectional overrides and isolates, zero-width space, word joiner,
byte order mark, soft hyphen, ...), control characters other than tab and line ends, a run of
variation selectors after the first, and the few invisible letters outside Cf (Hangul fillers).
Soft hyphens, zero-width spaces and LRM/RLM marks are web-page noise: removed, and `Removed.quiet`
says when nothing else was (a result is then cleaned without a warning).

Zero-width joiner and non-joiner (U+200D, U+200C) are kept where a script or an emoji needs
them: between two emoji (a ZWJ sequence such as a family), or between letters and marks of a
script that joins (Arabic and Persian, Syriac, the Indic scripts, ...); elsewhere removed.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass

ZWJ, ZWNJ = "\u200d", "\u200c"
_TAGS = range(0xE0000, 0xE0080)
_CANCEL_TAG = "\U000e007f"
_BLACK_FLAG = "\U0001f3f4"
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: What web pages are full of and nobody hides orders in: soft hyphens, zero-width spaces,
#: left-to-right/right-to-left/Arabic letter marks (they set no run's direction, unlike the
#: overrides and isolates above). Removed too, but quietly from results (`Removed.quiet`).
_NOISE = frozenset("\u00ad\u200b\u200e\u200f\u061c")
#: Invisible letters and marks outside category Cf (default-ignorable code points).
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
#: Scripts whose letters join (or not) by ZWJ/ZWNJ: the first word of a character's name.
_JOINING_SCRIPTS = frozenset(
    ("ARABIC", "SYRIAC", "NKO", "MONGOLIAN", "DEVANAGARI", "BENGALI", "GURMUKHI", "GUJARATI",
     "ORIYA", "TAMIL", "TELUGU", "KANNADA", "MALAYALAM", "SINHALA", "MYANMAR", "KHMER",
     "TIBETAN", "LAO", "THAI", "HEBREW", "MANDAIC")
)  # fmt: skip
_KINDS = {
    "tag": "tag characters",
    "bidi": "bidirectional controls",
    "format": "invisible format characters",
    "noise": "soft hyphens, zero-width spaces or direction marks",
    "control": "control characters",
    "joiner": "misplaced zero-width joiners",
    "selector": "extra variation selectors",
    "invisible": "invisible fillers",
}


@dataclass(frozen=True, slots=True)
class Removed:
    """What `strip_hidden` took out of one string: a count per kind (`tag`, `bidi`, ...),
    and the text the tag characters spelled (their ASCII twins), if any."""

    kinds: tuple[tuple[str, int], ...]
    tag_text: str = ""

    @property
    def quiet(self) -> bool:
        """Only web-page noise was removed (soft hyphens, zero-width spaces, LRM/RLM): worth
        no warning on a result."""
        return all(kind == "noise" for kind, _ in self.kinds)

    @property
    def total(self) -> int:
        return sum(n for _, n in self.kinds)

    def describe(self) -> str:
        """One phrase: "3 bidirectional controls, 12 tag characters (spelling 'ignore...')"."""
        parts = [f"{n} {_KINDS[k]}" for k, n in self.kinds]
        text = ", ".join(parts)
        if self.tag_text:
            shown = self.tag_text if len(self.tag_text) <= 60 else self.tag_text[:57] + "..."
            text += f" (the tags spell {shown!r})"
        return text


def strip_hidden(text: str) -> tuple[str, Removed | None]:
    """`text` without its hidden characters, and what was removed (None: nothing)."""
    if text.isascii() and text.isprintable():
        return text, None  # the common case, at once
    if not any(_suspect(ch) for ch in set(text)):
        return text, None  # a long text with nothing to remove: one look per distinct character
    kept: list[str] = []
    counts: Counter[str] = Counter()
    spelled: list[str] = []
    flag_tags = _flag_tag_positions(text)
    for i, ch in enumerate(text):
        kind = None if i in flag_tags else _kind(text, i, kept)
        if kind is None:
            kept.append(ch)
            continue
        counts[kind] += 1
        if kind == "tag" and 0xE0020 <= ord(ch) <= 0xE007E:
            spelled.append(chr(ord(ch) - 0xE0000))
    if not counts:
        return text, None
    return "".join(kept), Removed(tuple(sorted(counts.items())), "".join(spelled).strip())


def _kind(text: str, i: int, kept: list[str]) -> str | None:
    ch = text[i]
    code = ord(ch)
    if code in _TAGS:
        return "tag"
    if ch in _BIDI:
        return "bidi"
    if ch in _NOISE:
        return "noise"
    if ch in (ZWJ, ZWNJ):
        return None if _joins(kept, text[i + 1 : i + 2], ch) else "joiner"
    if ch in _INVISIBLE:
        return "invisible"
    if _is_selector(code):
        return None if _selects(kept, code) else "selector"
    category = unicodedata.category(ch)
    if category == "Cf":
        return "format"
    if category == "Cc" and ch not in "\t\n\r":
        return "control"
    return None


def _suspect(ch: str) -> bool:
    code = ord(ch)
    if code < 0x7F:
        return code < 0x20 and ch not in "\t\n\r"
    return (
        code in _TAGS
        or ch in _BIDI
        or ch in _NOISE
        or ch in (ZWJ, ZWNJ)
        or ch in _INVISIBLE
        or _is_selector(code)
        or unicodedata.category(ch) in ("Cf", "Cc")
    )


def _is_selector(code: int) -> bool:
    return 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF


def _selects(kept: list[str], code: int) -> bool:
    """A variation selector right after the character it varies (one, never a run); the
    supplementary ones only after an ideograph."""
    if not kept or _is_selector(ord(kept[-1])) or unicodedata.category(kept[-1])[0] in "CZ":
        return False
    return code < 0xE0100 or unicodedata.name(kept[-1], "").startswith("CJK")


def _joins(kept: list[str], after: str, joiner: str) -> bool:
    """Between two emoji (ZWJ only), or between two letters/marks of a joining script."""
    before = _base(kept)
    if not before or not after:
        return False
    if joiner == ZWJ and _emoji(before) and _emoji(after):
        return True
    return _script_letter(before) and _script_letter(after)


def _base(kept: list[str]) -> str:
    """The last kept character that is not a variation selector or a skin-tone modifier."""
    for ch in reversed(kept):
        if not (_is_selector(ord(ch)) or 0x1F3FB <= ord(ch) <= 0x1F3FF):
            return ch
    return ""


def _emoji(ch: str) -> bool:
    return unicodedata.category(ch) == "So" or 0x1F000 <= ord(ch) <= 0x1FAFF


def _script_letter(ch: str) -> bool:
    if unicodedata.category(ch)[0] not in "LM":
        return False
    return unicodedata.name(ch, "").split(" ", 1)[0] in _JOINING_SCRIPTS


def _flag_tag_positions(text: str) -> set[int]:
    """Positions of the tags of emoji subdivision flags (U+1F3F4, 2-6 tags of lowercase
    letters or digits, the cancel tag): the one legitimate use of tag characters."""
    out: set[int] = set()
    start = text.find(_BLACK_FLAG)
    while start != -1:
        j = start + 1
        while j < len(text) and j - start <= 7 and _flag_tag(text[j]):
            j += 1
        if 3 <= j - start <= 7 and text[j : j + 1] == _CANCEL_TAG:
            out.update(range(start + 1, j + 1))
        start = text.find(_BLACK_FLAG, start + 1)
    return out


def _flag_tag(ch: str) -> bool:
    code = ord(ch) - 0xE0000
    return 0x30 <= code <= 0x39 or 0x61 <= code <= 0x7A
