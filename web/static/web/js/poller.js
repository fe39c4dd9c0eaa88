// One loop polls everything the page shows. A failed round (no answer, 5xx, 429) puts the
// page in a quiet "reconnecting" state and retries with exponential back-off plus jitter, so
// hundreds of screens do not all hammer a recovering server in the same second.

export class Poller {
  /**
   * tick: async function doing one round of polling; it throws ApiError on failure.
   * onHealth: called with {state: "ok" | "reconnecting" | "signed-out", error, retryInMs}.
   */
  constructor({ intervalMs, maxBackoffMs, tick, onHealth }) {
    this.configuredMaxBackoffMs = maxBackoffMs;
    this.setInterval(intervalMs);
    this.tick = tick;
    this.onHealth = onHealth;
    this.failures = 0;
    this.timer = null;
    this.running = false;
    this.again = false;
    this.stopped = false;
  }

  start() {
    this.#schedule(0);
    // Coming back to the tab or to the network: look now instead of waiting out a back-off.
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.pollNow();
    });
    window.addEventListener("online", () => this.pollNow());
  }

  /** Change the pace: while the event stream is live, polling only reconciles now and then. */
  setInterval(intervalMs) {
    this.intervalMs = Math.max(250, intervalMs);
    this.maxBackoffMs = Math.max(this.intervalMs, this.configuredMaxBackoffMs);
  }

  /** Poll as soon as possible (after the round in flight, if any). */
  pollNow() {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.#schedule(0);
  }

  stop() {
    this.stopped = true;
    window.clearTimeout(this.timer);
  }

  #schedule(delayMs) {
    window.clearTimeout(this.timer);
    if (!this.stopped) this.timer = window.setTimeout(() => this.#round(), delayMs);
  }

  backoffMs(error) {
    const exponential = this.intervalMs * 2 ** Math.min(this.failures - 1, 16);
    const jittered = exponential * (0.8 + Math.random() * 0.4);
    const serverAsked = (error?.retryAfter ?? 0) * 1000;
    return Math.min(this.maxBackoffMs, Math.max(jittered, serverAsked));
  }

  async #round() {
    this.running = true;
    let delay = this.intervalMs;
    try {
      await this.tick();
      if (this.failures > 0 || !this.healthy) this.onHealth({ state: "ok" });
      this.failures = 0;
      this.healthy = true;
    } catch (error) {
      if (error?.signedOut) {
        this.onHealth({ state: "signed-out", error });
        this.stop();
        return;
      }
      if (!error?.transient) console.error("poll failed", error);
      this.failures += 1;
      this.healthy = false;
      delay = this.backoffMs(error);
      this.onHealth({ state: "reconnecting", error, retryInMs: delay });
    } finally {
      this.running = false;
    }
    if (this.again) {
      this.again = false;
      if (this.failures === 0) delay = 0;
    }
    this.#schedule(delay);
  }
}
