"""Agent V2's pure rules: the Director's state check, the ledger, the forced rules, what the
models read, the tool registry, one background run and the auto-reply shapes. No Django."""
