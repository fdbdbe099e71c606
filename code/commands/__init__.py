"""The lab's maintenance commands, run through code/run.py.

    backup.py    python code/run.py backup: a consistent copy of a store file
    reembed.py   python code/run.py reembed: re-embed a store made by another model
    pg_user.py   python code/run.py pg-user: a user's own PostgreSQL login, as a URL

Commands stand on everything below them (storage/, embeddings/, llm/) and nothing imports them
but run.py.
"""
