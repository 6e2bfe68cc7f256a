"""Chat pictures of the front tool loop, end to end: the controller asks for
``generate_image`` after the Actor's segment; once the turn has ended the message has one
pending slot, a real Celery worker writes its prompt with the producer model and draws it
on the scripted image backend; the slot ends ``ready``, ``blocked`` or ``failed`` and the
reply stays as it was stored."""

from __future__ import annotations

import json

import pytest

from images.models import ImageSlot
from memory.models import Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelCall, Turn
from tests.frontloop.pictures_support import BLOCK, call, final, picture_scenario, run, script
from tests.ws.test_chat_socket import connect, receive_until

pytestmark = pytest.mark.django_db(transaction=True)


def test_one_picture_is_bound_to_the_reply_and_drawn(celery_worker, api, pictured, llm):
    script(llm)
    body = run(api, pictured, "Mira, hand the guard the key - and show me the moment", "p-1")
    reply = body["reply"]
    assert reply["content"] == "Mira hands the guard the key."
    slot = final(reply["id"])
    assert (slot.status, slot.index, str(slot.conversation_id)) == ("ready", 0, str(pictured.pk))
    assert slot.file and slot.thumbnail
    assert "brass key" in slot.prompt and slot.evidence["prompt"]["source"] == "producer"
    assert slot.prompt.startswith('<image_prompt camera="medium" aspect="1:1">')
    [drawn] = llm.images.requests
    assert "brass key" in json.dumps(drawn)
    turn = Turn.objects.get(pk=body["turn"]["id"])
    assert turn.trace["front_loop"]["images"] == [0] and turn.trace["front_loop"]["slots"] == [0]
    assert ModelCall.objects.filter(tenant=pictured.tenant, purpose="image_prompt").count() == 1
    assert ImageSlot.objects.filter(conversation_id=pictured.pk).count() == 1  # exactly one
    message = Message.objects.get(pk=reply["id"])
    assert message.content == "Mira hands the guard the key."  # the reply as it was stored


def test_a_backend_failure_fails_the_slot_and_keeps_the_reply(celery_worker, api, pictured, llm):
    llm.images.script.status = 503
    script(llm)
    reply = run(api, pictured, "Show me.", "p-2")["reply"]
    slot = final(reply["id"])
    assert (slot.status, slot.code, slot.file) == ("failed", "backend_error", "")
    assert Message.objects.get(pk=reply["id"]).content == "Mira hands the guard the key."


def test_a_moderation_block_blocks_the_slot(celery_worker, api, pictured, llm):
    llm.images.script.blocked = True
    script(llm)
    reply = run(api, pictured, "Show me.", "p-3")["reply"]
    slot = final(reply["id"])
    assert slot.status == "blocked" and slot.file == ""


def test_a_producer_failure_draws_the_segment_and_says_so(celery_worker, api, pictured, llm):
    script(llm, producer=Reply(status=400, error_body={"error": {"message": "no"}}))
    reply = run(api, pictured, "Show me.", "p-4")["reply"]
    slot = final(reply["id"])
    assert slot.status == "ready"
    assert slot.evidence["prompt"]["source"] == "segment_text"
    assert "producer_failed" in slot.evidence["prompt"]["degraded"]
    assert "hands the guard the key" in slot.prompt


def test_without_an_image_config_generate_image_is_not_offered(
    api, tenant, conversation, model_config, llm
):
    picture_scenario(tenant, conversation, model_config, llm, image_config=False)
    llm.enqueue(call("actor"), Reply(content="Words only."), call("over"))
    run(api, conversation, "Show me.", "p-5")
    controller = [r for r in llm.requests if r["model"] == "controller-model"][0]
    assert [t["function"]["name"] for t in controller["tools"]] == ["actor", "over"]
    assert not ImageSlot.objects.exists()


@pytest.mark.asyncio
async def test_the_socket_gets_the_text_first_then_the_picture(celery_worker, pictured, llm):
    script(llm)
    comm = await connect(pictured)
    body = {"type": "user_message", "client_message_id": "p-6", "content": "Show me."}
    await comm.send_to(text_data=json.dumps(body))
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed"
    message_id = events[-1]["assistant_message_id"]
    scheduled = json.loads(await comm.receive_from(timeout=10))
    while scheduled["type"] != "image.scheduled":
        scheduled = json.loads(await comm.receive_from(timeout=10))
    assert scheduled["message_id"] == message_id and scheduled["index"] == 0
    assert scheduled["turn_id"] == events[-1]["turn_id"]
    ready = json.loads(await comm.receive_from(timeout=60))
    while ready["type"] not in ("image.ready", "image.failed", "image.blocked"):
        ready = json.loads(await comm.receive_from(timeout=60))
    assert ready["type"] == "image.ready" and ready["message_id"] == message_id
    assert ready["url"] and ready["thumbnail_url"]
    await comm.disconnect()


def test_a_chat_export_keeps_the_picture_s_link(celery_worker, api, pictured, llm):
    script(llm)
    reply = run(api, pictured, "Show me.", "p-7")["reply"]
    assert final(reply["id"]).status == "ready"
    exported = api.get(f"/api/v1/conversations/{pictured.pk}/export?format=sillytavern")
    assert exported.status_code == 200
    lines = [json.loads(line) for line in exported.content.decode().splitlines() if line]
    [pictured_line] = [x for x in lines if x.get("extra", {}).get("image")]
    assert pictured_line["mes"] == "Mira hands the guard the key."
    link = pictured_line["extra"]["image"]
    assert link.startswith("/api/v1/images/files/")
    assert api.get(link).status_code == 200


def test_deleting_the_conversation_deletes_its_pictures(celery_worker, api, pictured, llm):
    from images import files

    script(llm)
    reply = run(api, pictured, "Show me.", "p-8")["reply"]
    slot = final(reply["id"])
    assert slot.status == "ready" and files.exists(slot.file)
    assert api.delete(f"/api/v1/conversations/{pictured.pk}/").status_code == 204
    assert not ImageSlot.objects.filter(pk=slot.pk).exists()
    assert not files.exists(slot.file) and not files.exists(slot.thumbnail)


def test_a_visual_beat_pictures_itself_once(celery_worker, api, pictured, llm):
    llm.enqueue(
        call("actor", responseMode="visual_beat"),
        Reply(content="The key glints in the torchlight."),
        call("generate_image"),  # the same segment: refused as already scheduled
        call("over"),
        Reply(content=BLOCK),
    )
    body = run(api, pictured, "Show me.", "p-9")
    slot = final(body["reply"]["id"])
    assert slot.status == "ready"
    assert ImageSlot.objects.filter(conversation_id=pictured.pk).count() == 1
    log = Turn.objects.get(pk=body["turn"]["id"]).trace["front_loop"]["log"]
    assert [e.get("by") for e in log if e.get("tool") == "generate_image"][0] == "visual_beat"
