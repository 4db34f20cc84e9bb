// farklecam table page: webcam -> WebSocket -> overlay, and score keeping through the REST API.
// Plain browser JavaScript, no libraries and nothing fetched from outside this server (works offline).
"use strict";

// Frames go at the camera's own resolution up to this width: the reader cuts each die's crop from the frame
// it is sent, and at 640 px and JPEG 0.8 a small 5 read as a 3 that reads right at full quality.
const FRAME_MAX_WIDTH = 1280;
const FRAME_INTERVAL_MS = 150;    // at most ~6.7 frames per second, one frame in flight
const JPEG_QUALITY = 0.92;
const STATUS_COLOURS = { ok: "#2ecc71", cocked: "#f39c12", off_tray: "#3498db", uncertain: "#e74c3c" };
const KEEP_COLOUR = "#f1c40f";      // the ring around each die of the advised keep
const NUMBER_COLOUR = "#95a5a6";    // the legend's example of a die's number
const TAG_FONT = "bold 18px sans-serif";
const TAG_HEIGHT = 22;
const TAG_GAP = 3;                  // pixels between a tag and its die
const KEEP_RING = 7;                // how far the keep's ring reaches outside a die's box
const TRAY_KEY = "farklecam.tray";  // the marked tray corners, as fractions of the frame (kept across reloads)
const DOWN_KEY = "farklecam.straightDown";  // "true"/"false" once this browser's camera was said to look straight down or not
const PROFILE_KEY = "farklecam.profile";  // this table's profile's name, "" for none, once chosen in this browser
const CODE_KEY = "farklecam.tableCode";  // the table code, where the server asks for one (kept until refused)

const $ = (id) => document.getElementById(id);
const state = {
  gameId: null, game: null, socket: null, socketGame: null, inFlight: false, lastSent: 0,
  reading: null, imageSize: null, frameAdvice: null, gameAdvice: null, throwFaces: null,
  afterKeep: null, frameChoice: null, passAdvice: null, rules: null,
  cameraOk: false, retry: 0, code: localStorage.getItem(CODE_KEY), codeAsk: null,
  tray: loadTray(), marks: null, markEdges: false, socketSerial: 0, traySent: null, announceTray: false,
  straightDown: loadStraightDown(), downSent: null, settle: null, fixing: null,
  profile: localStorage.getItem(PROFILE_KEY), profileSent: null,
};
const grab = document.createElement("canvas");

// ------------------------------------------------------------------ messages and status pills
function pill(id, text, kind) { const el = $(id); el.textContent = text; el.dataset.state = kind; }
function banner(text) { const el = $("banner"); el.textContent = text || ""; el.hidden = !text; }
function gameMessage(text, isError) {
  const el = $("game-message"); el.textContent = text || ""; el.classList.toggle("error", !!isError);
  state.errorShown = isError ? performance.now() : 0;
}

// The table's news (from camera frames) may replace a message, but not the reason a player's own action was
// just refused: that stays readable for a few seconds.
function tableNews(text) {
  if (!state.errorShown || performance.now() - state.errorShown > 6000) { gameMessage(text); }
}

async function api(method, path, body) {
  let response;
  const headers = body ? { "Content-Type": "application/json" } : {};
  if (state.code) { headers["X-Table-Code"] = state.code; }
  try {
    response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  } catch (err) {
    pill("server-status", "server unreachable", "bad");
    banner("The farklecam server cannot be reached. Is `farklecam serve` still running?");
    throw new Error("server unreachable");
  }
  const data = await response.json().catch(() => ({}));
  if (response.status === 429 && data.error === "TooManyWrongCodes") {  // wait the lockout out, then send it again
    await lockedOut(Number(response.headers.get("Retry-After")) || 10);
    return api(method, path, body);
  }
  pill("server-status", "server ok", "ok");
  if (response.status === 401) {  // no code, or a wrong one: ask again, then send the same request with it
    forgetCode();
    await askCode(data.detail);
    return api(method, path, body);
  }
  if (!response.ok) {
    const error = new Error(data.detail || `${response.status} ${response.statusText}`);
    error.kind = data.error;  // the server's error name, e.g. StaleGameError
    throw error;
  }
  return data;
}

// ------------------------------------------------------------------ table code
// Beyond loopback the server may want its table code (printed when it started) with every call: the page
// asks once, keeps it in this browser, and asks again when the server refuses it. An older server without
// /api/session wants none.
async function checkSession() {
  try {
    const response = await fetch("/api/session");
    const required = response.ok && !!(await response.json()).code_required;
    if (required && !state.code) { await askCode("This table is shared over the network: enter its code."); }
  } catch (err) { /* unreachable: the first API call says so */ }
}

function forgetCode() { state.code = null; localStorage.removeItem(CODE_KEY); }

// Ten wrong table codes from this address shut it out for a minute (429, even with the right code). Everything
// refused meanwhile waits on this one promise and is then sent again, so the page loads whole once the minute
// is over instead of staying without its rules and saved games until reloaded.
function lockedOut(seconds) {
  if (state.lockout) { return state.lockout; }
  const until = performance.now() + seconds * 1000;
  pill("server-status", "locked out", "bad");
  state.lockout = new Promise((resolve) => {
    const tick = () => {
      const left = Math.ceil((until - performance.now()) / 1000);
      if (left <= 0) {
        state.lockout = null; banner(""); pill("server-status", "server…", "pending");
        resolve(); return;
      }
      banner(`Too many wrong table codes from this address: the server refuses it for ${left} s more; `
        + "the page goes on by itself then.");
      setTimeout(tick, 1000);
    };
    tick();
  });
  return state.lockout;
}

// One dialog however many requests were refused at once; resolves when a code is given.
function askCode(why) {
  if (state.codeAsk) { return state.codeAsk; }
  const dialog = $("code-dialog");
  $("code-why").textContent = why || "This table needs its code.";
  $("code-input").value = "";
  state.codeAsk = new Promise((resolve) => {
    $("code-form").onsubmit = (event) => {
      event.preventDefault();
      const code = $("code-input").value.trim();
      if (!code) { return; }
      state.code = code; localStorage.setItem(CODE_KEY, code);
      dialog.close(); state.codeAsk = null; resolve(code);
    };
  });
  dialog.addEventListener("cancel", (event) => event.preventDefault());  // Esc: the page cannot work without it
  if (!dialog.open) { dialog.showModal(); }
  return state.codeAsk;
}

// ------------------------------------------------------------------ camera
async function startCamera() {
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    return cameraFailed("This browser gives no camera access here (the page needs localhost or https).");
  }
  try {
    // 1280 x 720 where the camera offers it, the nearest it has otherwise ("ideal" never refuses a camera);
    // frames are sent at that resolution (FRAME_MAX_WIDTH).
    const stream = await navigator.mediaDevices.getUserMedia({
      video: { width: { ideal: 1280 }, height: { ideal: 720 } }, audio: false,
    });
    const video = $("video");
    video.srcObject = stream;
    await video.play().catch(() => {});
    state.cameraOk = true;
    pill("camera-status", "camera on", "ok");
    stream.getVideoTracks().forEach((t) => t.addEventListener("ended", () =>
      cameraFailed("The camera was disconnected. Plug it back in and reload; the game is kept.")));
  } catch (err) {
    const why = {
      NotAllowedError: "Camera access was denied. Allow the camera for this page and reload; "
        + "you can still keep score by typing the throws.",
      NotFoundError: "No camera was found. Connect one and reload, or keep score by typing the throws.",
      NotReadableError: "The camera is in use by another program. Close it and reload.",
      OverconstrainedError: "The camera cannot deliver a usable picture.",
    }[err.name] || `The camera could not start (${err.name || err}).`;
    cameraFailed(why);
  }
}

function cameraFailed(text) {
  state.cameraOk = false;
  pill("camera-status", "no camera", "bad");
  const el = $("no-camera"); el.textContent = text; el.hidden = false;
}

