"use strict";
// The page at /: a file goes to POST v1/preview (its pages as images, decoded by the server's
// own decoder: browsers draw neither TIFF nor PDF) and to POST v1/ocr (what was read, with
// word boxes and tables). Each page is drawn with an SVG over it whose viewBox is the page's size as the
// server read it, so the polygons go in as the JSON gives them, in that page's pixels. No
// framework, nothing from other hosts.

const $ = (selector) => document.querySelector(selector);
let current = null; // {file, document}: the file shown and what /v1/ocr answered for it

function element(name, attributes = {}, text = "") {
  const made = document.createElement(name);
  for (const [key, value] of Object.entries(attributes)) made.setAttribute(key, value);
  if (text) made.textContent = text;
  return made;
}

const SVG = "http://www.w3.org/2000/svg"; // SVG's namespace (a name, not a place: nothing is fetched)

function shape(name, attributes = {}) {
  const made = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) made.setAttribute(key, value);
  return made;
}

function status(message, failed = false) {
  const shown = $("#status");
  shown.textContent = message;
  shown.classList.toggle("error", failed);
}

async function post(path, file) {
  const headers = { "Content-Type": file.type || "application/octet-stream" };
  const token = $("#token").value.trim();
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { method: "POST", body: file, headers });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      message = (await response.json()).error || message;
    } catch {
      // not problem+json: the status says it
    }
    throw new Error(message);
  }
  return response;
}

const points = (polygon) => polygon.map(([x, y]) => `${x},${y}`).join(" ");

function blocksOfLines(page) {
  // page.lines are in reading order, block by block: the index each block starts at, and
  // each line's block type
  const starts = new Map();
  const types = [];
  let at = 0;
  for (const block of page.blocks || []) {
    starts.set(at, block.type || "");
    types.push(...block.lines.map(() => block.type || ""));
    at += block.lines.length;
  }
  return at === page.lines.length ? { starts, types } : { starts: new Map(), types: [] };
}

function pageText(page) {
  if (!page.blocks || !page.blocks.length) return page.lines.map((l) => l.text).join("\n");
  const read = page.blocks.filter((b) => b.lines.length);
  return read.map((b) => b.lines.map((l) => l.text).join("\n")).join("\n\n");
}

function select(section, index, focus) {
  for (const chosen of document.querySelectorAll(".selected")) chosen.classList.remove("selected");
  for (const pressed of document.querySelectorAll('.lines [aria-pressed="true"]')) {
    pressed.setAttribute("aria-pressed", "false");
  }
  const box = section.querySelector(`polygon.line[data-line="${index}"]`);
  const button = section.querySelector(`.lines button[data-line="${index}"]`);
  box.classList.add("selected");
  box.parentNode.appendChild(box); // drawn last, on top of its neighbours
  button.setAttribute("aria-pressed", "true");
  if (focus) button.focus();
  button.scrollIntoView({ block: "nearest" });
}

function tableView(table, number, page) {
  // a table as read: its cells placed by row and column, spans kept
  const made = element("table", { class: "read-table", "aria-label": `Table ${number} of page ${page}` });
  for (let row = 0; row < table.rows; row += 1) {
    const tr = element("tr");
    for (const cell of table.cells.filter((c) => c.row === row)) {
      const spans = {};
      if (cell.row_span > 1) spans.rowspan = cell.row_span;
      if (cell.column_span > 1) spans.colspan = cell.column_span;
      tr.append(element("td", spans, cell.text));
    }
    made.append(tr);
  }
  return made;
}

