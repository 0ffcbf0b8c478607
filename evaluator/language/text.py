"""Surface features of one instruction: characters, words and verbs, in any script.

Chinese, Japanese and Korean are written without spaces between words, so a CJK
character counts as one character and as one word unit (the character-level convention
of Chinese corpora); Latin, Cyrillic and other spaced scripts count words as runs of
letters and digits. Verbs are counted with a small shipped lexicon
(``resources/language/verbs_*.txt``), not a parser: good enough to compare suites, and
documented as such in docs/language.md.

>>> features("the words are too small")
TextFeatures(chars=23, words=5, verbs=0)
>>> features("Open Settings and turn on Wi-Fi").verbs
2
>>> features("屏幕太暗了")
TextFeatures(chars=5, words=5, verbs=0)
>>> features("帮我打电话给女儿").verbs
2
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from importlib import resources

# Han, kana, Hangul syllables and the CJK compatibility blocks: one character, one word.
_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # Han extension A
    "\u4e00-\u9fff"  # Han
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # Han compatibility
    "\U00020000-\U0002fa1f"  # Han extensions B-F and compatibility supplement
)
_CJK_CHAR = re.compile(f"[{_CJK}]")
_SPACED_WORD = re.compile(rf"[^\W_{_CJK}]+(?:['’\-][^\W_{_CJK}]+)*")
_CJK_RUN = re.compile(f"[{_CJK}]+")


@dataclass(frozen=True, slots=True)
class TextFeatures:
    chars: int
    words: int
    verbs: int


def normalize(text: str) -> str:
    """NFKC with runs of white space folded to one space and the ends trimmed."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def char_count(text: str) -> int:
    """Characters of the normalized text, spaces between words included."""
    return len(normalize(text))


def words(text: str) -> list[str]:
    """Word units: spaced-script words, and single CJK characters, in text order."""
    out: list[str] = []
    for token in re.finditer(rf"{_SPACED_WORD.pattern}|[{_CJK}]", normalize(text)):
        out.append(token.group(0))
    return out


def verb_count(text: str) -> int:
    """Verbs found by the lexicons: spaced words by inflected form, CJK by longest match."""
    text = normalize(text)
    english = _english_verbs()
    count = sum(1 for w in _SPACED_WORD.findall(text) if w.lower() in english)
    chinese = _chinese_verbs()
    longest = max((len(v) for v in chinese), default=0)
    for run in _CJK_RUN.findall(text):
        i = 0
        while i < len(run):
            for size in range(min(longest, len(run) - i), 0, -1):
                if run[i : i + size] in chinese:
                    count += 1
                    i += size
                    break
            else:
                i += 1
    return count


def features(text: str) -> TextFeatures:
    return TextFeatures(char_count(text), len(words(text)), verb_count(text))


def is_cjk(char: str) -> bool:
    return bool(_CJK_CHAR.fullmatch(char))


def _lexicon(name: str) -> list[str]:
    text = resources.files("resources").joinpath("language", name).read_text(encoding="utf-8")
    return [
        word
        for line in text.splitlines()
        if not line.lstrip().startswith("#")
        for word in line.split()
    ]


@cache
def _english_verbs() -> frozenset[str]:
    """Base forms from the lexicon with their regular inflections; listed irregular forms
    (``went``, ``made``) are lexicon entries of their own."""
    forms: set[str] = set()
    for base in _lexicon("verbs_en.txt"):
        forms.update(_inflections(base.lower()))
    return frozenset(forms)


def _inflections(base: str) -> set[str]:
    stem_e = base[:-1] if base.endswith("e") and not base.endswith("ee") else base
    doubled = (
        base + base[-1]
        if re.fullmatch(r"[^aeiou]*[aeiou][bdgklmnprt]", base) and len(base) <= 4
        else base
    )
    if base.endswith("y") and len(base) > 2 and base[-2] not in "aeiou":
        third, past = base[:-1] + "ies", base[:-1] + "ied"
    elif base.endswith(("s", "sh", "ch", "x", "z", "o")):
        third, past = base + "es", stem_e + "ed"
    else:
        third, past = base + "s", (stem_e if base.endswith("e") else doubled) + "ed"
    gerund = (stem_e if base.endswith("e") else doubled) + "ing"
    return {base, third, past, gerund}


@cache
def _chinese_verbs() -> frozenset[str]:
    return frozenset(_lexicon("verbs_zh.txt"))
