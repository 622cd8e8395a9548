// Loads the history page in headless chromium, driven over the DevTools
// protocol on a pipe (--remote-debugging-pipe: no port), and writes what a
// test checks into OUT_DIR:
//
//   console.json  every console message and uncaught exception, every
//                 log entry of the browser about the page, and every
//                 dialog a script opened (alert: dismissed) (a list)
//   dom.html      the DOM once the charts are drawn (with --all: every
//                 chart, and every chunk of a directory's page loaded;
//                 else the first ones)
//   page.png      a screenshot of the top 1400 x 1000 pixels
//   hover.json    with --hover CHART POINT: the tooltip after the pointer
//                 moves onto point POINT of the first line of chart CHART,
//                 and after it leaves the chart
//   chunks.json   the chunk files of a directory's page (data/NNNNNN.js)
//                 asked for once the first charts are drawn (with --all,
//                 once every one is), in the order asked
//   filter.json   with --filter TEXT: after TEXT is typed into the filter
//                 box, the charts shown ({name, drawn}, in page order)
//                 and the filter's count line, once every one is drawn
//                 (each scrolled to), and the chunk files asked for by then
//   scroll.json   with --scroll CHUNK: after scrolling to chunk CHUNK of a
//                 directory's page (before --filter), once it is loaded
//                 and its first chart drawn: its charts ({name, drawn}), the "d" of the
//                 median path of every line drawn on the page, and the
//                 chunk files asked for by then
//   safety.json   what names must not do to a page: images (the count of
//                 <img> elements), scripts (of <script> elements), wide
//                 (whether the page scrolls sideways at 1400 pixels) and
//                 unisolated (each text holding a bidirectional control
//                 that shares its line's paragraph with other text, not
//                 isolated: no <bdi> or unicode-bidi:isolate around it)
//
//   node page_check.mjs CHROMIUM PROFILE_DIR URL OUT_DIR [--all]
//                       [--hover CHART POINT] [--filter TEXT]
//                       [--scroll CHUNK] [--static]
//
// --static: any HTML file (no charts to wait for), such as Markdown
// rendered by python3-markdown.
//
// Exits 1 on an error of its own (the page's are in console.json).
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";

const args = process.argv.slice(2);
const [browser, profile, url, out] = args;
const all = args.includes("--all");
const isStatic = args.includes("--static");
const hoverAt = args.indexOf("--hover");
const filterAt = args.indexOf("--filter");
const scrollAt = args.indexOf("--scroll");
mkdirSync(profile, { recursive: true });
const child = spawn(browser, [
  "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
  "--hide-scrollbars", "--user-data-dir=" + profile,
  "--window-size=1400,1000", "--remote-debugging-pipe", "about:blank",
], {
  // Chromium's own temporary files (org.chromium.Chromium.*) go in the
  // profile, which the test removes, rather than into /tmp for good.
  env: { ...process.env, TMPDIR: profile },
  stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"],
});
const timer = setTimeout(() => fail("no answer in 120 s"), 120000);

function fail(why) {
  console.error("page_check: " + why);
  child.kill();
  process.exit(1);
}

