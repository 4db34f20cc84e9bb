// The organiser's page: every table of a tournament live, the standings, who goes on, the next round's
// seating, CSV export, and the final's switch to progressive. Everything comes from GET /api/tournaments/NAME
// (the same view `farklecam tournament standings --json` prints).
// The page follows the server's change feed (the WebSocket /ws/changes: one message per committed change, made
// by any server sharing the database) and fetches again only what a message names: the tournament shown, when it
// or one of its tables' games changed; the list of known tournaments, when a new one appears; everything, when
// the server says changes may have been missed. A burst of changes is fetched once (at most once per 250 ms).
// While the feed is down the page says "reconnecting…", connects again with growing pauses, and meanwhile asks
// for the tournament every 10 s; it never asks on a timer while the feed is open.
// A refused action's reason stays on the page until dismissed (the next fetch must not wipe it before it is read),
// and a button that cannot act now is disabled and says why, beside the buttons and in its tooltip.
// Each table's "pictures" opens the pictures of its game's camera-scored throws (GET /api/games/ID/pictures,
// fetched again with the view while open), each shown with the reading as read, and a button that deletes them.
"use strict";

const CODE_KEY = "farklecam.tableCode";  // the same table code the table page keeps, where the server wants one
const POLL_MS = 10000;  // how often the tournament is asked for while the change feed is down
const DEBOUNCE_MS = 250;  // a burst of changes is fetched once, this long after its first message
const RETRY_MS = [500, 1000, 2000, 4000, 8000];  // pauses before connecting the feed again, the last repeated
const CONNECT_MS = 10000;  // a feed not open by then is given up and tried again
const $ = (id) => document.getElementById(id);
// `pictures`: the game whose throw pictures are open, and the table it is ({game, label}), else null.
// `feed`: the change feed's socket while connecting or open; `stale`: what the next fetch must bring up to date;
// `games`: the ids of the games the tournament shown plays; `known`: the tournament names in the list.
const state = {
  name: null, timer: null, code: localStorage.getItem(CODE_KEY), pictures: null,
  feed: null, retry: 0, retryTimer: null, waitsForCode: false,
  stale: { view: false, known: false, pictures: false }, flushTimer: null, flushing: false,
  games: new Set(), known: new Set(),
};

// The server's state as the background fetches find it (unreachable, say): cleared by the next that gets through.
function banner(text) { const el = $("banner"); el.textContent = text || ""; el.hidden = !text; }

// Why an action of the organiser's was refused: kept until dismissed; the same reason twice is shown once.
function showError(text) {
  const box = $("errors");
  if ([...box.children].some((item) => item.dataset.text === text)) { return; }
  const item = document.createElement("p");
  item.dataset.text = text;
  const words = document.createElement("span");
  words.textContent = text;
  const dismiss = document.createElement("button");
  dismiss.type = "button"; dismiss.className = "small dismiss"; dismiss.textContent = "Dismiss";
  dismiss.onclick = () => item.remove();
  item.append(words, dismiss);
  box.append(item);
}

// Enable `button`, or disable it saying why (its tooltip; the reasons are also listed under the buttons).
function allow(button, why, title) {
  button.disabled = !!why;
  button.title = why || title;
  button.dataset.why = why || "";
  return why;
}
function pill(text, kind) { const el = $("server-status"); el.textContent = text; el.dataset.state = kind; }

// Ask for the table code and keep it; whether one was given. A change feed waiting for it connects again.
function askCode() {
  const code = window.prompt("This server wants its table code (printed when it started):");
  if (!code) { return false; }
  state.code = code.trim();
  localStorage.setItem(CODE_KEY, state.code);
  if (state.waitsForCode) { state.waitsForCode = false; connectFeed(); }
  return true;
}

async function api(method, path, body, raw) {
  const headers = body ? { "Content-Type": "application/json" } : {};
  const sent = state.code;
  if (sent) { headers["X-Table-Code"] = sent; }
  let response;
  try {
    response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  } catch (err) {
    pill("server unreachable", "bad");
    throw new Error("The farklecam server cannot be reached. Is `farklecam serve` still running?");
  }
  pill("server ok", "ok");
  if (response.status === 401 && (state.code !== sent || askCode())) {  // a code given meanwhile, or now
    return api(method, path, body, raw);
  }
  if (raw && response.ok) { return response; }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) { throw new Error(data.detail || `${response.status} ${response.statusText}`); }
  return data;
}

