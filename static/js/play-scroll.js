// Where the transcript is scrolled: a chat opens at its newest message; while the reader is
// near the bottom the transcript follows what arrives (a streaming reply, a new message);
// a reader who scrolled up to read stays where they are and gets "Jump to latest" instead.
//
// Only changes at the end of the transcript count as something arriving: an editor opened
// on an old message does not call the reader down.

const transcript = document.getElementById("transcript");
const jump = document.getElementById("jump-latest");
const NEAR_PX = 80; // this close to the bottom counts as reading the latest

let following = true;
let lastTop = 0; // where this script last left the transcript, or the reader did

function nearBottom() {
  return transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight <= NEAR_PX;
}

function bottom() {
  transcript.scrollTop = transcript.scrollHeight;
  lastTop = transcript.scrollTop;
}

/** Whether the reader moved up since the last scroll event was handled: a scroll event
 * comes a frame later, and what arrives in between must not pull them back down. */
function movedUp() {
  return transcript.scrollTop < lastTop - 1;
}

/** Scroll to the newest message and follow from there (on load, after sending). */
export function toLatest() {
  following = true;
  jump.hidden = true;
  bottom();
}

function atTheEnd(record) {
  const last = transcript.lastElementChild;
  if (!last) return false;
  if (record.target === transcript) return [...record.addedNodes].includes(last);
  return last.contains(record.target);
}

function arrived(records) {
  if (!records.some(atTheEnd)) return;
  if (following && movedUp()) following = false;
  if (following) bottom();
  else jump.hidden = false;
}

export function initScroll() {
  transcript.addEventListener(
    "scroll",
    function () {
      following = nearBottom();
      lastTop = transcript.scrollTop;
      if (following) jump.hidden = true;
    },
    { passive: true },
  );
  jump.addEventListener("click", toLatest);
  new MutationObserver(arrived).observe(transcript, {
    childList: true,
    subtree: true,
    characterData: true,
  });
  // The transcript's box changes size (a phone's keyboard opens, the window turns): a
  // reader at the bottom stays there.
  new ResizeObserver(function () {
    if (following) bottom();
  }).observe(transcript);
  toLatest();
}
