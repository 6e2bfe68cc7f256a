"""Player accounts on ``/app/``: sign-up policies, invites, e-mail verification, sign-in,
devices, and the player's own data (export, deletion). See docs/players.md."""
