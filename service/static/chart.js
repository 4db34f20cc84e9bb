// The bank line beside the advice: from which turn total banking gives the best chance to win, one line per number
// of dice left, against the score gap (opponent minus the player deciding). The server draws it (/api/chart.png) for
// the rules on the table and the current player's score; without a game, for the preset chosen in the new-game form.
// It is fetched only while the box is open and only when what it shows changes (a bank, a new turn, other rules).
// Plain browser JavaScript, nothing fetched from outside this server.
"use strict";

const BankLine = (() => {
  let game = null, presets = null, code = null;  // as app.js last told (update)
  let shown = null;     // the query on show, or being fetched
  let url = null;       // the blob: URL on show; revoked when another chart replaces it
  let retry = null;     // a timer asking again while the rules' table is being solved

  const el = (id) => document.getElementById(id);

  // "preset=house&set=three_ones=2000&score=3000": the game's rules as its preset and the options that differ.
  function query() {
    const params = new URLSearchParams();
    if (!game) {
      const chosen = el("preset") && el("preset").value;
      if (chosen) { params.set("preset", chosen); }
      return params.toString();
    }
    const rules = game.rules, name = String(rules.name).replace(/ \(customised\)$/, "");
    const preset = presets && presets.presets.find((p) => p.name === name);
    if (preset) { params.set("preset", name); }
    for (const [key, value] of Object.entries(rules)) {
      if (key !== "name" && (!preset || preset.rules[key] !== value)) { params.append("set", `${key}=${value}`); }
    }
    const st = game.state, player = st.players.find((p) => p.name === st.current);
    if (player) {
      const score = Math.floor(Math.min(Math.max(player.score, 0), rules.target - 50) / 50) * 50;
      params.set("score", String(score));
    }
    return params.toString();
  }

  function say(text, isError) {
    const note = el("bank-line-message");
    note.textContent = text || ""; note.classList.toggle("error", !!isError);
  }

  async function load() {
    const box = el("bank-line");
    if (!box || !box.open) { return; }
    const wanted = query();
    if (wanted === shown) { return; }
    shown = wanted; clearTimeout(retry);
    say("Drawing the bank line…");
    let response;
    try {
      const key = code || localStorage.getItem("farklecam.tableCode");  // app.js keeps the table code there
      response = await fetch(`/api/chart.png?${wanted}`, { headers: key ? { "X-Table-Code": key } : {} });
    } catch (err) { shown = null; say("The server cannot be reached.", true); return; }
    if (shown !== wanted) { return; }  // the game moved on meanwhile: a newer chart is on its way
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      shown = null;
      say(data.detail || `${response.status} ${response.statusText}`, response.status !== 503);
      if (response.status === 503) {  // being solved: ask again when the server says
        retry = setTimeout(load, 1000 * (Number(response.headers.get("Retry-After")) || 10));
      }
      return;
    }
    const blob = await response.blob();
    if (shown !== wanted) { return; }
    if (url) { URL.revokeObjectURL(url); }
    url = URL.createObjectURL(blob);
    const img = el("bank-line-img"), score = new URLSearchParams(wanted).get("score");
    img.src = url; img.hidden = false; img.dataset.query = wanted;
    img.alt = `Bank line by dice left against the score gap${score ? `, at a score of ${score}` : ""}`;
    say("");
  }

  // app.js calls this whenever a game opens, changes or is left (game null); the page's presets and table code.
  function update(nextGame, nextPresets, nextCode) {
    game = nextGame || null; presets = nextPresets || presets; code = nextCode || null;
    load();
  }

  document.addEventListener("DOMContentLoaded", () => {
    el("bank-line").addEventListener("toggle", load);
    if (el("preset")) { el("preset").addEventListener("change", () => { if (!game) { load(); } }); }
  });

  return { update };
})();
