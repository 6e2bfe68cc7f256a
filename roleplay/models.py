"""Conversation runtime data: model configs and calls, characters, conversations, turns."""

from __future__ import annotations

import uuid

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from console.scoping import TenantScopedModel
from roleplay.groups.models import ConversationMember, GroupMode  # noqa: F401
from roleplay.llm.tokenizers.models import TokenizerFields, TokenizerFile  # noqa: F401
from roleplay.textgen.models import TextCompletionFields
from roleplay.validation import validate_api_key_env, validate_extra


class Preset(TenantScopedModel):
    """An ordered list of prompts with two markers (where the history goes, where the
    player's input goes), and the named prompts capabilities look up (``roleplay``,
    ``auto_reply``, ``director``...). ``prompts`` holds ``roleplay.prompting.presets``'s
    validated shape; a ModelConfig without a preset uses the shipped default one.
    ``version`` moves on every save (compare-and-set for concurrent editors)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True, default="", max_length=2000)
    prompts = models.JSONField(default=list)
    # Whether history replies carry their stored reasoning back into the Actor's prompt, as
    # ``<think>…</think>`` before their text (SillyTavern's ``reasoning.add_to_prompts``).
    reasoning_in_prompt = models.BooleanField(default=False, db_default=False)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="preset_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Provider(models.TextChoices):
    OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible HTTP"
    LLAMA_CPP = "llama_cpp", "Local llama.cpp"
    TEXT_COMPLETION = "text_completion", "Text-completion HTTP (KoboldCpp, llama.cpp, vLLM)"


class RoleOrder(models.TextChoices):
    """How messages are ordered for the server (``roleplay.llm.roles``)."""

    AUTO = "auto", "As built; reshaped when the server refuses the order"
    STRICT = "strict", "One system message first, then user and assistant in turn"
    NO_SYSTEM = "no_system", "User and assistant in turn; no system message"


class PromptCache(models.TextChoices):
    """Whether to ask the server to cache the prompt's prefix (``docs/llm.md``)."""

    AUTO = "auto", "Server default (the bundled model caches in memory)"
    ON = "on", "Ask for it (sends cache_prompt: true, as llama.cpp's server takes)"
    OFF = "off", "Ask for none (sends cache_prompt: false; the bundled model keeps no cache)"


