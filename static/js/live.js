// Live updates of a tournament page: the state over HTTP, kept fresh by a websocket.
//
//   import { connectLive, remainingSeconds } from "/static/js/live.js";
//   const live = connectLive({
//     tournamentId: 3,
//     token: null, // a player's join token or a judge's API key; null: the session cookie
//     onState(state, { serverOffsetMs }) { ... draw; keep serverOffsetMs for the clock ... },
//     onStatus(status) { ... "live" | "reconnecting" | "offline" ... },
//   });
//   turnOver(lastState, lastOffset) // the deadline has passed: orders are closed
//   setInterval(() => show(remainingSeconds(lastState, lastOffset)), 250);
//   live.close();
//
// An event says that something this viewer sees changed (a version, a kind, maybe a turn or
// phase) and brings his new state (`state`, built by the server for what this socket was
// admitted as); otherwise, and whenever a version was missed, the state comes from
// GET /api/tournaments/<id>/state. A change he does not see sends him nothing: a pong says
// the newest version his view stands at, and since which version it is unchanged (`since`),
// so a page holding that view moves its version on without a fetch, and a lost event is
// noticed at the next ping; the state is also fetched on every reconnect and every 5 min.
//
// "live" is a promise to the player that what he sends reaches the judge and that what he
// sees is current, so it is only reported while the socket is open and the server was heard
// from within STALE_MS (the server sends a pong every HEARTBEAT_MS; any message counts). A
// Wi-Fi that drops without closing the socket would otherwise leave the page saying "live"
// for minutes, until TCP gave up. The browser's own "offline" is believed at once.
// The protocol is described in docs/api.md, "Live updates".
// The server's messages, their fields and which may be null: live_messages.json beside this
// file (tests/referees/test_live_messages.py holds the server, onMessage and tests/hosts to it).

const BACKOFF_MS = [1000, 2000, 4000, 8000, 15000];
// A lost event is noticed by the pong's version within a ping; this is the net under that
// net (a server too old to say its version in pongs). At a league's deadline a fetch every
// 30 s from every page cost more than everything else the pages did (issue 33).
const SAFETY_NET_MS = 300000;
const PING_MS = 4000; // how often the page checks that it heard the server lately
const HEARTBEAT_MS = 4000; // the server's own pongs (SL5R_LIVE_HEARTBEAT_SECONDS, sl5r/settings.py)
const STALE_MS = 12000; // two pings unanswered, and a little slack for a slow server
const CHECK_MS = 1000;
const REFETCH_LIMIT = 5; // fetches in a row while the state is older than a version heard of
// A fetch that has had no answer by then is given up: it went to a machine that died (the
// balancer had sent it there before its health check noticed, and waits a minute for an
// answer; tests/hosts). The next pong with a newer version fetches again, from a live one.
const FETCH_TIMEOUT_MS = 10000;
const CATCH_UP_MS = 1000; // then a pause before fetching again
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

/**
 * True when the turn's deadline has passed by the server's clock while it runs (not paused):
 * the server takes no more orders for it and the result is on its way.
 */
