"""Reading a change out of a sentence: who it is about, what it touches, what stays true.

The offline write-back (extensions/write_back.py) decides with visible rules which stored
fact a new turn updates. This module holds those rules, text in and text out:

    says_change("I moved to Bristol last month")    -> 'moved to'
    about("My friend Lars moved to Oslo")           -> About(user=False, people={'lars', ...})
    topics("I rent a flat in Leeds")                -> {'home'}
    clauses("My name is Priya and I live in Leeds") -> ['My name is Priya', 'I live in Leeds']
    corrected("My birthday is on the 12th of May", "Oops, I meant the 21st of May")
                                                    -> 'My birthday is on the 21st of May'

Who a sentence is about: the user when a clause speaks in the first person ("I", "we",
"our", "my flat", "Marco and I"); otherwise the people it names ("Callum", "my sister",
"my friend Lars"). An update about another person ("my friend Lars moved to Oslo")
can only touch a note that names that person, never one of the user's own.

What a fact is about: a handful of topics, each a family of words (home: live, moved,
flat, rent ...; work: job, promoted, quit ...). Two sentences on one topic about one
subject are an update and its fact even when they share no word ("I eat fish again now"
and "I'm vegetarian": diet).

What stays true: a note of several facts ("My son Leo is three and my daughter Ada is
six") is split into clauses, and only the clause an update touches goes; when the update
gives a new value for a value the old clause holds ("Leo turned four", "Katarzyna, not
Katarina", "promoted to audit manager"), the clause is kept with the new value in.

Deliberately left out: real parsing. These are word rules, tuned on the scripted
conversations of data/update_conversations.json and checked on others; a real chat
model decides the same questions in one call (write_back.classify_turn).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from base.text import STOP_WORDS, tokenize

# A turn that says something changed, or that corrects what was said. Whole words of the
# lower-cased text; each alternative is one way English says "this replaces that".
CHANGE = re.compile(
    r"\b(now|no longer|not any ?more|anymore|any more|sold|relocated|switched|"
    r"mov(?:ed|ing) (?:back |over |away )?(?:to|in|out|house|abroad|away)|"
    r"changed|change of plans?|quit|stopped|started|instead|replaced|new|got rid of|gave up|"
    r"traded|swapped|promoted|turned (\d+|[a-z]+)|married|divorced|broke up|split up|"
    r"separated|engaged|passed away|died|retired|joined|left|bought|"
    r"actually|correction|typo|oops|i meant|rather than|instead of)\b"
)
# A correction: the earlier words were wrong, not the world changed.
CORRECTION = re.compile(
    r"\b(actually|correction|typo|oops|i meant|sorry|my mistake|i misspoke|changed my mind|"
    r"change of plans?|on second thought)\b"
)
# "X, not Y", "X instead of Y", "X rather than Y", "from Y to X": the old value Y, the new X.
_NOT_Y = re.compile(
    r"(?P<new>[^,:;]+?)(?:, not| instead of| rather than) (?:the |a |an )?(?P<old>[^,.!?;]+)",
    re.IGNORECASE,
)


# People a note can be about besides the user: "my sister", "my friend Lars".
PERSON_NOUNS = frozenset(
    """sister brother mum mom mother dad father son daughter wife husband partner boyfriend
    girlfriend fiance fiancee friend neighbour neighbor boss manager colleague coworker
    cousin aunt uncle grandma grandmother grandpa grandfather granddaughter grandson niece
    nephew dentist doctor gp therapist roommate flatmate housemate landlord landlady
    kid kids child children baby stepson stepdaughter teammate mentor""".split()
)
FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|we|we're|we've|we'd|our|us|me)\b")
_MARKERS = re.compile(
    r"\b(oops|sorry|typo|correction|actually|i meant|i mean|my mistake|i misspoke|"
    r"change of plans?|i changed my mind|on second thought|good news|bad news)\b[:,!]?",
    re.IGNORECASE,
)
_MY = re.compile(r"\bmy (\w+)(?: (\w+))?")
# Capitalised words that are not names of people (for a sentence about someone else).
_NOT_NAMES = frozenset(
    """i im i've the a an my our we he she they it its this that then still good bad great
    sorry oops actually correction change so and but also just yes no ok okay well hey hi
    monday tuesday wednesday thursday friday saturday sunday january february march april
    may june july august september october november december someone somebody""".split()
)

# Topics: families of word stems (base/text.py's tokenize) and phrases. Two notes on the
# same topic about the same subject can be one fact's old and new version.
TOPICS: dict[str, re.Pattern] = {
    name: re.compile(pattern)
    for name, pattern in {
        "home": r"\b(live[sd]?|living|mov(e|ed|ing) (back |over |away )?(to|in|out|house|"
        r"abroad|away)|relocat\w*|flat|apartment|house|home|rent\w*|city|town)\b",
        "work": r"\b(work\w*|job|jobs|promot\w*|hired|fired|employ\w*|career|quit \w+ing|"
        r"teach\w*|(i'm|i am|is) an? \w+( \w+)? (at|for)|as an? \w+)\b",
        "age": r"\b(turned|turns|(is|am|'s|i'm) (\d+|one|two|three|four|five|six|seven|eight|"
        r"nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|"
        r"twenty)\b|years? old|birthday)\b",
        "partner": r"\b(partner|married|engaged|wife|husband|boyfriend|girlfriend|fianc\w*|"
        r"together|broke up|split up|divorc\w*|dating|single|wedding|separated)\b",
        "diet": r"\b(vegetarian|vegan|pescatarian|meat|fish|eat|eating|diet)\b",
        "pet": r"\b(dog|dogs|cat|cats|pet|pets|puppy|kitten|retriever|terrier|labrador|"
        r"spaniel|hamster|rabbit|parrot)\b",
        "vehicle": r"\b(car|cars|drive|drives|driving|van|motorbike|scooter|bike|bicycle|"
        r"ride|rides|cycle)\b",
        "device": r"\b(phone|laptop|computer|tablet|iphone|android|watch)\b",
        "drink": r"\b(drink\w*|coffee|tea|beer|wine|alcohol|sober)\b",
        "smoking": r"\b(smok\w*|cigarettes?|vap\w*)\b",
        "sport": r"\b(running|run|runs|swim\w*|gym|yoga|climbing|cycling|tennis|football|"
        r"training|workout|sport)\b",
        "club": r"\b(member|members|membership|club|society|choir|team|joined)\b",
        "name": r"\b(name|named|called)\b",
        "plans": r"\b(going to|flying to|trip|holidays?|vacation|anniversary|plans?|"
        r"paint\w*|decorat\w*|wedding)\b",
    }.items()
}

_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()
_VERB = re.compile(
    r"\b(is|are|am|was|were|have|has|had|live|lives|work|works|drive|drives|own|owns|like|"
    r"likes|love|loves|use|uses|teach|teaches|go|goes|ride|rides|rent|rents|i'm|it's|we're|"
    r"he's|she's|they're)\b"
)
_CLAUSE_JOIN = re.compile(
    r",? and (?=(?:i|i'm|my|we|we're|our|he|she|they|his|her)\b)|; |, (?=(?:i|my|we|our)\b)"
)


class About(NamedTuple):
    """Who a sentence speaks of: the user, and the people it names (lower-cased)."""

    user: bool
    people: frozenset[str]


def lowered(text: str) -> str:
    return " ".join(text.lower().replace("\u2019", "'").split())


def says_change(text: str) -> str | None:
    """The words that say `text` updates something ("moved", "no longer"), or None.

    A correction says so too: says_change("Sorry, it's room 221, not 212") -> ', not'
    """
    low = lowered(text)
    match = CHANGE.search(low) or CORRECTION.search(low) or _NOT_Y.search(low)
    if match is None:
        return None
    return match.group().strip() if match.re is not _NOT_Y else "X, not Y"


def is_correction(text: str) -> bool:
    """Does `text` correct what was said ("Actually ...", "typo", "I meant ...")?"""
    text = lowered(text)
    return CORRECTION.search(text) is not None or _NOT_Y.search(text) is not None


def about(text: str) -> About:
    """Who `text` speaks of. about("Marco and I got married") -> About(True, {'marco'})"""
    text = _MARKERS.sub(" ", text)  # "Oops, I meant ...": the speaker, not the subject
    low = lowered(text)
    people: set[str] = set()
    mine_other = False  # "my <something that is not a person>": the user's own thing
    for match in _MY.finditer(low):
        noun, after = match.group(1), match.group(2)
        noun = noun.split("'")[0]
        if noun in PERSON_NOUNS:
            people.add(noun)
            if after and after not in STOP_WORDS:
                name = _name_after(text, match.start(2))
                if name:
                    people.add(name)
        else:
            mine_other = True
    without_my = _MY.sub(
        lambda m: "my x" if m.group(1).split("'")[0] in PERSON_NOUNS else m.group(), low
    )
    user = mine_other or FIRST_PERSON.search(without_my) is not None
    people |= {w.lower() for w in _names(text)}
    return About(user, frozenset(people))


def _name_after(text: str, position: int) -> str | None:
    word = re.match(r"[A-Z][\w-]+", text[position:]) if position >= 0 else None
    return word.group().lower() if word and word.group().lower() not in _NOT_NAMES else None


def _names(text: str) -> list[str]:
    """Capitalised words that may name a person (not "I", weekdays, months or markers)."""
    found = []
    for match in re.finditer(r"\b[A-Z][a-z][\w-]*\b", text.replace("\u2019", "'")):
        word = match.group()
        if word.lower() not in _NOT_NAMES and word.lower() not in STOP_WORDS:
            found.append(word)
    return found


def topics(text: str) -> set[str]:
    """The topics `text` touches. topics("I quit smoking in March") -> {'smoking'}"""
    low = lowered(text)
    return {name for name, pattern in TOPICS.items() if pattern.search(low)}


def clauses(text: str) -> list[str]:
    """The facts of a combined note, each a clause with its own subject and verb.

    clauses("My son Leo is three and my daughter Ada is six")
        -> ['My son Leo is three', 'my daughter Ada is six']
    clauses("My partner Jordan and I have been together")  -> the one clause (no verb before "and")

    A note of several lines (an episode of turns, extensions/episodes.py) is each line's
    clauses, in order.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        return [part for line in lines for part in clauses(line)]
    parts, start = [], 0
    body = text.strip()
    low = body.lower().replace("\u2019", "'")
    for match in _CLAUSE_JOIN.finditer(low):
        left = low[start : match.start()]
        if _VERB.search(left) and len(left.split()) >= 3:
            parts.append(body[start : match.start()].strip())
            start = match.end()
    parts.append(body[start:].strip())
    tail = [p for p in parts if len(p.split()) >= 2]
    return tail if len(tail) == len(parts) else [body]