function cell(row, text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) { td.className = className; }
  row.appendChild(td);
  return td;
}

function headerRow(table, names) {
  const row = table.createTHead().insertRow();
  for (const name of names) { const th = document.createElement("th"); th.textContent = name; row.appendChild(th); }
}

function renderTable(body, t, roundName) {
  const row = body.insertRow();
  row.dataset.game = t.game;
  cell(row, `Table ${t.table}`);
  const players = cell(row, "");
  t.players.forEach((p, i) => {
    const span = document.createElement("span");
    span.textContent = `${p} ${t.scores[i]}`;
    if (t.advance.includes(p)) { span.className = "goes-on"; span.textContent += " ✓"; }
    if (t.current === p) { span.classList.add("current"); }
    players.appendChild(span);
    if (i < t.players.length - 1) { players.appendChild(document.createTextNode(" · ")); }
  });
  cell(row, t.rules);
  cell(row, t.winners.length ? `won by ${t.winners.join(", ")}` : t.phase.replace(/_/g, " "));
  // Where the table's camera streams: the server holding its live state (reopen the camera page elsewhere if it stops).
  const camera = cell(row, t.camera ? `on ${t.camera.server}` : "no camera");
  camera.className = "camera"; camera.dataset.server = t.camera ? t.camera.server : "";
  camera.title = t.camera ? `its camera page streams to ${t.camera.server} since ${new Date(t.camera.since * 1000).toLocaleTimeString()}`
    : "no camera page streams to this table now";
  const link = document.createElement("a");
  link.href = t.link; link.target = "_blank"; link.textContent = "camera page";
  const pictures = document.createElement("button");
  pictures.type = "button"; pictures.className = "small"; pictures.dataset.game = t.game;
  pictures.textContent = "pictures"; pictures.title = "the pictures this table's camera scored its throws from";
  pictures.onclick = () => showPictures({ game: t.game, label: `${roundName}, table ${t.table}` }, true);
  cell(row, "").append(link, " ", pictures);
}

function renderRound(round) {
  const section = document.createElement("section");
  const title = document.createElement("h3");
  title.textContent = `${round.name}: ${round.rules} rules, ${round.complete ? "finished" : "playing"}`;
  section.appendChild(title);
  const tables = document.createElement("table");
  headerRow(tables, ["table", "players and scores (✓ goes on)", "rules", "state", "camera", ""]);
  const body = tables.createTBody();
  round.tables.forEach((t) => renderTable(body, t, round.name));
  section.appendChild(tables);
  if (round.standings.length) {
    const standings = document.createElement("table");
    headerRow(standings, ["rank", "player", "table", "score", "goes on"]);
    const sbody = standings.createTBody();
    for (const s of round.standings) {
      const row = sbody.insertRow();
      [s.rank, s.player, s.table, s.score].forEach((v) => cell(row, String(v)));
      cell(row, s.advances ? "yes" : "", s.advances ? "goes-on" : "");
    }
    const caption = document.createElement("p");
    caption.className = "muted";
    caption.textContent = "Standings (ties: the table's winner first, then the earlier sign-up)";
    section.append(caption, standings);
  }
  return section;
}

