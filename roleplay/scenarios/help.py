"""What each setting of a run mode's Agent V2, Story and Compact objects means, as the form
says it: a label and one sentence, keyed by the seed's dotted path (the types, defaults and
limits come from the validator, through ``roleplay.scenarios.guide``). Pure data."""

from __future__ import annotations

MS = " In milliseconds."
HELP: dict[str, tuple[str, str]] = {
    # Agent V2
    "agenticV2.enabled": ("On", "Run Agent V2 after each reply."),
    "agenticV2.modelConfigs": ("Models", "Which model config does each job."),
    "agenticV2.modelConfigs.actor": ("Reply model", "Always this run mode's reply model."),
    "agenticV2.modelConfigs.orchestrator": (
        "Orchestrator model",
        "Decides after each reply which specialists to ask.",
    ),
    "agenticV2.modelConfigs.specialists": ("Specialist models", "One model per specialist."),
    "agenticV2.modelConfigs.specialists.analyze_plot": (
        "Plot analyst model",
        "Works out where the story is heading (needed while that specialist is on).",
    ),
    "agenticV2.modelConfigs.specialists.judge_npc": (
        "Other characters' model",
        "Judges what the other characters would do (needed while that specialist is on).",
    ),
    "agenticV2.modelConfigs.specialists.audit_knowledge": (
        "Knowledge auditor model",
        "Checks who knows what, so nobody knows too much (needed while it is on).",
    ),
    "agenticV2.modelConfigs.specialists.simulate_world": (
        "World model",
        "Decides what happens off-screen meanwhile (needed while that specialist is on).",
    ),
    "agenticV2.modelConfigs.specialists.manage_callbacks": (
        "Callbacks model",
        "Keeps promises and details to bring back later (needed while it is on).",
    ),
    "agenticV2.modelConfigs.specialists.direct_scene": (
        "Scene director model",
        "Paces and directs the next scene (needed while that specialist is on).",
    ),
    "agenticV2.modelConfigs.director": (
        "Director model",
        "Writes the notes the character reads next turn (needed while the notes are updated).",
    ),
    "agenticV2.modelConfigs.autoReply": (
        "Auto-reply model",
        "Suggests the player's next message when asked; blank: no suggestions.",
    ),
    "agenticV2.enabledTools": (
        "Specialists on",
        "Which specialists the orchestrator may call; with Director's notes it may rewrite "
        "the notes the character reads.",
    ),
    "agenticV2.routingMode": (
        "Routing",
        "manual: the orchestrator's choice stands; auto: a turn that asks for many "
        "specialists is decided again by the escalation model.",
    ),
    "agenticV2.escalationModelConfigId": (
        "Escalation model",
        "The stronger orchestrator that auto routing uses (needed for auto).",
    ),
    "agenticV2.escalationToolCallThreshold": (
        "Escalate from",
        "In auto routing, a choice of this many specialist calls or more is escalated.",
    ),
    "agenticV2.maxToolCalls": ("Calls per turn", "At most this many specialist calls a turn."),
    "agenticV2.maxParallelTools": (
        "Calls at once",
        "At most this many specialists run at the same time.",
    ),
    "agenticV2.maxStateChars": (
        "Notes length",
        "The longest notes the Director may write for the character, in characters.",
    ),
    "agenticV2.modelCallTimeoutMs": (
        "Model call timeout",
        "How long one background model call may take." + MS,
    ),
    "agenticV2.contextGovernance": (
        "Context budget",
        "Keep the background's inputs within the model's window (needed with Compact).",
    ),
    "agenticV2.contextGovernance.mode": (
        "Budget mode",
        "shadow: only measure and report; enforce: cut to fit (needs Compact).",
    ),
    "agenticV2.contextGovernance.safetyMarginTokens": (
        "Budget margin",
        "Tokens kept free below the model's context limit.",
    ),
    "agenticV2.contextGovernance.maxToolResultChars": (
        "Longest specialist answer",
        "A longer answer counts as a failed call, in characters.",
    ),
    "agenticV2.recovery": ("Recovery", "What to do when a model call fails."),
    "agenticV2.recovery.transientRetryModelConfigId": (
        "Retry model",
        "Tried once after a temporary failure; blank: no retry on another model.",
    ),
    "agenticV2.recovery.tolerateMissingStreamMetadata": (
        "Accept streams without usage",
        "Accept a provider's answer that ends without token counts.",
    ),
    "agenticV2.jevOrchestration": (
        "JEV orchestration",
        "Accepted from the seed so its run modes load; it changes nothing here.",
    ),
    "agenticV2.autoReplyWaitMs": (
        "Auto-reply wait",
        "How long a suggestion waits for the last turn's notes." + MS,
    ),
    "agenticV2.commitPolicy": (
        "Keep notes from",
        "always: every turn; reply_completed: not from a reply that was stopped or failed.",
    ),
    "agenticV2.backgroundDeadlineMs": (
        "Background deadline",
        "A limit on a turn's whole background work; blank: none." + MS,
    ),
    "agenticV2.backgroundWorldbook": (
        "Background reads the lore",
        "Give the background the lorebook entries the turn selected for the reply.",
    ),
    # Story
    "storyV1.enabled": ("On", "Run the story engine."),
    "storyV1.modelConfigId": ("Story model", "Plans and settles the story's events."),
    "storyV1.initializerModelConfigId": (
        "Opening model",
        "Builds the story on the first turn; blank: the story model.",
    ),
    "storyV1.modelCallTimeoutMs": (
        "Model call timeout",
        "How long one story model call may take." + MS,
    ),
    "storyV1.postTurnTimeoutMs": (
        "Settling timeout",
        "How long settling a turn after its reply may take." + MS,
    ),
    "storyV1.maxStateBytes": (
        "Story size limit",
        "The largest saved story, in bytes; a larger one is not saved.",
    ),
    "storyV1.seed": ("Random seed", "The same seed and chat unfold the same way."),
    "storyV1.policy": ("Tuning", "The world's and the narrative's numbers, as JSON."),
    # Compact
    "compact.enabled": ("On", "Summarise older messages when needed."),
    "compact.boundaryMode": (
        "Groups",
        "selected_turns: a player message and its replies are one group; explicit_groups: "
        "the messages each turn wrote.",
    ),
    "compact.compactorModelConfigId": ("Summary model", "Writes the summaries."),
    "compact.triggerRatio": (
        "Summarise at",
        "When the prompt fills this share of the model's budget (0.8 is 80 %).",
    ),
    "compact.keepLastCanonicalGroups": (
        "Recent exchanges kept",
        "How many recent exchanges always stay word for word.",
    ),
    "compact.checkpointMutationTimeoutMs": (
        "Save timeout",
        "How long saving a summary may take before the turn goes on." + MS,
    ),
    "compact.safetyMarginTokens": (
        "Budget margin",
        "Tokens kept free below the model's context limit.",
    ),
    "compact.maxSummaryTokens": ("Summary length", "The longest summary, in tokens."),
    "compact.reliability": (
        "Retry limits",
        "Limits on the summary model's attempts (needed by configurable-v2).",
    ),
    "compact.reliability.version": ("Rules version", "The version of these limits."),
    "compact.reliability.minGenerationTokens": (
        "Least output",
        "The fewest tokens a summary call may be given to answer.",
    ),
    "compact.reliability.maxCandidateAttempts": (
        "Candidates tried",
        "How many ways of cutting the history are tried at most.",
    ),
    "compact.reliability.maxModelCalls": (
        "Summary calls",
        "How many answers are asked of the summary model at most.",
    ),
    "compact.reliability.maxCompactionMs": (
        "Summarising time",
        "How long trying candidates may take." + MS,
    ),
    "compact.profile": (
        "Profile",
        "generic-json-v1: the standard summary; configurable-v2: allows the formats below.",
    ),
    "compact.inputProtocol": (
        "History given as",
        "How the older messages reach the summary model (others than harness_json_v1 need "
        "configurable-v2).",
    ),
    "compact.outputFormat": (
        "Summary as",
        "structured_json: facts, relationship and open threads; plain_text: one text.",
    ),
    "compact.lengthPolicy": (
        "Too long",
        "reject: a summary over the length is refused; accept_bounded: it is cut (plain "
        "text only).",
    ),
    "compact.executionPolicy": (
        "Recent only",
        "bounded_recent: only summarise recent history and may drop older (needs retry "
        "limits); blank: off.",
    ),
    "compact.recursive": (
        "In segments",
        "Summarise long history in segments (configurable-v2 with automemory_recursive_v1).",
    ),
    "compact.recursive.segmentContentTokens": (
        "Segment size",
        "The size of each segment, in tokens.",
    ),
}