// ------------------------------------------------------------------ WebSocket stream
function connect() {
  const game = state.gameId || "-";
  if (state.socket && state.socketGame === game) { return; }
  if (state.socket) { state.socket.onclose = null; state.socket.close(); }
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const code = state.code ? `?code=${encodeURIComponent(state.code)}` : "";
  const socket = new WebSocket(`${scheme}://${location.host}/ws/table/${encodeURIComponent(game)}${code}`);
  socket.binaryType = "arraybuffer";
  state.socket = socket; state.socketGame = game; state.inFlight = false; state.socketSerial += 1;
  socket.onopen = () => {
    state.retry = 0; banner("");
    pill("stream-status", state.cameraOk ? "reading" : "connected", "ok"); pill("server-status", "server ok", "ok");
    if (!state.rules) { loadRules(); }  // the server was out of reach when the page loaded: load what it missed
  };
  socket.onmessage = (event) => {
    const msg = JSON.parse(event.data);
    if (msg.type === "frame" || msg.type === "error") { state.inFlight = false; }
    if (msg.type === "error" && msg.fatal) { state.codeWhy = msg.detail; }
    onAnswer(msg);
  };
  socket.onclose = (event) => {
    state.socket = null; state.inFlight = false;
    if (event.code === 4401) {  // opened without the right table code: ask, then connect with it
      forgetCode();
      pill("stream-status", "table code needed", "warn");
      askCode(state.codeWhy).then(connect);
      return;
    }
    if (event.code === 4429) {  // shut out for too many wrong codes: connect again once that is over
      pill("stream-status", "locked out", "bad");
      const seconds = Number(((state.codeWhy || "").match(/(\d+) s/) || [])[1]) || 10;
      lockedOut(seconds).then(connect);
      return;
    }
    pill("stream-status", "disconnected", "bad");
    pill("server-status", "server unreachable", "bad");
    banner("Lost the connection to the farklecam server; retrying…");
    state.retry = Math.min(state.retry + 1, 5);
    setTimeout(connect, 500 * 2 ** state.retry);
  };
}

function sendFrame(now) {
  requestAnimationFrame(sendFrame);
  const video = $("video"), socket = state.socket;
  if (!state.cameraOk || !socket || socket.readyState !== WebSocket.OPEN) { return; }
  if (state.inFlight && now - state.lastSent < 5000) { return; }   // one frame in flight (5 s safety)
  if (now - state.lastSent < FRAME_INTERVAL_MS || !video.videoWidth) { return; }
  const scale = Math.min(1, FRAME_MAX_WIDTH / video.videoWidth);
  grab.width = Math.round(video.videoWidth * scale);
  grab.height = Math.round(video.videoHeight * scale);
  grab.getContext("2d").drawImage(video, 0, 0, grab.width, grab.height);
  syncTray(socket);
  syncStraightDown(socket);
  syncProfile(socket);
  state.inFlight = true; state.lastSent = now;
  grab.toBlob((blob) => {
    if (blob && socket.readyState === WebSocket.OPEN) { socket.send(blob); } else { state.inFlight = false; }
  }, "image/jpeg", JPEG_QUALITY);
}

function onAnswer(msg) {
  if (msg.type === "message") {
    gameMessage(msg.message);
    // A correction the game took moved it on: show the throw as corrected now, not at the next frame.
    if (state.game && msg.events !== undefined && msg.events !== state.game.events) { refreshGame(); }
    return;
  }
  if (msg.type === "error" && msg.command === "profile") { $("tray-hint").textContent = msg.detail; return; }
  if (msg.type === "error" && msg.command) { gameMessage(msg.detail, true); return; }  // a word on a die, refused
  if (msg.type === "tray") {
    showTrayState(msg.corners);
    if (state.announceTray) { $("tray-hint").textContent = msg.message; state.announceTray = false; }
    return;
  }
  if (msg.type === "straight_down") { $("tray-hint").textContent = msg.message; return; }
  if (msg.type === "profile") { $("tray-hint").textContent = msg.message; return; }
  if (msg.type === "error") {
    pill("stream-status", "frame error", "warn");
    $("throw-status").textContent = msg.detail; $("throw-status").dataset.state = "error";
    return;
  }
  if (msg.type !== "frame") { return; }
  pill("stream-status", "reading", "ok"); pill("server-status", "server ok", "ok");
  state.reading = msg.reading; state.imageSize = msg.image_size; state.frameAdvice = msg.advice;
  state.settle = msg.settle;
  const picked = state.fixing && state.fixing.index;
  const gone = picked !== undefined && picked !== null && !(state.reading && state.reading.dice[picked]);
  if (state.fixing && (!diceRest() || gone)) { closeFix(); }  // the dice moved: the die picked is gone
  if (msg.throw) { state.throwFaces = msg.throw.faces; } else if (msg.reading) { state.throwFaces = msg.reading.faces; }
  $("frame-ms").textContent = `${msg.ms} ms`;
  showTrayState(msg.tray, msg.vertical);
  // This browser's word once it has one (a frame read before the server heard it must not undo a click),
  // else the server's default.
  $("straight-down").checked = state.straightDown === null ? !!msg.straight_down : state.straightDown;
  showReading(msg.reading, msg.settle);
  showUnclear(msg.settle);
  showOptions(msg.score);
  if (!state.game) {
    showAdvice(msg.advice);
  } else if (msg.game && msg.events === state.game.events) {  // the table's word on bank-or-roll, for this state
    state.frameChoice = msg.next_action ? { action: msg.next_action, expected: msg.expected } : null;
    const pass = msg.pass_advice || null;
    const passChanged = JSON.stringify(pass) !== JSON.stringify(state.passAdvice);
    state.passAdvice = pass;
    if ((!state.afterKeep && msg.game.phase === "can_bank_or_roll") || passChanged) { showTurnAdvice(); }
  }
  if (state.game && msg.message && msg.message !== state.lastMessage) { tableNews(msg.message); }
  state.lastMessage = msg.message;
  if (state.game && msg.game && msg.events !== state.game.events) { refreshGame(); }
  drawOverlay();
}

// ------------------------------------------------------------------ reading, options, advice
function showReading(reading, settle) {
  const faces = reading ? reading.faces : [];
  $("faces").textContent = faces.join(" ") || "–"; $("faces").dataset.faces = faces.join(",");
  $("rethrow").textContent = reading ? reading.rethrow : 0;
  const el = $("throw-status");
  if (reading && reading.rethrow > 0) {
    el.textContent = `RETHROW ${reading.rethrow}: ${namedDice(reading, ["cocked", "off_tray"])}`;
    el.dataset.state = "rethrow";
  }
  else if (settle) { el.textContent = settle.label; el.dataset.state = settle.phase; }
  else if (reading && reading.dice.length) { el.textContent = "Dice read"; el.dataset.state = "ok"; }
  else { el.textContent = "Waiting for dice"; el.dataset.state = "none"; }
}

// The dice of `reading` with one of `statuses`, by number as their tags on the picture name them:
// "#2 leaning, #4 off the tray".
function namedDice(reading, statuses) {
  const words = { cocked: "leaning", off_tray: "off the tray", uncertain: "unclear" };
  return reading.dice.map((d, i) => (statuses.includes(d.status) ? `#${i + 1} ${words[d.status]}` : ""))
    .filter(Boolean).join(", ");
}

// The one-click fix: each die of the settled throw the camera could not tell, with a button per face
// (the faces it was read as first); a click tells the table what it shows, and the throw is scored.
function showUnclear(settle) {
  const box = $("tell-dice");
  const phase = state.game && state.game.state.phase;
  const throwing = ["awaiting_roll", "can_bank_or_roll", "roll_off"].includes(phase);
  const dice = throwing && settle && settle.uncertain ? settle.uncertain : [];
  const key = JSON.stringify(dice);
  if (key === box.dataset.key) { return; }
  box.dataset.key = key; box.replaceChildren(); box.hidden = !dice.length;
  for (const die of dice) {
    const seen = (die.faces_seen || "").split(" ").filter(Boolean).map((part) => Number(part.split(":")[0]));
    const faces = [...new Set([...(die.face ? [die.face] : []), ...seen, 1, 2, 3, 4, 5, 6])];
    const line = document.createElement("div");
    line.append(`Die #${die.index + 1} is unclear${die.face ? ` (looks like a ${die.face})` : ""}: it shows `);
    for (const face of faces) {
      const button = document.createElement("button");
      button.type = "button"; button.className = "small"; button.textContent = face;
      button.dataset.die = die.index; button.dataset.face = face;
      button.onclick = () => tellFace(die.index, face);
      line.append(button, " ");
    }
    box.append(line);
  }
}

