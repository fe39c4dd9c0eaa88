// A sound and a vibration when a critical alert arrives while the page is open, for a handheld
// in a pocket or a noisy aisle. A setting of this device (the bell's panel, "Sound for critical
// alerts"): off by default, remembered in localStorage for whoever uses the device. An alert that
// came quietly to the user (`quiet`, beyond their noise budget: SPEC 17) never sounds.

import { isUnread } from "./lifecycle.js";

const STORAGE_KEY = "wms-notify:alert-sound";
const VIBRATION_MS = [300, 150, 300];
const TONES_HZ = [880, 660, 880]; // three short beeps, 0.18 s each
const TONE_S = 0.18;

function remembered() {
  try {
    return window.localStorage.getItem(STORAGE_KEY) === "on";
  } catch {
    return false;
  }
}

export class CriticalAlarm {
  constructor(button) {
    this.button = button;
    this.on = remembered();
    this.audio = null; // one AudioContext, made on first use
    this.button?.addEventListener("click", () => this.#toggle());
    // Browsers let a page make sound only after a tap on it; any tap unlocks it for later.
    const unlock = () => {
      if (this.on) this.#context()?.resume().catch(() => {});
    };
    document.addEventListener("pointerdown", unlock, { passive: true });
    document.addEventListener("keydown", unlock);
    this.#render();
  }

  /** Ring for the critical, unread ones among `notes` (news that just arrived), unless quiet. */
  ring(notes) {
    if (!this.on || !notes.some((n) => n.severity === "critical" && isUnread(n) && !n.quiet)) {
      return;
    }
    this.#sound();
  }

  /** Ring again for a critical alert nobody has claimed yet (a reminder), read or not. */
  remind(note) {
    if (this.on && note.severity === "critical" && !note.quiet) this.#sound();
  }

  #sound() {
    try {
      navigator.vibrate?.(VIBRATION_MS);
    } catch {
      // No vibration on this device.
    }
    this.#beep();
  }

  #toggle() {
    this.on = !this.on;
    try {
      window.localStorage.setItem(STORAGE_KEY, this.on ? "on" : "off");
    } catch {
      // Storage unavailable: the setting lasts as long as this page.
    }
    if (this.on) this.#context()?.resume().catch(() => {}); // this tap unlocks the sound
    this.#render();
  }

  #render() {
    this.button?.setAttribute("aria-pressed", String(this.on));
  }

  #context() {
    if (!this.audio) {
      const Context = window.AudioContext ?? window.webkitAudioContext;
      if (!Context) return null;
      try {
        this.audio = new Context();
      } catch {
        return null;
      }
    }
    return this.audio;
  }

  #beep() {
    const audio = this.#context();
    if (!audio) return;
    try {
      const at = audio.currentTime;
      TONES_HZ.forEach((hz, i) => {
        const tone = audio.createOscillator();
        const volume = audio.createGain();
        tone.frequency.value = hz;
        volume.gain.value = 0.3;
        tone.connect(volume).connect(audio.destination);
        tone.start(at + i * TONE_S * 1.5);
        tone.stop(at + i * TONE_S * 1.5 + TONE_S);
      });
    } catch {
      // No sound on this device.
    }
  }
}
