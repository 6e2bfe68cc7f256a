"""What the play page's browser tests share: a stored history to start from, and a page
wrapper that opens the conversation, finds messages and their controls, waits until no turn
runs, and collects what must never happen (CSP violations, uncaught script errors)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import TIMEOUT_MS
from tests.security.test_csp_browser import RECORD_VIOLATIONS, violations

OPERATOR = ("op", "pw-op-123456")  # the ``operator_user`` fixture's account
VIEWER = ("watcher", "pw-watcher-123456")

# A turn through daphne, Redis and the scripted model takes well under a second here, but
# the machine is shared: wait as long as the browser fixtures do before calling it a failure.
expect.set_options(timeout=TIMEOUT_MS)


def save_history(conversation, *lines: tuple[str, str]) -> list:
    """Store ``(role, content)`` messages in order, through the message store's own append."""
    from memory import services as message_store

    return [
        message_store.save_message(
            conversation.tenant, conversation.session_id, role=role, content=content, kind="chat"
        )
        for role, content in lines
    ]


def app_sign_in(page, email: str, password: str) -> None:
    """Sign in to the player app (``/app/login/``) and wait for the page it leads to."""
    page.goto("/app/login/")
    page.fill("input[name='email']", email)
    page.fill("input[name='password']", password)
    with page.expect_navigation():
        page.click("form button[type='submit']")


class PlayPage:
    """The play page of one conversation in one tab."""

    def __init__(self, page, conversation):
        self.page = page
        self.conversation = conversation
        self.console: list[str] = []
        self.script_errors: list[str] = []
        page.add_init_script(RECORD_VIOLATIONS)  # the page runs under the site's CSP
        page.on("console", lambda message: self.console.append(message.text))
        page.on("pageerror", lambda error: self.script_errors.append(str(error)))

    def open(self, login, account=OPERATOR) -> PlayPage:
        path = f"/play/{self.conversation.id}/"
        login(self.page, *account, next_path=path)
        assert path in self.page.url
        self.wait_connected()
        return self

    def visit(self) -> PlayPage:
        """Open the page in a tab that is already signed in."""
        self.page.goto(f"/play/{self.conversation.id}/")
        self.wait_connected()
        return self

    def reload(self) -> None:
        self.page.reload()
        self.wait_connected()

    def wait_connected(self) -> None:
        self.page.wait_for_function(
            "() => document.getElementById('play').dataset.connected === '1'"
        )

    def wait_idle(self) -> None:
        """Until no turn runs and no bubble streams (the turn's end event was applied)."""
        self.page.wait_for_function(
            """() => document.getElementById('play').dataset.busy === ''
                 && !document.querySelector('#transcript li.msg.streaming')"""
        )

    @property
    def messages(self):
        """The stored messages' bubbles (not the opening line)."""
        return self.page.locator("#transcript li.msg:not(.opening)")

    def message(self, index: int):
        return self.messages.nth(index)

    @property
    def reply(self):
        """The last reply's bubble: the one with swipe arrows and Continue."""
        return self.page.locator("#transcript li.msg.assistant:not(.opening)").last

    def texts(self) -> list[str]:
        return self.messages.locator(".text").all_inner_texts()

    @property
    def error(self):
        return self.page.locator("#play-error")

    def problems(self) -> list[str]:
        """CSP violations and uncaught script errors seen so far (none is the only pass)."""
        return violations(self.page, self.console) + self.script_errors
