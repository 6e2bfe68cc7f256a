"""The recall benchmark (``manage.py bench_memory``): LoCoMo-layout conversations stored and
indexed through the message store, then searched with the product's recall.

Pure modules (no Django): :mod:`locomo` (the input layout), :mod:`hard` with
:mod:`paraphrase`, :mod:`hard_en` and :mod:`hard_zh` (the generated data set: paraphrases,
relations, dates, multi-hop, distractors; English or Chinese), :mod:`synthetic`,
:mod:`smalltalk` and :mod:`facts` (the first, easier set), :mod:`metrics` (evidence recall,
MRR, the token pack), :mod:`stats` (percentiles) and :mod:`report` (goals, the text view).
Database modules: :mod:`ingest` (storing and indexing), :mod:`baselines` (lexical-only,
vector-only, recency), :mod:`evaluate` (the questions against each system),
:mod:`searchable` and :mod:`worker` (commit to searchable through a real Celery worker),
:mod:`scale` (recall latency in a crowded table, its cost curve, sizes on disk). The
command that creates the owners (players, characters, conversations) lives in
``roleplay``, since ``memory`` never imports it.
"""
