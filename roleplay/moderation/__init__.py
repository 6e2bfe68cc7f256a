"""Moderation of players and content: the tenant's policy on inputs and replies, reports,
the operators' queue and their actions, suspensions and bans (``docs/moderation.md``)."""
