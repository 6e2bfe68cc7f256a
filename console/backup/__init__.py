"""Tenant backup and restore: one archive out, one archive in (``docs/backup.md``).

``tables`` finds what a tenant owns from the model graph, ``export`` writes the archive,
``restore`` reads one into an empty tenant with every id remapped, ``verify`` compares the
two tenants table by table, ``storage`` keeps the nightly copies; ``engine/`` holds the pure
parts (manifest, reader checks, id remapping)."""
