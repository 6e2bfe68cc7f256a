"""A small but real OpenID Connect provider for the tests, over HTTP on 127.0.0.1.

It speaks the authorization-code flow as a provider does: a discovery document, an
authorization endpoint that redirects back with a one-time code (PKCE checked when the
client sent a challenge), a token endpoint that checks the client's secret and returns an ID
token signed RS256 with a key it serves at ``jwks_uri``, and a userinfo endpoint behind the
access token. Who signs in is ``provider.person`` (the claims), set by the test before the
flow; ``provider.token_requests`` keeps what the token endpoint was sent.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

CLIENT_ID = "roleplay-tests"
CLIENT_SECRET = "s3cret-of-the-client-" + "x" * 16
KID = "test-key-1"


class Provider:
    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.person: dict = {}
        self.codes: dict[str, dict] = {}
        self.tokens: dict[str, dict] = {}
        self.token_requests: list[dict] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.issuer = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> Provider:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def discovery(self) -> dict:
        base = self.issuer
        return {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "userinfo_endpoint": f"{base}/userinfo",
            "jwks_uri": f"{base}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
        }

    def jwks(self) -> dict:
        jwk = RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return {"keys": [{**jwk, "kid": KID, "use": "sig", "alg": "RS256"}]}

    def authorize(self, query: dict) -> tuple[int, dict]:
        """The user agreed at once: back to the client with a code (or an error)."""
        redirect_uri = query.get("redirect_uri", "")
        if query.get("client_id") != CLIENT_ID or query.get("response_type") != "code":
            return 400, {"error": "invalid_request"}
        code = secrets.token_urlsafe(16)
        self.codes[code] = {
            "redirect_uri": redirect_uri,
            "person": dict(self.person),
            "challenge": query.get("code_challenge"),
            "nonce": query.get("nonce"),
        }
        back = {"code": code, "state": query.get("state", "")}
        return 302, {"Location": f"{redirect_uri}?{urlencode(back)}"}

    def token(self, form: dict, authorization: str) -> tuple[int, dict]:
        self.token_requests.append(dict(form))
        client_id, secret = form.get("client_id"), form.get("client_secret")
        if authorization.startswith("Basic "):
            client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
        if client_id != CLIENT_ID or secret != CLIENT_SECRET:
            return 401, {"error": "invalid_client"}
        grant = self.codes.pop(form.get("code", ""), None)  # a code is used once
        if grant is None or grant["redirect_uri"] != form.get("redirect_uri"):
            return 400, {"error": "invalid_grant"}
        if grant["challenge"]:
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant["challenge"]:
                return 400, {"error": "invalid_grant"}
        access = secrets.token_urlsafe(16)
        self.tokens[access] = grant["person"]
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": CLIENT_ID, "iat": now, "exp": now + 300}
        claims.update(grant["person"])
        if grant["nonce"]:
            claims["nonce"] = grant["nonce"]
        id_token = jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": KID})
        return 200, {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 300,
            "id_token": id_token,
        }

    def userinfo(self, authorization: str) -> tuple[int, dict]:
        person = self.tokens.get(authorization.removeprefix("Bearer "))
        return (200, person) if person is not None else (401, {"error": "invalid_token"})


def _handler(provider: Provider):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _json(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            url = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            if url.path == "/.well-known/openid-configuration":
                return self._json(200, provider.discovery())
            if url.path == "/jwks":
                return self._json(200, provider.jwks())
            if url.path == "/userinfo":
                return self._json(*provider.userinfo(self.headers.get("Authorization", "")))
            if url.path == "/authorize":
                status, answer = provider.authorize(query)
                if status != 302:
                    return self._json(status, answer)
                self.send_response(302)
                self.send_header("Location", answer["Location"])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            return self._json(404, {"error": "not_found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode()
            form = {k: v[0] for k, v in parse_qs(body).items()}
            if urlparse(self.path).path == "/token":
                return self._json(*provider.token(form, self.headers.get("Authorization", "")))
            return self._json(404, {"error": "not_found"})

    return Handler
