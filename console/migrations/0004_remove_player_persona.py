"""``Player.persona`` is now the player's default ``roleplay.Persona``: the data moved in
``roleplay.0006_player_personas``, which must run first."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0003_audit_event"),
        ("roleplay", "0006_player_personas"),
    ]

    operations = [migrations.RemoveField(model_name="player", name="persona")]
