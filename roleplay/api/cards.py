"""Character routes beyond CRUD: card export (``GET .../characters/{id}/export``) and the
list without avatar bytes. Card import is its own view (:mod:`.card_import`): its body
limit is a file's, not a JSON resource's."""

from __future__ import annotations

from roleplay.selectors import without_avatars


class CardActions:
    """Mixin of ``CharacterViewSet``."""

    def get_queryset(self):
        return without_avatars(super().get_queryset())
