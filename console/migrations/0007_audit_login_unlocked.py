from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0006_audit_compact_checkpoint"),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditevent",
            name="action",
            field=models.CharField(
                choices=[
                    ("login.succeeded", "login succeeded"),
                    ("login.failed", "login failed"),
                    ("login.locked_out", "login locked out"),
                    ("login.unlocked", "login unlocked by an admin"),
                    ("logout", "logout"),
                    ("story.quarantine", "story quarantine decided"),
                    ("compact.checkpoint", "compact checkpoint changed by an operator"),
                ],
                max_length=32,
            ),
        ),
    ]
