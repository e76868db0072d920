// Live updates of a tournament page: the state over HTTP, kept fresh by a websocket.
//
//   import { connectLive, remainingSeconds } from "/static/js/live.js";
//   const live = connectLive({
//     tournamentId: 3,
//     token: null, // a player's join token or a judge's API key; null: the session cookie
//     onState(state, { serverOffsetMs }) { ... draw; keep serverOffsetMs for the clock ... },
//     onStatus(status) { ... "live" | "reconnecting" | "offline" ... },
//   });
//   setInterval(() => show(remainingSeconds(lastState, lastOffset)), 250);
//   live.close();
//
// The socket only says that something changed (a version, a kind, maybe a turn or phase);
// what this viewer may see comes from GET /api/tournaments/<id>/state. For the public (the
// big screen, anonymous pages) an event also carries `state`, the public state built once
// by the server for all of them: it is used as is, without a fetch. Events may be lost, so
// the state is also fetched again on every reconnect and every 30 seconds.
// The protocol is described in docs/api.md, "Live updates".

const BACKOFF_MS = [1000, 2000, 4000, 8000, 15000];
const SAFETY_NET_MS = 30000;
const REFETCH_LIMIT = 5; // fetches in a row while the state is older than a version heard of
// Close codes after which reconnecting cannot help: bad token, another tournament, none.
const FINAL_CODES = new Set([4401, 4403, 4404]);

/** A server timestamp (ISO 8601, maybe with microseconds) in milliseconds since the epoch. */
function parseTime(iso) {
  return Date.parse(String(iso).replace(/(\.\d{3})\d+/, "$1"));
}

/**
 * The seconds left on the turn clock now, by the server's clock: `clock.remaining` while
 * paused, else the deadline minus the server's "now" (this device's time + offset).
 * Null when there is no clock running (set-up, finished).
 */
export function remainingSeconds(state, offsetMs = 0) {
  const clock = state?.tournament?.clock;
  if (!clock) return null;
  if (clock.paused) return clock.remaining;
  if (!clock.deadline) return null;
  const left = parseTime(clock.deadline) - (Date.now() + offsetMs);
  return Math.max(0, left / 1000);
}

export function connectLive({
  tournamentId,
  token = null,
  onState,
  onStatus = () => {},
  stateUrl = `/api/tournaments/${tournamentId}/state`,
}) {
  let version = -1; // version of the last state handed to onState
  let heard = 0; // the newest version the server announced
  let fetching = false;
  let socket = null;
  let failures = 0;
  let retryTimer = null;
  let connectedBefore = false;
  let closed = false;

  // At most one fetch in flight; when it lands and a newer version was announced meanwhile,
  // fetch again. A burst of events therefore costs one or two fetches, not one each.
  async function refresh() {
    if (fetching || closed) return;
    fetching = true;
    try {
      for (let n = 0; n < REFETCH_LIMIT && !closed; n += 1) {
        const headers = { Accept: "application/json" };
        if (token) headers.Authorization = `Bearer ${token}`;
        const sent = Date.now();
        const response = await fetch(stateUrl, {
          credentials: "same-origin",
          cache: "no-store",
          headers,
        });
        if (!response.ok) throw new Error(`GET ${stateUrl}: HTTP ${response.status}`);
        const state = await response.json();
        if (closed) return;
        // A state an event brought while this fetch was out may already be newer.
        if (state.tournament.version < version) break;
        // The server read its clock about halfway through the round trip.
        const serverTime = parseTime(state.tournament.clock.server_time);
        const serverOffsetMs = serverTime - (sent + Date.now()) / 2;
        version = state.tournament.version;
        onState(state, { serverOffsetMs });
        if (version >= heard) break;
      }
    } catch (error) {
      console.warn("live: could not fetch the state; retrying later", error);
    } finally {
      fetching = false;
    }
  }

  function onMessage(message) {
    if (message.type === "hello") {
      failures = 0;
      onStatus("live");
      heard = message.version; // the server's word, even if lower (a restored database)
      if (message.version < version) version = -1; // then take whatever state comes next
      if (message.version !== version || connectedBefore) refresh();
      connectedBefore = true;
    } else if (message.type === "event" && message.version > version) {
      heard = Math.max(heard, message.version);
      const state = message.state;
      if (state?.tournament?.version >= version && state.tournament.clock?.server_time) {
        // Built by the server when the change committed, sent a moment ago: its
        // server_time against our clock now is the offset (late by the delivery time).
        const serverOffsetMs = parseTime(state.tournament.clock.server_time) - Date.now();
        version = state.tournament.version;
        onState(state, { serverOffsetMs });
        if (version >= heard) return;
      }
      refresh();
    }
  }

  function open() {
    retryTimer = null;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const query = token ? `?token=${encodeURIComponent(token)}` : "";
    socket = new WebSocket(`${scheme}//${location.host}/ws/tournaments/${tournamentId}/${query}`);
    socket.onmessage = (event) => {
      try {
        onMessage(JSON.parse(event.data));
      } catch (error) {
        console.warn("live: bad message", error);
      }
    };
    socket.onclose = (event) => {
      socket = null;
      if (closed) return;
      if (FINAL_CODES.has(event.code)) {
        console.warn(`live: the server refused the connection (${event.code})`);
        onStatus("offline");
        return;
      }
      onStatus(navigator.onLine === false ? "offline" : "reconnecting");
      const delay = BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)];
      failures += 1;
      retryTimer = setTimeout(open, delay);
    };
  }

  function reconnectNow() {
    if (retryTimer !== null) {
      clearTimeout(retryTimer);
      open();
    }
  }

  function onVisible() {
    if (!document.hidden) refresh(); // a phone woken up: do not wait for the safety net
  }

  // The safety net: a lost event or a half-dead socket is noticed within 30 s. The ping
  // also keeps proxies from closing an idle connection.
  const safetyNet = setInterval(() => {
    refresh();
    if (socket && socket.readyState === WebSocket.OPEN) socket.send('{"type":"ping"}');
  }, SAFETY_NET_MS);

  window.addEventListener("online", reconnectNow);
  document.addEventListener("visibilitychange", onVisible);
  refresh();
  open();

  return {
    close() {
      closed = true;
      clearInterval(safetyNet);
      if (retryTimer !== null) clearTimeout(retryTimer);
      window.removeEventListener("online", reconnectNow);
      document.removeEventListener("visibilitychange", onVisible);
      if (socket) socket.close(1000);
    },
  };
}
