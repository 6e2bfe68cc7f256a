"""The avatar on console forms: an upload (decoded, checked and re-encoded) and a remove
box, for characters and personas."""

from __future__ import annotations

from django import forms

from roleplay.characters.cards.errors import CardFailure
from roleplay.characters.cards.images import MAX_AVATAR_BYTES, normalize_avatar


class AvatarFields(forms.Form):
    """The avatar upload of character and persona forms, decoded as the form is cleaned (a
    bad image is a field error before anything is saved); ``remove_avatar`` is offered only
    when there is one to remove."""

    avatar = forms.FileField(
        required=False,
        label="Avatar image",
        widget=forms.ClearableFileInput(attrs={"accept": "image/png,image/jpeg,image/webp"}),
        help_text="PNG, JPEG or WebP, at most 8 MiB; stored as PNG.",
    )
    remove_avatar = forms.BooleanField(required=False, label="Remove the avatar")

    def offer_avatar_removal(self) -> None:
        instance = getattr(self, "instance", None)
        if not (instance is not None and instance.pk and instance.avatar is not None):
            del self.fields["remove_avatar"]

    def clean_avatar(self):
        """The upload as the PNG the services store (``normalize_avatar``), or None."""
        upload = self.cleaned_data.get("avatar")
        if not upload:
            return None
        try:
            return normalize_avatar(upload.read(MAX_AVATAR_BYTES + 1))
        except CardFailure as exc:
            raise forms.ValidationError(exc.message, code=exc.code) from exc
