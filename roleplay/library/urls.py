"""The player app's home, library, chats, personas and memory (``/app/``)."""

from django.urls import path

from roleplay.library.views import characters, chats, home, library, memory, personas

C = "app/characters/<uuid:character_id>/"
CHAT = "app/chats/<uuid:conversation_id>/"
P = "app/personas/<uuid:persona_id>/"
M = "app/memory/<uuid:entry_id>/"

urlpatterns = [
    path("app/", home.home, name="app_home"),
    path("app/library/", library.library, name="app_library"),
    path("app/characters/new/", characters.create, name="app_character_new"),
    path("app/characters/import/", characters.import_card, name="app_character_import"),
    path(C, library.character, name="app_character"),
    path(C + "avatar/", library.character_avatar, name="app_character_avatar"),
    path(C + "start/", library.start_chat, name="app_character_start"),
    path(C + "edit/", characters.edit, name="app_character_edit"),
    path(C + "delete/", characters.delete, name="app_character_delete"),
    path("app/chats/", chats.chats, name="app_chats"),
    path(CHAT, chats.chat, name="app_chat"),
    path(CHAT + "read/", chats.read, name="app_chat_read"),
    path(
        CHAT + "members/<uuid:character_id>/avatar/", chats.member_avatar, name="app_member_avatar"
    ),
    path(CHAT + "rename/", chats.rename, name="app_chat_rename"),
    path(CHAT + "archive/", chats.archive, name="app_chat_archive"),
    path(CHAT + "delete/", chats.delete, name="app_chat_delete"),
    path(CHAT + "export/", chats.export, name="app_chat_export"),
    path("app/personas/", personas.personas_page, name="app_personas"),
    path(P + "edit/", personas.edit, name="app_persona_edit"),
    path(P + "default/", personas.make_default, name="app_persona_default"),
    path(P + "delete/", personas.delete, name="app_persona_delete"),
    path(P + "avatar/", personas.avatar, name="app_persona_avatar"),
    path("app/memory/", memory.memory, name="app_memory"),
    path(M + "delete/", memory.delete, name="app_memory_delete"),
    path(M + "pin/", memory.pin, name="app_memory_pin"),
]
