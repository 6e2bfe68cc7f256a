"""An OpenAI-compatible ``/moderations`` endpoint, reached through a model config (its base
URL, model and the API key named by its environment variable): which categories it flags.

It is called on the turn's admission path, so its timeout is short (the config's, at most
``MAX_TIMEOUT_S``); an endpoint that fails lets the text through and is logged, so an outage
of the moderation service does not stop every chat (the keyword and regex lists still
apply)."""

from __future__ import annotations

import logging

import openai

from roleplay.llm.gateway import provider_config

logger = logging.getLogger(__name__)

MAX_TIMEOUT_S = 10.0


def flagged(config, text: str) -> list[str]:
    """The categories the endpoint of ``config`` flags in ``text`` ([] when none or when it
    cannot answer)."""
    settings = provider_config(config)
    client = openai.OpenAI(
        base_url=settings.base_url or None,
        api_key=settings.api_key or "not-needed",
        timeout=min(settings.timeout_ms / 1000, MAX_TIMEOUT_S),
        max_retries=0,
    )
    try:
        answer = client.moderations.create(model=settings.model, input=text)
    except openai.OpenAIError:
        logger.warning("moderation endpoint of %s failed; text let through", config.pk,
                       exc_info=True)  # fmt: skip
        return []
    found: list[str] = []
    for result in answer.results:
        categories = result.categories.model_dump(by_alias=True)
        found += [name for name, on in categories.items() if on and name not in found]
    return found
