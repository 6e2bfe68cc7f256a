"""How a call to another service over HTTP fails, told once: a timeout, a transport error
(refused, reset, DNS) and a non-2xx answer each become a coded error of the caller's own
class, so the embeddings endpoint and the external memory service report alike.

Pure Python over ``httpx`` (no Django), for the kernel's embedders and the runtime alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx


@dataclass(frozen=True)
class RemoteFailures:
    """The codes and words of one remote's failures; ``error(code, message)`` builds them.
    ``answered`` is the message of a non-2xx answer, ``{status}`` its status."""

    error: Callable[[str, str], Exception]
    timeout_code: str
    timed_out: str
    unreachable_code: str
    status_code: str
    answered: str

    @contextmanager
    def calling(self) -> Iterator[None]:
        """Around the request: its transport failures as this remote's errors."""
        try:
            yield
        except httpx.TimeoutException:
            raise self.error(self.timeout_code, self.timed_out) from None
        except httpx.HTTPError as exc:
            raise self.error(self.unreachable_code, type(exc).__name__) from None

    def check(self, response: httpx.Response) -> httpx.Response:
        """``response`` when it is a 2xx, else this remote's error naming its status."""
        if response.status_code // 100 != 2:
            raise self.error(self.status_code, self.answered.format(status=response.status_code))
        return response
