"""Look-alike names: a skeleton that maps characters which look alike to one of them.

Not Unicode's whole confusables table: NFKC (full-width and mathematical letters), the Cyrillic
and Greek letters that look like Latin ones, and the digits that pass for letters. Enough for
tool names, which model APIs limit to `[A-Za-z0-9_-]` anyway.
"""

from __future__ import annotations

import unicodedata

_LOOKALIKE = str.maketrans(
    {
        # Cyrillic
        "\u0430": "a", "\u0432": "b", "\u0441": "c", "\u0501": "d", "\u0435": "e",
        "\u0451": "e", "\u04bb": "h", "\u0456": "i", "\u0458": "j", "\u043a": "k",
        "\u04cf": "l", "\u043c": "m", "\u043d": "h", "\u043e": "o", "\u0440": "p",
        "\u051b": "q", "\u0455": "s", "\u0442": "t", "\u0443": "y", "\u0445": "x",
        "\u051d": "w", "\u04af": "y",
        # Greek
        "\u03b1": "a", "\u03b2": "b", "\u03b5": "e", "\u03b7": "n", "\u03b9": "i",
        "\u03ba": "k", "\u03bd": "v", "\u03bf": "o", "\u03c1": "p", "\u03c4": "t",
        "\u03c5": "u", "\u03c7": "x", "\u03c9": "w",
        # digits and signs that pass for letters; hyphens and dashes
        "0": "o", "1": "l", "|": "l", "\u2010": "-", "\u2011": "-", "\u2013": "-", "\u2014": "-",
    }
)  # fmt: skip


def skeleton(name: str) -> str:
    """What `name` looks like: case, look-alike letters and '-'/'_' folded together."""
    folded = unicodedata.normalize("NFKC", name).casefold().translate(_LOOKALIKE)
    return folded.replace("i", "l").replace("rn", "m").replace("-", "_")


def plain(name: str) -> str:
    """Only case and '-'/'_' folded (names that differ only so are not look-alikes)."""
    return name.casefold().replace("-", "_")


def lookalike_chars(name: str) -> str:
    """The characters of `name` outside ASCII that pass for ASCII ones ('' if none)."""
    return "".join(ch for ch in dict.fromkeys(name) if not ch.isascii() and skeleton(ch).isascii())


def lookalikes(name: str, others: list[str]) -> list[str]:
    """The names in `others` that look like `name` without being it (nor a mere variant in
    case or '-'/'_', which the lint's C103 reports)."""
    mine = skeleton(name)
    return [o for o in others if plain(o) != plain(name) and skeleton(o) == mine]
