"""The console forms of the workflow tools. They read the page's fields (the model's field
validators run here too); the rules across fields are the services', shown beside the field
they name."""

from __future__ import annotations

from django import forms

from roleplay.workflows.tool_models import HttpToolEndpoint, McpServer
from roleplay.workflows.tools.services import HTTP_FIELDS, MCP_FIELDS

KEY_HELP = "The NAME of the environment variable that holds the key, never the key."


class HttpToolEndpointForm(forms.ModelForm):
    class Meta:
        model = HttpToolEndpoint
        fields = list(HTTP_FIELDS)
        labels = {
            "url_prefix": "URL prefix",
            "timeout_ms": "Timeout (ms)",
            "max_response_bytes": "Largest answer (bytes)",
            "api_key_env": "API key variable",
            "api_key_header": "Key header",
        }
        help_texts = {
            "name": "What a workflow node names (its input's endpoint).",
            "url_prefix": "A node calls this URL plus its own path, never anything outside it, "
            "e.g. https://lore.example/api/v1.",
            "api_key_env": KEY_HELP,
            "api_key_header": "Blank: Authorization: Bearer <key>; else the header the key goes "
            "in as it is (e.g. X-Api-Key).",
        }


class McpServerForm(forms.ModelForm):
    allowed_tools = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text="The tools a workflow node may call, separated by commas or new lines; "
        "any other tool of the server is refused.",
    )

    class Meta:
        model = McpServer
        fields = list(MCP_FIELDS)
        labels = {"url": "URL", "timeout_ms": "Timeout (ms)", "api_key_env": "API key variable"}
        help_texts = {
            "name": "What a workflow node names (its input's server).",
            "url": "The server's streamable-HTTP endpoint, e.g. https://tools.example/mcp.",
            "api_key_env": KEY_HELP + " Sent as Authorization: Bearer <key>.",
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk and not self.is_bound:
            self.initial["allowed_tools"] = "\n".join(self.instance.allowed_tools)

    def clean_allowed_tools(self) -> list[str]:
        text = self.cleaned_data.get("allowed_tools") or ""
        return [part.strip() for part in text.replace(",", "\n").splitlines() if part.strip()]
