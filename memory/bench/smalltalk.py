"""Small talk for the synthetic conversations (pure): greetings, filler, reactions and
goodbyes, put together from templates and word pools so that the turns around the facts
vary and some of them share words with the questions (a neighbour's dog, music in a café),
as real chat does.
"""

from __future__ import annotations

import random

GREETINGS = (
    "Hey {other}! How have you been?",
    "Hi {other}, long time no chat!",
    "{other}! Good to hear from you. What's new?",
    "Morning {other}, how was your week?",
    "Hey {other}, got a minute? I need a break from everything.",
    "Evening {other}! Hope your day was better than mine.",
)
GREETING_REPLIES = (
    "Hey! I've been good, busy as always. You?",
    "Not bad at all, thanks for asking. What about you?",
    "Hi {other}! Tired but happy. How are things on your side?",
    "Oh hey, perfect timing, I was just making tea.",
    "All good here! It's been a strange week though.",
)
GOODBYES = (
    "Anyway, I should get going. Talk soon!",
    "Take care, {other}! Let's catch up again soon.",
    "Right, dinner is calling. Bye for now!",
    "Great chatting as always. Speak later!",
    "I'm off to bed, night {other}!",
)
REACTIONS = (
    "Haha, that sounds about right.",
    "Oh no, that's rough.",
    "Same here, honestly.",
    "I know exactly what you mean.",
    "Ugh, I hate when that happens.",
    "Sounds like a nice way to spend the day.",
    "Ha! Classic.",
    "Wait, really?",
    "Oh nice, I've been wanting to try that.",
    "That made me laugh, thank you.",
    "Fair enough, I'd probably do the same.",
    "Hmm, I never thought about it that way.",
)
FACT_REACTIONS = (
    "Wow, that's huge news! Tell me everything.",
    "No way! I'm so happy for you, {other}.",
    "That's amazing, you must be thrilled.",
    "Oh, that sounds lovely.",
    "Wait, seriously? That's great!",
    "Ha, I did not see that coming. Good for you!",
    "Oh wow. How are you feeling about it?",
    "That's so you, honestly. I love it.",
    "Oh really? I didn't know that about you.",
    "Ha, noted! I'll remember that.",
    "Interesting, tell me more.",
)
FOLLOW_UPS = (
    " What about you?",
    " Anyway, how's your week going?",
    " Do you ever get like that?",
    " Not much else to report.",
    " Ugh.",
    "",
    "",
    "",
)
FILLERS = (
    "The weather here has been {weather} all week.",
    "This weekend I mostly {chore} and {chore2}.",
    "I made {dish} for dinner last night and it turned out {outcome}.",
    "Have you seen {show}? I watched {n} episodes in one go.",
    "Work has been {workstate}, my manager keeps {managerthing}.",
    "I spent the morning {errand}, so exciting, I know.",
    "My neighbour's {animal} kept me up half the night again.",
    "Traffic into the city was a nightmare today, it took me {n}0 minutes.",
    "They were playing {music} at the café, not really my thing.",
    "I keep meaning to read more but I just end up scrolling on my phone.",
    "Did you catch the match on Saturday? What a finish.",
    "I'm trying to drink less coffee but it is not going well.",
    "I finally cleaned out the fridge, there were things in there from {month}.",
    "My phone screen cracked again, third time this year.",
    "We ordered {dish} from that new place, it was {outcome}.",
    "I've been sleeping terribly, I think it's the {weather} weather.",
    "I went for a long walk by the {place} to clear my head.",
    "Our internet was down for {n} hours, I had to actually talk to people.",
    "I bought a plant for the kitchen, let's see how long it survives.",
    "My mum called for an hour about {topic}.",
)
PHOTOS = (
    ("Look at this view from my walk!", "a photo of a foggy hill with a wooden fence"),
    ("This is what I'm dealing with today.", "a photo of a pile of laundry on a bed"),
    ("Dinner tonight, not bad right?", "a photo of a plate of pasta with basil"),
    ("Saw this on the way home.", "a photo of a street mural of a tiger"),
)
WORDS = {
    "weather": ("grey and drizzly", "weirdly warm", "freezing", "windy", "humid"),
    "chore": ("did laundry", "cleaned the bathroom", "caught up on sleep", "went grocery "
              "shopping", "paid some bills"),
    "dish": ("a vegetable curry", "lasagne", "a stir fry", "pizza", "tacos", "a big soup"),
    "outcome": ("surprisingly good", "a bit burnt", "way too salty", "fine, I guess"),
    "show": ("that baking competition", "the new crime series", "the space documentary",
             "that dating show everyone talks about"),
    "n": ("2", "3", "4", "5", "6"),
    "workstate": ("chaotic", "slow", "stressful", "weirdly calm", "nonstop meetings"),
    "managerthing": ("moving the deadlines", "asking for reports", "scheduling meetings",
                     "changing the plan"),
    "errand": ("at the post office", "waiting for a plumber", "returning parcels",
               "queuing at the bank"),
    "animal": ("dog", "rooster", "parrot", "cat"),
    "music": ("loud jazz", "eighties pop", "some techno", "country music"),
    "month": ("March", "last summer", "before Christmas"),
    "place": ("canal", "park", "river", "old railway line"),
    "topic": ("my cousin's wedding plans", "her new phone", "the garden", "our holiday"),
}  # fmt: skip


def _fill(template: str, rng: random.Random, other: str) -> str:
    values = {key: rng.choice(options) for key, options in WORDS.items()}
    values["chore"], values["chore2"] = rng.sample(WORDS["chore"], 2)
    return template.format(other=other, **values)


def greeting(rng: random.Random, other: str) -> str:
    return rng.choice(GREETINGS).format(other=other)


def greeting_reply(rng: random.Random, other: str) -> str:
    return rng.choice(GREETING_REPLIES).format(other=other)


def goodbye(rng: random.Random, other: str) -> str:
    return rng.choice(GOODBYES).format(other=other)


def fact_reaction(rng: random.Random, other: str) -> str:
    return rng.choice(FACT_REACTIONS).format(other=other)


def filler(rng: random.Random, other: str) -> tuple[str, str | None]:
    """A filler turn: (text, photo caption or None). A third are short reactions."""
    roll = rng.random()
    if roll < 0.05:
        text, caption = rng.choice(PHOTOS)
        return text, caption
    if roll < 0.35:
        return rng.choice(REACTIONS), None
    return _fill(rng.choice(FILLERS), rng, other) + rng.choice(FOLLOW_UPS), None
