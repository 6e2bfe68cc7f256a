"""Console pages of worldbooks (server-rendered Django + htmx), one module a concept:

``books`` (list, new book, export), ``editor`` (the paged entry list over the user's draft,
bulk actions, publish / rebase / restore of the draft), ``entries`` (one entry opened in
place), ``history`` (revisions and diffs), ``imports`` (upload → preview → confirm wizard),
``bindings`` (a character's books), ``playground`` (selection with every decision),
``index`` (vector index build progress). ``entry_form``, ``fastfields``, ``diffing`` and
``staging`` hold the logic those pages share.
"""
