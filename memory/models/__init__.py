"""The memory app's models, one module a concept: the message store of seed 001
(``messages``), the JSON memory documents of seed 000 (``documents``), memory entries with
their evidence, handoffs and settings (``entries``), the recall index (``recall``) and the
background runs (``runs``). Every model is named here, as it was when this was one module."""

from __future__ import annotations

from memory.models.documents import (
    MemoryDocument,
    MemoryDocumentRevision,
    MemoryProposal,
    ProposalStatus,
)
from memory.models.entries import (
    EntryKind,
    EntryOrigin,
    EntryScope,
    EntryStatus,
    HandoffStatus,
    MemoryEntry,
    MemoryEvidence,
    MemoryHandoff,
    MemoryHandoffItem,
    MemoryOwnerState,
    MemorySettings,
)
from memory.models.messages import (
    MemoryMetadata,
    Message,
    MessageAlternative,
    MessageEdit,
    MessageStatus,
    SessionFork,
)
from memory.models.recall import (
    RecallItem,
    RecallOwnerIndex,
    RecallTerm,
)
from memory.models.runs import (
    BeliefBuild,
    BeliefSupport,
    ConsolidationCursor,
    ConsolidationRun,
    DiaryRun,
    JobKind,
    JobStatus,
    MemoryClaim,
    MemoryJob,
)

__all__ = [
    "MessageStatus",
    "Message",
    "MemoryMetadata",
    "MessageAlternative",
    "MessageEdit",
    "SessionFork",
    "MemoryDocument",
    "MemoryDocumentRevision",
    "ProposalStatus",
    "MemoryProposal",
    "EntryKind",
    "EntryScope",
    "EntryStatus",
    "EntryOrigin",
    "MemoryEntry",
    "MemoryEvidence",
    "MemoryOwnerState",
    "HandoffStatus",
    "MemoryHandoff",
    "MemoryHandoffItem",
    "MemorySettings",
    "RecallItem",
    "RecallTerm",
    "RecallOwnerIndex",
    "JobKind",
    "JobStatus",
    "MemoryJob",
    "DiaryRun",
    "ConsolidationCursor",
    "ConsolidationRun",
    "MemoryClaim",
    "BeliefSupport",
    "BeliefBuild",
]