def rejoin(parts: list[str], like: str) -> str:
    """Clauses back into one note: "A and B", capitalised, ending as `like` ended; one a
    line when `like` was a note of several lines (an episode's turns)."""
    if "\n" in like.strip():
        return "\n".join(parts)
    text = " and ".join(p.rstrip(".!?") for p in parts)
    text = text[:1].upper() + text[1:]
    return text + ("." if like.rstrip().endswith((".", "!")) else "")


def content(text: str) -> set[str]:
    """Content-word stems (base/text.py's tokenize), for "shares a word with"."""
    return set(tokenize(text)) - {"actually", "oop", "typo", "correction", "sorry", "meant"}


# --- a new value in an old clause ------------------------------------------------------


def _shape(word: str) -> str:
    w = word.strip(".,!?;:'\"")
    if re.fullmatch(r"\d+(st|nd|rd|th)", w.lower()):
        return "ordinal"
    if re.fullmatch(r"[\d.,:]+", w):
        return "number"
    if w.lower() in _NUMBER_WORDS:
        return "number"
    if w[:1].isupper():
        return "Name"
    return w.lower()


def _replace_word(old: str, word: str, new: str) -> str | None:
    pattern = re.compile(r"\b" + re.escape(word) + r"\b", re.IGNORECASE)
    return pattern.sub(new, old, count=1) if pattern.search(old) else None


