"""``manage.py backup_tenant <tenant name or id> -o file.zip``: one tenant's archive
(``docs/backup.md``); without ``-o`` it is stored in ``BACKUP_DIR`` like a nightly copy."""

from django.core.management.base import BaseCommand, CommandError

from console.backup import services
from console.failures import DomainError
from console.models import Tenant


def find_tenant(ref: str) -> Tenant:
    try:
        return Tenant.objects.get(name=ref)
    except Tenant.DoesNotExist:
        pass
    try:
        return Tenant.objects.get(pk=ref)
    except (Tenant.DoesNotExist, ValueError, Exception) as exc:
        raise CommandError(f"no tenant named {ref!r}") from exc


class Command(BaseCommand):
    help = "Export a tenant to one zip archive."

    def add_arguments(self, parser):
        parser.add_argument("tenant", help="the tenant's name or id")
        parser.add_argument("-o", "--output", help="the archive to write (default: BACKUP_DIR)")

    def handle(self, *args, tenant, output=None, **options):
        owner = find_tenant(tenant)
        try:
            if output:
                with open(output, "wb") as out:
                    services.export_to(owner, out)
                self.stdout.write(output)
            else:
                self.stdout.write(str(services.create_backup(owner).path))
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
