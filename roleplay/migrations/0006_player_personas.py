"""``console.Player.persona`` (a text that never reached the prompt) becomes each player's
default Persona, named after the player; the field itself is removed by
``console.0004_remove_player_persona``, which runs after this one.

Players without persona text get no row: ``roleplay.selectors.persona_for`` already answers a
plain persona named after the player for them. Going back copies each player's default
persona description into the text field again (the field is re-added first).
"""

from django.db import migrations

BATCH = 500


def personas_from_players(apps, schema_editor):
    Player = apps.get_model("console", "Player")
    Persona = apps.get_model("roleplay", "Persona")
    players = Player.objects.exclude(persona="").exclude(personas__is_default=True)
    rows = [
        Persona(
            tenant_id=player.tenant_id,
            player_id=player.pk,
            name=(player.display_name or player.external_id)[:200],
            description=player.persona,
            is_default=True,
        )
        for player in players.only("pk", "tenant_id", "display_name", "external_id", "persona")
    ]
    Persona.objects.bulk_create(rows, batch_size=BATCH)


def players_from_personas(apps, schema_editor):
    Player = apps.get_model("console", "Player")
    Persona = apps.get_model("roleplay", "Persona")
    for persona in Persona.objects.filter(is_default=True).only("player_id", "description"):
        Player.objects.filter(pk=persona.player_id).update(persona=persona.description[:8000])


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0003_audit_event"),
        ("roleplay", "0005_character_import"),
    ]

    operations = [migrations.RunPython(personas_from_players, players_from_personas)]
