"""The model gateway: one small interface over every language model the platform talks to.

A prompt (a list of chat messages) goes in; a ``CompletionResult`` or a stream of
``TextDelta`` chunks ending in ``StreamDone`` comes out, with token usage recorded. Two
providers implement it, each in ``providers/`` (whose ``build_provider`` is the registry):
any OpenAI-compatible HTTP server (``providers.openai_compat``) and an in-process llama.cpp
model (``providers.llama_local``). ``provider.ModelClient`` adds the retry, cancellation and
call-recording policy once, so providers stay small. Nothing here imports Django: the
console wires a recorder that stores each ``CallRecord``.
"""
