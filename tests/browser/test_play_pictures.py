"""A chat picture on the play page: the reply's text first, then "Drawing…" in its message
(``image.scheduled``), then its thumbnail, which opens the full image (``image.ready``);
after a reload the stored slot is shown the same way. The drawing (the Celery task's body,
``pictures.draw``) runs here, in the test's process, because the live server's tasks go to
a queue no worker of this suite consumes; its announcement reaches the page through Redis
like a worker's would."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from images.models import ImageSlot
from roleplay.frontloop import pictures
from roleplay.llm.scripted_server import Reply
from tests.browser.play_support import PlayPage
from tests.frontloop.pictures_support import BLOCK, call, picture_scenario

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def pictured(operator_user, tenant, conversation, model_config, llm):
    llm.images.reset()
    return picture_scenario(tenant, conversation, model_config, llm)


def test_the_picture_shows_drawing_then_the_image(pictured, llm, browser_page, login, orm):
    llm.enqueue(
        call("actor"),
        Reply(content="Mira hands the guard the key."),
        call("generate_image"),
        call("over"),
        Reply(content=BLOCK),  # the producer, when the drawing runs below
    )
    play = PlayPage(browser_page, pictured).open(login)
    page = play.page
    page.fill("#input", "Mira, hand the guard the key - and show me the moment")
    page.click("#send")
    reply = play.reply
    expect(reply.locator(".text")).to_have_text("Mira hands the guard the key.")
    drawing = reply.locator(".msg-pictures figure.picture.pending")
    expect(drawing).to_have_text("Drawing…")

    slot = orm(lambda: ImageSlot.objects.get(conversation_id=pictured.pk))
    request = {"player_input": "show me", "segment": "Mira hands the guard the key.",
               "index": 0, "controller": "controller"}  # fmt: skip
    assert orm(pictures.draw, str(slot.pk), request) == "ready"

    image = reply.locator(".msg-pictures figure.picture.ready img")
    expect(image).to_be_visible()
    link = reply.locator(".msg-pictures figure.picture.ready a")
    href = link.get_attribute("href")
    assert href.startswith("/console/images/files/")
    full = page.request.get(href)
    assert full.status == 200 and full.headers["content-type"] == "image/png"
    play.reload()
    expect(play.reply.locator(".msg-pictures figure.picture.ready img")).to_be_visible()
    assert play.problems() == []
