// The picture behind a camera-scored throw, shown the same way on the table page and the organiser's page: the
// settled frame the throw was scored from, with the reading as read drawn over it by the server (every die
// numbered, as the log's corrections name them), what the camera read, what the players said of its dice before
// it was scored, and the corrections the game's log holds for it. For a disputed score.
// Plain browser JavaScript, nothing fetched from outside this server.
"use strict";

const ThrowPictures = (() => {
  const THROWS = ["roll", "passed-roll", "rolloff"];  // the log's events a camera throw can become
  const WORDS = { cocked: "leaning", off_tray: "off the tray", uncertain: "unclear" };
  let shownUrl = null;  // the blob: URL on show; revoked when another picture replaces it

  // An <img> cannot send the table code, so the picture is fetched with it and shown from a blob: URL.
  async function imageUrl(path, code) {
    const response = await fetch(path, { headers: code ? { "X-Table-Code": code } : {} });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      throw new Error(data.detail || `${response.status} ${response.statusText}`);
    }
    return URL.createObjectURL(await response.blob());
  }

  function picturePath(gameId, seq, overlay) {
    return `/api/games/${encodeURIComponent(gameId)}/pictures/${seq}${overlay ? "?overlay=1" : ""}`;
  }

  function kilobytes(bytes) { return `${(bytes / 1000).toFixed(1)} kB`; }

  // "3 4 5 5 6 scored; #2 leaning, #6 unclear; tray found": what the camera made of the throw.
  function readingText(reading) {
    const faces = reading.faces.length ? `${reading.faces.join(" ")} scored` : "no face scored";
    const others = reading.dice.map((d, i) => (d.status === "ok" ? "" : `#${i + 1} ${WORDS[d.status] || d.status}`))
      .filter(Boolean).join(", ");
    return `The camera read ${faces}${others ? `; ${others}` : ""}; tray ${reading.tray || "none"}.`;
  }

  // The dialog, made once per page.
  function dialog() {
    let box = document.getElementById("throw-picture");
    if (box) { return box; }
    box = document.createElement("dialog");
    box.id = "throw-picture"; box.className = "throw-picture"; box.setAttribute("aria-labelledby", "throw-picture-title");
    box.innerHTML = `
      <h2 id="throw-picture-title"></h2>
      <img id="throw-picture-img" alt="">
      <label class="inline"><input id="throw-picture-overlay" type="checkbox" checked>
        the reading as read drawn over it (each die numbered as the log names it)</label>
      <p id="throw-picture-read"></p>
      <ul id="throw-picture-notes"></ul>
      <p id="throw-picture-error" class="message error" role="status"></p>
      <form method="dialog"><button type="submit">Close</button></form>`;
    document.body.append(box);
    box.addEventListener("close", () => {
      if (shownUrl) { URL.revokeObjectURL(shownUrl); shownUrl = null; }
      box.querySelector("img").removeAttribute("src");
    });
    return box;
  }

  async function showImage(box, gameId, seq, code) {
    const img = box.querySelector("img"), overlay = box.querySelector("#throw-picture-overlay").checked;
    const error = box.querySelector("#throw-picture-error");
    error.textContent = "";
    try {
      const url = await imageUrl(picturePath(gameId, seq, overlay), code);
      if (!box.open || box.dataset.seq !== String(seq)) { URL.revokeObjectURL(url); return; }  // closed or replaced
      if (shownUrl) { URL.revokeObjectURL(shownUrl); }
      shownUrl = url; img.src = url; img.dataset.overlay = overlay ? "1" : "0";
    } catch (err) { error.textContent = err.message; }
  }

  // Open `picture` (an item of GET /api/games/{id}/pictures) of game `gameId`; `code`: the table code, if any.
  function open(gameId, picture, code) {
    const box = dialog();
    box.dataset.seq = String(picture.seq); box.dataset.game = gameId;
    box.querySelector("#throw-picture-title").textContent = `Throw ${picture.seq}: ${picture.text}`;
    const img = box.querySelector("img");
    img.alt = `the frame throw ${picture.seq} (${picture.text}) was scored from`;
    img.width = picture.width; img.height = picture.height;
    box.querySelector("#throw-picture-read").textContent = `${readingText(picture.reading)} `
      + `Picture ${picture.width} × ${picture.height}, ${kilobytes(picture.bytes)}, from a `
      + `${picture.reading.frame_size.join(" × ")} frame, kept ${new Date(picture.taken * 1000).toLocaleString()}.`;
    const notes = picture.told.map((said) => `Told before it was scored: ${said}.`);
    for (const fix of picture.corrections) {
      notes.push(`Corrected in the log (event ${fix.seq}): ${fix.text}${fix.in_force ? "" : " (taken back by an undo)"}.`);
    }
    if (!notes.length) { notes.push("Scored as read: no correction in the game's log."); }
    box.querySelector("#throw-picture-notes").replaceChildren(...notes.map((text) => {
      const li = document.createElement("li"); li.textContent = text; return li;
    }));
    box.querySelector("#throw-picture-overlay").onchange = () => showImage(box, gameId, picture.seq, code);
    if (!box.open) { box.showModal(); }
    return showImage(box, gameId, picture.seq, code);
  }

  // What a line of the game's log says of its picture: a button opening it, or why there is none.
  // `listing`: GET /api/games/{id}/pictures; null for an event that is no throw.
  function logNote(event, listing, onOpen) {
    if (!THROWS.includes(event.action.type)) { return null; }
    const picture = listing.data.find((p) => p.seq === event.seq);
    if (picture) {
      const button = document.createElement("button");
      button.type = "button"; button.className = "small picture-link"; button.dataset.seq = event.seq;
      button.textContent = "picture"; button.title = "the frame the camera scored this throw from";
      button.onclick = () => onOpen(picture);
      return button;
    }
    const note = document.createElement("span");
    note.className = "picture-none";
    const gone = listing.deleted.find((p) => p.seq === event.seq);
    note.textContent = gone ? `picture deleted ${new Date(gone.deleted * 1000).toLocaleString()}`
      : "entered by hand: no picture";
    return note;
  }

  return { kilobytes, logNote, open };
})();
