"""Lexical search shared by the capabilities (the shared kernel: no Django, no app imported).

- ``lexical``: the in-memory BM25 index and its term rules, used by the worldbook's search
  and hybrid recall and by memory's recall index and preferences.

The word rules it builds on (``console.embedding.words``) and the embedders (``console.embedding``)
are shared the same way, so worldbook, memory and story never import each other.
"""
