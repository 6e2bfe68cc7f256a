"""``manage.py restore_tenant file.zip --tenant-name NAME``: a new tenant holding the archive,
every id remapped; prints the new tenant's id (``docs/backup.md``)."""

from django.core.management.base import BaseCommand, CommandError

from console.backup import services
from console.failures import DomainError


class Command(BaseCommand):
    help = "Restore a tenant archive into a new tenant."

    def add_arguments(self, parser):
        parser.add_argument("archive")
        parser.add_argument("--tenant-name", required=True, help="the new tenant's name")

    def handle(self, *args, archive, tenant_name, **options):
        try:
            with open(archive, "rb") as source:
                restored = services.restore_as_new_tenant(source, tenant_name)
        except OSError as exc:
            raise CommandError(f"cannot read {archive}: {exc.strerror}") from exc
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc.message} {exc.details}") from exc
        self.stdout.write(str(restored.tenant.pk))
        if restored.unmapped_count:
            self.stderr.write(
                f"{restored.unmapped_count} ids named no restored row: {restored.unmapped[:10]}"
            )
