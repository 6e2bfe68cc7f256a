"""Prompt assembly: from a preset and a conversation to the chat messages the Actor reads.

The package splits the work the way SillyTavern users think about it, one concept a module:

- presets: ordered named prompts (``roleplay``, ``auto_reply``, ...) with their injection
  rules and the markers where history and the player's input go;
- ``syntax``: the ``{{...}}`` macro syntax, found in one linear scan and shared by the two
  engines below, so they never disagree about what counts as a macro or an outlet marker;
- ``macros``: expands ``{{char}}``, ``{{getvar::name}}``, ``{{roll::1d20}}`` and the rest,
  leaving ``{{outlet::name}}`` slots for placement;
- ``placement``: puts context blocks (worldbook entries, summaries, tool results) at one of
  eight positions of a message layout, the seed's ``placeContextBlocks``;
- assembly: preset, then layout, then placement, then the token budget.

``syntax``, ``macros`` and ``placement`` are pure (no Django, no tokenizer): they take plain
data and injected values (a clock reading, a seed), so they are unit- and property-tested fast
and the same code serves the turn, the preset preview and the benchmarks.
"""
