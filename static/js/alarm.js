/**
 * alarm.js: the alarms before a turn's deadline (issue 32), with sounds made in the page.
 *
 *   alarmDue({seconds, running, paused, awaiting}, fired)
 *                        which alarm is due now: 60, 10 or null (`fired`: the marks already
 *                        given this turn)
 *   startAlarm({...})    the General's alarm (general.js): at 60 s and at 10 s before the
 *                        deadline, while his army could be given an order and has none, it
 *                        vibrates the phone, beeps, flashes the clock and says so in words
 *   audioUnlocker({enabled})  an AudioContext, made on the first tap or key press (browsers
 *                        play sound only after one): {unlock(), context(), unlocked()}
 *   playBeeps(context, count) short beeps; playGong(context) a struck gong (screen.js)
 *
 * Every sound is synthesised with WebAudio: no file to download, nothing from the internet,
 * so it works on a venue's LAN. The alarm counts down with the page's countdown (the
 * server's `remaining`, players.js), so a test fakes the page's clock, not the server's.
 */

// The seconds before the deadline at which the General is alarmed, latest first.
export const ALARM_MARKS = [60, 10];

const SOUND_SETTING = "sl5r.alarm-sounds";
const VIBRATION = { 60: [200, 100, 200], 10: [300, 100, 300, 100, 300] };
const BEEPS = { 60: 2, 10: 3 };

/**
 * Which alarm is due now, or null. `seconds`: what the countdown shows; `running`: a turn is
 * running (not set-up, not over); `paused`: the clock is paused (never an alarm then);
 * `awaiting`: the General could give an order and has none. Each mark goes off once a turn,
 * and only the latest one reached: a page opened with 40 s left gives the one-minute alarm
 * at once and the ten-second one at 10 s; opened with 5 s left, only the ten-second one.
 */
export function alarmDue({ seconds, running, paused, awaiting }, fired) {
  if (!running || paused || !awaiting) return null;
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds <= 0) return null;
  let due = null;
  for (const mark of ALARM_MARKS) if (seconds <= mark) due = mark;
  return due === null || fired.has(due) ? null : due;
}

function setting() {
  try {
    return window.localStorage.getItem(SOUND_SETTING);
  } catch (_error) {
    return null; // storage refused (a private window): sounds stay on
  }
}

function storeSetting(value) {
  try {
    window.localStorage.setItem(SOUND_SETTING, value);
  } catch (_error) {
    // not kept past this page; the toggle still works here
  }
}

/**
 * An AudioContext made (or resumed) on the first pointer or key gesture, since browsers play
 * sound only after the person has touched the page. `enabled()` false: nothing is made.
 */
export function audioUnlocker({ enabled = () => true } = {}) {
  let context = null;
  function unlock() {
    if (!enabled()) return;
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return;
    try {
      if (!context) {
        context = new Context();
        // A silent sound started within the gesture: some phones unlock audio only so.
        const source = context.createBufferSource();
        source.buffer = context.createBuffer(1, 1, 22050);
        source.connect(context.destination);
        source.start(0);
      }
      if (context.state === "suspended") context.resume().catch(() => {});
    } catch (error) {
      console.warn("alarm: no sound on this device", error);
    }
  }
  for (const type of ["pointerdown", "keydown", "touchend"]) {
    document.addEventListener(type, unlock, { capture: true, passive: true });
  }
  return {
    unlock,
    context: () => (context && context.state !== "closed" ? context : null),
    unlocked: () => Boolean(context && context.state === "running"),
  };
}

/** `count` short square-wave beeps, a little apart. */
export function playBeeps(context, count, { frequency = 880, length = 0.16, gap = 0.12, volume = 0.25 } = {}) {
  const start = context.currentTime + 0.02;
  for (let i = 0; i < count; i += 1) {
    const at = start + i * (length + gap);
    const tone = context.createOscillator();
    const gain = context.createGain();
    tone.type = "square";
    tone.frequency.setValueAtTime(frequency, at);
    gain.gain.setValueAtTime(0.0001, at);
    gain.gain.exponentialRampToValueAtTime(volume, at + 0.01);
    gain.gain.setValueAtTime(volume, at + length - 0.04);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + length);
    tone.connect(gain);
    gain.connect(context.destination);
    tone.start(at);
    tone.stop(at + length + 0.02);
  }
}

