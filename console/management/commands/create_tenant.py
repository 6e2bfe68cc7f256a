from django.core.management.base import BaseCommand, CommandError

from console.failures import DomainError
from console.services import create_tenant


class Command(BaseCommand):
    help = "Create a tenant."

    def add_arguments(self, parser):
        parser.add_argument("name")

    def handle(self, *args, name, **options):
        try:
            tenant = create_tenant(name)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(str(tenant.id))
