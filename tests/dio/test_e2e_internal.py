"""DIO end to end with our own DIO, no test double anywhere: the player says "from now on
answer in short sentences", the front loop's ``schedule_dio`` submits those words to the
internal backend, the compile (the Celery task's body) asks the scripted model server for
the complete replacement, and the *next* turn's Actor request carries the compiled prompt
in the preset's ``roleplay`` slot, with the control text, the history and the question kept.
A compile that fails leaves the normal prompt."""

from __future__ import annotations

import json

import pytest

from roleplay.dio import compiling
from roleplay.dio.models import DioPromptVersion, DioTask
from roleplay.llm.scripted_server import Reply
from roleplay.models import Turn
from tests.dio.turn_support import actor_requests, call, dio_scenario, run

pytestmark = pytest.mark.django_db(transaction=True)

RAW = "From now on, answer in short sentences."
COMPILED = "You are Mira, a lighthouse keeper. You answer in short sentences."
DESCRIPTION = "A lighthouse keeper."


def _compile_reply(text: str) -> Reply:
    body = {"compiledPrompt": text, "changeset": [{"op": "add", "text": "short sentences"}]}
    return Reply(content=json.dumps(body))


def _first_turn(api, conversation, llm) -> DioTask:
    llm.enqueue(call("schedule_dio"), call("actor"), Reply(content="As you wish."), call("over"))
    body = run(api, conversation, RAW, "e2e-1")
    task = DioTask.objects.get(request_id=f"{body['turn']['id']}:dio")
    assert task.instruction == RAW and task.status == "processing"
    return task


def _next_turn(api, conversation, llm) -> list[dict]:
    llm.enqueue(call("actor"), Reply(content="The gate. Locked."), call("over"))
    run(api, conversation, "What is at the gate?", "e2e-2")
    return actor_requests(llm)[-1]["messages"]


def test_an_instruction_compiled_by_our_dio_reaches_the_next_turns_actor(
    api, tenant, conversation, model_config, llm
):
    dio_scenario(tenant, conversation, model_config, llm)
    task = _first_turn(api, conversation, llm)
    llm.enqueue(_compile_reply(COMPILED))
    compiling.run(str(task.pk))
    task.refresh_from_db()
    assert (task.status, task.prompt_changed) == ("succeeded", True)
    messages = _next_turn(api, conversation, llm)
    contents = [m["content"] for m in messages]
    [slot] = [m for m in messages if COMPILED in m["content"]]
    assert slot["role"] == "system"
    assert slot["content"].index("Stay in character") < slot["content"].index(COMPILED)
    assert not any(DESCRIPTION in c and COMPILED not in c for c in contents)
    assert RAW in contents and "As you wish." in contents  # the history kept, in order
    assert contents.index(RAW) < contents.index("As you wish.")
    assert (messages[-1]["role"], messages[-1]["content"]) == ("user", "What is at the gate?")
    turn = Turn.objects.order_by("-started_at").first()
    assert turn.trace["dio"]["status"] == "applied" and turn.trace["dio"]["version"] == 1


def test_a_failed_compile_leaves_the_normal_prompt(api, tenant, conversation, model_config, llm):
    dio_scenario(tenant, conversation, model_config, llm)
    task = _first_turn(api, conversation, llm)
    llm.enqueue(Reply(content="not the JSON the compiler must answer"))
    compiling.run(str(task.pk))
    task.refresh_from_db()
    assert task.status == "failed" and task.error_code
    assert not DioPromptVersion.objects.exists()
    contents = [m["content"] for m in _next_turn(api, conversation, llm)]
    assert any(DESCRIPTION in c for c in contents)
    assert not any(COMPILED in c for c in contents)
