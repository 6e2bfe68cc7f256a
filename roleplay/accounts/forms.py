"""Forms of the player app's account pages and of the console's player-app page."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import PasswordResetForm

from roleplay.accounts.models import PlayerAccount, SignupPolicy
from roleplay.accounts.selectors import app_tenant, normalize_email


class LoginForm(forms.Form):
    email = forms.CharField(max_length=254)
    password = forms.CharField(max_length=4096, strip=False, widget=forms.PasswordInput)


class SignupForm(forms.Form):
    email = forms.EmailField(max_length=254)
    display_name = forms.CharField(max_length=200, required=False)
    password = forms.CharField(max_length=4096, strip=False, widget=forms.PasswordInput)
    password_again = forms.CharField(max_length=4096, strip=False, widget=forms.PasswordInput)

    def clean(self):
        data = super().clean()
        if data.get("password") and data.get("password") != data.get("password_again"):
            self.add_error("password_again", "the two passwords differ")
        return data


class PlayerPasswordResetForm(PasswordResetForm):
    """Django's reset, for the player accounts of the tenant ``/app/`` serves only."""

    def get_users(self, email):
        tenant = app_tenant()
        accounts = PlayerAccount.objects.filter(
            tenant=tenant, email=normalize_email(email)
        ).select_related("user")
        return [a.user for a in accounts if a.user.is_active and a.user.has_usable_password()]


class AppSettingsForm(forms.Form):
    signup_policy = forms.ChoiceField(choices=SignupPolicy.choices)
    player_characters = forms.BooleanField(required=False)


class InviteForm(forms.Form):
    max_uses = forms.IntegerField(min_value=1, max_value=10_000, initial=1)
    hours = forms.IntegerField(min_value=1, max_value=24 * 365, initial=168)
    note = forms.CharField(max_length=200, required=False)


class AccountForm(forms.Form):
    email = forms.EmailField(max_length=254)
    display_name = forms.CharField(max_length=200, required=False)
    password = forms.CharField(max_length=4096, strip=False, widget=forms.PasswordInput)
