"""Accessibility measurements of the consult page in Chromium (tests/test_web_page_a11y.py): text contrast,
the focus ring, accessible names, horizontal overflow, and the CDP emulation of a narrow or zoomed screen
and of the system's light or dark preference.

Why measured in the browser rather than read from the CSS: what a reader gets is the computed result of the
style sheet, the user agent's defaults (a select, a placeholder) and the media the page was laid out for.
Contrast follows WCAG 2.x (relative luminance of sRGB colours, ratio (L1 + 0.05) / (L2 + 0.05)); the colour
behind a text is the first opaque background among its ancestors, semi-transparent ones blended over it.
"""

from __future__ import annotations

from typing import Any

from selenium import webdriver

_COLOUR_JS = """
const rgba = (c) => { const m = /rgba?\\(([^)]*)\\)/.exec(c || ""); if (!m) return null;
  const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat(1);
function background(el) {
  const layers = [];
  for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
    const c = rgba(getComputedStyle(n).backgroundColor);
    if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
  }
  return layers.reverse().reduce((under, c) => over(c, under), [255, 255, 255, 1]);
}
const lum = (c) => [0, 1, 2].map((i) => { const v = c[i] / 255;
  return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); })
  .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
const ratio = (fg, bg) => { const a = lum(over(fg, bg)), b = lum(bg);
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
  (el.getAttribute("class") ? "." + el.getAttribute("class").trim().split(/\\s+/).join(".") : "");
"""

CONTRAST_JS = (
    _COLOUR_JS
    + """
const found = [];
for (const el of document.querySelectorAll("body *")) {
  const field = /^(TEXTAREA|INPUT|SELECT)$/.test(el.tagName) && el.type !== "hidden";
  const text = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  if (!text && !field) continue;
  const box = el.getBoundingClientRect(), style = getComputedStyle(el);
  if (!box.width || !box.height || box.right < 0 || style.visibility !== "visible") continue;
  if (el.closest(":disabled")) continue;  // an inactive control is exempt (WCAG 1.4.3)
  let fg = rgba(el instanceof SVGElement ? style.fill : style.color), bg;
  if (el instanceof SVGElement) {  // an SVG label sits on its node's box, or on the panel behind the drawing
    const rect = el.parentElement.querySelector(":scope > rect");
    bg = background(el.closest("svg").parentElement);
    if (rect) bg = over(rgba(getComputedStyle(rect).fill), bg);
  } else {
    bg = background(el);
  }
  found.push([describe(el), ratio(fg, bg), (el.textContent || el.value || "").trim().slice(0, 40)]);
  if (field && el.placeholder) {
    found.push([describe(el) + "::placeholder", ratio(rgba(getComputedStyle(el, "::placeholder").color), bg),
      el.placeholder.slice(0, 40)]);
  }
}
return found;
"""
)

FOCUS_JS = (
    _COLOUR_JS
    + """
const el = document.activeElement, style = getComputedStyle(el);
const ring = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2;
const colour = rgba(ring ? style.outlineColor : "");
return {element: describe(el), text: (el.textContent || "").trim().slice(0, 40), outline: ring,
  shadow: style.boxShadow !== "none", contrast: colour ? ratio(colour, background(el.parentElement)) : 0};
"""
)

UNNAMED_JS = """
const name = (el) => {
  const by = (el.getAttribute("aria-labelledby") || "").split(/\\s+/).filter(Boolean)
    .map((id) => (document.getElementById(id) || {}).textContent || "").join(" ");
  const labels = [...(el.labels || [])].map((l) => l.textContent).join(" ");
  const button = el.type === "submit" || el.type === "button";
  const own = el.tagName === "INPUT" ? (button ? el.value : "") : el.textContent;
  const names = [by, el.getAttribute("aria-label"), labels, own, el.getAttribute("title")];
  return names.map((t) => (t || "").trim()).find((t) => t) || "";
};
return [...document.querySelectorAll("input, textarea, select, button, a[href], [role=img]")]
  .filter((el) => el.type !== "hidden" && !name(el)).map((el) => el.outerHTML.slice(0, 120));
"""

OVERFLOW_JS = """
const width = window.innerWidth, root = document.documentElement;
const out = [...document.querySelectorAll("body *")].filter((el) => {
  const box = el.getBoundingClientRect();
  return box.width > 0 && box.right > root.clientWidth + 1 && !el.closest(".graph-scroll, .skip");
}).map((el) => `${el.tagName.toLowerCase()}#${el.id}.${el.getAttribute("class") || ""}`);
return {scrollWidth: root.scrollWidth, innerWidth: width, sticking_out: out.slice(0, 10)};
"""


def low_contrast(driver: webdriver.Chrome, minimum: float = 4.5) -> list[tuple[str, float, str]]:
    """Every visible text (and placeholder) whose contrast with what is behind it is below ``minimum``."""
    found: list[list[Any]] = driver.execute_script(CONTRAST_JS)
    assert len(found) > 20, f"too few texts measured: {found}"
    return [(str(what), round(float(r), 2), str(text)) for what, r, text in found if r < minimum]


def focus_ring(driver: webdriver.Chrome) -> dict[str, Any]:
    """How the focused element shows its focus: an outline (≥ 2 px) or a box-shadow, and the outline's
    contrast with the background around it (WCAG 1.4.11 asks 3:1)."""
    ring: dict[str, Any] = driver.execute_script(FOCUS_JS)
    return ring


def unnamed_controls(driver: webdriver.Chrome) -> list[str]:
    """Controls, links and images (hidden ones too) with no accessible name: no aria-labelledby, aria-label,
    label, text or title."""
    return [str(x) for x in driver.execute_script(UNNAMED_JS)]


def unnamed_in_accessibility_tree(driver: webdriver.Chrome) -> list[str]:
    """The same question put to Chromium's own accessibility tree (the names a screen reader is given)."""
    tree = driver.execute_cdp_cmd("Accessibility.getFullAXTree", {})
    roles = {"button", "link", "textbox", "searchbox", "combobox", "checkbox", "radio", "image", "img"}
    return [
        f"{node['role']['value']} {node.get('backendDOMNodeId')}"
        for node in tree["nodes"]
        if not node.get("ignored")
        and node.get("role", {}).get("value") in roles
        and not str(node.get("name", {}).get("value", "")).strip()
    ]


def overflow(driver: webdriver.Chrome) -> dict[str, Any]:
    """The document's scroll width beside the window's, and the elements sticking out to the right (a
    chain drawing scrolls inside its own box and is not counted)."""
    measured: dict[str, Any] = driver.execute_script(OVERFLOW_JS)
    return measured


def emulate_screen(driver: webdriver.Chrome, width: int, height: int, scale: float = 1) -> None:
    """Lay the page out for a ``width`` × ``height`` CSS-pixel viewport with ``scale`` device pixels each."""
    metrics = {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": False}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)


def emulate_color_scheme(driver: webdriver.Chrome, scheme: str | None) -> None:
    """The system's ``prefers-color-scheme`` as ``light`` or ``dark`` (None: the browser's own again)."""
    features = [{"name": "prefers-color-scheme", "value": scheme}] if scheme else []
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})


def reset_emulation(driver: webdriver.Chrome) -> None:
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    emulate_color_scheme(driver, None)
