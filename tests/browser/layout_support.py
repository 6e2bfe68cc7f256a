"""What the layout tests share: the two screen sizes the pages must work at (a laptop and a
phone), screenshots kept as test artefacts under ``var/screenshots/`` (not committed: look
at them), and measurements of what sticks out of the screen."""

from __future__ import annotations

from pathlib import Path

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SIZES = {"desktop": DESKTOP, "phone": PHONE}

SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"

# Elements whose box reaches past the right edge of the screen (what makes a page scroll
# sideways), named so a failure says which.
STICKING_OUT = r"""() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.width && box.right > width + 1 && !el.closest("table, pre, .transcript")) {
      const classes = typeof el.className === "string" ? el.className.trim() : "";
      out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
        + (classes ? "." + classes.split(/\s+/).join(".") : "")
        + " right=" + Math.round(box.right));
    }
  }
  return out.slice(0, 8);
}"""


def shoot(page, name: str) -> Path:
    """A full screenshot of the page as it is now, kept for a person to look at."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    # caret="initial": hiding the text caret would inject a style the page's CSP refuses
    # (reported as a violation that the page itself never caused).
    page.screenshot(path=str(path), caret="initial")
    return path


def sideways_scroll(page) -> int:
    """How many pixels the page can scroll sideways (0: it fits the screen's width)."""
    return page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


def sticking_out(page) -> list[str]:
    return page.evaluate(STICKING_OUT)


def inside_viewport(page, locator) -> bool:
    """Whether the element's whole box is on the screen (not under its bottom edge)."""
    box = locator.bounding_box()
    size = page.viewport_size
    return (
        box is not None
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= size["width"] + 0.5
        and box["y"] + box["height"] <= size["height"] + 0.5
    )