class ModelConfig(TextCompletionFields, TokenizerFields, TenantScopedModel):
    """How to reach a model. The API key is never stored: only the env var that holds it.
    A ``text_completion`` one also names its wire, instruct template and samplers
    (``roleplay.textgen``). Its budgets count with its ``tokenizer``
    (``roleplay.llm.tokenizers``)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    provider = models.CharField(max_length=32, choices=Provider.choices)
    model = models.CharField(max_length=200)
    base_url = models.URLField(max_length=500, blank=True, default="")
    api_key_env = models.CharField(
        max_length=100, blank=True, default="", validators=[validate_api_key_env]
    )
    context_limit = models.PositiveIntegerField(
        default=8192, validators=[MinValueValidator(256), MaxValueValidator(2_000_000)]
    )
    max_output_tokens = models.PositiveIntegerField(
        default=512, validators=[MinValueValidator(1), MaxValueValidator(200_000)]
    )
    temperature = models.FloatField(
        default=0.8, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)]
    )
    top_p = models.FloatField(
        default=1.0, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    timeout_ms = models.PositiveIntegerField(
        default=60000, validators=[MinValueValidator(100), MaxValueValidator(600_000)]
    )
    extra = models.JSONField(default=dict, blank=True, validators=[validate_extra])
    role_order = models.CharField(max_length=16, choices=RoleOrder.choices, default=RoleOrder.AUTO)
    prompt_cache = models.CharField(
        max_length=8, choices=PromptCache.choices, default=PromptCache.AUTO
    )
    preset = models.ForeignKey(
        Preset, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    is_default = models.BooleanField(default=False)
    is_demo = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="modelconfig_unique_name"),
            models.UniqueConstraint(
                fields=["tenant"], condition=Q(is_default=True), name="modelconfig_one_default"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ModelCall(TenantScopedModel):
    """One call to a model: what for, tokens, latency, outcome. Never the prompt or key."""

    config = models.ForeignKey(ModelConfig, null=True, on_delete=models.SET_NULL)
    purpose = models.CharField(max_length=50)
    model = models.CharField(max_length=200)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    total_tokens = models.PositiveIntegerField(default=0)
    # Of ``input_tokens``, those the server reported serving from its prompt cache.
    cached_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.FloatField(default=0)
    attempts = models.PositiveSmallIntegerField(default=1)
    outcome = models.CharField(max_length=16)
    error_code = models.CharField(max_length=64, null=True, blank=True)
    turn = models.ForeignKey("roleplay.Turn", null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)


class Scenario(TenantScopedModel):
    """How a character's conversations run (seed 002): the Actor's model config (and preset,
    else the config's), and the config objects ``agenticV2``, ``storyV1``, ``compact`` and
    ``preActorDirector`` as the seed writes them (``roleplay.scenarios.config`` validates them;
    an absent one is null and off). A character has a default scenario; a conversation may
    name another. Changes go by compare-and-set on ``version``."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="", max_length=20_000)
    model_config = models.ForeignKey(
        ModelConfig, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    preset = models.ForeignKey(
        Preset, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Where the front tool loop's chat pictures are drawn (``docs/images.md``); none: the
    # loop offers no ``generate_image``.
    image_config = models.ForeignKey(
        "images.ImageConfig", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    agentic_v2 = models.JSONField(null=True, blank=True)
    story_v1 = models.JSONField(null=True, blank=True)
    compact = models.JSONField(null=True, blank=True)
    pre_actor_director = models.JSONField(null=True, blank=True)
    # Whose memory a turn reads: ours (``internal``), an ``external`` prepare/commit
    # service (``external_memory``), or none (``off``).
    memory_runtime = models.CharField(max_length=16, default="internal")
    external_memory = models.JSONField(null=True, blank=True)
    # How turns select from the character's books (``roleplay.scenarios.worldbook_config``).
    worldbook = models.JSONField(null=True, blank=True)
    # DIO (``roleplay.scenarios.config.Dio``): whose long-term instructions rewrite the
    # character prompt; null is off.
    dio = models.JSONField(null=True, blank=True)
    # A declared workflow run before each reply (``docs/workflows.md``): its capability
    # graph, checked by the static planner on save and before each run.
    workflow = models.JSONField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="scenario_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Visibility(models.TextChoices):
    PRIVATE = "private", "private: operators only"
    UNLISTED = "unlisted", "unlisted: players with the link"
    LISTED = "listed", "listed: in the players' library"


class ContentRating(models.TextChoices):
    SFW = "sfw", "safe for work"
    NSFW = "nsfw", "adults only"


class Character(TenantScopedModel):
    """A character card: the fields users bring from other tools (CCv2/CCv3), each reaching
    the prompt through the preset; a card's unknown ``extensions`` are kept verbatim."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="", max_length=100_000)
    personality = models.TextField(blank=True, default="", max_length=20_000)
    scenario = models.TextField(blank=True, default="", max_length=20_000)
    first_message = models.TextField(blank=True, default="", max_length=20_000)
    alternate_greetings = models.JSONField(default=list, blank=True)
    example_dialogues = models.TextField(blank=True, default="", max_length=50_000)
    system_prompt = models.TextField(blank=True, default="", max_length=20_000)
    post_history_instructions = models.TextField(blank=True, default="", max_length=20_000)
    creator_notes = models.TextField(blank=True, default="", max_length=20_000)
    tags = models.JSONField(default=list, blank=True)
    creator = models.CharField(max_length=200, blank=True, default="")
    character_version = models.CharField(max_length=100, blank=True, default="")
    extensions = models.JSONField(default=dict, blank=True)
    # Who may see it in the player app (docs/players.md): only listed ones are browsable.
    visibility = models.CharField(
        max_length=10, choices=Visibility.choices, default=Visibility.PRIVATE
    )
    content_rating = models.CharField(
        max_length=4, choices=ContentRating.choices, default=ContentRating.SFW
    )
    # A character a player made or imported in the player app (private to them unless an
    # operator lists it); None for the operators' own.
    owner_player = models.ForeignKey(
        "console.Player", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # Whether the character's regex scripts run (``roleplay.regex_scripts``): off until the
    # operator allows them, as SillyTavern asks, since a card's scripts rewrite every turn.
    allow_regex = models.BooleanField(default=False)
    # An author's note for every conversation with the character (``prompting.notes``).
    author_note = models.JSONField(default=dict, blank=True)
    avatar = models.BinaryField(null=True, blank=True, editable=False)
    avatar_content_type = models.CharField(max_length=50, blank=True, default="")
    model_config = models.ForeignKey(
        ModelConfig, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The scenario its conversations run (``Scenario``); a conversation may name another.
    default_scenario = models.ForeignKey(
        Scenario, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # What the player app's library searches (``roleplay.library.selectors``): name, tags and
    # creator notes, weighted in that order. PostgreSQL keeps it (a trigger on every insert
    # and update, ``migrations/0035_character_search``): whatever Django writes is replaced.
    search = SearchVectorField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            GinIndex(fields=["search"], name="character_search"),
            GinIndex(fields=["tags"], name="character_tags", opclasses=["jsonb_path_ops"]),
            models.Index(fields=["tenant", "visibility", "name"], name="character_library"),
        ]

    def __str__(self) -> str:
        return self.name


class CharacterImport(TenantScopedModel):
    """A card file that became a character: its SHA-256 (a re-import of the same file is
    recognised), format, file name, and the import report the character page shows."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="imports")
    sha256 = models.CharField(max_length=64)
    format = models.CharField(max_length=20)
    filename = models.CharField(max_length=300, blank=True, default="")
    report = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "sha256"], name="character_import_sha")]


class Persona(TenantScopedModel):
    """Who the player is in a conversation: ``{{user}}`` is its name, ``{{persona}}`` its
    description. A player has at most one default; a conversation may pick another."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="personas")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="", max_length=20_000)
    avatar = models.BinaryField(null=True, blank=True, editable=False)
    avatar_content_type = models.CharField(max_length=50, blank=True, default="")
    is_default = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["player"], condition=Q(is_default=True), name="persona_one_default"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ConversationStatus(models.TextChoices):
    ACTIVE = "active", "active"
    ARCHIVED = "archived", "archived"


class Conversation(TenantScopedModel):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    model_config = models.ForeignKey(
        ModelConfig, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    persona = models.ForeignKey(
        Persona, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The scenario this conversation runs instead of its character's default one.
    scenario = models.ForeignKey(
        Scenario, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # This conversation's author's note; it replaces the character's (``prompting.notes``).
    author_note = models.JSONField(default=dict, blank=True)
    # The opening the Actor shows: 0 is the character's first message, n its n-th
    # alternate greeting.
    # None: no opening (an imported chat that does not start with one of the character's)
    greeting_index = models.PositiveSmallIntegerField(default=0, null=True, blank=True)
    title = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(
        max_length=16, choices=ConversationStatus.choices, default=ConversationStatus.ACTIVE
    )
    # Group chats (``roleplay.groups``, docs/groups.md): who speaks next, whether every
    # member's card goes into each prompt, and how many replies members give each other
    # after one (each after ``auto_delay_ms``); with ``allow_self_responses``, a member may
    # answer its own reply (SillyTavern's "Allow self responses").
    group_mode = models.CharField(max_length=16, choices=GroupMode.choices, default="natural")
    join_cards = models.BooleanField(default=False)
    allow_self_responses = models.BooleanField(default=False)
    auto_turns = models.PositiveSmallIntegerField(default=0, validators=[MaxValueValidator(10)])
    auto_delay_ms = models.PositiveIntegerField(default=0, validators=[MaxValueValidator(60_000)])
    # A branch: the conversation it was branched from and the message it was branched at;
    # its history is the parent's up to that message, then its own (``roleplay.branches``).
    # A parent with branches cannot be deleted (409 ``has_branches``).
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="branches"
    )
    fork_message_id = models.UUIDField(null=True, blank=True)
    # When the player last read it in the player app ("My chats" shows newer replies unread).
    player_read_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "player", "status"], name="conversation_player")]

    @property
    def session_id(self) -> str:
        """The message store's session key for this conversation."""
        return str(self.id)


class TurnStatus(models.TextChoices):
    RUNNING = "running", "running"
    COMPLETE = "complete", "complete"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


class TurnKind(models.TextChoices):
    """What asked for the reply (the seed's request kinds)."""

    CHAT = "chat", "chat"
    CONTINUE = "continue", "continue"
    REGENERATE = "regenerate", "regenerate"
    EDIT_REGENERATE = "edit_regenerate", "edit_regenerate"
    # A group member speaks without a new player message (force-talk, auto-mode).
    GROUP = "group", "group"
    AUTO_REPLY = "auto_reply", "auto_reply"


class Turn(TenantScopedModel):
    """One player message and the reply to it, with the trace of how the reply was made.

    At most one running turn per conversation (a partial unique index), and one turn per
    ``client_message_id``: a repeated client id never starts a second generation.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="turns")
    client_message_id = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, choices=TurnKind.choices, default=TurnKind.CHAT)
    # The player's message of a ``chat`` turn; none for ``continue`` and ``regenerate``.
    user_message_id = models.UUIDField(null=True, blank=True)
    # The reply: a new message, or the one a ``continue``/``regenerate`` works on.
    assistant_message_id = models.UUIDField()
    status = models.CharField(max_length=16, choices=TurnStatus.choices, default=TurnStatus.RUNNING)
    model_config = models.ForeignKey(ModelConfig, null=True, on_delete=models.SET_NULL)
    error_code = models.CharField(max_length=64, null=True, blank=True)
    usage = models.JSONField(default=dict, blank=True)
    trace = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The generating process renews this while it works; a running turn whose lease has
    # expired was abandoned (its process died) and no longer blocks the conversation.
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # The process generating it (``turns.heartbeat``): once that process stops beating in
    # Redis the turn is abandoned, without waiting for the lease. Empty: the lease alone.
    owner = models.CharField(max_length=100, blank=True, default="")
    # The reply streamed so far, flushed while it streams: an abandoned turn keeps it as a
    # ``failed`` reply.
    partial_reply = models.TextField(blank=True, default="")
    # The group member who speaks the reply (``roleplay.groups``); None in a one-character
    # conversation.
    speaker = models.ForeignKey(
        Character, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "client_message_id"], name="turn_client_id_unique"
            ),
            models.UniqueConstraint(
                fields=["conversation"],
                condition=Q(status="running"),
                name="turn_one_running",
            ),
        ]
        # The conversation's newest turn (the prompt anchors a turn reads, ``turns.reads``).
        indexes = [models.Index(fields=["conversation", "started_at"], name="turn_conv_started")]


class AgentStateHead(TenantScopedModel):
    """The newest revision number of a conversation's Agent V2 state under one scenario:
    what a commit compares and sets. ``history_revision`` counts the times the
    conversation's history changed shape (edits, rollbacks, trims) since the state began."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="+")
    revision = models.PositiveIntegerField(default=0)
    history_revision = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "scenario"], name="agent_state_head_unique"
            )
        ]


