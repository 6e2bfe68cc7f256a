from django.core.management.base import BaseCommand, CommandError

from console.failures import DomainError
from console.models import Scope, Tenant
from console.services import create_api_token


class Command(BaseCommand):
    help = "Create an API token; prints the token once and nothing else on stdout."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--scope", action="append", choices=[s.value for s in Scope], dest="scopes"
        )

    def handle(self, *args, tenant, name, scopes, **options):
        found = Tenant.objects.filter(name=tenant).first()
        if found is None:
            raise CommandError(f"no tenant named {tenant!r}")
        try:
            _token, raw = create_api_token(found, name, scopes or [Scope.CONTENT, Scope.PLAY])
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(raw)
