// A group chat on the play page (docs/groups.md): each reply shows its speaker's name and
// avatar (from turn.started's speaker), the member list's Speak (force-talk) and Mute go
// out as socket frames, and group.updated redraws the list. "/trigger Name" typed in the
// composer is a force-talk, not a message.

const list = document.getElementById("group-members");
const play = document.getElementById("play");

/** The avatar URL of member ``id``: the console's member list names the route; the player
 * app's page (no list) names its own on the play section. */
function avatarUrl(id) {
  if (list) return list.dataset.avatar.replace(list.dataset.avatarOf, id);
  const app = play && play.dataset.memberAvatar;
  return app ? app.replace(play.dataset.memberAvatarOf, id) : null;
}

/** Show ``speaker`` ({id, name}) as the author of the reply bubble ``li``. */
export function showSpeaker(li, speaker) {
  if (!li || !speaker) return;
  li.dataset.speaker = speaker.id;
  li.querySelector(".who").textContent = speaker.name;
  const img = li.querySelector("img.msg-avatar");
  const url = avatarUrl(speaker.id);
  if (img && url) img.src = url;
}

/** The force-talk a composer text asks for ("/trigger" or "/trigger Name"), else null. */
export function triggerOf(content) {
  const [command, ...rest] = content.trim().split(/\s+/);
  if (command !== "/trigger") return null;
  return { name: rest.join(" ") || null };
}

/** ``group.updated``: mute marks follow the group as it is now. */
export function updated(msg) {
  if (!list) return;
  for (const member of msg.members) {
    const row = list.querySelector(`.member[data-character="${member.character}"]`);
    if (!row) continue;
    row.classList.toggle("muted", member.muted);
    const mute = row.querySelector(".member-mute");
    if (mute) {
      mute.textContent = member.muted ? "Unmute" : "Mute";
      mute.setAttribute("aria-pressed", String(member.muted));
    }
  }
}

/** Wire the member list's buttons to the socket (``send`` a frame, ``ready`` to send). */
export function initGroup({ send, ready, clientId }) {
  if (!list) return;
  list.addEventListener("click", function (event) {
    const button = event.target.closest("button");
    const row = button && button.closest(".member");
    if (!row || !ready()) return;
    const character = row.dataset.character;
    if (button.classList.contains("member-speak")) {
      send({ type: "group.trigger", character: character, client_message_id: clientId("t") });
    } else if (button.classList.contains("member-mute")) {
      send({ type: "group.member", character: character, muted: !row.classList.contains("muted") });
    }
  });
}