class AgentStateRevision(TenantScopedModel):
    """One revision of the state (every one is kept: the console diffs and restores them):
    the Director's whole text, the tools the turn called, the turn and reply it came from."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="+")
    revision = models.PositiveIntegerField()
    state = models.TextField()
    tools_called = models.JSONField(default=list)
    source_turn = models.PositiveIntegerField(default=0)
    source_message_id = models.UUIDField(null=True, blank=True)
    history_revision = models.PositiveIntegerField(default=0)
    origin = models.CharField(max_length=16, default="director")  # director | restore
    created_at = models.DateTimeField(auto_now_add=True)
    # Set when a message it was built from was edited or deleted: out of force for good.
    withdrawn_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "scenario", "revision"], name="agent_state_revision_unique"
            )
        ]


class AgentLedgerEntry(TenantScopedModel):
    """A specialist's analysis, written with the state commit of ``revision``."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="+")
    revision = models.PositiveIntegerField()
    type = models.CharField(max_length=16)
    key = models.CharField(max_length=100)
    status = models.CharField(max_length=16, default="active")
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["conversation", "scenario", "revision"], name="agent_ledger_rev")
        ]


class PlanningStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"


class PlanningRun(TenantScopedModel):
    """One turn's Agent V2 background run: exactly one per turn (the unique ``turn``),
    written in the transaction that commits the turn's reply, with the snapshot it reads
    (the turn-start state and the compiled materials), then what it did: tools requested
    and run, each specialist's result, the Director's attempts, the outcome, timings and the
    model calls. A queued run not yet ``dispatched_at`` is the outbox its relay sends the
    task of (``roleplay.agentic.relay``). ``claim`` names the delivery of the task that owns
    the run; a redelivered task takes it over."""

    turn = models.OneToOneField(Turn, on_delete=models.CASCADE, related_name="planning_run")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="+")
    assistant_message_id = models.UUIDField()
    source_turn = models.PositiveIntegerField(default=0)
    status = models.CharField(
        max_length=16, choices=PlanningStatus.choices, default=PlanningStatus.QUEUED
    )
    outcome = models.CharField(max_length=32, blank=True, default="")
    error_code = models.CharField(max_length=64, blank=True, default="")
    snapshot = models.JSONField(default=dict)
    tools_requested = models.JSONField(default=list)
    tools_run = models.JSONField(default=list)
    specialists = models.JSONField(default=list)
    director = models.JSONField(default=dict)
    ignored_calls = models.JSONField(default=list)
    timings = models.JSONField(default=dict)
    model_calls = models.JSONField(default=list)
    # With context governance: each background call's prompt tokens against its budget.
    governance = models.JSONField(default=list)
    revision = models.PositiveIntegerField(null=True, blank=True)
    deliveries = models.PositiveIntegerField(default=0)
    claim = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the relay (or the stalled-run sweep) last sent its task; null: not sent yet.
    dispatched_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["conversation", "created_at"], name="planning_run_conv"),
            models.Index(fields=["assistant_message_id"], name="planning_run_reply"),
            # the relay's outbox: runs whose task was never sent
            models.Index(
                fields=["created_at"],
                condition=models.Q(status="queued", dispatched_at__isnull=True),
                name="planning_run_outbox",
            ),
        ]


from roleplay.accounts.models import DeviceSession, Invite, PlayerAccount, PlayerApp  # noqa: E402, F401
from roleplay.branches.models import Bookmark  # noqa: E402, F401
from roleplay.compact.models import (  # noqa: E402, F401
    CheckpointContent,
    CompactCheckpoint,
    CompactPreparation,
)
from roleplay.dio.models import DioPromptVersion, DioTask  # noqa: E402, F401
from roleplay.frontloop.models import VisualWorld, VisualWorldRevision  # noqa: E402, F401
from roleplay.moderation.models import Case, ModerationPolicy, Sanction  # noqa: E402, F401
from roleplay.quotas.models import (  # noqa: E402, F401
    Plan,
    PlanAssignment,
    PlanDefault,
    QuotaCounter,
)
from roleplay.regex_scripts.models import RegexScript  # noqa: E402, F401
from roleplay.textgen.models import InstructTemplate  # noqa: E402, F401
from roleplay.workflows.models import WorkflowRun  # noqa: E402, F401
from roleplay.workflows.state_models import RuntimeRun, WorkflowState  # noqa: E402, F401
from roleplay.workflows.tool_models import HttpToolEndpoint, McpServer  # noqa: E402, F401