function tellFace(index, face) {
  if (state.socket && state.socket.readyState === WebSocket.OPEN) {
    state.socket.send(JSON.stringify({ type: "face", index, face }));
  }
}

function showOptions(score) {
  const body = $("options").querySelector("tbody");
  body.replaceChildren();
  if (!score) { return; }
  if (score.farkle) { body.append(row(["FARKLE", "0", "", "no die scores"])); return; }
  for (const o of score.options.slice(0, 12)) {
    body.append(row([o.keep.join(" "), o.points, o.hot_dice ? "hot dice" : o.dice_left, o.combinations.join(", ")]));
  }
}

// The advice box: its text, and what it says as data (keep, points, action) for scripts and tests.
function setAdvice(text, keep, points, action) {
  const el = $("advice");
  el.textContent = text; el.dataset.win = ""; el.title = "";
  el.dataset.keep = (keep || []).join(","); el.dataset.points = points ?? ""; el.dataset.action = action || "";
}

function expectedText(value) { return typeof value === "number" ? ` (expected ${value.toFixed(0)})` : ""; }
function chanceText(p) { return typeof p === "number" ? ` · ${(100 * p).toFixed(1)}% to win` : ""; }
// What throwing on risks: the chance that the next throw of the dice left scores nothing.
function riskText(p) { return typeof p === "number" ? ` · the next throw farkles ${(100 * p).toFixed(1)}% of the time` : ""; }

// The play to show: the one that maximises the chance to win where the advice carries it (a game's advice
// knows the scores), else the one that maximises the turn's points. Both have keep, points, action and
// alternatives (each with its keep, points, dice_left and action).
function bestPlay(advice) {
  const win = advice && advice.win && advice.win.available ? advice.win : null;
  return win ? { ...win, byWin: true } : advice;
}

// Advice for a roll waiting for a keep: the keep, then bank or roll; by the chance to win, and what playing
// for points alone would do where that differs.
function showAdvice(advice) {
  if (!advice) { setAdvice("No advice yet"); return; }
  const play = bestPlay(advice);
  if (advice.throw_again) {
    const worth = play.byWin ? chanceText(play.win_probability) : expectedText(advice.expected);
    setAdvice(`Nothing scores: throw the die again${worth}`, [], 0, "roll");
    return;
  }
  if (play.farkle || !play.keep || !play.keep.length) { setAdvice("FARKLE: no die scores", [], 0, ""); return; }
  const then = play.action ? `, then ${String(play.action).toUpperCase()}` : "";
  let text = `Best: keep ${play.keep.join(" ")} for ${play.points}${then}`;
  if (play.byWin) {
    text = (play.last_turn ? "Last turn! " : "") + text + chanceText(play.win_probability);
    const other = play.points_advice;
    if (other) {
      const cost = typeof other.cost === "number" ? `: ${(100 * other.cost).toFixed(1)} points less chance to win` : "";
      text += ` (for points alone: keep ${other.keep.join(" ")}, then ${String(other.action).toUpperCase()}${cost})`;
    }
    if (play.approximate) { text += ` (the chance is approximate: ${play.approximation || "more than two players"})`; }
  } else {
    text += expectedText(advice.expected);
  }
  if (play.action === "roll") { text += riskText(play.farkle_probability); }
  setAdvice(text, play.keep, play.points, play.action);
  $("advice").dataset.win = play.byWin ? play.win_probability : "";
  $("advice").title = advice.win && !advice.win.available ? advice.win.why || "" : "";
}

// With a game open the advice follows the game, action by action: the keep for a roll waiting for one,
// bank-or-roll after a keep, what to throw otherwise. Never the advice for an earlier throw.
function showTurnAdvice() {
  const st = state.game.state;
  $("advice").dataset.phase = st.phase;
  if (st.phase === "awaiting_keep") {
    if (state.gameAdvice) { showAdvice(state.gameAdvice); } else { setAdvice("Working out the best keep…"); }
  } else if (st.phase === "can_bank_or_roll") {
    const choice = state.afterKeep || state.frameChoice;
    const left = st.hot_dice ? "all the dice again (hot dice)" : `${st.dice_to_throw} ${st.dice_to_throw === 1 ? "die" : "dice"}`;
    if (!choice) {
      setAdvice(`Turn total ${st.turn_total}: bank it, or throw ${left}`);
    } else {
      const worth = choice.win !== undefined ? chanceText(choice.win) : expectedText(choice.expected);
      setAdvice(choice.action === "bank" ? `Turn total ${st.turn_total}: BANK it${worth}`
        : `Turn total ${st.turn_total}: ROLL ${left}${worth}`, [], "", choice.action);
    }
  } else if (st.phase === "awaiting_roll") {
    const passed = st.passed, pass = passed && state.passAdvice;
    if (pass) {  // the table's word (camera frames): by the chance to win once solved, else by this turn's points
      const pct = (p) => `${(100 * p).toFixed(1)}%`;
      const why = pass.win && pass.win.available
        ? `chance to win ${pct(pass.win.take_probability)} taking, ${pct(pass.win.fresh_probability)} fresh`
        : `taking is worth ${pass.expected_take.toFixed(0)} points this turn, fresh ${pass.expected_fresh.toFixed(0)}`;
      const risk = `their throw scores nothing ${pct(pass.farkle_probability)} of the time`;
      setAdvice(`${st.current}: ${pass.take ? `TAKE the ${passed.dice} passed dice for ${passed.total}` : "START FRESH"}`
        + ` (${why}; ${risk})`, [], "", pass.take ? "take" : "fresh");
    } else {
      setAdvice(passed
        ? `${st.current}: throw the ${passed.dice} dice ${passed.from_player} passed, building on ${passed.total}, `
          + `or start fresh with ${st.dice_to_throw}`
        : `${st.current} to throw ${st.dice_to_throw} dice`, [], "", "throw");
    }
  } else if (st.phase === "roll_off") {
    setAdvice(`Roll-off: ${st.legal.roll_off.join(", ")} throw one die each`, [], "", "rolloff");
  } else {
    setAdvice(st.winners.length ? `Game over: ${st.winners.join(" and ")} won` : st.description);
  }
}

// What the advice for the roll just kept said to do after that keep: the advisor valued every keep, and
// keeps of the same points leaving the same dice lead to the same decision.
function choiceAfterKeep(advice, previous, st) {
  const play = bestPlay(advice);
  if (!play || play.farkle) { return null; }
  const points = st.turn_total - previous.turn_total, left = st.hot_dice ? 0 : st.dice_to_throw;
  const options = [play, ...(play.alternatives || [])];
  const match = options.find((o) => o.points === points && (o.dice_left === left || (st.hot_dice && o.hot_dice)));
  if (!match) { return null; }
  return play.byWin ? { action: match.action, win: match.win_probability } : { action: match.action, expected: match.expected };
}

function row(cells) {
  const tr = document.createElement("tr");
  for (const c of cells) { const td = document.createElement("td"); td.textContent = c; tr.append(td); }
  return tr;
}

// ------------------------------------------------------------------ overlay
function frameSize() {
  const video = $("video");
  return state.imageSize || (video.videoWidth ? [video.videoWidth, video.videoHeight] : [640, 480]);
}

// Where the frame lies on a w x h canvas: the video is drawn with object-fit: contain.
function placement(w, h) {
  const [iw, ih] = frameSize();
  const s = Math.min(w / iw, h / ih);
  return { iw, ih, s, ox: (w - iw * s) / 2, oy: (h - ih * s) / 2 };
}

