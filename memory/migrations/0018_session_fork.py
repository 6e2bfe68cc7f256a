import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("console", "0008_audit_dio_version"),
        ("memory", "0017_recall_tenant_embedder"),
    ]

    operations = [
        migrations.CreateModel(
            name="SessionFork",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("session_id", models.CharField(max_length=200)),
                ("ancestors", models.JSONField(default=list)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="console.tenant")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("tenant", "session_id"), name="session_fork_unique")],
            },
        ),
    ]
