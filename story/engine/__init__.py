"""Story's pure engine (seed 002, Story): the program's side of a story (timing, capacity,
dice, evidence, persistence rules) with no Django, no database and no model. Models only
interpret meaning; every rule that decides what may change lives here and is unit- and
property-tested."""