export function turnOver(state, offsetMs = 0) {
  const clock = state?.tournament?.clock;
  if (!clock || clock.phase !== "running" || clock.paused || !clock.deadline) return false;
  return parseTime(clock.deadline) <= Date.now() + offsetMs;
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
  let catchUpTimer = null;
  let fetching = false;
  let socket = null;
  let failures = 0;
  let retryTimer = null;
  let connectedBefore = false;
  let closed = false;
  let lastHeard = 0; // Date.now() of the last message on the current socket
  let openedAt = 0; // when the current socket was created
  let greeted = false; // the current socket has had its hello
  let status = null;

  function report(next) {
    // Never "live" while the browser itself says it has no network.
    const value = next === "live" && navigator.onLine === false ? "offline" : next;
    if (value === status) return;
    status = value;
    onStatus(value);
  }

  // At most one fetch in flight; when it lands and a newer version was announced meanwhile,
  // fetch again. A burst of events therefore costs one or two fetches, not one each.
  async function refresh() {
    if (fetching || closed) return;
    fetching = true;
    let failed = false;
    try {
      for (let n = 0; n < REFETCH_LIMIT && !closed; n += 1) {
        const headers = { Accept: "application/json" };
        if (token) headers.Authorization = `Bearer ${token}`;
        const sent = Date.now();
        const response = await fetch(stateUrl, {
          credentials: "same-origin",
          cache: "no-store",
          headers,
          // AbortSignal.timeout: Safari 16 and later; older phones wait as before.
          signal: typeof AbortSignal.timeout === "function" ? AbortSignal.timeout(FETCH_TIMEOUT_MS) : undefined,
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
      failed = true;
    } finally {
      fetching = false;
    }
    // Still behind a version announced while the last fetch was out (a long burst outran the
    // refetch limit): no later event may come to trigger another, so try again shortly. A
    // failed fetch waits for the periodic one instead, not to hammer a struggling server.
    if (!failed && !closed && version < heard && !catchUpTimer) {
      catchUpTimer = setTimeout(() => {
        catchUpTimer = null;
        refresh();
      }, CATCH_UP_MS);
    }
  }

  function onMessage(message) {
    if (message.type === "hello") {
      failures = 0;
      greeted = true;
      report("live");
      heard = message.version; // the server's word, even if lower (a restored database)
      if (message.version < version) version = -1; // then take whatever state comes next
      if (message.version !== version || connectedBefore) refresh();
      connectedBefore = true;
    } else if (message.type === "pong") {
      // `since`: the version of the last view the server sent this page, unchanged up to the
      // pong's version (another clan's orders, which it sends this page nothing for). Holding
      // it, the page is current at that version without a fetch.
      // (While a fetch is out, its answer is as good: nothing changed in between.)
      if (Number.isInteger(message.since) && message.since <= version) {
        if (Number.isInteger(message.version) && message.version > version && !fetching) {
          version = message.version;
        }
        return;
      }
      // A higher version without `since` means an event was lost, or is on its way (at a
      // deadline the pong may overtake it). Give it a moment to arrive with our state
      // before fetching one.
      if (Number.isInteger(message.version) && message.version > version) {
        heard = Math.max(heard, message.version);
        if (!catchUpTimer) {
          catchUpTimer = setTimeout(() => {
            catchUpTimer = null;
            if (version < heard) refresh();
          }, CATCH_UP_MS);
        }
      }
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

  function retryLater() {
    // Spread by a quarter either way: when a server falls behind, thousands of pages lose
    // their sockets in the same second, and coming back in the same second again kept it
    // down (benchmarks/league.py at 100 tournaments: a reconnect storm).
    const base = BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)];
    const delay = base * (0.75 + Math.random() * 0.5);
    failures += 1;
    retryTimer = setTimeout(open, delay);
  }

  // Give up on the current socket without waiting for its close: on a dead network the
  // closing handshake can take minutes to time out, and its onclose would come far too late.
  function drop(next) {
    const old = socket;
    socket = null;
    greeted = false;
    if (old) {
      old.onmessage = null;
      old.onclose = null;
      try {
        old.close(1000);
      } catch (_error) {
        // already closing
      }
    }
    report(next);
  }

  function open() {
    retryTimer = null;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const query = token ? `?token=${encodeURIComponent(token)}` : "";
    socket = new WebSocket(`${scheme}//${location.host}/ws/tournaments/${tournamentId}/${query}`);
    openedAt = Date.now();
    lastHeard = 0;
    greeted = false;
    socket.onmessage = (event) => {
      lastHeard = Date.now();
      try {
        onMessage(JSON.parse(event.data));
      } catch (error) {
        console.warn("live: bad message", error);
      }
    };
    socket.onclose = (event) => {
      socket = null;
      greeted = false;
      if (closed) return;
      if (FINAL_CODES.has(event.code)) {
        console.warn(`live: the server refused the connection (${event.code})`);
        report("offline");
        return;
      }
      report(navigator.onLine === false ? "offline" : "reconnecting");
      retryLater();
    };
  }

  // The server sends each page a pong every HEARTBEAT_MS of its own (issue 42); a ping is
  // sent only when nothing has come for longer (an older server, or a network going
  // silent), or when the page wants to know now (woken up, back online).
  function ping(force = false) {
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    if (!force && Date.now() - lastHeard < HEARTBEAT_MS + 1000) return;
    try {
      socket.send('{"type":"ping"}');
    } catch (_error) {
      // the close event follows
    }
  }

  // A socket that stopped answering (or a handshake that never completes) is dropped and
  // replaced; the new one's hello brings a fresh state.
  function checkHeartbeat() {
    if (closed || !socket) return;
    const now = Date.now();
    const silentSince = greeted ? lastHeard : openedAt;
    if (now - silentSince > STALE_MS) {
      console.warn("live: no word from the server; reconnecting");
      drop(navigator.onLine === false ? "offline" : "reconnecting");
      if (retryTimer === null) retryLater();
    }
  }

  // The network is back: connect at once instead of waiting out the backoff, so that the
  // page is current again within a second or two.
  function reconnectNow() {
    if (closed) return;
    if (retryTimer !== null) {
      clearTimeout(retryTimer);
      retryTimer = null;
    }
    if (socket && greeted && socket.readyState === WebSocket.OPEN) {
      ping(true);
      refresh();
      return;
    }
    if (socket) drop(status === "offline" ? "reconnecting" : status);
    failures = 0;
    open();
  }

  function wentOffline() {
    if (closed) return;
    // The socket cannot outlive the network; dropping it now means that 'online' starts a
    // clean one whose hello resyncs the page.
    drop("offline");
    if (retryTimer !== null) clearTimeout(retryTimer);
    retryTimer = null;
    retryLater();
  }

  function onVisible() {
    if (document.hidden) return;
    // A phone woken up: do not wait for the safety net, and test the socket now.
    refresh();
    ping(true);
  }

  // The safety net under the pong's version: a lost event is noticed within 5 minutes.
  const safetyNet = setInterval(refresh, SAFETY_NET_MS);
  // The server's pongs (or, when they stop, the pings) also keep proxies from closing an
  // idle connection.
  const pinger = setInterval(ping, PING_MS);
  const watchdog = setInterval(checkHeartbeat, CHECK_MS);

  window.addEventListener("online", reconnectNow);
  window.addEventListener("offline", wentOffline);
  document.addEventListener("visibilitychange", onVisible);
  refresh();
  if (navigator.onLine === false) report("offline");
  open();

  return {
    /** "live" | "reconnecting" | "offline", or null before the first word. */
    status: () => status,
    reconnectNow,
    close() {
      closed = true;
      clearInterval(safetyNet);
      clearInterval(pinger);
      clearInterval(watchdog);
      if (retryTimer !== null) clearTimeout(retryTimer);
      window.removeEventListener("online", reconnectNow);
      window.removeEventListener("offline", wentOffline);
      document.removeEventListener("visibilitychange", onVisible);
      if (socket) socket.close(1000);
    },
  };
}
