"""Which DIO a scenario uses: ``backend_for(scenario's dio config)`` (a plain dict,
``{mode, modelConfigId?, serviceUrl?, apiKeyEnv?, timeoutMs?}``) is our own
(:class:`~roleplay.dio.internal.InternalBackend`), an outside service's adapter
(:class:`~roleplay.dio.external.ExternalBackend`), or None (``off``, or no config).
``tenant_id``, when the caller has it (a turn does), scopes the internal backend's reads."""

from __future__ import annotations

from typing import Any

from roleplay.dio.engine.ports import DioBackend, DioError
from roleplay.dio.external import ExternalBackend, ExternalConfig
from roleplay.dio.internal import InternalBackend

MODES = ("internal", "external", "off")


def backend_for(config: dict[str, Any] | None, tenant_id=None) -> DioBackend | None:
    """The backend ``config`` names; ``DioError`` (``dio_config_invalid``) when unusable."""
    if not config:
        return None
    mode = config.get("mode", "off")
    if mode not in MODES:
        raise DioError("dio_config_invalid", f"mode must be one of {MODES}")
    if mode == "internal":
        ref = config.get("modelConfigId") or ""
        if not isinstance(ref, str):
            raise DioError("dio_config_invalid", "modelConfigId must be a string")
        return InternalBackend(model_config_ref=ref, tenant_id=tenant_id)
    if mode == "external":
        return ExternalBackend(ExternalConfig.from_dict(config))
    return None
