"""The book editor's drafts: per-user, entry-level changes over a revision, published as one
new revision by compare-and-set.

``selectors`` reads a draft as the list of entry rows the editor pages through (cached per
revision and draft version); ``services`` writes drafts (one entry, a bulk action, book fields,
rebase, restore) and publishes them through ``worldbook.services.publish_revision``, the one
place a revision is made. ``stats`` keeps each revision's per-entry token counts.
"""
