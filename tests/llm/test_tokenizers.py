"""Token counting per model config: each tokenizer counts a fixed text its own way, the
counts are cached per tokenizer, and a config's tokenizer is checked on save (a
``tokenizer.json`` that does not load, a GGUF that is not there: a coded 422, nothing
written)."""

from __future__ import annotations

import pytest

from console import tokenizers
from console.tokens import CL100K, TOKENIZER_NAME
from roleplay.llm.bundled import bundled_model_path, local_model_available
from roleplay.llm.configs.services import update_model_config
from roleplay.llm.tokenizers.counters import counter_for
from roleplay.models import ModelConfig, TokenizerFile
from tests.llm.tokenizer_files import word_level_json, words
from tests.textgen.test_console import signed_in

TEXT = "The lighthouse-keeper counts 12345678 waves: 灯塔看守人数着海浪。Antidisestablishment!"
needs_local_model = pytest.mark.skipif(
    not local_model_available(), reason="the bundled model is not installed"
)


def test_o200k_counts_as_an_independent_implementation_of_its_ranks():
    import bpe_openai

    reference = bpe_openai.get_encoding("o200k_base")
    o200k = tokenizers.o200k()
    assert o200k.name == "o200k_base"
    for text in (TEXT, "I'M here\n\n  x = 12345;  // ok", "Ünïcödé façade — naïve"):
        assert o200k.count_tokens(text) == len(reference.encode(text))
    assert o200k.count_tokens(TEXT) != CL100K.count_tokens(TEXT)


def test_a_tokenizer_json_counts_its_own_words():
    counter = tokenizers.hf(word_level_json())
    assert counter.name.startswith("hf:") and counter.count_tokens(TEXT) == words(TEXT)
    assert tokenizers.hf(word_level_json()) is counter  # one instance per content
    assert counter.count_tokens(TEXT) != CL100K.count_tokens(TEXT)


@needs_local_model
def test_counts_differ_per_tokenizer_on_one_text():
    gguf = tokenizers.gguf(str(bundled_model_path()))
    hf = tokenizers.hf(word_level_json())
    counts = {c.name: c.count_tokens(TEXT) for c in (CL100K, gguf, hf, tokenizers.o200k())}
    assert len(set(counts.values())) == 4, counts
    assert gguf.name.startswith("gguf:gemma-3-270m") and gguf.count_tokens("") == 0
    assert tokenizers.gguf(str(bundled_model_path())) is gguf  # one vocabulary per file
    # Counts are remembered per tokenizer: the same text, just counted by cl100k, is
    # still counted by the GGUF's vocabulary (and long texts too, by digest).
    long = TEXT * 200
    assert CL100K.count_tokens(long) != gguf.count_tokens(long)
    assert gguf.count_tokens(long) == gguf.count_tokens(long)


def test_a_missing_gguf_does_not_load(tmp_path):
    with pytest.raises(tokenizers.TokenizerUnavailable):
        tokenizers.gguf(str(tmp_path / "none.gguf"))
    foreign = tmp_path / "foreign.gguf"
    foreign.write_bytes(b"not a gguf at all")
    with pytest.raises(tokenizers.TokenizerUnavailable):
        tokenizers.gguf(str(foreign))


@pytest.mark.django_db
def test_the_default_config_counts_with_cl100k_without_a_read(
    model_config, django_assert_num_queries
):
    with django_assert_num_queries(0):
        assert counter_for(model_config) is CL100K
        assert counter_for(None) is CL100K
    assert CL100K.name == TOKENIZER_NAME


@pytest.mark.django_db
def test_an_hf_config_reads_its_file_once_per_process(model_config, django_assert_num_queries):
    text = word_level_json() + " "  # content of its own: not loaded by another test
    update_model_config(model_config, tokenizer_json=text)
    model_config.refresh_from_db()
    assert model_config.tokenizer == "hf"
    counter = counter_for(model_config)
    assert counter.name == f"hf:{tokenizers.hf_digest(text)[:16]}"
    with django_assert_num_queries(0):
        assert counter_for(model_config) is counter


# --- the REST door --------------------------------------------------------------------


def _body(llm, **fields):
    return {
        "name": "counted",
        "provider": "openai_compatible",
        "model": "scripted-model",
        "base_url": llm.base_url,
        **fields,
    }


