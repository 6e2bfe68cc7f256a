import django.db.models.deletion
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("console", "0008_audit_dio_version"),
        ("roleplay", "0031_conversation_groups"),
    ]

    operations = [
        migrations.AddField(
            model_name="conversation",
            name="parent",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="branches", to="roleplay.conversation"),
        ),
        migrations.AddField(
            model_name="conversation",
            name="fork_message_id",
            field=models.UUIDField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name="Bookmark",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ("message_id", models.UUIDField()),
                ("name", models.CharField(max_length=100)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("conversation", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="bookmarks", to="roleplay.conversation")),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="console.tenant")),
            ],
            options={
                "ordering": ["created_at"],
                "constraints": [models.UniqueConstraint(fields=("conversation", "name"), name="bookmark_name_unique")],
            },
        ),
    ]