function drawOverlay() {
  const video = $("video"), canvas = $("overlay");
  const w = video.clientWidth || 640, h = video.clientHeight || 480;
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, w, h);
  const { iw, ih, s, ox, oy } = placement(w, h);
  drawTray(ctx, (u, v) => [u * iw * s + ox, v * ih * s + oy]);
  const dice = (state.reading && state.imageSize) ? state.reading.dice : [];
  const best = highlightKeep(dice), drawn = [];
  canvas.dataset.statuses = dice.map((d) => d.status).sort().join(",");
  canvas.setAttribute("aria-label", dice.length ? `dice in view: ${dice.map(dieTag).join(", ")}` : "no dice in view");
  canvas.dataset.highlight = ""; canvas.dataset.tags = "[]";
  if (!dice.length) { return; }
  const boxes = dice.map((die) => die.box.map((v, i) => (i % 2 ? v * s + oy : v * s + ox)));
  const kept = dice.map((die) => {
    const k = die.status === "ok" ? best.indexOf(die.face) : -1;
    if (k >= 0) { drawn.push(...best.splice(k, 1)); }
    return k >= 0;
  });
  ctx.lineWidth = 3;
  dice.forEach((die, i) => {
    const [x1, y1, x2, y2] = boxes[i];
    if (kept[i]) {
      ctx.strokeStyle = KEEP_COLOUR; ctx.lineWidth = 7; ctx.strokeRect(x1 - 3, y1 - 3, x2 - x1 + 6, y2 - y1 + 6);
      ctx.lineWidth = 3;
    }
    ctx.strokeStyle = STATUS_COLOURS[die.status] || "#fff"; ctx.strokeRect(x1, y1, x2 - x1, y2 - y1);
  });
  // Each die's tag beside it, covering no die (nor a kept die's ring) and no other tag; the dice to act on first.
  ctx.font = TAG_FONT; ctx.textBaseline = "bottom";
  const texts = dice.map(dieTag);
  const sizes = texts.map((text) => [ctx.measureText(text).width + 8, TAG_HEIGHT]);
  const obstacles = boxes.map((b, i) => (kept[i] ? [b[0] - KEEP_RING, b[1] - KEEP_RING, b[2] + KEEP_RING, b[3] + KEEP_RING] : b));
  const order = dice.map((_, i) => i).sort((a, b) => (dice[a].status === "ok") - (dice[b].status === "ok") || a - b);
  const tags = placeLabels(obstacles, sizes, w, h, order);
  dice.forEach((die, i) => {
    const colour = STATUS_COLOURS[die.status] || "#fff", [tx1, ty1, tx2, ty2] = tags[i];
    const line = leaderLine(obstacles[i], tags[i]);
    if (line) {
      ctx.strokeStyle = colour; ctx.lineWidth = 2;
      ctx.beginPath(); ctx.moveTo(...line[0]); ctx.lineTo(...line[1]); ctx.stroke();
    }
    ctx.fillStyle = colour; ctx.fillRect(tx1, ty1, tx2 - tx1, ty2 - ty1);
    ctx.fillStyle = "#000"; ctx.fillText(texts[i], tx1 + 4, ty2 - 2);
  });
  // What was drawn where, in canvas pixels, for scripts and tests: each die's tag and the box it keeps clear of.
  canvas.dataset.tags = JSON.stringify(dice.map((die, i) => ({
    die: i + 1, text: texts[i], status: die.status, tag: tags[i].map(Math.round), box: obstacles[i].map(Math.round),
  })));
  canvas.dataset.highlight = drawn.sort().join(",");
  drawPicked(ctx, (x, y) => [x * s + ox, y * s + oy]);
  if (state.reading.rethrow > 0) {
    ctx.font = "bold 40px sans-serif"; ctx.fillStyle = "#e74c3c"; ctx.textBaseline = "top";
    ctx.fillText(`RETHROW ${state.reading.rethrow}`, 12, 12);
  }
}

// A die's tag on the picture, as the legend explains it: the face read, or for a die that is not scored
// "leaning", "off tray" or "?" (with the face it looks like, if any) after its number, "#2", which is how the
// text names it (the second die of the reading).
function dieTag(die, index) {
  if (die.status === "ok") { return String(die.face); }
  const mark = {
    cocked: "leaning",
    off_tray: `${die.face ? `${die.face} ` : ""}off tray`,
    uncertain: `${die.face || ""}?`,
  }[die.status] || die.status.replace("_", " ");
  return `#${index + 1} ${mark}`;
}

// Where each die's tag goes, as [x1, y1, x2, y2]: beside its die, covering no die's box and no tag placed before
// it. Each tag tries the spots beside its die nearest first (above, below, at the sides), then the same a step
// further out, up to six steps; the first spot inside the w x h canvas that covers nothing wins, and where every
// spot covers something, the one that covers least. `order` says whose tag is placed first. The same rule as
// the live window's (farklecam.service.overlay.labels.place_labels).
function placeLabels(boxes, sizes, w, h, order) {
  const overlap = (a, b) => {
    const ow = Math.min(a[2], b[2]) - Math.max(a[0], b[0]), oh = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
    return ow > 0 && oh > 0 ? ow * oh : 0;
  };
  const placed = new Array(boxes.length);
  for (const i of order || boxes.map((_, k) => k)) {
    const [x1, y1, x2, y2] = boxes[i], [tw, th] = sizes[i];
    const obstacles = [...boxes, ...placed.filter(Boolean)];
    let best = null;
    for (let ring = 0; ring <= 6 && !(best && best.cost === 0); ring += 1) {
      const step = ring * (th + TAG_GAP), centre = (x1 + x2 - tw) / 2;
      const up = y1 - th - TAG_GAP - step, down = y2 + TAG_GAP + step;
      const right = x2 + TAG_GAP + step, left = x1 - tw - TAG_GAP - step;
      const spots = [[x1, up], [x2 - tw, up], [centre, up], [x1, down], [x2 - tw, down], [centre, down],
        [right, y1], [left, y1], [right, y2 - th], [left, y2 - th]];
      for (const [sx, sy] of spots) {
        const x = Math.min(Math.max(0, sx), Math.max(0, w - tw)), y = Math.min(Math.max(0, sy), Math.max(0, h - th));
        const rect = [x, y, x + tw, y + th];
        const cost = obstacles.reduce((sum, other) => sum + overlap(rect, other), 0);
        if (!best || cost < best.cost) { best = { cost, rect }; }
        if (cost === 0) { break; }
      }
    }
    placed[i] = best.rect;
  }
  return placed;
}

// A line from a tag that had to move away from its die back to that die; null when it lies beside it.
function leaderLine(box, tag) {
  const dx = Math.max(box[0] - tag[2], tag[0] - box[2], 0), dy = Math.max(box[1] - tag[3], tag[1] - box[3], 0);
  if (Math.max(dx, dy) <= 2 * TAG_GAP + 1) { return null; }
  const nearest = (r, x, y) => [Math.min(Math.max(x, r[0]), r[2]), Math.min(Math.max(y, r[1]), r[3])];
  const start = nearest(tag, (box[0] + box[2]) / 2, (box[1] + box[3]) / 2);
  return [start, nearest(box, ...start)];
}

// The faces to ring as the advised keep. Without a game: the advice for the dice in view. With one: the
// advice for the game's roll, only while it waits for a keep and only when the dice in view are that roll.
function highlightKeep(dice) {
  if (!state.game) { return [...((state.frameAdvice || {}).keep || [])]; }
  const st = state.game.state;
  if (st.phase !== "awaiting_keep" || !state.gameAdvice || !st.roll) { return []; }
  const seen = dice.filter((d) => d.status === "ok").map((d) => d.face).sort().join(",");
  return seen === [...st.roll].sort().join(",") ? [...(bestPlay(state.gameAdvice).keep || [])] : [];
}

// The marked tray (dashed), or the clicks so far; `at` maps frame fractions to canvas pixels.
function drawTray(ctx, at) {
  const points = (state.marks || state.tray || []).map(([u, v]) => at(u, v));
  if (!points.length) { return; }
  ctx.save();
  ctx.strokeStyle = "#f1c40f"; ctx.fillStyle = "#f1c40f"; ctx.lineWidth = 2; ctx.setLineDash([8, 6]);
  ctx.beginPath();
  if (state.marks && state.markEdges) {  // one segment per edge clicked so far
    for (let i = 0; i + 1 < points.length; i += 2) { ctx.moveTo(...points[i]); ctx.lineTo(...points[i + 1]); }
  } else {
    points.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
    if (!state.marks) { ctx.closePath(); }
  }
  ctx.stroke();
  for (const [x, y] of state.marks ? points : []) { ctx.beginPath(); ctx.arc(x, y, 5, 0, 2 * Math.PI); ctx.fill(); }
  ctx.restore();
}

