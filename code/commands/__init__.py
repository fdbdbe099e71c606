"""The lab's maintenance commands, run through code/run.py.

    backup.py    python code/run.py backup: a consistent copy of a store file
    reembed.py   python code/run.py reembed: re-embed a store made by another model

Commands stand on everything below them (storage/, embeddings/, llm/) and nothing imports them
but run.py.
"""