function pageView(read, shown) {
  const section = element("section", { class: "page", "aria-label": `Page ${read.page}` });
  const turned = read.rotation ? ` (its text came turned ${read.rotation}°)` : "";
  section.append(element("h2", {}, `Page ${read.page}${turned}`));
  if (read.error || !shown || !shown.image) {
    const why = read.error || (shown && shown.error) || "no preview";
    section.append(element("p", { class: "error" }, `Not read: ${why}`));
    return section;
  }
  const sheet = element("div", { class: "sheet" });
  sheet.append(element("img", { src: shown.image, alt: `Page ${read.page}` }));
  const svg = shape("svg", {
    viewBox: `0 0 ${read.width} ${read.height}`,
    preserveAspectRatio: "none",
    "aria-hidden": "true",
  });
  const list = element("ol", { class: "lines", "aria-label": `Lines of page ${read.page}` });
  const { starts, types } = blocksOfLines(read);
  for (const block of read.blocks || []) {
    // a figure's own block (the picture; text read in it is in blocks of its own)
    if (block.type === "figure" && !block.lines.length) {
      svg.append(shape("polygon", { class: "figure", points: points(block.polygon) }));
    }
  }
  for (const table of read.tables || []) {
    svg.append(shape("polygon", { class: "table", points: points(table.polygon) }));
    for (const cell of table.cells) {
      svg.append(shape("polygon", { class: "cell", points: points(cell.polygon) }));
    }
  }
  read.lines.forEach((line, index) => {
    const outline = { class: "line", "data-line": index, points: points(line.polygon) };
    const box = shape("polygon", outline);
    const title = shape("title");
    title.textContent = line.text;
    box.append(title);
    box.addEventListener("click", () => select(section, index, true));
    svg.append(box);
    for (const word of line.words || []) {
      svg.append(shape("polygon", { class: "word", points: points(word.polygon) }));
    }
    const item = element("li", index && starts.has(index) ? { class: "first-of-block" } : {});
    if (types[index]) item.dataset.type = types[index];
    const kind = starts.get(index);
    if (kind && kind !== "paragraph") item.append(element("span", { class: "block-type" }, kind));
    const pressed = { type: "button", "data-line": index, "aria-pressed": "false" };
    const button = element("button", pressed, line.text);
    button.addEventListener("click", () => select(section, index, false));
    button.addEventListener("keydown", (event) => {
      const step = { ArrowDown: 1, ArrowUp: -1 }[event.key];
      const next = index + (step || 0);
      if (step && next >= 0 && next < read.lines.length) {
        event.preventDefault();
        select(section, next, true);
      }
    });
    item.append(button);
    list.append(item);
  });
  sheet.append(svg);
  if (!read.lines.length) list.append(element("li", {}, "No text found on this page."));
  const side = element("div", { class: "read" });
  side.append(list);
  (read.tables || []).forEach((table, k) => side.append(tableView(table, k + 1, read.page)));
  section.append(sheet, side);
  return section;
}

async function read(file) {
  current = null;
  $("#actions").hidden = true;
  $("#pages").replaceChildren();
  document.body.dataset.state = "reading";
  status(`Reading ${file.name}…`);
  try {
    const [preview, document_] = await Promise.all([
      post("v1/preview", file).then((response) => response.json()),
      post("v1/ocr?format=json&words=true&tables=true", file).then((response) => response.json()),
    ]);
    current = { file, document: document_ };
    for (const page of document_.pages) {
      const shown = preview.pages.find((candidate) => candidate.page === page.page);
      $("#pages").append(pageView(page, shown));
    }
    const lines = document_.pages.reduce((sum, page) => sum + page.lines.length, 0);
    const pages = document_.pages.length;
    const tables = document_.pages.reduce((sum, page) => sum + (page.tables || []).length, 0);
    const found = tables ? `, ${tables} table${tables === 1 ? "" : "s"}` : "";
    status(`${file.name}: ${pages} page${pages === 1 ? "" : "s"}, ${lines} lines${found} read.`);
    $("#actions").hidden = false;
    document.body.dataset.state = "done";
  } catch (error) {
    status(`${file.name}: ${error.message}`, true);
    document.body.dataset.state = "failed";
  }
}

function save(blob, name) {
  const link = element("a", { href: URL.createObjectURL(blob), download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
}

// what each download asks /v1/ocr for: the file's suffix and what the status line calls it
const DOWNLOADS = {
  markdown: [".md", "the Markdown"],
  hocr: [".hocr", "the hOCR"],
  pdf: [".ocr.pdf", "the searchable PDF"],
};

async function download(format) {
  if (!current) return;
  const stem = current.file.name.replace(/\.[^.]*$/, "") || "document";
  try {
    if (format === "json") {
      const text = JSON.stringify(current.document, null, 2);
      save(new Blob([text], { type: "application/json" }), `${stem}.json`);
      return;
    }
    const [suffix, what] = DOWNLOADS[format];
    status(`Making ${what}…`);
    const response = await post(`v1/ocr?format=${format}`, current.file);
    save(await response.blob(), `${stem}${suffix}`);
    status(`Saved ${what}.`);
  } catch (error) {
    status(`${format}: ${error.message}`, true);
  }
}

async function copyText() {
  if (!current) return;
  const text = current.document.pages.map(pageText).join("\n\n");
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // no clipboard API (a page not served over https or from localhost): the old way
    const area = element("textarea");
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  status("The text is copied.");
}

function setUp() {
  const input = $("#file");
  const drop = $("#drop");
  input.addEventListener("change", () => input.files.length && read(input.files[0]));
  for (const kind of ["dragenter", "dragover"]) {
    drop.addEventListener(kind, (event) => {
      event.preventDefault();
      drop.classList.add("over");
    });
  }
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    drop.classList.remove("over");
    if (event.dataTransfer.files.length) read(event.dataTransfer.files[0]);
  });
  // a file dropped beside the zone must not make the browser leave the page to show it
  window.addEventListener("dragover", (event) => event.preventDefault());
  window.addEventListener("drop", (event) => event.preventDefault());
  $("#upload").addEventListener("submit", (event) => event.preventDefault());
  $("#copy").addEventListener("click", copyText);
  for (const button of document.querySelectorAll("[data-format]")) {
    button.addEventListener("click", () => download(button.dataset.format));
  }
}

setUp();
