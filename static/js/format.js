/**
 * format.js: the one clock format of the pages' scripts (static/js/*.js).
 */

/**
 * Seconds left as m:ss, or h:mm:ss from an hour on; "--:--" without a clock. With
 * `padMinutes` the minutes always have two digits ("05:03"): the players' phones show it so
 * (and referees/player_pages.py draws the start panel so before the script takes over); the
 * console and the big screen show "5:03".
 */
export function formatClock(seconds, { padMinutes = false } = {}) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "--:--";
  const whole = Math.max(0, Math.ceil(seconds));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  const two = (n) => String(n).padStart(2, "0");
  const minutes = h || padMinutes ? two(m) : String(m);
  return h ? `${h}:${minutes}:${two(s)}` : `${minutes}:${two(s)}`;
}