@pytest.mark.django_db
def test_a_tokenizer_json_that_does_not_load_is_a_coded_422(api, llm, model_config):
    before = (ModelConfig.objects.count(), TokenizerFile.objects.count())
    body = _body(llm, tokenizer="hf", tokenizer_json='{"model": {"type": "Nope"}}')
    response = api.post("/api/v1/model-configs/", body, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "tokenizer_json_invalid"
    url = f"/api/v1/model-configs/{model_config.pk}/"
    response = api.patch(url, {"tokenizer_json": "not json", "name": "renamed"}, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "tokenizer_json_invalid"
    assert (ModelConfig.objects.count(), TokenizerFile.objects.count()) == before
    model_config.refresh_from_db()
    assert (model_config.name, model_config.tokenizer) == ("scripted", "cl100k")


@pytest.mark.django_db
def test_a_choice_without_its_file_is_a_coded_422(api, llm, model_config):
    response = api.post("/api/v1/model-configs/", _body(llm, tokenizer="hf"), format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "tokenizer_unavailable"
    body = _body(llm, provider="llama_cpp", model="/nowhere/model.gguf", tokenizer="gguf")
    response = api.post("/api/v1/model-configs/", body, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "tokenizer_unavailable"
    assert ModelConfig.objects.count() == 1


@pytest.mark.django_db
def test_a_tokenizer_json_is_stored_once_and_named_by_digest(api, llm):
    text = word_level_json()
    body = _body(llm, tokenizer_json=text)
    created = api.post("/api/v1/model-configs/", body, format="json")
    assert created.status_code == 201, created.json()
    answer = created.json()
    assert answer["tokenizer"] == "hf" and "tokenizer_json" not in answer
    assert answer["tokenizer_sha256"] == tokenizers.hf_digest(text)
    again = api.post("/api/v1/model-configs/", {**body, "name": "second"}, format="json")
    assert again.status_code == 201
    assert TokenizerFile.objects.filter(sha256=answer["tokenizer_sha256"]).count() == 1
    back = api.patch(
        f"/api/v1/model-configs/{answer['id']}/", {"tokenizer": "o200k"}, format="json"
    )
    assert back.status_code == 200 and back.json()["tokenizer"] == "o200k"


@pytest.mark.django_db
def test_a_tokenizer_file_goes_once_no_config_names_it(api, llm):
    first, second = word_level_json(), word_level_json() + "\n"
    a = api.post("/api/v1/model-configs/", _body(llm, tokenizer_json=first), format="json")
    b = api.post(
        "/api/v1/model-configs/", {**_body(llm, tokenizer_json=first), "name": "b"}, format="json"
    )
    a, b = a.json(), b.json()
    digest = a["tokenizer_sha256"]
    # b moves to another file: the first is still a's
    moved = api.patch(
        f"/api/v1/model-configs/{b['id']}/", {"tokenizer_json": second}, format="json"
    )
    assert moved.status_code == 200
    stored = set(TokenizerFile.objects.values_list("sha256", flat=True))
    assert stored == {digest, tokenizers.hf_digest(second)}
    # a goes: its file goes with it, b's stays and still counts
    assert api.delete(f"/api/v1/model-configs/{a['id']}/").status_code == 204
    assert set(TokenizerFile.objects.values_list("sha256", flat=True)) == {
        tokenizers.hf_digest(second)
    }
    assert counter_for(ModelConfig.objects.get(pk=b["id"])).name.startswith("hf:")
    # a config moved to another kind still names its file (switching back needs no upload)
    api.patch(f"/api/v1/model-configs/{b['id']}/", {"tokenizer": "o200k"}, format="json")
    assert TokenizerFile.objects.count() == 1


# --- the console form -----------------------------------------------------------------


def _form(llm, **overrides) -> dict:
    data = {
        "name": "counted", "provider": "openai_compatible", "model": "scripted-model",
        "base_url": llm.base_url, "context_limit": "8192", "max_output_tokens": "512",
        "temperature": "0.7", "top_p": "0.9", "timeout_ms": "30000", "extra": "{}",
    }  # fmt: skip
    return {**data, **overrides}


@pytest.mark.django_db
def test_the_console_form_stores_a_tokenizer_json_and_refuses_a_broken_one(tenant, llm):
    admin_client = signed_in(tenant, "admin")
    page = admin_client.get("/console/models/new/").content.decode()
    assert 'name="tokenizer"' in page and 'name="tokenizer_json"' in page
    broken = _form(llm, tokenizer="hf", tokenizer_json="{not json")
    response = admin_client.post("/console/models/new/", broken)
    assert response.status_code == 400
    assert 'id="id_tokenizer_errors"' in response.content.decode()
    assert not ModelConfig.objects.filter(tenant=tenant).exists()
    assert not TokenizerFile.objects.filter(tenant=tenant).exists()
    only_hf = _form(llm, tokenizer="o200k", tokenizer_json=word_level_json())
    response = admin_client.post("/console/models/new/", only_hf)
    assert response.status_code == 400
    assert 'id="id_tokenizer_json_errors"' in response.content.decode()
    good = _form(llm, tokenizer="hf", tokenizer_json=word_level_json())
    response = admin_client.post("/console/models/new/", good)
    assert response.status_code == 302
    config = ModelConfig.objects.get(tenant=tenant)
    assert config.tokenizer == "hf" and counter_for(config).name.startswith("hf:")
