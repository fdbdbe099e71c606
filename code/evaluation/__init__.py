"""Evaluation: how well does retrieval find what a question needs?

    dataset.py     the dataset format and its loader (a year of one person's memories)
    locomo.py      LoCoMo's real conversations from a local copy, and the retriever table
    strategies.py  ways to rank: the learner's scoring with different settings
    bm25.py        the classic word-matching ranker, as one more strategy
    metrics.py     recall@k and reciprocal rank, averaged; the ablation table
    updates.py     scripted conversations through the chat: does it keep up with change?
    cli.py         python code/run.py evaluate

See docs/evaluation.md for what the numbers mean.
"""
