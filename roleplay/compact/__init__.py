"""Compact (seed 002, lines 1061–1149): older history folded into a summary so a long chat
fits the model's window (``docs/compact.md``). One package: ``engine/`` the pure rules
(budget, checkpoint, groups, protocol); ``plugin`` the turn's pre-Actor phase and ``ahead``
its post-turn cue (turn plug-ins); ``model`` the compactor's calls; ``selectors`` the
checkpoints' reads; ``services/`` their writes (save, the operator's edits, the history's
changes, the background preparation); ``views`` the console's Summaries page; ``api`` the
REST doors. The scenario's ``compact`` settings are ``roleplay.scenarios.config.Compact``."""
