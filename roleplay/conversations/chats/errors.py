"""What reading a chat file raises: a stable code, a message, JSON-safe details."""

from __future__ import annotations

from typing import ClassVar

from console.failures import Kind
from roleplay.errors import RoleplayError

INVALID_CHAT_FILE = "invalid_chat_file"
EMPTY_CHAT = "empty_chat"
TOO_MANY_MESSAGES = "too_many_messages"
MESSAGE_TOO_LONG = "message_too_long"
SEVERAL_CONVERSATIONS = "several_conversations"
FILE_TOO_LARGE = "file_too_large"


class ChatFileError(RoleplayError):
    """A file that is not a chat we read (400 ``invalid_chat_file``); ``details.line`` names
    the line of a JSONL file that broke."""

    kind: ClassVar[Kind] = "bad_request"
    default_code = INVALID_CHAT_FILE


class ChatFileInvalid(ChatFileError):
    """A chat we read that cannot become a conversation (422): nothing to import, more
    messages than a conversation takes, or several conversations in one file."""

    kind = "invalid"


class ChatFileTooLarge(ChatFileError):
    """More bytes than a chat file may have (413 ``file_too_large``)."""

    kind = "too_large"
    default_code = FILE_TOO_LARGE


INVALID_TEXT = "invalid_text"
INVALID_GROUP_FILE = "invalid_group_file"
EMPTY_GROUP = "empty_group"
DUPLICATE_MEMBER = "duplicate_member"
UNKNOWN_MEMBER = "unknown_member"
MEMBER_AMBIGUOUS = "member_ambiguous"


class GroupFileError(RoleplayError):
    """A file that is not a SillyTavern group we read (400 ``invalid_group_file``):
    not JSON, not an object, or a field of the wrong type; ``details.field`` names it."""

    kind: ClassVar[Kind] = "bad_request"
    default_code = INVALID_GROUP_FILE


class GroupFileInvalid(GroupFileError):
    """A group we read that cannot become a conversation (422): no members
    (``empty_group``), a member twice (``duplicate_member``), a member that is none of the
    tenant's characters (``unknown_member``) or that several are (``member_ambiguous``);
    ``details.member`` names it."""

    kind = "invalid"


class GroupFileTooLarge(GroupFileError):
    """More bytes than a group file may have (413 ``file_too_large``)."""

    kind = "too_large"
    default_code = FILE_TOO_LARGE
