"""A year in one person's memory, generated: the evaluation set behind data/eval/one_year.json.

Five kinds of question, each stressing one signal of the retrieval score:

    stale_preference      a preference changed; only the newest statement answers it
    important_constraint  an old, important rule, crowded by fresh small talk on its words
    recent_event          an incident that recurs; the latest occurrence answers it
    paraphrase            the answer shares no word with the question
    noise                 the answer competes with many greetings and trivia on its words

Around them: greetings, trivia and ordinary days, as a real history has. Everything comes
from one seeded random generator that only ever calls `random()`, so the file is the same
on every machine and Python version; a test checks the shipped file equals `generate()`.

    python tools/eval_data.py            # rewrite data/eval/one_year.json

Deliberately left out: reading the file back (evaluation/dataset.py, whose format this
follows; see docs/evaluation.md) and scoring (evaluation.py).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

SEED = 2025
START = datetime(2025, 1, 1, tzinfo=UTC)  # day 0 of the year
DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "eval" / "one_year.json"

# (the rule, a question about it, fresh small talk that shares the question's words)
CONSTRAINTS = [
    (
        "Team rule since the January outage: never deploy to production on a Friday, ever.",
        "Can I deploy to production on Friday?",
        [
            "Friday production deploy of the docs site went smoothly.",
            "Read a thread saying teams should deploy to production any day, Friday included.",
            "Pairing on Friday about production deploy scripts.",
        ],
    ),
    (
        "I am severely allergic to shellfish, so every restaurant booking has to avoid shellfish.",
        "Which dishes should a restaurant booking avoid for me?",
        [
            "Booked a table at the noodle restaurant, great dishes.",
            "Restaurant dishes this week: pasta twice, curry once.",
            "Friend says the new restaurant has small dishes to share.",
        ],
    ),
    (
        "Hard limit from the finance team: cloud spend must stay under 2000 dollars a month.",
        "How much cloud spend is allowed each month?",
        [
            "Cloud spend report for this month arrived.",
            "Someone asked about cloud spend dashboards today.",
            "Skimmed a blog post on cloud spend per month at startups.",
        ],
    ),
    (
        "Never store customer passwords in plain text; always hash them with bcrypt or argon2.",
        "How should customer passwords be stored?",
        [
            "Reset my own passwords after the newsletter scare.",
            "Customer called about storing passwords in a browser.",
            "Stored the customer survey in the shared drive.",
        ],
    ),
    (
        "Legal requirement: every customer data export must be deleted after 30 days.",
        "When must customer data exports be deleted?",
        [
            "Deleted old photos from my phone.",
            "Customer data export for the quarterly review finished.",
            "Exports of the analytics data ran slow today.",
        ],
    ),
    (
        "Doctor's standing instruction: no running until the knee heals; cycling is fine.",
        "Am I allowed to go running?",
        [
            "Went running past the lake with Priya, she loved it.",
            "Running shoes on sale at the corner shop.",
            "Watched a documentary about running ultramarathons.",
        ],
    ),
    (
        "Never schedule meetings before 10 am on weekdays; mornings are for deep work.",
        "Can I schedule meetings early on weekdays?",
        [
            "Meetings ran long on Tuesday.",
            "Schedule for the weekdays is packed.",
            "Tried to schedule two early meetings for the intern.",
        ],
    ),
    (
        "All pull requests need one approving review before merge, even one-line fixes.",
        "Do pull requests need a review before merge?",
        [
            "Merged my own pull request for the blog theme.",
            "Long review thread on the pull request about logging.",
            "Pull requests piled up before the merge freeze.",
        ],
    ),
    (
        "My daughter Mia is vegetarian: no meat in any meal we cook at home.",
        "What meal can we cook at home for Mia?",
        [
            "Cooked a big meal at home on Sunday.",
            "Mia helped cook pancakes at home.",
            "Meal prep at home took two hours.",
        ],
    ),
    (
        "Keep the API rate limit at 100 requests per minute per key; partners depend on it.",
        "What is the API rate limit per key?",
        [
            "Rate limit errors from the weather API again.",
            "Rotated my personal API key.",
            "API docs site got a new look.",
        ],
    ),
    (
        "Passport renewal rule: travel abroad needs six months of passport validity left.",
        "Is my passport valid enough to travel abroad?",
        [
            "Friend lost her passport while travelling abroad.",
            "Travel abroad vlog marathon tonight.",
            "Passport photo booth at the station is broken.",
        ],
    ),
    (
        "Security policy: laptops must use full-disk encryption and lock after five minutes.",
        "What security settings must laptops use?",
        [
            "New laptop stickers arrived.",
            "Security talk at the meetup about laptops in cafes.",
            "Laptop fan is loud, must clean it.",
        ],
    ),
]

# (question, statements in the order they were made: the last one is current)
PREFERENCES = [
    (
        "Which theme do I prefer in my code editor?",
        [
            "I prefer a dark theme in my code editor.",
            "Switched the code editor to a light theme after weeks of eye strain; I like it.",
        ],
    ),
    (
        "What is my preferred airline seat?",
        [
            "My preferred airline seat is the aisle.",
            "From now on book the window seat on flights, so I can sleep.",
        ],
    ),
    (
        "Which programming language do I prefer for scripts?",
        [
            "I prefer Bash as the programming language for scripts.",
            "Moved my scripts over to Python this month.",
            "Scripts are now written in Go: one static binary, easy to ship.",
        ],
    ),
    (
        "How do I take my coffee?",
        ["I take my coffee black.", "Coffee with oat milk these days, black got too bitter."],
    ),
    (
        "What time do I like my daily run reminder?",
        [
            "I like my daily run reminder at 6 am.",
            "Move the run reminder to 7 pm; mornings got too busy.",
        ],
    ),
    (
        "Which chat app do I prefer for team messages?",
        [
            "I prefer Slack as the chat app for team messages.",
            "The team moved to Discord last week; use that from now on.",
        ],
    ),
    (
        "Which city do I want as my default weather location?",
        [
            "Default weather location: Lisbon, the city I want.",
            "Moved house to Porto, so weather forecasts should follow me there.",
        ],
    ),
    (
        "What music do I like while working?",
        [
            "I like lo-fi music while working.",
            "Lately classical piano keeps me focused during work.",
            "Jazz is what I put on at work now; piano got old.",
        ],
    ),
    (
        "Which email summary schedule do I want?",
        [
            "I want the email summary every morning: a daily schedule.",
            "Daily was too much: send the email digest weekly, on Mondays.",
        ],
    ),
    (
        "What name should the assistant call me?",
        [
            "Call me Alexandra: that is the name I want.",
            "Please just call me Alex; Alexandra feels too formal.",
        ],
    ),
    (
        "Which tab width do I prefer in code?",
        [
            "I prefer a tab width of 4 in code.",
            "Indent code with 2 spaces from now on, it reads better on a laptop.",
        ],
    ),
    (
        "What is my preferred meeting length?",
        [
            "My preferred meeting length is 30 minutes.",
            "Book 25 minute meeting slots instead, so there is a break between calls.",
        ],
    ),
]

# (question, the incident in words that repeat each time, details that change)
INCIDENTS = [
    (
        "What went wrong with the nightly backup last time?",
        "The nightly backup failed again: {}.",
        [
            "disk full on the backup host",
            "expired storage credentials",
            "the job timed out",
            "a locked database table",
            "network drop during upload",
            "wrong bucket region",
        ],
    ),
    (
        "Why did the build break most recently?",
        "The build broke on main: {}.",
        [
            "a flaky integration test",
            "a dependency released a breaking change",
            "the lint step ran out of memory",
            "a missing environment variable",
            "a merge conflict left a stray marker",
        ],
    ),
    (
        "What was the latest problem with the home wifi?",
        "Home wifi dropped out again: {}.",
        [
            "the router overheated",
            "the provider had an outage",
            "a firmware update stuck",
            "the mesh node lost power",
            "interference from the microwave",
        ],
    ),
    (
        "What happened with the car on the latest breakdown?",
        "The car broke down again: {}.",
        [
            "flat battery in the cold",
            "a cracked coolant hose",
            "the starter motor failed",
            "a warning light and limp mode",
            "an alternator belt snapped",
        ],
    ),
    (
        "What caused the last on-call page?",
        "Got paged on call: {}.",
        [
            "the payments queue backed up",
            "certificate expiry on the API gateway",
            "a spike of 500 errors after a deploy",
            "disk pressure on the log cluster",
            "the search index fell behind",
        ],
    ),
    (
        "What was the most recent issue with the billing invoices?",
        "Billing invoices went out wrong: {}.",
        [
            "tax rate missing for one country",
            "duplicate invoices for annual plans",
            "the currency symbol was wrong",
            "discount codes were ignored",
        ],
    ),
]

# (fact, a question with no word in common with it)
PARAPHRASES = [
    (
        "Sam, my partner, cannot eat peanuts.",
        "What food should I avoid when cooking for my spouse?",
    ),
    ("Kid's pediatrician is Dr Okafor at the Riverside clinic.", "Who is the children's doctor?"),
    ("Gym membership renews every March.", "When does the fitness subscription come up?"),
    ("Landlord prefers rent by bank transfer on the first.", "How should the flat payment go?"),
    ("Spare house key sits under the blue flowerpot.", "Where can I find a backup way into home?"),
    ("Grandma turns ninety in October.", "Which month is the big family birthday?"),
    ("Bike lock combination: 3-1-4-1.", "What opens the cycle padlock?"),
    ("Insurance excess on the car policy is 250 euros.", "How much would a vehicle claim cost me?"),
    ("Brother Leo lives in Montreal now.", "Where did my sibling relocate to?"),
    ("Allergic reaction to penicillin as a child.", "Which medicine must doctors not prescribe?"),
    ("Wedding anniversary: 14 June.", "When did we get married?"),
    ("Cat Biscuit eats wet food twice daily.", "How often do I feed the pet?"),
]

# (fact, a question; the question's words also fill greetings and trivia)
NOISY_FACTS = [
    ("Morning standup moved to 9:30 on Tuesdays and Thursdays.", "When is the morning standup?"),
    ("The office coffee machine code is 4721.", "What is the coffee machine code?"),
    ("Lunch budget on the company card: 15 euros a day.", "What is my lunch budget?"),
    (
        "Weekend on-call swap agreed with Tom for every other month.",
        "Who do I swap weekend on-call with?",
    ),
    ("Evening Spanish class moved to Wednesdays at 7.", "When is my evening Spanish class?"),
    ("Night train to Vienna booked, carriage 12, berth 44.", "Which berth on the night train?"),
    ("Thanks note: the team bonus lands with the March salary.", "When does the team bonus land?"),
    (
        "Weather station on the balcony needs new batteries in spring.",
        "When does the weather station need batteries?",
    ),
    ("Book club picked a Le Guin novel for the next meeting.", "What did the book club pick?"),
    ("Tea for the office: order Assam, not Earl Grey.", "Which tea should the office order?"),
    ("Hello to the new neighbours at number 8: Ana and Joe.", "Who are the new neighbours?"),
    ("Good news: the grant report deadline moved to 30 May.", "When is the grant report due?"),
]

GREETINGS = [
    "Good morning!",
    "Morning, assistant.",
    "Hello again.",
    "Hi there!",
    "Good evening.",
    "Thanks, that helps.",
    "Thanks a lot!",
    "Good night.",
    "Hello, quick one today.",
    "Morning! Coffee first.",
    "Evening check-in.",
    "Thanks, all good.",
    "Good morning, busy day ahead.",
    "Hello! Back from lunch.",
    "Weekend mode on, hello.",
]
TRIVIA = [
    "Fun fact: octopuses have three hearts.",
    "Coffee break, back in ten.",
    "Lunch was a sandwich today.",
    "The weather is grey again.",
    "Made tea and toast.",
    "Saw a fox on the night walk.",
    "Train was late this morning.",
    "Fun fact: honey never spoils.",
    "Rainy weekend, stayed in.",
    "Coffee tasted burnt today.",
    "Neighbours had a party last night.",
    "Lunch with the team at the new place.",
    "Office was quiet this evening.",
    "Book club chat ran long.",
    "Bought new tea.",
    "The night bus was packed.",
    "Spanish podcast on the way to work.",
]
ORDINARY_DAYS = [
    "Cleaned the kitchen and did laundry.",
    "Finished the quarterly slides.",
    "Called my parents.",
    "Fixed a typo in the onboarding guide.",
    "Watered the plants.",
    "Walked to the market for vegetables.",
    "Read two chapters of a mystery novel.",
    "Sorted the receipts for taxes.",
    "Updated the team wiki page on releases.",
    "Reviewed a design doc for the search feature.",
    "Went to the dentist for a check-up.",
    "Planned the garden beds for spring.",
    "Repaired the squeaky door hinge.",
]


def generate(seed: int = SEED) -> dict:
    """The whole dataset as a JSON-ready dict; the same seed always gives the same dict."""
    rng = random.Random(seed)

    def uniform(low: float, high: float) -> float:
        return low + (high - low) * rng.random()

    def pick(items: list):
        return items[int(rng.random() * len(items))]

    events = []  # dicts: at (datetime), text, kind, importance, key, supersedes (key)
    questions = []  # dicts: question, asked_at, evidence (keys), category

    def add(day: float, text: str, kind: str, importance: int, key=None, supersedes=None):
        at = START + timedelta(minutes=round(day * 24 * 60))  # whole minutes keep dates short
        key = key or f"e{len(events)}"
        events.append(
            dict(at=at, text=text, kind=kind, importance=importance, key=key, supersedes=supersedes)
        )
        return key

    def ask(day: float, question: str, evidence: list, category: str) -> None:
        at = START + timedelta(minutes=round(day * 24 * 60))
        questions.append(dict(question=question, asked_at=at, evidence=evidence, category=category))

    for text, question, chatter in CONSTRAINTS:
        rule = add(uniform(5, 80), text, "semantic", 8 + int(rng.random() * 3))
        day = uniform(200, 360)
        for line in chatter:  # fresh, unimportant, and on the question's very words
            add(day - uniform(0.2, 4), line, "episodic", 2 + int(rng.random() * 3))
        ask(day, question, [rule], "important_constraint")

    for question, statements in PREFERENCES:
        day, previous = uniform(10, 80), None
        for i, text in enumerate(statements):
            if i:
                day += uniform(40, 100)  # days until the mind changes
            previous = add(day, text, "semantic", 6, supersedes=previous)
        ask(day + uniform(7, 100), question, [previous], "stale_preference")

    for question, template, details in INCIDENTS:
        day, occurrences = uniform(5, 40), []
        for detail in details:
            occurrences.append(
                (day, add(day, template.format(detail), "episodic", 4 + int(rng.random() * 4)))
            )
            day += uniform(35, 70)
        # Asked twice: a few days after the third occurrence, and after the last one.
        for which in (2, len(occurrences) - 1):
            when, key = occurrences[which]
            ask(when + uniform(0.5, 9), question, [key], "recent_event")

    for text, question in PARAPHRASES:
        day = uniform(20, 250)
        ask(
            day + uniform(30, 100),
            question,
            [add(day, text, "semantic", 6 + int(rng.random() * 3))],
            "paraphrase",
        )

    for text, question in NOISY_FACTS:
        day = uniform(30, 280)
        ask(
            day + uniform(20, 80),
            question,
            [add(day, text, "semantic", 5 + int(rng.random() * 3))],
            "noise",
        )

    for day in range(365):  # greetings and trivia: most days, unimportant, often on topic
        for _ in range(int(rng.random() * 2.2)):
            add(day + uniform(0.3, 0.9), pick(GREETINGS), "episodic", 1)
        if rng.random() < 0.35:
            add(day + uniform(0.3, 0.9), pick(TRIVIA), "episodic", 1 + int(rng.random() * 2))
        if rng.random() < 0.2:
            add(day + uniform(0.3, 0.9), pick(ORDINARY_DAYS), "episodic", 2 + int(rng.random() * 3))

    return _as_conversations(events, questions, seed)


def _as_conversations(events: list, questions: list, seed: int) -> dict:
    """Number the events in time order and group them into one session per day."""
    events = sorted(events, key=lambda e: e["at"])  # stable: same-minute events keep order
    ids = {e["key"]: f"m{i:04d}" for i, e in enumerate(events, start=1)}
    sessions: list[dict] = []
    for event in events:
        day = event["at"].date().isoformat()
        if not sessions or sessions[-1]["date"][:10] != day:
            sessions.append(
                {"id": f"s{len(sessions) + 1:03d}", "date": _iso(event["at"]), "turns": []}
            )
        turn = {
            "id": ids[event["key"]],
            "date": _iso(event["at"]),
            "speaker": "user",
            "text": event["text"],
            "kind": event["kind"],
            "importance": event["importance"],
        }
        if event["supersedes"]:
            turn["supersedes"] = ids[event["supersedes"]]
        sessions[-1]["turns"].append(turn)
    asked = sorted(questions, key=lambda q: (q["category"], q["asked_at"]))
    return {
        "format": "memorylab-conversations/1",
        "name": "one_year",
        "description": (
            f"One person's year of memories, generated by tools/eval_data.py (seed {seed}). "
            "Do not edit by hand: run python tools/eval_data.py to regenerate."
        ),
        "sessions": sessions,
        "questions": [
            {
                "id": f"q{i:03d}",
                "question": q["question"],
                "asked_at": _iso(q["asked_at"]),
                "evidence": [ids[key] for key in q["evidence"]],
                "category": q["category"],
            }
            for i, q in enumerate(asked, start=1)
        ],
    }


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")  # always UTC, always with its zone


def dumps(dataset: dict) -> str:
    """The exact text of the shipped file: keys in order, indented, one trailing newline."""
    return json.dumps(dataset, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    DATA_FILE.parent.mkdir(parents=True, exist_ok=True)
    DATA_FILE.write_text(dumps(generate()), encoding="utf-8")
    print(f"wrote {DATA_FILE}")
