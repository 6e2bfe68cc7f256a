"""SillyTavern regex scripts: the find/replace rules cards, presets and operators carry
(``extensions.regex_scripts``), stored per character, per preset and per tenant, and run at
the points SillyTavern runs them (player input, the model's reply, world info, the prompt's
history, the chat's display). ``engine`` is the pure part; see ``docs/regex.md``."""
