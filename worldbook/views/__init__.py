"""Console pages of worldbooks (server-rendered Django + htmx), one module a concept:

``books`` (list, new book, editor with publish), ``history`` (revisions and diffs),
``imports`` (upload → preview → confirm wizard), ``bindings`` (a character's books),
``playground`` (selection with every decision), ``index`` (vector index build progress).
``editing``, ``diffing`` and ``staging`` hold the logic those pages share.
"""