// ------------------------------------------------------------------ correcting a die
// The reader is good, not perfect. In a game, a click on a die of the settled throw asks what it really is: a
// face, leaning, off the tray, or no die at all; a click where no die lies adds one the camera missed. The
// server corrects the throw (through the game's log when the game took it) and the throw is scored again.
const FIX_WORDS = { cocked: "leaning", "off-tray": "off the tray", "not-a-die": "not a die" };
const FIX_STATUS = { cocked: "cocked", "off-tray": "off_tray" };  // the fix that marks a die as it reads now

function diceRest() {
  return !!(state.settle && ["settled", "latched", "wrong_count"].includes(state.settle.phase) && state.reading);
}

// A click's place in frame pixels, from a mouse event on the overlay.
function framePoint(event) {
  const rect = $("overlay").getBoundingClientRect();
  const { s, ox, oy } = placement(rect.width, rect.height);
  return [(event.clientX - rect.left - ox) / s, (event.clientY - rect.top - oy) / s];
}

// The die under a point (frame pixels): inside its box, give or take a few screen pixels, the nearest centre.
function dieAt(dice, x, y, slack) {
  let best = -1, bestDistance = Infinity;
  dice.forEach((die, i) => {
    const [x1, y1, x2, y2] = die.box;
    if (x < x1 - slack || x > x2 + slack || y < y1 - slack || y > y2 + slack) { return; }
    const distance = Math.hypot((x1 + x2) / 2 - x, (y1 + y2) / 2 - y);
    if (distance < bestDistance) { best = i; bestDistance = distance; }
  });
  return best;
}

function pickDie(event) {
  if (!state.gameId) { return; }
  if (!diceRest()) { gameMessage("A die is corrected once the dice rest.", true); return; }
  const [x, y] = framePoint(event);
  const [iw, ih] = frameSize();
  if (x < 0 || y < 0 || x > iw || y > ih) { closeFix(); return; }
  const { s } = placement($("overlay").clientWidth, $("overlay").clientHeight);
  const index = dieAt(state.reading.dice, x, y, 4 / s);
  openFix(index >= 0 ? { index } : { at: [+x.toFixed(1), +y.toFixed(1)] });
}

