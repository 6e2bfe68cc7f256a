"""The preset editor's live preview: the messages a conversation's next turn would send with
the prompts as the page shows them (unsaved edits included), the tokens of each, the errors
a turn would fail with, and nothing written."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console import tokenizers
from console.tokens import count_messages
from memory import services as message_store
from roleplay.llm.configs.services import update_model_config
from roleplay.models import Conversation, Preset, Turn
from roleplay.presets.selectors import load_preset
from roleplay.presets.services import create_preset
from roleplay.prompting.default_preset import default_prompt_data
from roleplay.turns.preview import SAMPLE_INPUT, preview_prompt
from tests.llm.tokenizer_files import word_level_json
from tests.presets.test_console import page_post

pytestmark = pytest.mark.django_db


@pytest.fixture
def preset(tenant):
    prompts = default_prompt_data()
    prompts.insert(
        1,
        {
            "identifier": "tone",
            "name": "Tone",
            "content": "{{char}} speaks softly to {{user}}. {{// hidden}}{{wat::x}}",
        },
    )
    return create_preset(tenant, name="Soft", prompts=prompts)


@pytest.fixture
def chat(conversation, tenant):
    for i, (role, text) in enumerate(
        [("user", "Hello keeper."), ("assistant", "Welcome, traveller."), ("user", "The lamp?")]
    ):
        message_store.save_message(tenant, conversation.session_id, role=role, content=text)
        del i
    return conversation


def preview_url(preset_obj) -> str:
    return f"/console/presets/{preset_obj.pk}/preview/"


def sources(html: str) -> list[str]:
    return re.findall(r'data-source="([^"]*)"', html)


def test_the_preview_is_what_the_next_turn_sends(chat, preset):
    preview = preview_prompt(chat, load_preset(preset), "Is the lamp lit?")
    contents = [m.content for m in preview.messages]
    assert any("Mira speaks softly to Ann." in c for c in contents)
    assert all("hidden" not in c for c in contents)
    assert contents[-1] == "Is the lamp lit?"
    assert "Hello keeper." in contents and "Welcome, traveller." in contents
    assert "{{wat::x}}" in preview.prompt.unknown_macros
    assert sum(m.tokens for m in preview.messages) <= preview.prompt.prompt_tokens
    assert preview.prompt.prompt_tokens == count_messages(preview.prompt.messages)
    # The system prompts before the history are joined into one message: its blocks are
    # listed with their own tokens.
    head = preview.messages[0]
    assert [label for label, _ in head.blocks] == head.parts and len(head.parts) >= 2
    assert "tone" in head.parts and all(tokens > 0 for _, tokens in head.blocks)
    assert all(m.blocks == () for m in preview.messages[1:])
    # Stable: the same conversation previews the same expansion twice.
    again = preview_prompt(chat, load_preset(preset), "Is the lamp lit?")
    assert [m.content for m in again.messages] == contents


def test_an_empty_sample_input_is_the_placeholder(chat, preset):
    preview = preview_prompt(chat, load_preset(preset), "  ")
    assert preview.messages[-1].content == SAMPLE_INPUT


def test_the_page_offers_the_conversations_and_the_fragment_lists_each_message(
    operator_client, chat, preset
):
    page = operator_client.get(f"/console/presets/{preset.pk}/").content.decode()
    assert f'value="{chat.pk}"' in page and 'id="preset-preview-controls"' in page
    response = operator_client.post(
        preview_url(preset), {**page_post(preset), "preview_conversation": str(chat.pk)}
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "Mira speaks softly to Ann." in html
    assert "history" in " ".join(sources(html))
    tokens = [
        int(t) for t in re.findall(r'<li class="preview-message[^>]*data-tokens="(\d+)"', html)
    ]
    assert tokens and all(t > 0 for t in tokens)
    assert 'id="preset-preview-unknown"' in html


def test_unsaved_edits_are_previewed_and_not_saved(operator_client, chat, preset):
    version = preset.version
    data = page_post(preset, tone={"content": "{{char}} whispers to {{user}}."})
    data["preview_conversation"] = str(chat.pk)
    data["preview_input"] = "Where is the key?"
    html = operator_client.post(preview_url(preset), data).content.decode()
    assert "Mira whispers to Ann." in html and "Where is the key?" in html
    preset.refresh_from_db()
    assert preset.version == version
    assert "softly" in next(p["content"] for p in preset.prompts if p["identifier"] == "tone")
    assert not Turn.objects.filter(conversation=chat).exists()


def test_a_reorder_changes_the_previewed_order(operator_client, chat, preset):
    rows = len(preset.prompts)
    order = list(range(rows))
    tone = next(i for i, p in enumerate(preset.prompts) if p["identifier"] == "tone")
    order.remove(tone)
    history = next(
        i for i, p in enumerate(order) if preset.prompts[p]["identifier"] == "chatHistory"
    )
    order.insert(history + 1, tone)  # after the history
    data = {**page_post(preset, order=order), "preview_conversation": str(chat.pk)}
    html = operator_client.post(preview_url(preset), data).content.decode()
    found = sources(html)
    assert found.index("prompt:tone") > max(i for i, s in enumerate(found) if s == "history")


def test_broken_prompts_are_reported_not_previewed(operator_client, chat, preset):
    data = page_post(preset, tone={"identifier": "main"})  # a duplicate identifier
    data["preview_conversation"] = str(chat.pk)
    response = operator_client.post(preview_url(preset), data)
    assert response.status_code == 200
    assert 'id="preset-preview-problems"' in response.content.decode()


def test_a_prompt_that_cannot_fit_is_a_context_overflow(operator_client, chat, preset):
    data = page_post(preset, tone={"content": "lantern " * 6000})
    data["preview_conversation"] = str(chat.pk)
    html = operator_client.post(preview_url(preset), data).content.decode()
    assert 'id="preset-preview-error"' in html and "context_overflow" in html


def test_a_viewer_previews_the_saved_prompts(viewer_client, chat, preset):
    data = page_post(preset, tone={"content": "{{char}} shouts."})
    data["preview_conversation"] = str(chat.pk)
    html = viewer_client.post(preview_url(preset), data).content.decode()
    assert "Mira speaks softly to Ann." in html and "shouts" not in html
    assert Preset.objects.get(pk=preset.pk).version == preset.version


def test_the_shipped_default_previews_too(operator_client, chat):
    html = operator_client.get(
        "/console/presets/default/preview/", {"preview_conversation": str(chat.pk)}
    ).content.decode()
    assert 'id="preset-preview-summary"' in html and "Hello keeper." in html


def test_a_foreign_conversation_or_preset_is_not_previewed(
    operator_client, chat, preset, other_tenant
):
    from console.models import Player
    from roleplay.models import Character

    foreign = Conversation.objects.create(
        tenant=other_tenant,
        player=Player.objects.create(tenant=other_tenant, external_id="x"),
        character=Character.objects.create(tenant=other_tenant, name="Secret Keeper"),
    )
    html = operator_client.post(
        preview_url(preset), {"preview_conversation": str(foreign.pk)}
    ).content.decode()
    assert "Secret Keeper" not in html and "Hello keeper." in html  # falls back to our own
    foreign_preset = create_preset(other_tenant, name="Theirs", prompts=default_prompt_data())
    assert operator_client.post(preview_url(foreign_preset), {}).status_code == 404


@pytest.mark.parametrize(
    "junk",
    [
        {"preview_conversation": "not-a-uuid"},
        {"preview_conversation": "x" * 5000, "preview_input": "y" * 100000},
        {"p-r0-identifier": "", "p-r0-depth": "zz", "p-r0-position": "at_depth"},
    ],
)
def test_junk_never_breaks_the_preview(operator_client, chat, preset, junk):
    response = operator_client.post(preview_url(preset), junk)
    assert response.status_code == 200


def test_without_conversations_the_page_says_so(operator_client, preset):
    page = operator_client.get(f"/console/presets/{preset.pk}/").content.decode()
    assert 'id="preset-preview-empty"' in page


def test_a_preview_reads_the_worldbook_and_records_nothing(chat, preset, tenant, character):
    from worldbook import services as worldbooks
    from worldbook.engine.schema import BookIn
    from worldbook.models import TimedEffectState

    book = {
        "name": "Harbor",
        "entries": [
            {"id": "lamp", "keys": ["lamp"], "content": "The lamp burns whale oil.", "sticky": 3}
        ],
    }
    created, _ = worldbooks.create_book(tenant, BookIn.model_validate(book))
    worldbooks.put_bindings(tenant, str(character.id), [{"book_id": str(created.id)}])
    preview = preview_prompt(chat, load_preset(preset), "Is the lamp lit?")
    assert any("whale oil" in m.content for m in preview.messages)
    assert [s["id"].rsplit(":", 1)[-1] for s in preview.worldbook["selected"]] == ["lamp"]
    assert not TimedEffectState.objects.filter(conversation_id=chat.session_id).exists()
    parts = [part for m in preview.messages for part in m.parts]
    assert "worldbook: lamp" in parts and "main" in parts and "history" in parts


FIELDS = ["identifier", "name", "role", "content", "position", "depth", "order", "enabled"]
junk_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["at_depth", "relative", "none", "system", "user", "-1", "1e9", "{{", "}}"]),
    st.sampled_from(["{{outlet::x}}", "{{getvar::", "{{roll::999999d999999}}", "\x00", "main"]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    edits=st.dictionaries(
        st.tuples(st.sampled_from(["r0", "r1", "r5", "zz"]), st.sampled_from(FIELDS)),
        junk_text,
        max_size=8,
    )
)
def test_random_editor_posts_never_break_the_preview(operator_client, chat, preset, edits):
    data = page_post(preset)
    data["preview_conversation"] = str(chat.pk)
    data.update({f"p-{key}-{name}": value for (key, name), value in edits.items()})
    response = operator_client.post(preview_url(preset), data)
    assert response.status_code == 200
    html = response.content.decode()
    outcomes = ('id="preset-preview-summary"', "preset-preview-problems", "preset-preview-error")
    assert any(outcome in html for outcome in outcomes)


def test_the_preview_marks_where_the_stable_prefix_ends(operator_client, chat, preset):
    """With the cache-aware layout and no per-turn block, the whole prompt is stable: the
    history and the player's input, which the next turn's request holds as they are; so no
    line marks an end."""
    preview = preview_prompt(chat, load_preset(preset), "Is the lamp lit?")
    assert preview.prompt.layout == "cache_aware"
    assert preview.prefix_ends_before is None
    assert [m.stability for m in preview.messages] == ["stable"] * len(preview.messages)
    assert preview.messages[-1].content == "Is the lamp lit?"
    assert preview.stable_tokens == preview.prompt.prompt_tokens
    data = {**page_post(preset), "preview_conversation": str(chat.pk)}
    html = operator_client.post(preview_url(preset), data).content.decode()
    assert 'id="preset-preview-prefix-end"' not in html
    assert 'data-layout="cache_aware"' in html and 'data-stability="per turn"' not in html


def test_a_prompt_using_the_clock_ends_the_stable_prefix_inside_the_system_message(
    operator_client, chat, preset
):
    order = list(range(len(preset.prompts)))
    ids = [p["identifier"] for p in preset.prompts]
    order.remove(ids.index("tone"))
    order.insert(order.index(ids.index("main")) + 1, ids.index("tone"))  # after the main prompt
    data = page_post(preset, order=order, tone={"content": "It is {{time}} where {{char}} is."})
    data["preview_conversation"] = str(chat.pk)
    html = operator_client.post(preview_url(preset), data).content.decode()
    marker = html.index('id="preset-preview-prefix-end"')
    head = html.index('data-stability="stable, then per turn"')
    assert head < marker < html.index("<code>tone</code>")
    assert re.search(r'data-stability="per turn"><code>tone</code>', html)


def test_the_preview_counts_with_the_model_configs_tokenizer_and_says_which(
    operator_client, chat, preset, model_config
):
    before = preview_prompt(chat, load_preset(preset), "Is the lamp lit?")
    assert before.tokenizer == "cl100k_base"
    update_model_config(model_config, tokenizer_json=word_level_json())
    counter = tokenizers.hf(word_level_json())
    preview = preview_prompt(chat, load_preset(preset), "Is the lamp lit?")
    assert preview.tokenizer == counter.name
    assert preview.prompt.prompt_tokens == counter.count_messages(preview.prompt.messages)
    assert preview.prompt.prompt_tokens != before.prompt.prompt_tokens
    html = operator_client.post(
        preview_url(preset), {**page_post(preset), "preview_conversation": str(chat.pk)}
    ).content.decode()
    assert f'data-tokenizer="{counter.name}"' in html and f"<code>{counter.name}</code>" in html