function render(view) {
  state.games = new Set(view.rounds.flatMap((round) => round.tables.map((t) => t.game)));
  $("tournament").hidden = false;
  $("title").textContent = `${view.name}`;
  const plan = view.plan.map((r) => `${r.name} (${r.tables} tables, ${r.goes_on} go on)`).join(" → ");
  $("summary").textContent =
    `${view.players.length} of ${view.max_players} signed up · seed ${view.seed}` + (plan ? ` · ${plan}` : "");
  $("signup-form").hidden = view.started;
  const final = view.rounds.length && view.rounds.length === view.plan.length && !view.champion
    ? view.rounds[view.rounds.length - 1] : null;
  $("progressive").hidden = !final;
  $("champion").textContent = view.champion ? `Winner: ${view.champion}` : "";
  const full = view.players.length >= view.max_players ? `The sign-up is full (${view.max_players} players).` : "";
  const reasons = [
    !view.started && allow($("signup"), full, "sign these players up"),
    allow($("start"), whyNotStart(view), view.next_round ? `seat ${view.next_round.name} (the seating is below)` : ""),
    final && allow($("progressive"),
      final.tables.every((t) => t.rules === "progressive") ? "The final already plays progressive rules." : "",
      "the house text: management may institute progressive rules during the final"),
    allow($("export"), view.rounds.length ? "" : "Nothing to export until round 1 is seated.",
      "download every round's standings as CSV"),
  ];
  $("buttons-why").textContent = reasons.filter(Boolean).join(" ");
  const rounds = $("rounds");
  rounds.replaceChildren(...view.rounds.slice().reverse().map(renderRound));
  if (!view.started && view.players.length) {
    const section = document.createElement("section");
    section.textContent = `Signed up: ${view.players.join(", ")}`;
    rounds.appendChild(section);
  }
  $("next").hidden = !view.next_round;
  if (view.next_round) {
    $("next-title").textContent = `Next: ${view.next_round.name} (press "Start next round" to seat it)`;
    const body = $("next-body");
    body.replaceChildren();
    view.next_round.seating.forEach((players, i) => {
      const row = body.insertRow();
      cell(row, `Table ${i + 1}`); cell(row, players.join(", "));
    });
  }
}

// Why "Start next round" cannot seat a round now, or "" when it can.
function whyNotStart(view) {
  const last = view.rounds[view.rounds.length - 1];
  if (view.champion) { return `The tournament is over: ${view.champion} won.`; }
  if (!view.started && view.players.length < view.min_players) {
    return `Sign up at least ${view.min_players} players first (${view.players.length} so far).`;
  }
  if (last && !last.complete) {
    const done = last.tables.filter((t) => t.phase === "game_over").length;
    return `${last.name} is still being played: ${done} of ${last.tables.length} tables finished.`;
  }
  return view.next_round ? "" : "No round can be seated now.";
}

// Fetch the tournament shown: a background fetch's failure is the server's state (the banner, cleared by the next
// fetch that gets through); `byHand`: the organiser opened it, and its failure is an error to keep.
async function refresh(byHand) {
  const name = state.name;
  if (!name) { return false; }
  try {
    const view = await api("GET", `/api/tournaments/${encodeURIComponent(name)}`);
    if (name !== state.name) { return false; }  // another tournament was opened meanwhile
    render(view);
    banner("");
    if (state.pictures) { await showPictures(state.pictures, false); }
    return true;
  } catch (err) {
    if (byHand) { showError(err.message); } else { banner(err.message); }
    return false;
  }
}

// ------------------------------------------------------------------ the pictures of a table's throws
function picturesPath(game) { return `/api/games/${encodeURIComponent(game)}/pictures`; }

// Open (or fetch again) the pictures of `table.game`; `byHand`: the organiser asked, and a failure is an error to keep.
async function showPictures(table, byHand) {
  let listing;
  try { listing = await api("GET", picturesPath(table.game)); } catch (err) {
    if (byHand) { showError(err.message); } else { banner(err.message); }
    return;
  }
  if (byHand) { $("pictures-done").textContent = ""; }
  if (!byHand && (!state.pictures || state.pictures.game !== table.game)) { return; }  // closed or changed meanwhile
  state.pictures = table;
  $("pictures").hidden = false;
  $("pictures").dataset.game = table.game;
  $("pictures-title").textContent = `Pictures of ${table.label}'s throws`;
  const gone = listing.deleted.length ? ` ${listing.deleted.length} deleted.` : "";
  $("pictures-summary").textContent = `${listing.count} pictures of camera-scored throws, `
    + `${ThrowPictures.kilobytes(listing.bytes)}.${gone} A throw entered by hand has none.`;
  allow($("delete-pictures"), listing.count ? "" : "This game keeps no picture to delete.",
    "delete the pictures of this game's throws; its log and scores stay");
  const rows = [...listing.data, ...listing.deleted].sort((a, b) => a.seq - b.seq);
  $("pictures-body").replaceChildren(...rows.map((picture) => pictureRow(table.game, picture)));
}

