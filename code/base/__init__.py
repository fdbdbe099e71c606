"""The floor every other part of code/ stands on: plain rules and numbers, no models, no files.

    validation.py   every value checked where it enters (times, vectors, weights, ...)
    vectors.py      Float32Vector: a memory's embedding, 4 bytes a value, iterated as floats
    units.py        seconds, hours, days
    defaults.py     the course's decay rate, weights, k and fixed clock, written once
    decay.py        half-lives and decay rates, min-max rescaling
    text.py         the word splitter (tokenize) and the stop words
    redaction.py    secrets (key-like variables' values, key shapes, password fields, URL
                    passwords) cut out of any text
    memory_fields.py  what each field of a Memory accepts, and the form it is kept in
    metadata.py     Metadata: a memory's dict, which tells the memory before it changes in place
    tracked.py      Tracked: Memory's base class, which tells its stores before a field changes
    links.py        the rules of superseded_by links; features register theirs here
    unwritten.py    provided code on the learner's functions names a stub it meets
    store_base.py   what every store shares: transaction() and its journal, save(), extend()

Nothing here imports anything else of code/: memory_store.py and config.py stand on this
folder alone, and everything above may use it. Importing it is cheap (no numpy).
"""
