"""Talking to a model: the litellm gateway, the offline chat model, the prompt's memory block.

    gateway.py        chat and embedding calls through litellm, or the offline models
    offline_chat.py   the offline chat model: answers only from the memories it is shown
    memory_block.py   recalled memories as a block of JSON lines in a prompt; dates, ages
    terminal_chat.py  the terminal chat loop around the course's chat turn

Stands on base/, memory_store.py, config.py, embeddings/ and storage/. litellm is imported
on the first model call only, never when this package is imported.
"""
