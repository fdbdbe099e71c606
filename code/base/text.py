"""Words: the one word splitter the lab uses wherever text is compared word by word.

The offline embedding, the offline chat model and the extensions that look for shared
words all split text the same way, so "prefers", "preferred" and "prefer" meet
everywhere, and "which API should I default to?" is about "api" and "default".

    tokenize("Eric prefers Groq for the default API")
        -> ['eric', 'prefer', 'groq', 'default', 'api']

Deliberately left out: real linguistics. The stemmer is a handful of suffix rules, and
the stop words are a fixed English list.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Words that carry no topic: "which API should I default to?" is about "api" and "default".
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves let lets i'm i've i'd i'll it's that's don't""".split()
)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")  # letters and digits of any alphabet


def words(text: str) -> list[str]:
    """Every word of `text`, lower-cased: letters and digits of any alphabet, with an
    apostrophe inside a word kept ("don't"), punctuation and emoji dropped.

    words("Ok, that's GREAT 👍") -> ['ok', "that's", 'great']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}: {text!r}")
    return _WORD.findall(text.lower().replace("\u2019", "'"))  # curly apostrophe too


def tokenize(text: str) -> list[str]:
    """Content words of `text`, lower-cased and crudely stemmed.

    tokenize("Eric prefers Groq for the default API")
        -> ['eric', 'prefer', 'groq', 'default', 'api']
    """
    words_ = words(text)
    content = [w for w in words_ if w not in STOP_WORDS]
    return [_stem(w) for w in (content or words_)]  # only stop words ("what is it?"): keep them


def _stem(word: str) -> str:
    """A deliberately tiny stemmer, so that 'prefers', 'preferred' and 'prefer' meet."""
    word = word.split("'")[0]  # "eric's" -> "eric"
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("s", "")):
        stem = word[: -len(suffix)] + keep
        if word.endswith(suffix) and len(stem) >= 3 and not word.endswith("ss"):
            if keep == "" and len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "ls":
                stem = stem[:-1]  # "preferr" -> "prefer", "debugg" -> "debug"
            word = stem
            break
    return word[:-1] if len(word) >= 5 and word.endswith("e") else word  # "decide" ~ "decid"


def without_words(text: str, drop: Callable[[str], bool]) -> str:
    """`text` with every content word whose stem `drop` names cut out, or `text` itself
    when no content word would be left.

    without_words("When did Caroline's sister visit?", lambda stem: stem == "carolin")
        -> 'When did sister visit?'        ("carolin" is tokenize's stem of "Caroline")
    """
    lowered = text.lower().replace("\u2019", "'")  # same length: positions stay the text's
    pieces, start, kept = [], 0, False
    for match in _WORD.finditer(lowered):
        word = match.group()
        if word in STOP_WORDS:
            continue
        if drop(_stem(word)):
            pieces.append(text[start : match.start()])
            start = match.end()
        else:
            kept = True
    if not kept or start == 0:
        return text
    pieces.append(text[start:])
    return re.sub(r"\s+([?.!,;:])", r"\1", " ".join("".join(pieces).split()))