// The protocol: JSON messages ending with a NUL, each way.
let next = 1, buffer = "";
const waiting = new Map(), said = [], requested = [];
child.stdio[4].on("data", (chunk) => {
  buffer += chunk.toString("utf8");
  let end;
  while ((end = buffer.indexOf("\0")) >= 0) {
    const msg = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    if (msg.id !== undefined && waiting.has(msg.id)) {
      const { resolve, method } = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (msg.error) fail(method + ": " + JSON.stringify(msg.error));
      resolve(msg.result);
    } else if (msg.method === "Runtime.consoleAPICalled") {
      said.push({ console: msg.params.type,
                  args: msg.params.args.map((a) => a.value ?? a.description) });
    } else if (msg.method === "Runtime.exceptionThrown") {
      said.push({ exception: msg.params.exceptionDetails });
    } else if (msg.method === "Log.entryAdded") {
      said.push({ log: msg.params.entry });
    } else if (msg.method === "Network.requestWillBeSent") {
      const m = msg.params.request.url.match(/data\/[0-9]+\.js$/);
      if (m !== null) requested.push(m[0]);
    } else if (msg.method === "Page.javascriptDialogOpening") {
      said.push({ dialog: msg.params.type, message: msg.params.message });
      send("Page.handleJavaScriptDialog", { accept: false }, msg.sessionId);
    }
  }
});
function send(method, params = {}, sessionId = undefined) {
  const id = next++;
  child.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) +
                       "\0");
  return new Promise((resolve) => waiting.set(id, { resolve, method }));
}
async function evaluate(session, expression) {
  const r = await send("Runtime.evaluate",
                       { expression, awaitPromise: true, returnByValue: true },
                       session);
  if (r.exceptionDetails)
    fail("evaluate: " + JSON.stringify(r.exceptionDetails));
  return r.result.value;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const { targetInfos } = await send("Target.getTargets");
const page = targetInfos.find((t) => t.type === "page");
if (!page) fail("no page");
const { sessionId: s } = await send("Target.attachToTarget",
                                    { targetId: page.targetId, flatten: true });
await send("Runtime.enable", {}, s);
await send("Log.enable", {}, s);
await send("Page.enable", {}, s);
await send("Network.enable", {}, s);
await send("Page.navigate", { url }, s);

// Drawn: the first charts (data-drawn-ms), or, with --all, every chart
// (scrolled through, as a reader would).
for (let i = 0; ; i++) {
  const ok = await evaluate(s,
      "document.readyState === 'complete' && (" + isStatic + " || " +
      "document.documentElement.hasAttribute('data-drawn-ms'))");
  if (ok) break;
  if (i > 600) fail("the page drew nothing");
  await sleep(100);
}
if (all) {
  for (let i = 0; ; i++) {
    const left = await evaluate(s, `(() => {
      const todo = [...document.querySelectorAll(
          'figure.chart, section.chunk:not([data-loaded])')]
          .filter((f) => f.localName !== 'figure' || !f.querySelector('svg'));
      if (todo.length) todo[0].scrollIntoView();
      return todo.length;
    })()`);
    if (left === 0) break;
    if (i > 600) fail(left + " charts not drawn");
    await sleep(100);
  }
  await evaluate(s, "window.scrollTo(0, 0)");
}
writeFileSync(out + "/chunks.json", JSON.stringify(requested));
writeFileSync(out + "/safety.json", JSON.stringify(await evaluate(s, `(() => {
  const bidi = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
  const svg = 'http://www.w3.org/2000/svg';
  const unisolated = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t = walk.nextNode(); t !== null; t = walk.nextNode()) {
    if (!bidi.test(t.data)) continue;
    let ok = false;
    for (let el = t.parentElement; el !== null; el = el.parentElement) {
      const st = getComputedStyle(el);
      // A paragraph of its own (a block, an SVG text): isolated when the
      // text is all it holds. (A block's unicode-bidi does not isolate
      // its inline parts from each other.)
      const block = el.namespaceURI === svg ? el.localName === 'text'
                                            : st.display !== 'inline';
      if (block) {
        ok = el.textContent.trim() === t.data.trim();
        break;
      }
      if (/^(isolate|isolate-override|plaintext)$/.test(st.unicodeBidi)) {
        ok = true;
        break;
      }
    }
    if (!ok) unisolated.push(t.data.slice(0, 80));
  }
  return {
    images: document.images.length,
    scripts: document.scripts.length,
    wide: document.documentElement.scrollWidth > window.innerWidth,
    unisolated,
  };
})()`)));
writeFileSync(out + "/dom.html",
              await evaluate(s, "document.documentElement.outerHTML"));
const shot = await send("Page.captureScreenshot", {
  format: "png", clip: { x: 0, y: 0, width: 1400, height: 1000, scale: 1 },
}, s);
writeFileSync(out + "/page.png", Buffer.from(shot.data, "base64"));

if (hoverAt >= 0) {
  const chart = +args[hoverAt + 1], point = +args[hoverAt + 2];
  // The point's place on the screen: its dot in the line's "dots" path.
  const at = await evaluate(s, `(() => {
    const fig = document.querySelectorAll('figure.chart')[${chart}];
    fig.scrollIntoView();
    const svg = fig.querySelector('svg');
    const dots = svg.querySelector('g.line path.dots').getAttribute('d');
    const xy = [...dots.matchAll(/M([0-9.]+) ([0-9.]+)h0/g)][${point}];
    const p = svg.createSVGPoint();
    p.x = +xy[1];
    p.y = +xy[2];
    const q = p.matrixTransform(svg.getScreenCTM());
    return { x: q.x, y: q.y };
  })()`);
  const tip = `(() => {
    const tip = document.getElementById('tip');
    return { text: tip.textContent, visible: tip.style.display === 'block',
             rings: document.querySelectorAll('circle.hover').length };
  })()`;
  await send("Input.dispatchMouseEvent",
             { type: "mouseMoved", x: at.x, y: at.y }, s);
  await sleep(200);
  const shown = await evaluate(s, tip);
  await send("Input.dispatchMouseEvent", { type: "mouseMoved", x: 2, y: 2 },
             s);
  await sleep(200);
  const left = await evaluate(s, tip);
  writeFileSync(out + "/hover.json", JSON.stringify({ shown, left }));
}
if (scrollAt >= 0) {
  const n = +args[scrollAt + 1];
  let seen;
  for (let i = 0; ; i++) {
    seen = await evaluate(s, `(() => {
      const sec = document.querySelector('section.chunk[data-chunk="${n}"]');
      if (sec === null) return null;
      sec.scrollIntoView();
      const figs = [...sec.querySelectorAll('figure.chart')];
      return { loaded: sec.hasAttribute('data-loaded'),
               charts: figs.map((f) => ({ name: f.getAttribute('data-name'),
                                          drawn: !!f.querySelector('svg') })),
               medians: [...document.querySelectorAll('path.median')]
                   .map((p) => p.getAttribute('d')) };
    })()`);
    if (seen === null) fail("no chunk " + n);
    if (seen.loaded && seen.charts.length > 0 && seen.charts[0].drawn) break;
    if (i > 600) fail("chunk " + n + " not drawn");
    await sleep(100);
  }
  seen.chunks = requested.slice();
  writeFileSync(out + "/scroll.json", JSON.stringify(seen));
}
if (filterAt >= 0) {
  const text = args[filterAt + 1];
  await evaluate(s, `(() => {
    const box = document.getElementById('filter');
    box.value = ${JSON.stringify(text)};
    box.dispatchEvent(new Event('input'));
  })()`);
  const shown = `(() => {
    const figs = [...document.querySelectorAll('figure.chart')]
        .filter((f) => f.offsetParent !== null);
    return { charts: figs.map((f) => ({ name: f.getAttribute('data-name'),
                                        drawn: !!f.querySelector('svg') })),
             count: document.getElementById('shown').textContent };
  })()`;
  let seen;
  for (let i = 0; ; i++) {
    seen = await evaluate(s, shown);
    if (seen.charts.every((c) => c.drawn)) break;
    if (i > 600) fail("the filter's charts not drawn");
    // The first not drawn, in view (a chart is drawn when near it).
    await evaluate(s, `[...document.querySelectorAll('figure.chart')]
        .filter((f) => f.offsetParent !== null && !f.querySelector('svg'))
        .slice(0, 1).forEach((f) => f.scrollIntoView())`);
    await sleep(100);
  }
  seen.chunks = requested.slice();
  writeFileSync(out + "/filter.json", JSON.stringify(seen));
}
writeFileSync(out + "/console.json", JSON.stringify(said, null, 1));
clearTimeout(timer);
// The browser is gone before this ends: one still writing its cache into
// the profile would make the test's removal of its folder leave it behind.
const gone = new Promise((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) resolve();
  else child.on("exit", resolve);
});
await send("Browser.close");
await Promise.race([gone, sleep(10000)]);
child.kill();
process.exit(0);
