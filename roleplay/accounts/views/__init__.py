"""Pages of player accounts: the app's (``app``) and the console's (``console``)."""
