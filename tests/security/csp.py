"""Helpers of the CSP tests: the policy as a dict, and the inline-code scanner for templates."""

from __future__ import annotations

import re
from pathlib import Path

# What every page of the site sends, apart from its own WebSocket origin in connect-src.
SITE_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}


def parse_policy(header: str) -> dict[str, list[str]]:
    """``"a x y; b z"`` → ``{"a": ["x", "y"], "b": ["z"]}`` (directive order is not meaningful)."""
    policy = {}
    for directive in filter(None, (part.strip() for part in header.split(";"))):
        name, *sources = directive.split()
        assert name not in policy, f"directive {name} appears twice"
        policy[name] = sources
    return policy


def expected_policy(websocket_origin: str) -> dict[str, list[str]]:
    return {**SITE_POLICY, "connect-src": ["'self'", websocket_origin]}


# An HTML start tag; Django's {{ }} and {% %} never contain angle brackets in our templates.
_TAG = re.compile(r"<[a-zA-Z][^<>]*>")
_RULES = {
    "inline <script> (no src)": lambda tag: (
        re.match(r"<script\b", tag, re.I) and not re.search(r"\ssrc\s*=", tag, re.I)
    ),
    "on* event handler attribute": lambda tag: re.search(r"[\s\"'}]on[a-z]+\s*=", tag, re.I),
    "hx-on attribute": lambda tag: re.search(r"\s(data-)?hx-on", tag, re.I),
    "hx-vars (evaluated)": lambda tag: re.search(r"\s(data-)?hx-vars\s*=", tag, re.I),
    "javascript:/js: value": lambda tag: re.search(r"=\s*[\"']?\s*(javascript|js):", tag, re.I),
    "inline <style>": lambda tag: re.match(r"<style\b", tag, re.I),
    "style= attribute": lambda tag: re.search(r"[\s\"'}]style\s*=", tag, re.I),
}


def inline_code(text: str) -> list[tuple[str, str]]:
    """Every (rule, tag) of ``text`` that the policy would block or that needs eval."""
    found = []
    for tag in _TAG.findall(text):
        found.extend((rule, tag) for rule, hit in _RULES.items() if hit(tag))
    if re.search(r"javascript:", text, re.I):
        found.append(("javascript: URL", "javascript:"))
    return found


def template_files(directories: list[Path]) -> list[Path]:
    return sorted(p for d in directories for p in d.rglob("*.html"))