// The menu beside the die picked: what it shows, or what is wrong with it; a spot where no die was seen
// offers the faces of a die the camera missed. What the die reads now is offered but disabled.
function openFix(target) {
  const box = $("fix-die");
  state.fixing = target;
  box.replaceChildren();
  const die = target.index !== undefined ? state.reading.dice[target.index] : null;
  const title = document.createElement("div");
  title.className = "fix-title";
  const now = die && (die.status === "ok" ? `read ${die.face}` : dieTag(die, target.index).replace(/^#\d+ /, ""));
  title.textContent = die ? `Die #${target.index + 1} (${now}) is:` : "A die the camera missed, here. It shows:";
  box.append(title);
  const button = (text, fix, face, label) => {
    const b = document.createElement("button");
    b.type = "button"; b.className = "small"; b.textContent = text; b.dataset.fix = fix;
    if (face) { b.dataset.face = face; }
    if (label) { b.setAttribute("aria-label", label); }
    b.onclick = (event) => { event.stopPropagation(); sendFix(fix, face); };
    return b;
  };
  const faces = document.createElement("div");
  for (let face = 1; face <= 6; face += 1) {
    const b = button(String(face), die ? "face" : "add", face, die ? `it shows ${face}` : `a missed ${face}`);
    b.disabled = !!die && die.status === "ok" && die.face === face;
    faces.append(b);
  }
  box.append(faces);
  const more = document.createElement("div");
  if (die) {
    for (const fix of ["cocked", "off-tray", "not-a-die"]) {
      const b = button(FIX_WORDS[fix], fix);
      b.disabled = die.status === FIX_STATUS[fix];
      more.append(b);
    }
  }
  const cancel = button("cancel", "cancel");
  cancel.onclick = (event) => { event.stopPropagation(); closeFix(); };
  more.append(cancel);
  box.append(more);
  box.hidden = false;
  placeFix();
  drawOverlay();
}

// The menu below the die (above it where there is no room), inside the picture.
function placeFix() {
  const box = $("fix-die"), canvas = $("overlay");
  if (!state.fixing || box.hidden) { return; }
  const { s, ox, oy } = placement(canvas.clientWidth, canvas.clientHeight);
  const [x1, y1, x2, y2] = pickedBox().map((v, i) => (i % 2 ? v * s + oy : v * s + ox));
  const w = box.offsetWidth, h = box.offsetHeight, W = canvas.clientWidth, H = canvas.clientHeight;
  const top = y2 + 8 + h <= H ? y2 + 8 : Math.max(0, y1 - 8 - h);
  box.style.left = `${Math.min(Math.max(0, (x1 + x2 - w) / 2), Math.max(0, W - w))}px`;
  box.style.top = `${Math.min(top, Math.max(0, H - h))}px`;
}

// The box of the die picked, in frame pixels (for a missed die, one as large as the dice in view).
function pickedBox() {
  const target = state.fixing, dice = (state.reading && state.reading.dice) || [];
  if (target.index !== undefined && dice[target.index]) { return dice[target.index].box; }
  const sides = dice.map((d) => d.box[2] - d.box[0]).sort((a, b) => a - b);
  const half = (sides.length ? sides[Math.floor(sides.length / 2)] : 40) / 2;
  const [x, y] = target.at || [0, 0];
  return [x - half, y - half, x + half, y + half];
}

// A white dashed outline round the die being corrected; `at` maps frame pixels to canvas pixels.
function drawPicked(ctx, at) {
  if (!state.fixing) { return; }
  const [x1, y1, x2, y2] = pickedBox();
  const [a, b] = at(x1, y1), [c, d] = at(x2, y2);
  ctx.save();
  ctx.strokeStyle = "#fff"; ctx.lineWidth = 2; ctx.setLineDash([6, 4]);
  ctx.strokeRect(a - 5, b - 5, c - a + 10, d - b + 10);
  ctx.restore();
}

function closeFix() {
  if (!state.fixing) { return; }
  state.fixing = null; $("fix-die").hidden = true; drawOverlay();
}

function sendFix(fix, face) {
  const target = state.fixing;
  closeFix();
  if (!target || !state.socket || state.socket.readyState !== WebSocket.OPEN) {
    gameMessage("Not connected to the table: the correction was not sent.", true);
    return;
  }
  const message = target.index !== undefined
    ? { type: "correct", index: target.index, fix, ...(face ? { face } : {}) }
    : { type: "correct", fix: "add", face, at: target.at };
  state.socket.send(JSON.stringify(message));
}

// The game's log, oldest first, while its box is open: every action, corrections and undos included. Each throw
// the camera scored has a button showing the picture it was scored from; a throw entered by hand says it has none.
async function showLog() {
  const box = $("log-box");
  if (!box.open || !state.gameId) { return; }
  const id = state.gameId, events = state.game.events, path = `/api/games/${encodeURIComponent(id)}`;
  try {
    const [log, pictures] = await Promise.all([
      api("GET", `${path}/events`),
      api("GET", `${path}/pictures`).catch(() => null),  // the log still shows without them
    ]);
    if (state.gameId !== id || state.game.events !== events) { return; }  // moved on meanwhile: the next call shows it
    const open = (picture) => ThrowPictures.open(id, picture, state.code);
    $("log").replaceChildren(...log.data.map((e) => {
      const li = document.createElement("li"), text = document.createElement("span");
      li.value = e.seq; text.className = "log-text"; text.textContent = e.text; li.append(text);
      const note = pictures && ThrowPictures.logNote(e, pictures, open);
      if (note) { li.append(" ", note); }
      return li;
    }));
  } catch (err) { $("log").replaceChildren(); }
}

// ------------------------------------------------------------------ tray corners
// Marked corners let the server's cocked test run (it needs the camera's vertical, which only the
// floor's true corners give). They are kept as fractions of the frame, in this browser, and sent
// in the pixels of the frames sent, again on every new connection or frame size.
function loadTray() {
  try {
    const tray = JSON.parse(localStorage.getItem(TRAY_KEY) || "null");
    return Array.isArray(tray) && tray.length === 4 ? tray : null;
  } catch (err) { return null; }
}

// Whether this camera looks straight down: the server's default (`serve --straight-down`) until this browser's
// checkbox says otherwise; then sent again on every new connection.
function loadStraightDown() {
  const value = localStorage.getItem(DOWN_KEY);
  return value === "true" ? true : value === "false" ? false : null;
}

function setStraightDown(on) {
  state.straightDown = on; localStorage.setItem(DOWN_KEY, String(on));
  if (state.socket && state.socket.readyState === WebSocket.OPEN) { syncStraightDown(state.socket); }
}

function syncStraightDown(socket) {
  if (state.straightDown === null) { return; }
  const key = `${state.socketSerial}:${state.straightDown}`;
  if (key === state.downSent) { return; }
  socket.send(JSON.stringify({ type: "straight_down", on: state.straightDown }));
  state.downSent = key;
}

// This table's profile: the server's (`serve --profile`) until this browser's select names one or none; then
// sent again on every new connection, so the server reads and teaches with it whichever page reconnects.
async function loadProfiles() {
  let listed;
  try { listed = await api("GET", "/api/profiles"); } catch (err) { return; }
  const select = $("profile");
  const names = (listed.profiles || []).map((p) => p.name);
  select.replaceChildren(new Option("none", ""), ...(listed.profiles || []).map((p) =>
    new Option(p.corrections === null ? `${p.name} (unreadable)` : `${p.name} (${p.corrections} corrections)`, p.name)));
  // A name this browser kept that is gone from the server still shows, so its refusal makes sense.
  if (state.profile && !names.includes(state.profile)) { select.append(new Option(`${state.profile} (gone)`, state.profile)); }
  select.value = state.profile !== null ? state.profile : listed.default || "";
}

function setProfile(name) {
  state.profile = name; localStorage.setItem(PROFILE_KEY, name);
  if (state.socket && state.socket.readyState === WebSocket.OPEN) { syncProfile(state.socket); }
}

function syncProfile(socket) {
  if (state.profile === null) { return; }
  const key = `${state.socketSerial}:${state.profile}`;
  if (key === state.profileSent) { return; }
  socket.send(JSON.stringify({ type: "profile", name: state.profile || null }));
  state.profileSent = key;
}

function syncTray(socket) {
  const key = `${state.socketSerial}:${grab.width}x${grab.height}:${JSON.stringify(state.tray)}`;
  if (key === state.traySent) { return; }
  const corners = state.tray && state.tray.map(([u, v]) => [+(u * grab.width).toFixed(1), +(v * grab.height).toFixed(1)]);
  socket.send(JSON.stringify({ type: "tray", corners }));
  state.traySent = key;
}

// `corners`: what the server reads with (undefined: not heard yet, so the browser's marks are pending);
// `vertical`: where the server's idea of "down" comes from ("tray", "learned" from the dice, "searching",
// "checking": learned, but the camera seems to have moved since; "moved": a tray is marked, but the camera
// moved since, so the server reads as if it were not; "straight_down": the server was started with
// --straight-down; "tilted": so it was, but the last frame's dice showed this camera to be tilted).
function showTrayState(corners, vertical) {
  if (corners === undefined) {
    pill("tray-status", state.tray ? "tray: marked, not sent yet" : "tray: found per frame", state.tray ? "pending" : "off");
  } else if (corners && vertical === "moved") {
    pill("tray-status", "tray: marked, but the camera moved since: mark it again", "pending");
  } else if (corners) {
    pill("tray-status", "tray: marked", "ok");
  } else {
    const detail = {
      learned: ", vertical learned",
      checking: ", camera moved? checking the vertical",
      straight_down: ", camera straight down",
      tilted: ", camera not straight down: mark the tray corners",
    }[vertical] || "";
    pill("tray-status", "tray: found per frame" + detail, "off");
  }
  $("clear-tray").hidden = !state.tray;
  $("mark-tray").textContent = state.tray ? "Mark tray corners again" : "Mark tray corners";
}

function trayHint(text) {
  if (text !== undefined) { $("tray-hint").textContent = text; return; }
  const n = state.marks.length;
  $("tray-hint").textContent = state.markEdges
    ? `Edge ${Math.floor(n / 2) + 1} of 4 of the tray's floor, where it meets a wall: click point ${n % 2 + 1} of 2 on it (Esc cancels).`
    : `Click corner ${n + 1} of 4 of the tray's floor, where it meets the walls (Esc cancels).`;
}

function startMarking(edges) {
  state.marks = []; state.markEdges = edges; $("stage").classList.add("marking"); trayHint(); drawOverlay();
}

function stopMarking(text) {
  state.marks = null; $("stage").classList.remove("marking"); trayHint(text); drawOverlay();
}

function markCorner(event) {
  if (!state.marks) { return; }
  const rect = $("overlay").getBoundingClientRect();
  const { iw, ih, s, ox, oy } = placement(rect.width, rect.height);
  const u = (event.clientX - rect.left - ox) / (iw * s), v = (event.clientY - rect.top - oy) / (ih * s);
  if (u < 0 || u > 1 || v < 0 || v > 1) { trayHint("Click inside the picture."); return; }
  state.marks.push([u, v]);
  if (state.marks.length < (state.markEdges ? 8 : 4)) { trayHint(); drawOverlay(); return; }
  const corners = state.markEdges ? cornersFromEdges(state.marks) : state.marks;
  if (!corners || polygonArea(corners) < 0.02) {
    state.marks = [];
    trayHint(state.markEdges
      ? "Those edges meet in no tray-like shape; click two points on each of the floor's four edges again."
      : "Those corners enclose almost nothing; click the four corners of the tray's floor again.");
    drawOverlay(); return;
  }
  setTray(corners, "Sending the tray corners…");
}

// The floor's corners from two points on each of its edges, clicked edge by edge in any order:
// edges sorted by the angle of their midpoints around the middle, each corner where neighbours cross.
// Corners may lie outside the picture; null when neighbouring edges are (nearly) parallel or cross far away.
function cornersFromEdges(points) {
  const edges = [0, 2, 4, 6].map((i) => [points[i], points[i + 1]]);
  const mid = (e) => [(e[0][0] + e[1][0]) / 2, (e[0][1] + e[1][1]) / 2];
  const cx = edges.reduce((a, e) => a + mid(e)[0], 0) / 4, cy = edges.reduce((a, e) => a + mid(e)[1], 0) / 4;
  const angle = (e) => Math.atan2(mid(e)[1] - cy, mid(e)[0] - cx);
  edges.sort((a, b) => angle(a) - angle(b));
  const corners = [];
  for (let k = 0; k < 4; k += 1) {
    const [[x1, y1], [x2, y2]] = edges[k], [[x3, y3], [x4, y4]] = edges[(k + 1) % 4];
    const den = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4);
    const len = Math.hypot(x1 - x2, y1 - y2) * Math.hypot(x3 - x4, y3 - y4);
    if (!len || Math.abs(den) < 0.05 * len) { return null; }  // under ~3 degrees apart
    const a = x1 * y2 - y1 * x2, b = x3 * y4 - y3 * x4;
    const corner = [(a * (x3 - x4) - (x1 - x2) * b) / den, (a * (y3 - y4) - (y1 - y2) * b) / den];
    if (Math.abs(corner[0] - 0.5) > 3 || Math.abs(corner[1] - 0.5) > 3) { return null; }
    corners.push(corner);
  }
  return corners;
}

function setTray(tray, text) {
  state.tray = tray;
  if (tray) { localStorage.setItem(TRAY_KEY, JSON.stringify(tray)); } else { localStorage.removeItem(TRAY_KEY); }
  state.announceTray = true;
  stopMarking(state.cameraOk ? text : "Saved; it is sent once the camera streams.");
  showTrayState(undefined);
}

// Area of a polygon given in any corner order (sorted around its centroid first), as a fraction of the frame.
function polygonArea(points) {
  const cx = points.reduce((a, p) => a + p[0], 0) / points.length;
  const cy = points.reduce((a, p) => a + p[1], 0) / points.length;
  const ring = [...points].sort((a, b) => Math.atan2(a[1] - cy, a[0] - cx) - Math.atan2(b[1] - cy, b[0] - cx));
  let twice = 0;
  ring.forEach(([x, y], i) => { const [nx, ny] = ring[(i + 1) % ring.length]; twice += x * ny - nx * y; });
  return Math.abs(twice) / 2;
}

// ------------------------------------------------------------------ rules
// The presets and every option (with its allowed values) from /api/rules: the new-game form offers the
// options, filled with the chosen preset's values; those changed are sent with the new game.
async function loadRules() {
  try {
    const rules = state.rules || (state.rules = await api("GET", "/api/rules"));
    const select = $("preset");
    if (!select.options.length) {
      for (const p of rules.presets) {
        select.append(new Option(`${p.name} — ${p.summary}`, p.name, false, p.name === rules.default_preset));
      }
      buildOptionFields(rules.options);
      fillOptions();
    }
    const games = await api("GET", "/api/games?limit=5");
    const box = $("saved-games"); box.replaceChildren();
    for (const g of games.data) {
      const b = document.createElement("button");
      b.type = "button"; b.className = "quiet";
      b.textContent = `Resume ${g.players.join(", ")} (${g.rules}, ${g.events} actions)`;
      b.onclick = () => openGame(g.id);
      box.append(b);
    }
  } catch (err) { /* the banner already says the server is unreachable */ }
}

function presetRules(name) {
  const preset = state.rules && state.rules.presets.find((p) => p.name === name);
  return preset ? preset.rules : null;
}

// One input per option: a checkbox, a list of choices, or a number within the option's range.
function buildOptionFields(options) {
  const box = $("option-fields"); box.replaceChildren();
  for (const o of options) {
    const label = document.createElement("label");
    label.className = o.type === "bool" ? "option inline" : "option";
    label.dataset.option = o.name;
    label.title = [o.description, o.allowed, o.source].filter(Boolean).join(" · ");
    let input;
    if (o.type === "bool") {
      input = document.createElement("input"); input.type = "checkbox";
    } else if (o.type === "choice") {
      input = document.createElement("select");
      for (const c of o.choices || []) { input.append(new Option(c, c)); }
    } else {
      input = document.createElement("input"); input.type = "number"; input.inputMode = "numeric";
      if (o.min !== undefined && o.min !== null) { input.min = o.min; }  // the allowed range, where the server says it
      if (o.max !== undefined && o.max !== null) { input.max = o.max; }
      if (o.step) { input.step = o.step; }
    }
    input.name = o.name; input.dataset.type = o.type;
    input.addEventListener("input", markChanged); input.addEventListener("change", markChanged);
    label.append(o.type === "bool" ? input : document.createTextNode(o.name.replaceAll("_", " ")));
    label.append(o.type === "bool" ? document.createTextNode(o.name.replaceAll("_", " ")) : input);
    box.append(label);
  }
}

function optionValue(input) {
  if (input.dataset.type === "bool") { return input.checked; }
  if (input.dataset.type === "int") { return input.value === "" ? null : Number(input.value); }
  return input.value;
}

// The preset's values into the inputs (on load and whenever another preset is chosen).
function fillOptions() {
  const rules = presetRules($("preset").value) || {};
  for (const input of $("option-fields").querySelectorAll("[name]")) {
    const value = rules[input.name];
    if (input.dataset.type === "bool") { input.checked = !!value; } else { input.value = value ?? ""; }
  }
  markChanged();
}

// The options that differ from the preset's, as {name: value}.
function changedOptions() {
  const rules = presetRules($("preset").value) || {};
  const changed = {};
  for (const input of $("option-fields").querySelectorAll("[name]")) {
    const value = optionValue(input);
    if (value !== null && value !== rules[input.name]) { changed[input.name] = value; }
  }
  return changed;
}

function markChanged() {
  const changed = changedOptions();
  for (const input of $("option-fields").querySelectorAll("[name]")) {
    input.closest("label").classList.toggle("changed", input.name in changed);
  }
  const n = Object.keys(changed).length;
  $("rules-changed").textContent = n ? `(${n} changed: the game will be customised)` : "";
  $("rules-changed").dataset.changed = n;
}

// "house", or "house (customised): three ones 2000, …" against the preset the game started from.
function rulesLabel(rules) {
  const base = presetRules(String(rules.name).replace(/ \(customised\)$/, ""));
  const diffs = base ? Object.keys(rules).filter((k) => k !== "name" && rules[k] !== base[k]) : [];
  const listed = diffs.map((k) => `${k.replaceAll("_", " ")} ${rules[k]}`).join(", ");
  return `Rules: ${rules.name}${listed ? `: ${listed}` : ""}`;
}

// ------------------------------------------------------------------ games
async function createGame(event) {
  event.preventDefault();
  const players = $("players").value.split(",").map((p) => p.trim()).filter(Boolean);
  const body = { players, preset: $("preset").value || null };
  const options = changedOptions();
  if (Object.keys(options).length) { body.options = options; }
  if ($("skip-rolloff").checked && players.length) { body.first_player = players[0]; }
  if ($("head-start").checked) { body.head_start = "fair"; }
  const message = $("new-game-message");
  try { setGame(await api("POST", "/api/games", body)); message.textContent = ""; gameMessage(""); }
  catch (err) { message.textContent = err.message; $("new-game").dataset.error = err.message; }
}

async function openGame(id) {
  try { setGame(await api("GET", `/api/games/${encodeURIComponent(id)}`)); }
  catch (err) { gameMessage(err.message, true); leaveGame(); }
}

async function refreshGame() { if (state.gameId) { await openGame(state.gameId); } }

// Apply an action to the game as this page last saw it (expected_events: another device's action in between
// refuses it rather than, say, undoing twice); true when the server took it. A refused one leaves its message
// and the page as it was, caught up with the game where another device moved it on.
async function act(action) {
  if (!state.gameId) { return false; }
  const body = { ...action, expected_events: state.game.events };
  try { setGame(await api("POST", `/api/games/${state.gameId}/actions`, body)); gameMessage(""); return true; }
  catch (err) {
    if (err.kind === "StaleGameError") { await refreshGame(); }
    gameMessage(err.message, true);
    return false;
  }
}

function setGame(game) {
  const previous = state.game && state.game.id === game.id ? state.game : null;
  const keptAdvice = state.gameAdvice;
  state.game = game; state.gameId = game.id;
  localStorage.setItem("farklecam.game", game.id);
  history.replaceState(null, "", `#game=${game.id}`);
  $("new-game").hidden = true; $("play").hidden = false; $("game-id").textContent = game.id;
  $("game-rules").textContent = rulesLabel(game.rules);
  $("game-rules").dataset.rules = game.rules.name;
  const st = game.state, body = $("scoreboard").querySelector("tbody");
  body.replaceChildren();
  st.players.forEach((p, seat) => {
    const head = (game.head_start || {})[p.name];
    const chance = st.chances ? st.chances[seat] : null;  // every player playing to win, after every action
    const about = st.chances_approximate ? "≈ " : "";  // more than two players: the combined approximation
    const tr = row([p.name === st.current ? "▶" : "", p.name, head ? `${p.score} (head start ${head})` : p.score,
      p.on_board ? "yes" : "no", typeof chance === "number" ? `${about}${(100 * chance).toFixed(1)}%` : "–"]);
    tr.dataset.player = p.name; tr.dataset.score = p.score;
    if (typeof chance === "number") { tr.dataset.chance = chance; }
    if (head) { tr.dataset.headStart = head; }
    if (st.winners.includes(p.name)) { tr.classList.add("winner"); }
    body.append(tr);
  });
  $("turn").textContent = st.description;
  $("turn").dataset.phase = st.phase; $("turn").dataset.turnTotal = st.turn_total;
  $("legal").textContent = `Allowed: ${st.legal.text}`;
  const kinds = new Set(st.legal.kinds);
  $("record-roll").disabled = !(kinds.has("roll") || kinds.has("rolloff"));
  $("roll-again").disabled = !kinds.has("roll");
  $("accept").disabled = !kinds.has("keep");
  $("bank").disabled = !kinds.has("bank");
  $("farkle").disabled = !kinds.has("farkle");
  $("undo").disabled = !kinds.has("undo");
  showPassed(st);
  showTurnNews(st);
  $("turns").replaceChildren(...st.turns.map((t) => {
    const li = document.createElement("li");
    li.textContent = `${t.player}: ${t.end} ${t.points}${t.penalty ? ` (−${t.penalty})` : ""}`;
    return li;
  }));
  // The advice follows this state: a keep just made takes its bank-or-roll from the advice for its roll.
  const justKept = previous && previous.state.phase === "awaiting_keep" && st.phase === "can_bank_or_roll"
    && game.events === previous.events + 1;
  if (!previous || previous.events !== game.events) {  // a new state (a reload of the same one keeps its advice)
    state.afterKeep = justKept ? choiceAfterKeep(keptAdvice, previous.state, st) : null;
    state.frameChoice = null; state.gameAdvice = null; state.passAdvice = null;
  }
  showTurnAdvice();
  drawOverlay();
  showLog();
  $("fix-hint").hidden = false; $("stage").classList.add("in-game");
  if (kinds.has("keep") && !state.gameAdvice) {
    const events = game.events;
    api("GET", `/api/games/${game.id}/advice`).then((a) => {
      if (!state.game || state.game.id !== game.id || state.game.events !== events) { return; }  // moved on
      state.gameAdvice = a; showTurnAdvice(); drawOverlay();
    }).catch((err) => { if (state.game && state.game.events === events) { setAdvice(`No advice: ${err.message}`); } });
  }
  BankLine.update(game, state.rules, state.code);
  connect();
}

// A farkle passes the turn at once, and the next turn looks like any other: without a word the table misses
// that the points are gone. So it is announced, from the farkle until the next player's first throw (or an undo):
// "FARKLE — Ann scores nothing this turn (threw 2 2 3 4 6 6); Bob throws next".
function farkleNews(st) {
  const last = st.turns[st.turns.length - 1];
  const waiting = st.phase === "awaiting_roll" && st.turn_total === 0;
  if (!last || last.end !== "farkled" || !(waiting || st.phase === "game_over")) { return ""; }
  const lost = last.penalty ? ` and loses ${last.penalty}` : "";
  const threw = last.last_roll && last.last_roll.length ? ` (threw ${last.last_roll.join(" ")})` : "";
  const next = st.phase === "game_over" ? "the game is over" : `${st.current} throws next`;
  return `FARKLE — ${last.player} scores nothing this turn${lost}${threw}; ${next}`;
}

function showTurnNews(st) {
  const news = st ? farkleNews(st) : "";
  $("turn-news").textContent = news; $("turn-news").hidden = !news;
}

// Progressive play: the dice the last banker passed, their total, and a button to throw them.
function showPassed(st) {
  const passed = st.legal.kinds.includes("passed-roll") ? st.passed : null;
  $("passed").hidden = !passed;
  if (!passed) { return; }
  $("passed-offer").textContent = `${passed.from_player} passed ${passed.dice} ${passed.dice === 1 ? "die" : "dice"} `
    + `with ${passed.total} points: ${st.current} may throw them and build on ${passed.total}, or start fresh `
    + `with ${st.dice_to_throw} dice (Record throw).`;
  $("passed").dataset.dice = passed.dice; $("passed").dataset.total = passed.total;
}

function leaveGame() {
  closeFix();
  state.game = null; state.gameId = null; state.gameAdvice = null; state.afterKeep = null; state.frameChoice = null;
  localStorage.removeItem("farklecam.game");
  history.replaceState(null, "", location.pathname);
  showTurnNews(null);
  $("new-game").hidden = false; $("play").hidden = true; $("fix-hint").hidden = true;
  $("stage").classList.remove("in-game");
  setAdvice("No advice yet"); BankLine.update(null, state.rules, state.code);
  connect(); loadRules();
}

function cameraFaces() {
  const faces = state.throwFaces || [];
  if (!faces.length) { gameMessage("The camera sees no dice to record; type the throw below instead.", true); }
  return faces;
}

function recordThrow() {
  const st = state.game && state.game.state;
  if (!st) { return; }
  const faces = cameraFaces();
  if (!faces.length) { return; }
  if (st.legal.kinds.includes("rolloff") && st.legal.roll_off.length) {
    return act({ type: "rolloff", player: st.legal.roll_off[0], face: faces[0] });
  }
  // A throw of as many dice as were passed (and not a full fresh throw) can only be the passed dice.
  if (st.legal.kinds.includes("passed-roll") && faces.length === st.legal.passed_dice
      && faces.length !== st.dice_to_throw) {
    return act({ type: "passed-roll", faces });
  }
  return act({ type: "roll", faces });
}

function takePassed() {
  const faces = cameraFaces();
  if (faces.length) { return act({ type: "passed-roll", faces }); }
}

function acceptSuggestion() {
  const st = state.game && state.game.state;
  const advice = state.gameAdvice && bestPlay(state.gameAdvice);
  let keep = advice && advice.keep && advice.keep.length ? advice.keep : null;
  if (!keep && st && st.legal.keeps.length) { keep = st.legal.keeps[0].keep; }  // no advisor: most points
  if (!keep) { gameMessage("No suggestion for this roll yet.", true); return; }
  return act({ type: "keep", faces: keep });
}

function rollAgain() {
  const st = state.game && state.game.state;
  if (!st) { return; }
  if (state.socket && state.socket.readyState === WebSocket.OPEN) {
    state.socket.send(JSON.stringify({ type: "roll_again" }));
  } else {
    gameMessage(`${st.current}: throw ${st.dice_to_throw} dice, then record the throw.`);
  }
}

function bindKeys() {
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && state.marks) { stopMarking("Marking cancelled."); return; }
    if (e.key === "Escape" && state.fixing) { closeFix(); return; }
    if (["INPUT", "SELECT", "BUTTON", "TEXTAREA"].includes(e.target.tagName) || !state.gameId) { return; }
    const keys = {
      a: "accept", enter: "accept", r: "roll-again", t: "record-roll", p: "take-passed", b: "bank", f: "farkle", u: "undo",
    };
    const button = keys[e.key.toLowerCase()];
    if (button && !$(button).disabled && !$(button).closest("[hidden]")) { $(button).click(); }
  });
}

