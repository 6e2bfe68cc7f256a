"""JSON out of a model's answer. Servers that ignore ``response_format`` (or models that
talk around it) wrap the object in a code fence or a sentence: the answer is read as JSON,
else its fenced block, else the span from its first ``{`` to its last ``}``. Pure."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def loads(text: str) -> Any:
    """The JSON value of ``text``; ``ValueError`` when none can be read."""
    body = (text or "").strip()
    try:
        return json.loads(body)
    except ValueError:
        pass
    fenced = _FENCE.search(body)
    if fenced:
        try:
            return json.loads(fenced.group(1).strip())
        except ValueError:
            pass
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        return json.loads(body[start : end + 1])
    raise ValueError("the answer holds no JSON object")
