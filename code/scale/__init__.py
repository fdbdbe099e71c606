"""Scale: the learner's loop over every memory, as matrix arithmetic over millions.

    matrix_scoring.py  the three signals for every memory at once, in numpy
    memory_index.py    an index of many users' memories that filters per query and
                       rescores its shortlist with the learner's own relevance_score
    pg_retrieval.py    the three-signal score in SQL on PostgreSQL, made exact the same way;
                       the HNSW candidate-then-rerank path
    sqlite_retrieval.py  the same shortlist on SQLite, from float32 arrays kept in step
                       with the file
    sqlite_matrix_file.py  those arrays saved in the store file, and the change log
                       SQLite's triggers keep: a new store object reads them, not every vector

Notebook 09 and docs/scale.md show that the answers are the same, only faster.
"""
