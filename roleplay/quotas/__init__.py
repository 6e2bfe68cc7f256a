"""Plans and quotas of players: what a player may spend, counted exactly.

``models`` the plans, their assignment and defaults, and the usage counters; ``admission``
the check at the start of every turn (one conditional upsert); ``charging`` the tokens of
every model call added to its player's counters; ``services`` writes; ``selectors`` reads;
``api`` and ``views`` the doors. The bursts per account and per address are
``console.ratelimit``'s.
"""
