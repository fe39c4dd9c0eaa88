// A shift handover (SPEC 13) shows in the inbox as a card: its body says what the outgoing
// shift leaves (open, claimed, escalated, resolved; tap to read it all) and an Accept button
// replaces Claim / Resolve. Accepting resolves it for everyone.

import { h } from "./dom.js";
import { format } from "./i18n.js";

export const HANDOVER_TYPE = "SHIFT_HANDOVER";

export function isHandover(note) {
  return note.message_type === HANDOVER_TYPE && Number.isInteger(note.data?.handover_id);
}

/** Accept (44 px, like every button), or who accepted it once it is done. */
export function handoverActions(note) {
  if (note.status === "resolved") {
    const who = note.resolved_by?.username;
    return [h("span", { className: "handover-accepted" },
      who ? format(gettext("Accepted by %(name)s"), { name: who }) : gettext("Accepted"))];
  }
  return [h("button", {
    type: "button",
    className: "btn btn-small btn-primary",
    dataset: { action: "accept", id: note.id },
  }, gettext("Accept handover"))];
}

/** The API path that accepts it. */
export function acceptPath(note) {
  return `/api/v1/handovers/${note.data.handover_id}/accept/`;
}
