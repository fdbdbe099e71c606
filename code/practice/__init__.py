"""Your work beyond the core: the notebooks' exercises and the optional milestones.

    exercises.py           checked, not graded: notebooks 07b, 07f, 07g, 08 and 10
    importance_parsing.py  optional Milestone 6: parse_importance (notebook 07c)
    forgetting_rule.py     optional Milestone 7: should_forget (notebook 07e)
    reflection.py          optional Milestone 8: reflection_groups (notebook 07d)
    persistence.py         optional Milestone 9: memory_to_record, memory_from_record (07h)

Like scoring.py and retriever.py, these stand on base/ and memory_store (reflection on
scoring too); the extensions and the evaluation call them. Import one by its module:
`from practice.reflection import reflection_groups`. This file stays empty of code.
"""
