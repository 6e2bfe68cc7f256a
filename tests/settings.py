"""Settings of a test run: the product's own, with a Redis, runtime directory and test
database of the run's own.

A test run must never share a broker or a channel-layer key space with a ``make run`` on the
same machine (its workers would take the other's tasks), nor a test database with another
test run. So, before the product's settings are read, this names a runtime directory for the
run (``ROLEPLAY_RUN_DIR``: its private Redis and model process live there) and a database
name carrying the run's pid. Nothing is started here: the session fixture
``django_db_modify_db_settings`` (``tests/conftest.py``) starts the servers when the first
test needs them, so pure engine tests start nothing.
"""

from __future__ import annotations

import os
import secrets

from console import embedded

RUN_PREFIX = "roleplay-test-"
TEST_DATABASE_PREFIX = "test_roleplay_"

# What a run keeps for itself, named below; the run's children inherit it.
PER_RUN = (
    embedded.RUN_DIR_ENV,
    "TEST_DATABASE_NAME",
    "WORLDBOOK_COMPILED_DIR",
    "MEDIA_ROOT",
    "MAIL_DIR",
    "BACKUP_DIR",
)
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _WORKER and os.environ.get("ROLEPLAY_TEST_WORKER") != _WORKER:
    # A pytest-xdist worker inherited the controller's names: it is a run of its own (its
    # Redis, model process, files and database), which its own children inherit in turn.
    for _name in PER_RUN:
        os.environ.pop(_name, None)
    if os.environ.pop("ROLEPLAY_TEST_OWN_REDIS", ""):
        os.environ.pop("REDIS_URL", None)
    os.environ["ROLEPLAY_TEST_WORKER"] = _WORKER

EMBEDDED_DATABASE = not os.environ.get("DATABASE_URL")
EMBEDDED_REDIS = not os.environ.get("REDIS_URL")
os.environ.setdefault(embedded.RUN_DIR_ENV, f"/tmp/{RUN_PREFIX}{os.getpid()}")
os.environ.setdefault("TEST_DATABASE_NAME", f"{TEST_DATABASE_PREFIX}{os.getpid()}")
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))  # children sign alike
# The session's Celery worker relays no planning run: a test that wants its runs sent runs
# a relay of its own (``tests/agentic/conftest.py``), so no other test's run is executed.
os.environ.setdefault("PLANNING_RELAY", "0")
# Rate limits are off unless a test turns one on (tests/quotas): the suite's own bursts of
# sign-ups and turns from one address are not what they guard against.
for _limit in (
    "RATE_SIGNUPS_PER_ADDRESS_HOUR",
    "RATE_CHAT_PER_ACCOUNT_10S",
    "RATE_CHAT_PER_ADDRESS_10S",
    "RATE_CHAT_PER_TOKEN_10S",
):
    os.environ.setdefault(_limit, "0")
# Prepared worldbook revisions of this run (children share them), gone with the run dir.
os.environ.setdefault(
    "WORLDBOOK_COMPILED_DIR", f"{os.environ[embedded.RUN_DIR_ENV]}/worldbook-compiled"
)
# Images of this run (children share them), gone with the run dir; the scripted image server
# listens on loopback, which the image fetch guard lets through only when told to.
os.environ.setdefault("MEDIA_ROOT", f"{os.environ[embedded.RUN_DIR_ENV]}/media")
os.environ.setdefault("IMAGES_ALLOW_LOOPBACK_FETCH", "1")
# Outgoing mail of this run's children (the test process itself keeps mail in memory).
os.environ.setdefault("MAIL_DIR", f"{os.environ[embedded.RUN_DIR_ENV]}/mail")
# Tenant backups of this run, gone with the run dir.
os.environ.setdefault("BACKUP_DIR", f"{os.environ[embedded.RUN_DIR_ENV]}/backups")
# A restore upload's cap, small enough for the body-limit tests to send one byte over it.
os.environ.setdefault("BACKUP_MAX_UPLOAD_BYTES", str(8 * 1024 * 1024))
# The workflow tools' test servers listen on loopback too.
os.environ.setdefault("WORKFLOW_TOOLS_ALLOW_LOOPBACK", "1")
if EMBEDDED_REDIS:
    os.environ["REDIS_URL"] = embedded.expected_redis_url()  # the run's private server
    os.environ["ROLEPLAY_TEST_OWN_REDIS"] = "1"

from console.settings import *  # noqa: E402,F403
