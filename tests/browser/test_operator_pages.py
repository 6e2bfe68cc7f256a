"""Operator pages in Chromium at 1280×800 and at 390×844 (a phone): run modes (the guided
form, a template created as shown), the lockouts page, the styled 404, the lorebook entry
form (common fields, then Advanced), the card import form's radio buttons, and the Story,
Agent V2, summary and memory pages. On the phone nothing in the page's content area is
wider than the screen (wide tables scroll inside their own box). No CSP violation.

Screenshots of every page at both widths go to ``/tmp/opsui-shots/`` (not committed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.security.test_csp_browser import RECORD_VIOLATIONS, violations

pytestmark = pytest.mark.django_db(transaction=True)

SHOTS = Path(os.environ.get("OPSUI_SHOTS", "/tmp/opsui-shots"))
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
ADMIN, ADMIN_PASSWORD = "boss", "pw-boss-123456"


@pytest.fixture
def world(tenant, player, character):
    """A titled conversation whose run mode has Story on (with a story written), a memory
    entry, a lorebook with an entry, and an admin account; the pages' ids."""
    from axes.models import AccessAttempt
    from django.utils import timezone

    from console.services import ensure_console_user
    from memory import services as message_store
    from memory.entries import services as entries
    from roleplay.models import Conversation, ModelConfig
    from roleplay.scenarios.services import create_scenario
    from tests.story.story_rows import envelope, write
    from worldbook import services as books

    ensure_console_user(tenant, ADMIN, ADMIN_PASSWORD, "admin")
    ensure_console_user(tenant, "clerk", "pw-clerk-123456", "viewer")
    AccessAttempt.objects.create(
        username="clerk",
        ip_address="203.0.113.7",
        user_agent="Firefox",
        get_data="",
        post_data="",
        http_accept="*/*",
        path_info="/console/login/",
        failures_since_start=5,
        attempt_time=timezone.now(),
    )  # fmt: skip  (clerk mistyped five times: locked at that address)
    config = ModelConfig.objects.create(
        tenant=tenant, name="Reply model", provider="llama_cpp", model="m", is_default=True
    )
    scenario = create_scenario(
        tenant,
        name="Harbour story",
        model_config=config,
        storyV1={"modelConfigId": "Reply model"},
    )
    conversation = Conversation.objects.create(
        tenant=tenant, player=player, character=character, title="The lighthouse",
        scenario=scenario,
    )  # fmt: skip
    said = message_store.save_message(
        tenant, conversation.session_id, role="user", content="I show the copper key."
    )
    reply = message_store.save_message(
        tenant, conversation.session_id, role="assistant", content="Mira takes the key."
    )
    pending = {"messageId": str(reply.id), "userMessageId": str(said.id), "sourcePosition": 1}
    write(conversation, scenario, 0, envelope(conversation, pending=pending),
          status="waiting_for_acceptance", source_position=1)  # fmt: skip
    entry = entries.add_entry(
        tenant, player, kind="fact", scope="session", content="Likes the lamp room.",
        character_id=str(character.pk), session_id=conversation.session_id,
    )  # fmt: skip
    lore = {"id": "gate", "title": "City gate", "keys": ["gate"], "content": "Shut at dusk."}
    book, _ = books.create_book(
        tenant, books.validate_book({"name": "Greyport", "entries": [lore]})
    )
    return {
        "conversation": conversation.pk,
        "scenario": scenario.pk,
        "entry": entry.pk,
        "book": book.pk,
    }


def _overflow(page) -> list[str]:
    """Elements of the content area wider than it (empty when nothing sticks out)."""
    return page.evaluate(
        """() => {
        const main = document.querySelector('main');
        const right = main.getBoundingClientRect().right + 1;
        const out = [];
        if (main.scrollWidth > main.clientWidth + 1) out.push('main ' + main.scrollWidth);
        for (const el of main.querySelectorAll('*')) {
          if (el.closest('.ops-scroll, details:not([open])')) continue;
          const box = el.getBoundingClientRect();
          if (box.width && box.right > right) out.push(el.tagName + '#' + el.id);
        }
        return out.slice(0, 10);
      }"""
    )