function pictureRow(game, picture) {
  const row = document.createElement("tr");
  row.dataset.seq = picture.seq;
  cell(row, String(picture.seq));
  cell(row, picture.text);
  if (picture.deleted) {
    cell(row, `picture deleted ${new Date(picture.deleted * 1000).toLocaleString()}`, "muted");
    cell(row, ""); cell(row, "");
    return row;
  }
  const unscored = picture.reading.dice.filter((d) => d.status !== "ok").length;
  cell(row, `${picture.reading.faces.join(" ") || "nothing"}${unscored ? ` (+${unscored} not scored)` : ""}`);
  const fixes = [...picture.told.map((said) => `told: ${said}`),
    ...picture.corrections.map((fix) => `${fix.text}${fix.in_force ? "" : " (undone)"}`)];
  cell(row, fixes.join("; ") || "none");
  const view = document.createElement("button");
  view.type = "button"; view.className = "small"; view.textContent = "view";
  view.onclick = () => ThrowPictures.open(game, picture, state.code).catch((err) => showError(err.message));
  cell(row, "").append(view);
  return row;
}

async function deletePictures() {
  const table = state.pictures;
  if (!table) { return; }
  const ask = `Delete the pictures of ${table.label}'s throws? The game's log and scores stay, but the pictures `
    + "cannot be brought back.";
  if (!window.confirm(ask)) { return; }
  try {
    const done = await api("DELETE", picturesPath(table.game));
    await showPictures(table, true);
    $("pictures-done").textContent = `Deleted ${done.deleted} pictures (${ThrowPictures.kilobytes(done.bytes)}); `
      + "the game's log is untouched.";
  } catch (err) { showError(err.message); }
}

function closePictures() { state.pictures = null; $("pictures").hidden = true; }

async function open(name) {
  state.name = name;
  state.games = new Set();
  history.replaceState(null, "", `?t=${encodeURIComponent(name)}`);
  await refresh(true);
}

// ------------------------------------------------------------------ the change feed
// The feed's state in the header: "live" while changes are pushed, else why not and what the page does meanwhile.
function feedStatus(text, kind, title) {
  const el = $("live-status");
  el.textContent = text; el.dataset.state = kind; el.title = title;
}

// While the feed is down, ask for the tournament (and its open pictures) every POLL_MS; never while it is open.
function startPoll() {
  if (state.timer === null) { state.timer = setInterval(() => refresh(false), POLL_MS); }
}
function stopPoll() { clearInterval(state.timer); state.timer = null; }

// Mark what a feed message makes stale, and fetch it once the burst it belongs to is over.
function heard(message) {
  const stale = state.stale;
  if (message.type === "resync") {  // changes may have been missed: everything shown
    stale.view = stale.known = stale.pictures = true;
  } else if (message.type === "change" && message.kind === "tournament") {
    if (message.key === state.name) { stale.view = true; }
    if (!state.known.has(message.key)) { stale.known = true; }
  } else if (message.type === "change" && (message.kind === "game" || message.kind === "stream")) {
    if (state.games.has(message.key)) { stale.view = true; }
    if (state.pictures && state.pictures.game === message.key) { stale.pictures = true; }
  }
  if (stale.view || stale.known || stale.pictures) { scheduleFlush(); }
}

function scheduleFlush() {
  if (state.flushTimer === null && !state.flushing) { state.flushTimer = setTimeout(flush, DEBOUNCE_MS); }
}

// Fetch what is stale, one fetch at a time; what went stale meanwhile is fetched after the next pause.
async function flush() {
  state.flushTimer = null;
  state.flushing = true;
  const stale = state.stale;
  state.stale = { view: false, known: false, pictures: false };
  try {
    if (stale.known) { await listKnown(false); }
    if (stale.view) { await refresh(false); }  // the open pictures with it
    else if (stale.pictures && state.pictures) { await showPictures(state.pictures, false); }
  } finally {
    state.flushing = false;
    if (state.stale.view || state.stale.known || state.stale.pictures) { scheduleFlush(); }
  }
}

