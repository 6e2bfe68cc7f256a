"""Which tokenizer a model config counts its budgets with (``docs/llm.md``, Token counting):
the fields (``models``), their checks and the stored ``tokenizer.json`` files
(``services``), and the one place a config becomes a counter (``counters``)."""
