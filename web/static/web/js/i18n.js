// Translation and formatting helpers on top of Django's JavaScript catalog (jsi18n).
// The catalog script defines the globals gettext, ngettext and interpolate; makemessages
// finds the strings because every call site spells gettext("...") out literally.

export const LANG = document.documentElement.lang || "en";

/** "%(name)s" placeholders filled from `values` (Django's interpolate, named form). */
export function format(template, values) {
  return interpolate(template, values, true);
}

const absoluteFormat = new Intl.DateTimeFormat(LANG, { dateStyle: "medium", timeStyle: "medium" });
const clockFormat = new Intl.DateTimeFormat(LANG, { timeStyle: "medium" });
const shortFormat = new Intl.DateTimeFormat(LANG, {
  month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
});
const hourFormat = new Intl.DateTimeFormat(LANG, { timeStyle: "short" });
const relativeFormat = new Intl.RelativeTimeFormat(LANG, { numeric: "auto", style: "short" });

export function absoluteTime(date) {
  return absoluteFormat.format(date);
}

export function clockTime(date) {
  return clockFormat.format(date);
}

/** "14:02" (or "2:02 PM") today; with the date on another day. */
export function shortTime(date, now = new Date()) {
  return date.toDateString() === now.toDateString()
    ? hourFormat.format(date) : shortFormat.format(date);
}

/** "just now", "5 min ago", "3 hr ago"; older than two days: a short date. */
export function relativeTime(date, now = Date.now()) {
  const seconds = Math.round((date.getTime() - now) / 1000);
  const ago = Math.abs(seconds);
  if (ago < 45) return gettext("just now");
  if (ago < 3600) return relativeFormat.format(Math.round(seconds / 60), "minute");
  if (ago < 86400) return relativeFormat.format(Math.round(seconds / 3600), "hour");
  if (ago < 2 * 86400) return relativeFormat.format(Math.round(seconds / 86400), "day");
  return shortFormat.format(date);
}

/** A <time> element whose text is kept relative by refreshTimes(). */
export function timeElement(iso, className = "") {
  const date = new Date(iso);
  const element = document.createElement("time");
  element.className = className;
  element.dateTime = iso;
  element.dataset.relative = "";
  element.title = absoluteTime(date);
  element.textContent = relativeTime(date);
  return element;
}

export function refreshTimes(root = document) {
  const now = Date.now();
  root.querySelectorAll("time[datetime][data-relative]").forEach((element) => {
    element.textContent = relativeTime(new Date(element.dateTime), now);
  });
}