function connectFeed() {
  clearTimeout(state.retryTimer);
  state.retryTimer = null;
  if (state.feed) { return; }
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const sent = state.code;
  const query = sent ? `?code=${encodeURIComponent(sent)}` : "";
  const socket = new WebSocket(`${scheme}://${location.host}/ws/changes${query}`);
  let refused = "";  // the server's reason, where it turned the feed away
  state.feed = socket;
  const giveUp = setTimeout(() => { if (socket.readyState === WebSocket.CONNECTING) { socket.close(); } }, CONNECT_MS);
  socket.onopen = () => {
    clearTimeout(giveUp);
    state.retry = 0;
    stopPoll();
    feedStatus("live", "ok", "Changes show as the servers make them.");
    state.stale = { view: true, known: true, pictures: true };  // what changed while the feed was down
    scheduleFlush();
  };
  socket.onmessage = (event) => {
    let message;
    try { message = JSON.parse(event.data); } catch (err) { return; }
    if (message.type === "error") { refused = message.detail || ""; return; }
    heard(message);
  };
  socket.onclose = (event) => {
    clearTimeout(giveUp);
    if (state.feed !== socket) { return; }
    state.feed = null;
    startPoll();
    if (event.code === 4401) {  // opened without the right table code
      if (state.code !== sent) { connectFeed(); return; }  // a code given since: try it
      feedStatus("table code needed", "warn", refused || "This server wants its table code.");
      state.waitsForCode = true;
      askCode();
      return;
    }
    if (event.code === 4429) {  // shut out for too many wrong codes: connect again once that is over
      const seconds = Number((refused.match(/(\d+) s/) || [])[1]) || 10;
      feedStatus("locked out", "bad", refused);
      state.retryTimer = setTimeout(connectFeed, seconds * 1000);
      return;
    }
    const wait = RETRY_MS[Math.min(state.retry, RETRY_MS.length - 1)];
    state.retry += 1;
    feedStatus("reconnecting…", "warn",
      `Lost the live feed of changes; connecting again, and meanwhile checking every ${POLL_MS / 1000} s.`);
    state.retryTimer = setTimeout(connectFeed, wait);
  };
}

async function act(method, path, body) {
  try { render(await api(method, path, body)); return true; } catch (err) { showError(err.message); return false; }
}

// The names offered in the tournament box; `byHand`: a failure is an error to keep, else only the pill says it.
async function listKnown(byHand) {
  try {
    const known = await api("GET", "/api/tournaments");
    state.known = new Set(known.data);
    $("known").replaceChildren(...known.data.map((n) => Object.assign(document.createElement("option"), { value: n })));
  } catch (err) {
    if (byHand) { showError(err.message); }
  }
}

async function exportCsv() {
  try {
    const response = await api("GET", `/api/tournaments/${encodeURIComponent(state.name)}/standings.csv`, null, true);
    const url = URL.createObjectURL(await response.blob());
    const a = Object.assign(document.createElement("a"), { href: url, download: `${state.name}-standings.csv` });
    a.click();
    URL.revokeObjectURL(url);
  } catch (err) { showError(err.message); }
}

$("open-form").onsubmit = (e) => { e.preventDefault(); open($("name").value.trim()); };
$("new-form").onsubmit = async (e) => {
  e.preventDefault();
  const name = $("new-name").value.trim();
  const seed = $("new-seed").value === "" ? null : Number($("new-seed").value);
  try { await api("POST", "/api/tournaments", { name, seed }); open(name); listKnown(true); } catch (err) { showError(err.message); }
};
$("signup-form").onsubmit = (e) => {
  e.preventDefault();
  const players = $("signup-names").value.split(/[\s,]+/).filter(Boolean);
  if (players.length) {
    act("POST", `/api/tournaments/${encodeURIComponent(state.name)}/players`, { players })
      .then((ok) => { if (ok) { $("signup-names").value = ""; } });
  }
};
$("start").onclick = () => act("POST", `/api/tournaments/${encodeURIComponent(state.name)}/start`);
$("progressive").onclick = () =>
  act("POST", `/api/tournaments/${encodeURIComponent(state.name)}/final/rules`, { preset: "progressive" });
$("export").onclick = exportCsv;
$("delete-pictures").onclick = deletePictures;
$("close-pictures").onclick = closePictures;

listKnown(true);
startPoll();  // until the feed is open
connectFeed();
const fromQuery = new URLSearchParams(location.search).get("t");
if (fromQuery) { $("name").value = fromQuery; open(fromQuery); }
