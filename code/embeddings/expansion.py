"""Query-side term expansion: the words a memory answering a personal question would use.

A question about a personal fact often names the fact by its kind ("Which city is my
home?", "What do I do for a living?") where the memory that answers it says the fact
itself ("I live in Lisbon with my partner", "I work as a pharmacist"). No word is shared,
so the hybrid's words half (embeddings/hybrid.py) finds nothing, and MiniLM alone
decides: to it "my home" is nearer "I am saving for a house" than "I live in Lisbon".

CUES is a small hand-written lexicon for that gap: a question's word (the key, as
tokenize stems it) and the words a statement of that kind of fact is made of (the value).
The hybrid uses it on the query side only: a query word that no memory of the store has
is replaced in the words half by its cue words that some memory has, each at a reduced
weight (hybrid.EXPANSION times its idf). So "Which city is my home?" is matched on words
as "Where do I live?" is, a query word the store has is never replaced, and a store with
none of the cue words is ranked exactly as without them.

    CUES["home"] -> ('live', 'liv', 'mov', 'move')   (tokenize's stems of live, lives,
                                                        lived, moved, move)

Each entry maps a word of the question to the verbs and nouns people state the fact
with, one way only: "home" brings "live", never "live" brings "home" (a memory says "I
live", a question asks "home"). The lexicon covers the kinds of personal fact a chat keeps
(home, work, family, partner, pets, vehicle, age, diet and health, languages, name). It
was written from those kinds, not fitted to a question set; LoCoMo's tuning half and the
generated year measure what it changes (docs/evaluation.md).

Deliberately left out: a thesaurus (WordNet and the like: most synonyms of "home" are
not what a memory says, and it would be a new dependency), and expansion of the meaning
half (MiniLM of "Which city is my home? live" is still nearer the house).
"""

from __future__ import annotations

from base.text import tokenize

# a question's word -> the words a memory stating that kind of fact is made of
_LEXICON = {
    "home": "live lives lived moved move",
    "city": "live lives lived moved",
    "town": "live lives lived moved",
    "country": "live lives lived moved",
    "residence": "live lives lived moved",
    "address": "live lives lived moved",
    "hometown": "grew born",
    "based": "live lives lived moved",
    "profession": "work works worked job",
    "occupation": "work works worked job",
    "career": "work works worked job",
    "employer": "work works worked job",
    "kid": "daughter son",
    "kids": "daughter son",
    "child": "daughter son",
    "children": "daughter son",
    "sibling": "brother sister",
    "siblings": "brother sister",
    "parent": "mother father mum mom dad",
    "parents": "mother father mum mom dad",
    "partner": "wife husband girlfriend boyfriend married",
    "spouse": "wife husband married",
    "pet": "dog cat",
    "pets": "dog cat",
    "animal": "dog cat",
    "vehicle": "car drive drives",
    "car": "drive drives",
    "age": "old born birthday",
    "allergy": "allergic",
    "avoid": "allergic",
    "diet": "vegetarian vegan eat",
    "language": "speak speaks",
    "languages": "speak speaks",
    "name": "called",
}


def _stems(words: str) -> tuple[str, ...]:
    """tokenize's stems of `words`, each once, in order."""
    return tuple(dict.fromkeys(tokenize(words)))


def _cues(lexicon: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """The lexicon keyed by stem, as a query's tokens come ("residence" -> "residenc")."""
    cues: dict[str, tuple[str, ...]] = {}
    for cue, words in lexicon.items():
        (stem,) = _stems(cue)
        cues[stem] = tuple(dict.fromkeys(cues.get(stem, ()) + _stems(words)))
    return cues


CUES = _cues(_LEXICON)
