// The pictures of a reply on the play page (docs/images.md): a slot is shown in its message
// as "Drawing…" (image.scheduled), then its thumbnail, which opens the full image
// (image.ready), or "Could not draw this" (image.blocked, image.failed). The same shapes as
// templates/roleplay/play/_picture.html, which renders stored slots.

import { byId } from "./play-transcript.js";

// The socket names the API's link; the console page reads the same signed link here.
const API_FILES = "/api/v1/images/files/";
const CONSOLE_FILES = "/console/images/files/";

function consoleLink(url) {
  if (typeof url !== "string" || !url.startsWith(API_FILES)) return "";
  return CONSOLE_FILES + url.slice(API_FILES.length) + "/";
}

function figureOf(li, index) {
  const box = li.querySelector(".msg-pictures");
  if (!box) return null;
  box.hidden = false;
  let figure = box.querySelector(`figure[data-index="${Number(index)}"]`);
  if (!figure) {
    figure = document.createElement("figure");
    figure.dataset.index = String(Number(index));
    const later = [...box.children].find((f) => Number(f.dataset.index) > Number(index));
    box.insertBefore(figure, later || null);
  }
  return figure;
}

function note(figure, status, text) {
  figure.className = "picture " + status;
  const span = document.createElement("span");
  span.className = "picture-note";
  span.textContent = text;
  figure.replaceChildren(span);
}

export function scheduled(msg) {
  const li = byId(msg.message_id);
  const figure = li && figureOf(li, msg.index);
  if (figure && !figure.classList.contains("ready")) note(figure, "pending", "Drawing…");
}

export function ready(msg) {
  const li = byId(msg.message_id);
  const figure = li && figureOf(li, msg.index);
  const full = consoleLink(msg.url);
  const thumb = consoleLink(msg.thumbnail_url) || full;
  if (!figure || !full) return;
  figure.className = "picture ready";
  const link = document.createElement("a");
  link.href = full;
  link.target = "_blank";
  link.rel = "noopener";
  const img = document.createElement("img");
  img.src = thumb;
  img.alt = "Picture " + (Number(msg.index) + 1);
  link.appendChild(img);
  figure.replaceChildren(link);
}

export function failed(msg) {
  const li = byId(msg.message_id);
  const figure = li && figureOf(li, msg.index);
  if (!figure) return;
  const blocked = msg.type === "image.blocked";
  note(figure, blocked ? "blocked" : "failed",
       blocked ? "Could not draw this (blocked by moderation)." : "Could not draw this.");
}