// A struck gong: a low fundamental and inharmonic partials [ratio, level, seconds to die away].
const GONG_PARTIALS = [
  [1, 1, 6],
  [1.47, 0.6, 4.5],
  [2.09, 0.45, 3.5],
  [2.56, 0.3, 2.8],
  [3.43, 0.2, 2],
  [4.1, 0.12, 1.4],
];

/** One stroke of a gong, about six seconds long. */
export function playGong(context, { frequency = 98, volume = 0.45 } = {}) {
  const at = context.currentTime + 0.03;
  const master = context.createGain();
  master.gain.setValueAtTime(volume, at);
  master.connect(context.destination);
  for (const [ratio, level, decay] of GONG_PARTIALS) {
    const tone = context.createOscillator();
    const gain = context.createGain();
    tone.type = "sine";
    // A gong's pitch sinks a little just after the stroke.
    tone.frequency.setValueAtTime(frequency * ratio * 1.02, at);
    tone.frequency.exponentialRampToValueAtTime(frequency * ratio, at + 0.4);
    gain.gain.setValueAtTime(0.0001, at);
    gain.gain.exponentialRampToValueAtTime(level, at + 0.015);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + decay);
    tone.connect(gain);
    gain.connect(master);
    tone.start(at);
    tone.stop(at + decay + 0.05);
  }
}

/**
 * The General's alarm. `strings`: the page's texts (alarm-60, alarm-10); `secondsLeft()`:
 * what the countdown shows; `getState()`: the last state; `awaiting()`: his army could be
 * given an order this turn and has none (not in a battle, R4). `clock`: the element that
 * flashes; `region`: an aria-live element for the words; `toggle`: the "sounds" checkbox,
 * whose choice this device keeps (localStorage).
 */
export function startAlarm({ strings, secondsLeft, getState, awaiting, clock, region, toggle }) {
  const fired = new Set();
  let turnKey = null;
  const soundsOn = () => setting() !== "off";
  const audio = audioUnlocker({ enabled: soundsOn });

  if (toggle) {
    toggle.checked = soundsOn();
    toggle.addEventListener("change", () => {
      storeSetting(toggle.checked ? "on" : "off");
      if (toggle.checked) audio.unlock();
    });
  }

  function clear() {
    if (region.textContent) region.textContent = "";
    clock.classList.remove("is-alarm");
  }

  function fire(mark) {
    for (const other of ALARM_MARKS) if (other >= mark) fired.add(other);
    region.textContent = strings[`alarm-${mark}`] || "";
    // Restarted, so that the ten-second alarm flashes again after the one-minute one.
    clock.classList.remove("is-alarm");
    void clock.offsetWidth;
    clock.classList.add("is-alarm");
    if (typeof navigator.vibrate === "function") {
      try {
        navigator.vibrate(VIBRATION[mark]);
      } catch (_error) {
        // no vibration here
      }
    }
    const context = soundsOn() ? audio.context() : null;
    if (context) {
      try {
        playBeeps(context, BEEPS[mark]);
      } catch (error) {
        console.warn("alarm: could not beep", error);
      }
    }
  }

  function check() {
    const state = getState();
    if (!state) return;
    const t = state.tournament;
    const key = `${t.id}|${t.turn}`;
    if (key !== turnKey) {
      turnKey = key;
      fired.clear();
      clear();
    }
    const seconds = secondsLeft();
    const running = t.clock.phase === "running";
    const paused = Boolean(t.clock.paused);
    const waiting = awaiting();
    // An order given, a battle begun, the deadline passed: the alarm has had its say.
    if (!waiting || !running || (!paused && seconds !== null && seconds <= 0)) clear();
    const mark = alarmDue({ seconds, running, paused, awaiting: waiting }, fired);
    if (mark !== null) fire(mark);
  }

  check();
  return window.setInterval(check, 250);
}
