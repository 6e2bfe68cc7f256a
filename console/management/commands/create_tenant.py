from django.core.management.base import BaseCommand, CommandError

from console.models import Tenant
from console.services import create_tenant


class Command(BaseCommand):
    help = "Create a tenant."

    def add_arguments(self, parser):
        parser.add_argument("name")

    def handle(self, *args, name, **options):
        if Tenant.objects.filter(name=name).exists():
            raise CommandError(f"tenant {name!r} already exists")
        tenant = create_tenant(name)
        self.stdout.write(str(tenant.id))
