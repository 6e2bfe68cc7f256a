"""OpenAPI description of our authentication (bearer API tokens or a console session)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.views import SpectacularAPIView


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "console.auth.ApiTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A tenant-scoped API token (`create_api_token`, or the console).",
        }


class SchemaView(SpectacularAPIView):
    """``/api/schema/``; ``?format=json`` or ``?format=yaml`` picks the encoding (the global
    ``?format=`` override is off because worldbook export uses that parameter itself)."""

    def perform_content_negotiation(self, request, force=False):
        wanted = request.query_params.get("format")
        if wanted:
            for renderer in self.get_renderers():
                if renderer.format == wanted:
                    return renderer, renderer.media_type
        return super().perform_content_negotiation(request, force)
