"""Beyond the course's core: what real memory systems add to the three-signal score.

    kinds.py              episodic, semantic and procedural memories decay at their own rates
    superseding.py        a new fact replaces the old one it contradicts
    importance_rating.py  importance rated by a model (or a heuristic offline)
    consolidation.py      many episodes condensed into one durable fact
    forgetting.py         pruning what is old, unimportant and never recalled
    what_to_embed.py      which turns deserve a memory, and grouping turns into episodes
    episodes.py           the chat's turns folded into episodes as it goes (--items episode)
    distillation.py       a conversation distilled into a few memories
    context_budget.py     recalled memories fitted into a token budget
    model_choice.py       the chat model the extensions ask, offline or configured
    write_back.py         what the chat writes back: kind, rated importance, the fact replaced
    fact_changes.py       the rules that read a change: its subject, topic and new value

Notebooks 07a-07h walk through them, one each; each module's docstring says what it leaves out.
"""
