"""Moderation's pure rules: the policy's shape, matching, decisions and redaction."""
