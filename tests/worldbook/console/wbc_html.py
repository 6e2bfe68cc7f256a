"""Read a rendered HTML form the way a browser would submit it (tests only).

Walking the real page instead of building POST data by hand means a field the template
forgets to render, or renders with the wrong value, breaks the round-trip tests.
"""

from __future__ import annotations

from html.parser import HTMLParser


class _FormReader(HTMLParser):
    def __init__(self, form_id: str):
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.inside = False
        self.pairs: list[tuple[str, str]] = []
        self._textarea: str | None = None
        self._text: list[str] = []
        self._select: str | None = None
        self._option_value: str | None = None
        self._option_text: list[str] = []
        self._option_selected = False
        self._select_value: str | None = None
        self._select_first: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and a.get("id") == self.form_id:
            self.inside = True
            return
        if not self.inside or "disabled" in a:
            return
        name = a.get("name")
        if tag == "input" and name:
            kind = (a.get("type") or "text").lower()
            if kind in ("submit", "button", "file", "image", "reset"):
                return
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self.pairs.append((name, a.get("value") or "on"))
                return
            self.pairs.append((name, a.get("value") or ""))
        elif tag == "textarea" and name:
            self._textarea, self._text = name, []
        elif tag == "select" and name:
            self._select, self._select_value, self._select_first = name, None, None
        elif tag == "option" and self._select is not None:
            self._option_value = a.get("value")
            self._option_text = []
            self._option_selected = "selected" in a

    def handle_data(self, data):
        if self._textarea is not None:
            self._text.append(data)
        if self._option_value is not None or self._select is not None:
            self._option_text.append(data)

    def handle_endtag(self, tag):
        if tag == "form" and self.inside:
            self.inside = False
        elif tag == "textarea" and self._textarea is not None:
            text = "".join(self._text)
            # Browsers drop one newline right after <textarea> (Django renders one).
            if text.startswith("\r\n"):
                text = text[2:]
            elif text.startswith("\n"):
                text = text[1:]
            self.pairs.append((self._textarea, text))
            self._textarea = None
        elif tag == "option" and self._select is not None:
            value = self._option_value
            if value is None:
                value = "".join(self._option_text).strip()
            if self._select_first is None:
                self._select_first = value
            if self._option_selected:
                self._select_value = value
            self._option_value = None
        elif tag == "select" and self._select is not None:
            value = self._select_value if self._select_value is not None else self._select_first
            self.pairs.append((self._select, value or ""))
            self._select = None


def form_pairs(html: str, form_id: str) -> list[tuple[str, str]]:
    """``(name, value)`` pairs the form ``form_id`` would submit, in document order."""
    reader = _FormReader(form_id)
    reader.feed(html)
    return reader.pairs


def form_dict(html: str, form_id: str) -> dict[str, list[str]]:
    """The same pairs as ``{name: [values...]}`` (what ``Client.post`` accepts)."""
    out: dict[str, list[str]] = {}
    for name, value in form_pairs(html, form_id):
        out.setdefault(name, []).append(value)
    return out
