"""Character cards (CCv2, CCv3; JSON, PNG, ``.charx``) read into and built from our
``Character`` fields. Pure Python (Pillow for images, no Django):

- :mod:`.read`: a file's bytes -> the card object, its spec and container, the image;
  PNG chunks through the worldbook importer's reader, ``.charx`` through :mod:`.charx`;
- :mod:`.mapping`: card fields <-> character fields, with a :mod:`.report` of what was
  mapped, kept (in ``extensions.roleplay_card``) or dropped;
- :mod:`.book`: a bound worldbook as the card's ``character_book`` (the embedded book is
  read by the worldbook importer itself);
- :mod:`.build`: CCv2/CCv3 JSON and the PNG with ``chara`` and ``ccv3`` chunks;
- :mod:`.images`: avatars, decoded and re-encoded as bounded PNGs;
- :mod:`.limits`: the limits of the list and JSON fields, for every door.

``roleplay.characters.services.card_import`` writes an import; ``roleplay.characters.card_export``
reads one out.
"""