def corrected(old: str, new: str) -> str | None:
    """`old` with the new value `new` gives it, or None when none lines up.

    "X, not Y" / "X instead of Y": Y in `old` becomes X's matching words;
    "turned N": the number in `old` becomes N; "promoted to R": the role in `old` becomes R;
    "moved to P": the place `old` says one lives in becomes P;
    "I meant X" / "actually X": the word of `old` with X's shape (a date's 12th, a name)
    that X changes.
        corrected("My manager is called Katarina", "my manager's name is Katarzyna, not Katarina")
            -> 'My manager is called Katarzyna'
    """
    low, spaced = lowered(new), " ".join(new.replace("\u2019", "'").split())
    for pattern in (_NOT_Y,):  # ("from Y to X" only says which: "coffee to green tea")
        match = pattern.search(spaced)
        if match:
            result = _swap(old, match.group("old").split(), match.group("new").split())
            if result:
                return result
    age = re.search(r"\bturn(?:ed|s) (\d+|[a-z]+)\b", low)
    if age and _shape(age.group(1)) == "number":
        for word in re.findall(r"\b\w+\b", old):
            if _shape(word) == "number" and word.lower() != age.group(1):
                return _replace_word(old, word, age.group(1))
    moved = re.search(r"\b(?:moved|relocated|moving|relocating) (?:back )?to ([A-Z][\w-]+)", new)
    place = re.search(r"\b(live[sd]?|living|based|flat|house|home|apartment) in ([A-Z][\w-]+)", old)
    if moved and place and place.group(2) != moved.group(1):
        return old[: place.start(2)] + moved.group(1) + old[place.end(2) :]
    role = re.search(
        r"\bpromoted to (?:be |become )?(?:an? |the )?([a-z ]+?)(?:[.!,]|$| at | in )", low
    )
    if role:
        found = re.search(
            r"\b(as an?|i'm an?|i am an?|is an?) ([a-z]+(?: [a-z]+)?)(?= at| for| in|[.,]|$)",
            old.lower(),
        )
        if found:
            _start, end = found.span(2)
            article = "an" if role.group(1)[0] in "aeiou" else "a"
            prefix = old[: found.start(1)] + re.sub(
                r"an?$", article, old[found.start(1) : found.end(1)]
            )
            return prefix + " " + role.group(1).strip() + old[end:]
    if CORRECTION.search(low):  # "I meant the 21st of May": the differing word of its shape
        values = [
            w for w in re.findall(r"[\w'-]+", new) if _shape(w) in ("ordinal", "number", "Name")
        ]
        values = [w for w in values if w.lower() not in _NOT_NAMES]
        for value in values:
            for word in re.findall(r"[\w'-]+", old):
                if _shape(word) == _shape(value) and word.lower() != value.lower():
                    if _shape(value) != "Name" or _similar_spelling(word, value):
                        return _replace_word(old, word, value)
    return None


