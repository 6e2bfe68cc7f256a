"""The local model runs in a supervised process of its own: a native crash in it (SIGKILL,
SIGILL) ends the call in flight with ``model_unavailable``, the supervisor starts it again,
the next call succeeds, and the supervisor leaves with its last user. The build itself is
portable: no AVX-512 or AMX instruction in the native libraries."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from roleplay.llm.errors import ModelUnavailable
from roleplay.llm.provider import ModelClient
from roleplay.llm.providers import build_provider
from roleplay.llm.providers.llama_local import LlamaLocalProvider, local_model_available
from roleplay.llm.types import ModelRequest, ProviderConfig, TextDelta

needs_model = pytest.mark.skipif(
    not local_model_available(), reason="llama-cpp-python or the bundled model is not installed"
)

LONG = ModelRequest(
    [{"role": "user", "content": "Tell me a very long story about a dragon.", "name": "Ann"}],
    max_tokens=400,
)
SHORT = ModelRequest([{"role": "user", "content": "Hello!", "name": "Ann"}], max_tokens=8)


def config(**extra: object) -> ProviderConfig:
    return ProviderConfig(
        provider="llama_cpp",
        model="gemma-3-270m",
        context_limit=1024,
        max_output_tokens=400,
        extra={"seed": 3, **extra},
    )


@needs_model
@pytest.mark.asyncio
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGILL])
async def test_a_crash_mid_stream_is_model_unavailable_and_the_next_call_succeeds(signum):
    provider = build_provider(config())
    assert isinstance(provider, LlamaLocalProvider)
    client = ModelClient(provider, retry_base_delay=0.01)
    await client.complete(SHORT)  # started and warm
    before = provider.service.state()
    seen: list[str] = []
    with pytest.raises(ModelUnavailable):
        async for event in client.stream(LONG):
            assert isinstance(event, TextDelta)
            seen.append(event.text)
            if len(seen) == 2:
                os.kill(before["model_pid"], signum)
    assert len(seen) >= 2  # the partial reply reached the caller before the loss
    assert not psutil.pid_exists(before["model_pid"]) or _zombie(before["model_pid"])

    result = await asyncio.wait_for(client.complete(SHORT), 120)  # waits for the restart
    after = provider.service.state()
    assert result.usage.output_tokens > 0
    assert after["model_pid"] != before["model_pid"]
    assert after["restarts"] == before["restarts"] + 1
    assert after["last_exit"] == -signum
    assert after["url"] == before["url"]  # same port: clients need not look it up again


@needs_model
@pytest.mark.asyncio
async def test_a_call_while_the_model_is_down_waits_for_it() -> None:
    provider = build_provider(config())
    assert isinstance(provider, LlamaLocalProvider)
    await provider.complete(SHORT)
    os.kill(provider.service.state()["model_pid"], signal.SIGKILL)
    provider._ready = False  # as after a lost call
    result = await asyncio.wait_for(provider.complete(SHORT), 120)
    assert result.usage.output_tokens > 0


USER = """
import asyncio, sys
from roleplay.llm.providers.llama_local import LlamaLocalProvider
from roleplay.llm.types import ModelRequest, ProviderConfig
provider = LlamaLocalProvider(ProviderConfig(provider="llama_cpp", model="gemma-3-270m",
                                             context_limit=512, max_output_tokens=4))
asyncio.run(provider.complete(ModelRequest([{"role": "user", "content": "Hi"}])))
state = provider.service.state()
print(state["supervisor"], state["model_pid"], flush=True)
sys.stdin.read()
"""


@needs_model
def test_the_supervisor_and_model_leave_with_their_last_user(tmp_path: Path) -> None:
    env = {**os.environ, "ROLEPLAY_RUN_DIR": str(tmp_path)}
    user = subprocess.Popen(
        [sys.executable, "-c", USER],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    supervisor, model = (int(pid) for pid in user.stdout.readline().split())
    assert psutil.pid_exists(supervisor) and psutil.pid_exists(model)
    user.kill()  # killed outright: it leaves without a word
    user.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in (supervisor, model)):
        time.sleep(0.2)
    assert not _alive(supervisor) and not _alive(model)


def _alive(pid: int) -> bool:
    return psutil.pid_exists(pid) and not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump is not installed")
@pytest.mark.skipif(not local_model_available(), reason="llama-cpp-python is not installed")
def test_the_native_build_is_portable() -> None:
    """No AVX-512 (zmm registers, k masks) or AMX (tile) instruction in any native library of
    llama-cpp-python: a wheel built here must run on any x86-64 CPU with AVX2."""
    import llama_cpp

    if os.uname().machine != "x86_64":
        pytest.skip("the flag set is for x86-64")
    libraries = sorted((Path(llama_cpp.__file__).parent / "lib").glob("*.so"))
    assert libraries
    for library in libraries:
        listing = subprocess.run(
            ["objdump", "-d", "--no-show-raw-insn", str(library)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "%zmm" not in listing, f"{library.name} uses AVX-512"
        assert "tileloadd" not in listing and "ldtilecfg" not in listing, f"{library.name}: AMX"


@needs_model
@pytest.mark.django_db
def test_health_reports_the_local_model_process(tenant) -> None:
    from django.test import Client

    from roleplay.models import ModelConfig

    ModelConfig.objects.create(
        tenant=tenant,
        name="local",
        provider="llama_cpp",
        model="gemma-3-270m",
        context_limit=1024,
        max_output_tokens=400,
        is_default=True,
        extra={"seed": 3},
    )
    provider = build_provider(config())
    asyncio.run(provider.complete(SHORT))  # the same model spec: its process is up
    llm = Client().get("/healthz").json()["llm"]
    assert llm["provider"] == "llama_cpp" and llm["ok"] is True
    assert llm["local_process"] == "up" and llm["restarts"] >= 0
