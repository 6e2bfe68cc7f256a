"""One tenant's objects of every kind a route can name, for the matrices and the fuzzer.

The runtime objects come from the API tests' ``build_world`` (reused, not copied); a
worldbook book is created through ``POST /v1/books`` and bound to a prompt, and the API token
made with the service, so every route's parameters have a real object in each tenant.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.api.conftest import World, build_world
from tests.worldbook.api.wb_api_helpers import book, create, entry

# Path parameters whose name alone says what they name. ``pk``/``id`` depend on the route:
# a DRF view says it (``view.model``), other routes are listed by name in the matrices.
BY_PARAMETER = {
    "conversation_id": lambda w: w.objects.conversation.pk,
    "character_id": lambda w: w.objects.character.pk,
    "book_id": lambda w: w.book_id,
    "revision": lambda w: w.revision,
    "message_id": lambda w: w.objects.messages[-1].id,
    "turn_id": lambda w: w.objects.turn.pk,
    "entry_id": lambda w: w.objects.entry.pk,
    "slot": lambda w: "default",
    "handoff_id": lambda w: w.objects.handoff.pk,
    "job_id": lambda w: w.objects.job.pk,
    "quarantine_id": lambda w: w.objects.quarantine.pk,
    "version": lambda w: w.objects.checkpoint.version,
    "backup_id": lambda w: w.objects.backup_id,  # a stored backup (console.backup)
    "signed": lambda w: w.image_token,  # a signed image link's token (images.signing)
    "request_id": lambda w: f"{w.label}-turn:dio",  # the world's DIO task (tests/api/conftest)
    "member_id": lambda w: w.objects.member.pk,  # the conversation group's second member
    "bookmark_id": lambda w: w.objects.bookmark.pk,  # a checkpoint on the conversation
}


PROMPT_ID = "mira"  # both tenants bind their book to the same prompt id


@dataclass
class Tenancy:
    """A tenant, its runtime objects, a worldbook book at revision 1, and an admin token."""

    label: str
    objects: World
    book_id: str
    revision: int
    token: object
    raw_token: str

    @property
    def image_token(self) -> str:
        return self.objects.image_token

    @property
    def tenant(self):
        return self.objects.tenant

    def object_for(self, model):
        from console.models import ApiToken
        from images.models import ImageConfig
        from roleplay.accounts.models import Invite
        from roleplay.accounts.services import create_invite
        from worldbook.models import Book

        if model is ImageConfig:
            return self.objects.image_config
        if model is Book:
            return Book.objects.get(pk=self.book_id)
        if model is ApiToken:
            return self.token
        if model is Invite:
            if not getattr(self, "_invite", None):
                self._invite = create_invite(self.objects.tenant, note=f"{self.label} invite")[0]
            return self._invite
        return self.objects.object_for(model)

    def value(self, parameter: str, model=None):
        """The value of a path parameter in this tenant: by its name, else by ``model``."""
        if parameter in BY_PARAMETER:
            return BY_PARAMETER[parameter](self)
        if model is not None:
            return self.object_for(model).pk
        raise LookupError(parameter)

    def marks(self) -> list[str]:
        """Texts that identify this tenant's objects, never shown to another tenant: the
        label (in every name and message) and every UUID (integer ids would match anything)."""
        objects = self.objects
        ids = [objects.model_config.pk, objects.character.pk, objects.conversation.pk]
        ids.append(objects.persona.pk)
        ids.append(objects.preset.pk)
        ids += [message.pk for message in objects.messages]
        ids.append(objects.turn.pk)
        ids.append(objects.entry.pk)
        ids.append(objects.handoff.pk)
        ids.append(objects.scenario.pk)
        ids.append(objects.quarantine.pk)
        ids.append(objects.checkpoint.scenario_id)
        ids += [objects.image_config.pk, objects.image_slot.pk]
        ids += [objects.http_endpoint.pk, objects.mcp_server.pk, objects.regex_script.pk]
        ids.append(objects.instruct_template.pk)
        ids.append(objects.plan.pk)
        ids.append(objects.case.pk)
        return [self.label, self.book_id, self.token.prefix, *map(str, ids)]


def build_tenancy(tenant, base_url: str, label: str, api_client_for) -> Tenancy:
    from console.services import create_api_token

    objects = build_world(tenant, base_url, label)
    token, raw = create_api_token(tenant, f"{label}-token", ["admin"])
    client = api_client_for(tenant)
    created = create(client, book(label, entry("e1", f"{label} lore", keys=["lighthouse"])))
    bindings = {"bindings": [{"book_id": created["book_id"]}]}
    response = client.put(f"/v1/prompt-bindings?prompt_id={PROMPT_ID}", bindings, format="json")
    assert response.status_code == 200, response.content[:300]
    return Tenancy(label, objects, created["book_id"], created["revision"], token, raw)