def _similar_spelling(a: str, b: str) -> bool:
    """A name corrected is spelt alike: Okafur/Okafor, Katarina/Katarzyna."""
    a, b = a.lower(), b.lower()
    same = sum(x == y for x, y in zip(a, b))
    return same >= min(len(a), len(b)) * 0.6


def _swap(old: str, old_words: list[str], new_words: list[str]) -> str | None:
    """Replace the words of `old` that Y names with the matching words of X."""
    old_words = [w.strip(".,!?") for w in old_words if w not in STOP_WORDS or _shape(w) != w]
    new_words = [w.strip(".,!?") for w in new_words]
    old_words = [w for w in old_words if w]
    if not old_words:
        return None
    y = old_words[-1]  # the word that changes ("4th" of "the 4th", "Okafur")
    candidates = [w for w in new_words if w.lower() not in STOP_WORDS and w.lower() != y.lower()]
    same_shape = [w for w in reversed(candidates) if _shape(w) == _shape(y)]
    run = []  # the words that end X ("sage green" of "the kitchen will be sage green")
    for w in reversed(new_words):
        if w.lower() in STOP_WORDS or w.lower() == y.lower():
            break
        run.insert(0, w)
    if same_shape:
        x = same_shape[0]
    elif len(old_words) == 1 and run and len(run) <= 3:
        x = " ".join(run)
    else:
        return None
    if " ".join(old_words).lower() in old.lower() and len(old_words) > 1:
        phrase = " ".join(old_words)
        pattern = re.compile(re.escape(phrase), re.IGNORECASE)
        head = " ".join(old_words[:-1])
        return pattern.sub(f"{head} {x}", old, count=1)
    result = _replace_word(old, y, _match_case(x, old, y))
    return result


def _match_case(x: str, old: str, y: str) -> str:
    found = re.search(r"\b" + re.escape(y) + r"\b", old, re.IGNORECASE)
    if found and found.group()[:1].isupper() and not x[:1].isupper():
        return x[:1].upper() + x[1:]
    return x
