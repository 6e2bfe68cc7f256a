"""The run-mode form in plain language: a guided section per capability whose fields,
defaults, limits and choices come from the validator's models, each with a sentence; "Edit
as JSON" for experts; templates to start from. What the form does not show is kept."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from django.utils.html import escape

from roleplay.models import ModelConfig, Scenario
from roleplay.scenarios.config import AgenticV2, Compact, StoryV1
from roleplay.scenarios.forms import field_name
from roleplay.scenarios.guide import CAPABILITIES, all_paths, settings_of
from roleplay.scenarios.help import HELP
from roleplay.scenarios.services import create_scenario

pytestmark = pytest.mark.django_db

LIST = "/console/scenarios/"


@pytest.fixture
def actor(tenant):
    return ModelConfig.objects.create(
        tenant=tenant, name="actor", provider="llama_cpp", model="m", is_default=True
    )


class _Fields(HTMLParser):
    """What a browser would post for a form: inputs, checked boxes, selected options and
    textareas, by name (several values for a checkbox list)."""

    def __init__(self):
        super().__init__()
        self.values: dict[str, list[str]] = {}
        self._select: str | None = None
        self._first: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "button"):
            box = a.get("type") in ("checkbox", "radio")
            if box and "checked" not in a:
                return
            self.values.setdefault(name, []).append(a.get("value", "on" if box else ""))
        elif tag == "select" and name:
            self._select, self._first = name, None
        elif tag == "option" and self._select:
            if self._first is None:
                self._first = a.get("value", "")
            if "selected" in a:
                self.values[self._select] = [a.get("value", "")]
        elif tag == "textarea" and name:
            self._textarea = name
            self.values[name] = [""]

    def handle_endtag(self, tag):
        if tag == "select" and self._select:
            self.values.setdefault(self._select, [self._first or ""])
            self._select = None
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data):
        if self._textarea:
            self.values[self._textarea][0] += (
                data.removeprefix("\n") if not self.values[self._textarea][0] else data
            )


def _posted(client, url: str) -> dict[str, list[str]]:
    response = client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    form = html[html.index('<form method="post" novalidate class="ops-form"') :]
    parser = _Fields()
    parser.feed(form[: form.index("</form>")])
    return parser.values


def _set(values: dict, name: str, value) -> None:
    values[name] = value if isinstance(value, list) else [str(value)]


def test_every_setting_has_a_sentence_and_no_sentence_is_stale():
    paths = set()
    for key, model in (("agenticV2", AgenticV2), ("storyV1", StoryV1), ("compact", Compact)):
        paths |= set(all_paths(model, key))
    assert paths == set(HELP)
    for path, (label, sentence) in HELP.items():
        assert label and "\n" not in sentence and sentence.endswith("."), path
        assert "_" not in label or path.endswith("enabledTools"), (path, label)


def test_the_new_form_shows_each_setting_with_its_default_and_limits(operator_client, actor):
    page = operator_client.get(f"{LIST}new/").content.decode()
    for capability in CAPABILITIES:
        assert f'id="capability-{capability}"' in page
        for setting in settings_of(capability):
            assert f'name="{field_name(setting.path)}"' in page, setting.path
            assert escape(setting.label) in page
    assert 'name="agenticV2__maxToolCalls" value="7" min="1" max="20"' in page
    assert "At most this many specialist calls a turn. · 1–20 · default 7" in page
    assert 'name="compact__triggerRatio" value="0.8" min="0" max="1" step="any"' in page
    assert "Edit as JSON" in page and "More settings" in page
    for label in ("Continuity on", "Story mode", "Long chats"):
        assert label in page


def test_continuity_on_template_saves_as_shown(operator_client, actor):
    values = _posted(operator_client, f"{LIST}new/?template=continuity")
    assert values["agenticV2__on"] == ["on"] and values["name"] == ["Continuity on"]
    response = operator_client.post(f"{LIST}new/?template=continuity", values)
    assert response.status_code == 302, response.content.decode()[-3000:]
    scenario = Scenario.objects.get()
    v2 = scenario.agentic_v2
    assert v2["enabled"] and v2["modelConfigs"]["actor"] == "actor"
    assert v2["modelConfigs"]["orchestrator"] == "actor" and v2["maxToolCalls"] == 7
    assert set(v2["modelConfigs"]["specialists"].values()) == {"actor"}
    assert scenario.story_v1 is None and scenario.compact is None
    assert "Agent V2" in operator_client.get(LIST).content.decode()


def test_story_mode_then_guided_edit_keeps_what_the_form_does_not_show(
    operator_client, tenant, actor
):
    policy = {"world": {}, "narrative": {}}
    scenario = create_scenario(
        tenant,
        name="Tale",
        model_config=actor,
        storyV1={"modelConfigId": str(actor.pk), "policy": policy},
    )
    url = f"{LIST}{scenario.pk}/"
    values = _posted(operator_client, url)
    assert values["storyV1__on"] == ["on"] and values["storyV1__modelConfigId"] == ["actor"]
    _set(values, "storyV1__seed", 42)
    assert operator_client.post(url, values).status_code == 302
    scenario.refresh_from_db()
    assert scenario.story_v1["seed"] == 42
    assert scenario.story_v1["policy"] == policy  # JSON-only, kept
    assert scenario.story_v1["modelConfigId"] == str(actor.pk)  # the same config, as stored


def test_an_edited_json_box_wins_over_the_fields(operator_client, tenant, actor):
    scenario = create_scenario(
        tenant, name="Tale", model_config=actor, storyV1={"modelConfigId": "actor"}
    )
    url = f"{LIST}{scenario.pk}/"
    values = _posted(operator_client, url)
    _set(values, "storyV1__seed", 42)  # ignored: the JSON below was changed
    _set(values, "storyV1", json.dumps({"modelConfigId": "actor", "seed": 7}))
    assert operator_client.post(url, values).status_code == 302
    scenario.refresh_from_db()
    assert scenario.story_v1["seed"] == 7


def test_switching_a_part_off_keeps_its_settings(operator_client, tenant, actor):
    scenario = create_scenario(
        tenant, name="Tale", model_config=actor, storyV1={"modelConfigId": "actor", "seed": 9}
    )
    url = f"{LIST}{scenario.pk}/"
    values = _posted(operator_client, url)
    values.pop("storyV1__on")
    assert operator_client.post(url, values).status_code == 302
    scenario.refresh_from_db()
    assert scenario.story_v1["enabled"] is False and scenario.story_v1["seed"] == 9
    assert "Story</span>" not in operator_client.get(LIST).content.decode()
    values = _posted(operator_client, url)
    assert "storyV1__on" not in values and values["storyV1__seed"] == ["9"]


def test_a_refused_guided_value_is_shown_by_its_field(operator_client, actor):
    values = _posted(operator_client, f"{LIST}new/?template=continuity")
    _set(values, "agenticV2__routingMode", "auto")  # needs an escalation model
    response = operator_client.post(f"{LIST}new/?template=continuity", values)
    assert response.status_code == 422
    page = response.content.decode()
    field = page[page.index('id="field-agenticV2__escalationModelConfigId"') :]
    assert "is required by routingMode auto" in field[: field.index("</div>")]
    more = page[: page.index('id="field-agenticV2__escalationModelConfigId"')]
    assert more.rindex('<details class="ops-more" open>') > more.rindex("capability-agenticV2")
    assert not Scenario.objects.exists()


def test_viewers_see_the_form_read_only(viewer_client, tenant, actor):
    scenario = create_scenario(tenant, name="Tale", model_config=actor)
    page = viewer_client.get(f"{LIST}{scenario.pk}/").content.decode()
    field = page[page.index('name="agenticV2__maxToolCalls"') :]
    assert field[: field.index(">")].count("disabled") == 1
    assert "Read only" in page
