"""Writes of the conversation runtime, one module per concept (as Zulip's ``actions``).

Every door (REST view, console page, management command, seed data) creates, changes and
deletes the runtime's rows through these functions, so each rule is enforced in one place:

- :mod:`.rows`: how a row is saved: the model's field validators, storable text, related
  objects of the same tenant, a unique violation named as a :class:`~roleplay.errors.Duplicate`;
- :mod:`.characters`, :mod:`.players`, :mod:`.model_configs`, :mod:`.conversations`: one
  concept each; deleting anything that takes conversations with it goes through
  :func:`.conversations.delete_conversations`, which also clears the rows other capabilities
  keep by conversation id without a foreign key;
- :mod:`.config_check`: the console's "test this config" completion.

Failures are :mod:`roleplay.errors`, never HTTP: the API's exception handler and the console
forms each turn them into their own answer.
"""
