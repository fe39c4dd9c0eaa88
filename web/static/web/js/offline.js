// Whether the page reaches the server, said where people look (SPEC 12, on the floor): the
// pill in the status line (Live, Polling or Offline) and, over what the page shows without a
// network, "Offline – as of 14:02" (the time of the last answer). The pill follows the
// browser's own online and offline events as well as the stream, so it says Offline as soon
// as the browser knows, not when the stream gives up.

import { onAnswer } from "./api.js";
import { format, shortTime } from "./i18n.js";

export class Connection {
  /** pill: the status line's pill; markers: the elements that say what is shown is old. */
  constructor({ pill, markers, pollIntervalSeconds }) {
    this.pill = pill;
    this.markers = [...markers];
    this.pollIntervalSeconds = pollIntervalSeconds;
    this.mode = null; // "live" | "polling" once the stream says; null without a stream
    this.online = navigator.onLine !== false;
    this.asOf = null; // the time of the last answer (ms): what the page shows is from then
    this.fromCopy = false; // shown from the answers the service worker kept
    window.addEventListener("offline", () => this.#setOnline(false));
    window.addEventListener("online", () => this.#setOnline(true));
    onAnswer(({ keptAt }) => this.#answered(keptAt));
    this.#render();
  }

  /** How updates arrive while the network is there: "live" (the stream) or "polling". */
  setMode(mode) {
    this.mode = mode;
    this.#render();
  }

  #setOnline(online) {
    this.online = online;
    this.#render();
  }

  #answered(keptAt) {
    if (keptAt === null) {
      this.asOf = Date.now();
      this.fromCopy = false;
    } else {
      // Several kept answers make up the page: it is as old as the oldest of them.
      this.asOf = this.fromCopy && this.asOf !== null ? Math.min(this.asOf, keptAt) : keptAt;
      this.fromCopy = true;
    }
    this.#render();
  }

  #render() {
    const offline = !this.online;
    if (this.pill) {
      const mode = offline ? "offline" : this.mode;
      this.pill.hidden = mode === null;
      this.pill.dataset.mode = mode ?? "";
      if (mode === "offline") {
        this.pill.textContent = gettext("Offline");
        this.pill.title = gettext("No network. Actions wait and are sent when it is back.");
      } else if (mode === "live") {
        this.pill.textContent = gettext("Live");
        this.pill.title = gettext("Updates arrive as they happen.");
      } else if (mode === "polling") {
        this.pill.textContent = gettext("Polling");
        this.pill.title = format(gettext("Checking for updates every %(seconds)s s."),
                                 { seconds: this.pollIntervalSeconds });
      }
    }
    const text = this.asOf === null
      ? gettext("Offline – nothing kept on this device yet")
      : format(gettext("Offline – as of %(time)s"), { time: shortTime(new Date(this.asOf)) });
    for (const marker of this.markers) {
      marker.hidden = !(offline || this.fromCopy);
      if (marker.textContent !== text) marker.textContent = text;
    }
  }
}
