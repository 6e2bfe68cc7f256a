"""The preset editor in Chromium: reorder by drag and drop and by the arrow buttons, switch a
prompt off, save, reload and find the new order; no Content-Security-Policy violation.

What only a browser runs is exercised here: ``static/js/presets.js`` moving fieldsets in the
page (HTML5 drag and drop by the handle, the up/down buttons kept on focus), renumbering,
showing the depth inputs for an in-chat prompt, and the plain form post that follows the page
order.
"""

from __future__ import annotations

import pytest

from tests.security.test_csp_browser import RECORD_VIOLATIONS, violations

pytestmark = pytest.mark.django_db(transaction=True)

USER, PASSWORD = "op", "pw-op-123456"  # the ``operator_user`` fixture's account
PROMPTS = [
    {"identifier": "main", "name": "Main", "content": "Be {{char}}."},
    {"identifier": "rules", "name": "Rules", "content": "Stay in the scene."},
    {"identifier": "style", "name": "Style", "content": "Short replies."},
    {"identifier": "chatHistory", "name": "History"},
    {"identifier": "userInput", "name": "Input"},
]


@pytest.fixture
def preset(tenant, operator_user):
    from roleplay.presets.services import create_preset

    return create_preset(tenant, name="Noir", prompts=PROMPTS)


def _stored(pk):
    from roleplay.models import Preset

    row = Preset.objects.get(pk=pk)
    return row.version, [(p["identifier"], p["enabled"]) for p in row.prompts]


def _order(page) -> list[str]:
    return page.locator("#preset-prompts > li").evaluate_all(
        "items => items.map(item => item.dataset.identifier)"
    )


def test_reorder_toggle_save_and_reload(preset, browser_page, login, orm):
    page = browser_page
    # Tall enough that source and target are both on screen: Playwright's drag does not
    # scroll in the middle of a drag as a person's would.
    page.set_viewport_size({"width": 1280, "height": 2400})
    page.add_init_script(RECORD_VIOLATIONS)
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text))
    login(page, USER, PASSWORD, next_path=f"/console/presets/{preset.pk}/")
    assert _order(page) == ["main", "rules", "style", "chatHistory", "userInput"]

    # Drag "style" by its handle and drop it on the upper half of "main": it goes first.
    handle = page.locator("#preset-prompts > li[data-identifier='style'] [data-drag-handle]")
    target = page.locator("#preset-prompts > li[data-identifier='main']")
    handle.drag_to(target, target_position={"x": 40, "y": 5})
    assert _order(page) == ["style", "main", "rules", "chatHistory", "userInput"]
    assert page.locator("#preset-prompts > li").first.locator(".preset-index").inner_text() == "1"
    assert "moved to position 1 of 5" in page.locator("#preset-live").inner_text()

    # The arrow buttons: "rules" up one place, the focus stays on the button.
    up = page.locator("#preset-prompts > li[data-identifier='rules'] button[data-move='up']")
    up.click()
    assert _order(page) == ["style", "rules", "main", "chatHistory", "userInput"]
    assert up.evaluate("button => button === document.activeElement")
    assert page.locator("#preset-unsaved").is_visible()

    # Switch "main" off; the depth inputs show only for an in-chat position.
    main = page.locator("#preset-prompts > li[data-identifier='main']")
    main.locator("input[data-enabled]").uncheck()
    depth = main.locator("input[name$='-depth']")
    assert not depth.is_visible()
    main.locator("select[data-position]").select_option("at_depth")
    assert depth.is_visible()
    main.locator("select[data-position]").select_option("relative")

    with page.expect_navigation():
        page.click("#preset-save")
    assert "saved (version 2)" in page.locator(".flash").inner_text()
    page.reload()
    assert _order(page) == ["style", "rules", "main", "chatHistory", "userInput"]
    assert not page.locator("li[data-identifier='main'] input[data-enabled]").is_checked()
    version, stored = orm(_stored, preset.pk)
    assert version == 2
    assert stored == [
        ("style", True),
        ("rules", True),
        ("main", False),
        ("chatHistory", True),
        ("userInput", True),
    ]
    assert violations(page, console_errors) == []


@pytest.fixture
def previewed(tenant, operator_user, conversation):
    """A preset of the shipped defaults plus a "tone" prompt, and a conversation to preview
    with three stored messages."""
    from memory import services as message_store
    from roleplay.presets.services import create_preset
    from roleplay.prompting.default_preset import default_prompt_data

    prompts = default_prompt_data()
    prompts.insert(1, {"identifier": "tone", "name": "Tone", "content": "{{char}} is calm."})
    for role, text in [("user", "Hello keeper."), ("assistant", "Welcome."), ("user", "Lamp?")]:
        message_store.save_message(tenant, conversation.session_id, role=role, content=text)
    return create_preset(tenant, name="Calm", prompts=prompts)


def _preview_sources(page) -> list[str]:
    return page.locator("#preset-preview-messages > li").evaluate_all(
        "items => items.map(item => item.dataset.source)"
    )


def test_live_preview_follows_edits_moves_and_the_sample_input(previewed, browser_page, login):
    page = browser_page
    page.set_viewport_size({"width": 1400, "height": 3200})
    page.add_init_script(RECORD_VIOLATIONS)
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text))
    login(page, USER, PASSWORD, next_path=f"/console/presets/{previewed.pk}/")

    # The preview assembles on load: the conversation's history, the tone prompt, tokens.
    messages = page.locator("#preset-preview-messages")
    messages.get_by_text("Mira is calm.").wait_for()
    assert messages.get_by_text("Hello keeper.").count() == 1
    summary = page.locator("#preset-preview-summary")
    assert int(summary.get_attribute("data-tokens")) > 0
    tokens = page.locator("#preset-preview-messages .preview-tokens").all_inner_texts()
    assert tokens and all(t.split()[0].isdigit() and int(t.split()[0]) > 0 for t in tokens)

    # Typing in a prompt re-assembles without a save.
    tone = page.locator("#preset-prompts > li[data-identifier='tone'] textarea")
    tone.fill("{{char}} whispers to {{user}}.")
    messages.get_by_text("Mira whispers to Ann.").wait_for()

    # Moving the prompt below the history moves it in the preview.
    before = _preview_sources(page)
    # Before the history, the system prompts are joined into one message ("a+b+c").
    tone_at = next(i for i, source in enumerate(before) if "prompt:tone" in source.split("+"))
    assert tone_at < before.index("history")
    down = page.locator("#preset-prompts > li[data-identifier='tone'] button[data-move='down']")
    history_at = _order(page).index("chatHistory")
    for _ in range(history_at - _order(page).index("tone")):
        down.click()
    page.wait_for_function(
        """() => {
          const s = [...document.querySelectorAll('#preset-preview-messages > li')]
            .map(li => li.dataset.source);
          const last = s.lastIndexOf('history');
          return last >= 0 && s.indexOf('prompt:tone') > last;
        }"""
    )

    # The sample player message is the last message of the preview.
    page.fill("#preset-preview-input", "Is the lamp lit?")
    page.locator("#preset-preview-messages > li").last.get_by_text("Is the lamp lit?").wait_for()
    assert violations(page, console_errors) == []