def _visit(page, name: str, url: str, size: str) -> None:
    page.goto(url)
    page.locator("main").wait_for()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}-{size}.png"), full_page=True)
    if size == "phone":
        assert _overflow(page) == [], (name, _overflow(page))


@pytest.mark.parametrize("size", sorted(SIZES))
def test_operator_pages_fit_and_read_plainly(world, browser_page, login, size):
    page = browser_page
    page.set_viewport_size(dict(zip(("width", "height"), SIZES[size], strict=True)))
    page.add_init_script(RECORD_VIOLATIONS)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text))
    login(page, ADMIN, ADMIN_PASSWORD)
    conversation = world["conversation"]
    pages = {
        "run-modes": "/console/scenarios/",
        "run-mode-new": "/console/scenarios/new/?template=continuity",
        "run-mode-edit": f"/console/scenarios/{world['scenario']}/",
        "lockouts": "/console/lockouts/",
        "not-found": "/console/no-such-page/",
        "entry-form": f"/console/worldbooks/{world['book']}/?edit=gate",
        "card-import": "/console/characters/import/",
        "story": f"/console/conversations/{conversation}/story/",
        "agent": f"/console/conversations/{conversation}/agent/",
        "summaries": f"/console/conversations/{conversation}/summaries/",
        "memory": "/console/memory/",
        "memory-entry": f"/console/memory/entries/{world['entry']}/",
        "memory-pack": f"/console/conversations/{conversation}/memory-pack/",
        "memory-jobs": "/console/memory/jobs/",
    }
    for name, url in pages.items():
        _visit(page, name, url, size)
        if name == "not-found":
            assert page.locator("#not-found h1").inner_text() == "Page not found"
            assert page.locator("header.topbar nav a").count() > 3  # the menu is there
        elif name == "entry-form":
            form = page.locator("form.wb-entry-form")
            assert form.locator("label[for=id_e-keys]").inner_text() == "Keywords"
            advanced = form.locator("details.wb-advanced")
            conflict = advanced.locator("label[for=id_e-conflict_key]")
            assert not conflict.is_visible()
            advanced.locator("summary").click()
            assert conflict.is_visible() and conflict.inner_text() == "Conflict group"
        elif name == "card-import":
            radio = page.locator("#id_on_duplicate_0")
            text = page.locator("label[for=id_on_duplicate_0]")
            box, line = radio.bounding_box(), text.bounding_box()
            assert box["width"] < 30 and line["height"] < 40  # the box beside its text
        elif name == "lockouts":
            row = page.locator("#lockout-account-clerk-203\\.0\\.113\\.7")
            assert "clerk" in row.inner_text() and row.locator("button").is_visible()
        elif name == "story":
            assert "Waiting for the player" in page.locator("#story-status").inner_text()
            assert not page.locator("#story-details dl").is_visible()  # the codes, folded
    assert violations(page, errors) == []


def test_a_template_is_created_as_shown(world, browser_page, login, orm):
    page = browser_page
    page.set_viewport_size({"width": 390, "height": 844})
    login(page, ADMIN, ADMIN_PASSWORD, next_path="/console/scenarios/new/")
    with page.expect_navigation():
        page.click("#scenario-templates >> text=Continuity on")
    assert page.locator("#id_agenticV2__on").is_checked()
    page.fill("#id_name", "Keeps track")
    page.click("#capability-compact .ops-json summary")  # experts: Compact as JSON
    page.fill("#id_compact", "")
    with page.expect_navigation():
        page.click("#scenario-save")
    assert "Run mode “Keeps track” created." in page.locator(".flash").inner_text()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "run-mode-created-phone.png"), full_page=True)

    def saved():
        from roleplay.models import Scenario

        return Scenario.objects.get(name="Keeps track").agentic_v2

    v2 = orm(saved)
    assert v2["enabled"] and v2["modelConfigs"]["orchestrator"] == "Reply model"
    assert v2["maxToolCalls"] == 7
