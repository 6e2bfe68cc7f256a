"""The Content-Security-Policy in a real browser: Chromium loads the login page, the
dashboard, a few console lists and the play page, and one chat message goes over the
WebSocket, with no violation reported; an injected inline script is blocked, so the policy
is really enforced.
"""

from __future__ import annotations

import pytest

from roleplay.llm.scripted_server import Reply
from tests.security.csp import expected_policy, parse_policy

pytestmark = pytest.mark.django_db(transaction=True)

REPLY = "The harbour lights are on; the ferry leaves at dawn."

# Runs before any page script (Playwright injects it through the DevTools protocol, which the
# page's policy does not govern) and keeps every violation the page reports.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI);
});
"""


def violations(page, console_errors) -> list[str]:
    return page.evaluate("window.__cspViolations") + [
        text for text in console_errors if "Content Security Policy" in text
    ]


def test_pages_and_chat_socket_work_under_the_policy(
    operator_user, conversation, llm, browser_page, login, live_server_url
):
    llm.enqueue(Reply(content=REPLY, chunks=4))
    page = browser_page
    page.add_init_script(RECORD_VIOLATIONS)
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text))
    host = live_server_url.split("://", 1)[1]

    response = page.goto("/console/login/")
    assert parse_policy(response.headers["content-security-policy"]) == expected_policy(
        f"ws://{host}"
    )
    assert violations(page, console_errors) == []

    login(page, "op", "pw-op-123456")  # lands on the dashboard
    assert page.url.endswith("/console/")
    page.locator("#stat-characters").wait_for()
    assert violations(page, console_errors) == []
    for path in ["/console/worldbooks/", "/console/models/", "/console/characters/"]:
        page.goto(path)
        page.wait_for_load_state("load")
        assert violations(page, console_errors) == [], path

    page.goto(f"/play/{conversation.id}/")
    page.wait_for_function("() => document.getElementById('play').dataset.connected === '1'")
    page.fill("#input", "When does the ferry leave?")
    page.click("#send")
    reply = page.locator("#transcript li.msg.assistant:not(.opening) .text").last
    reply.filter(has_text=REPLY).wait_for()
    assert page.locator("#play-error").is_hidden()
    assert violations(page, console_errors) == []

    # The policy is enforced, not merely sent: an inline script injected now does not run.
    page.evaluate(
        """() => {
          const script = document.createElement("script");
          script.textContent = "window.__inlineRan = true";
          document.body.appendChild(script);
        }"""
    )
    page.wait_for_function("() => window.__cspViolations.length > 0")
    assert page.evaluate("window.__inlineRan === undefined")
    assert page.evaluate("window.__cspViolations")[0].startswith("script-src")
