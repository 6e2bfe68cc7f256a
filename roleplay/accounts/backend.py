"""Sign-in of player accounts: an e-mail and a password within the tenant ``/app/`` serves.

django-axes sits before this backend (the same throttle as the console's: failures per
e-mail and address, and per address), and reads the e-mail as the attempt's username.
"""

from __future__ import annotations

from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied

from roleplay.accounts.selectors import account_by_email


class PlayerEmailBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, app_tenant=None, **kwargs):
        if app_tenant is None:  # not /app/'s sign-in: the console's backends decide
            return None
        account = account_by_email(app_tenant, username or "")
        user = account.user if account else None
        if user is None or not user.check_password(password or ""):
            if user is None:
                self._hash_anyway(password)
            # The app's sign-in ends here: no other backend may answer for a player.
            raise PermissionDenied
        if not self.user_can_authenticate(user):
            raise PermissionDenied
        return user

    @staticmethod
    def _hash_anyway(password) -> None:
        """As long as a real check: the time does not tell whether the e-mail has an account."""
        from django.contrib.auth import get_user_model

        get_user_model()().set_password(password or "")