// The legend's tags in the overlay's own colours, so that the two can never disagree.
function fillLegend() {
  for (const item of $("legend").querySelectorAll("[data-mark]")) {
    const tag = item.querySelector(".tag"), mark = item.dataset.mark;
    if (mark === "keep") { tag.style.borderColor = KEEP_COLOUR; continue; }
    tag.style.background = STATUS_COLOURS[mark] || NUMBER_COLOUR;
  }
}

async function init() {
  fillLegend();
  $("new-game").addEventListener("submit", createGame);
  $("preset").onchange = fillOptions;
  $("record-roll").onclick = recordThrow;
  $("take-passed").onclick = takePassed;
  $("accept").onclick = acceptSuggestion;
  $("roll-again").onclick = rollAgain;
  $("bank").onclick = () => act({ type: "bank" });
  $("farkle").onclick = () => act({ type: "farkle" });
  $("undo").onclick = () => act({ type: "undo" });
  $("leave").onclick = leaveGame;
  $("mark-tray").onclick = () => startMarking(false);
  $("mark-edges").onclick = () => startMarking(true);
  $("clear-tray").onclick = () => setTray(null, "Tray corners forgotten: the tray is found in each frame.");
  $("straight-down").onchange = (e) => setStraightDown(e.target.checked);
  $("profile").onchange = (e) => setProfile(e.target.value);
  $("overlay").addEventListener("click", (event) => (state.marks ? markCorner(event) : pickDie(event)));
  $("log-box").addEventListener("toggle", showLog);
  $("manual").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("manual-action").value.trim();
    // A refused action keeps its text, to be corrected rather than typed again.
    if (text) { act({ text }).then((ok) => { if (ok) { $("manual-action").value = ""; } }); }
  });
  window.addEventListener("resize", () => { drawOverlay(); placeFix(); });
  bindKeys();
  showTrayState(undefined);
  startCamera();
  await checkSession();  // the table code first, where one is needed: every call below carries it
  const fromHash = (location.hash.match(/game=([\w-]+)/) || [])[1];
  const saved = fromHash || localStorage.getItem("farklecam.game");
  api("GET", "/api/health").catch(() => {});
  await loadRules();  // the presets name a game's rules, customised or not
  loadProfiles();
  if (saved) { openGame(saved); } else { connect(); }
  requestAnimationFrame(sendFrame);
}

init();
