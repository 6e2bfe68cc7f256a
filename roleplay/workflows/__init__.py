"""Declared workflows: an operator's capability graph run before the Actor, and the bounded
model-and-tool runtime (``engine.runtime``). See ``docs/workflows.md``."""
