"""Pure rules of quotas: periods and what a refusal tells the player."""
