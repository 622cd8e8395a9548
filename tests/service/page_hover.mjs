// Hovers a point of the history page in headless chromium, driven over
// the DevTools protocol on a pipe (--remote-debugging-pipe: no port), and
// prints what the page then shows, as JSON: the tooltip's text and whether
// it is visible, and the same after the pointer leaves the chart.
//
//   node page_hover.mjs CHROMIUM PROFILE_DIR URL CHART_INDEX POINT_INDEX
//
// The point is POINT_INDEX of the first line (machine) of chart
// CHART_INDEX, found from the line's drawn points. Exits 1 on any error.
import { spawn } from "node:child_process";

const [browser, profile, url, chart, point] = process.argv.slice(2);
const child = spawn(browser, [
  "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
  "--user-data-dir=" + profile, "--window-size=1600,4000",
  "--remote-debugging-pipe", "about:blank",
], { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] });
const timer = setTimeout(() => fail("no answer in 60 s"), 60000);

function fail(why) {
  console.error("page_hover: " + why);
  child.kill();
  process.exit(1);
}

// The protocol: JSON messages ending with a NUL, each way.
let next = 1, buffer = "";
const waiting = new Map();
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
    }
  }
});
function send(method, params = {}, sessionId = undefined) {
  const id = next++;
  child.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + "\0");
  return new Promise((resolve) => waiting.set(id, { resolve, method }));
}
async function evaluate(session, expression) {
  const r = await send("Runtime.evaluate",
                       { expression, awaitPromise: true, returnByValue: true },
                       session);
  if (r.exceptionDetails) fail("evaluate: " + JSON.stringify(r.exceptionDetails));
  return r.result.value;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const { targetInfos } = await send("Target.getTargets");
const page = targetInfos.find((t) => t.type === "page");
if (!page) fail("no page");
const { sessionId } = await send("Target.attachToTarget",
                                 { targetId: page.targetId, flatten: true });
await send("Page.navigate", { url }, sessionId);
// Wait until the charts are drawn.
for (let i = 0; ; i++) {
  const ok = await evaluate(sessionId,
      "document.readyState === 'complete' && " +
      "document.documentElement.hasAttribute('data-drawn-ms')");
  if (ok) break;
  if (i > 200) fail("the page did not draw");
  await sleep(100);
}
// The point's place on the screen: its dot in the line's "dots" path.
const at = await evaluate(sessionId, `(() => {
  const fig = document.querySelectorAll('figure.chart')[${+chart}];
  fig.scrollIntoView();
  const svg = fig.querySelector('svg');
  const dots = svg.querySelector('g.line path.dots').getAttribute('d');
  const xy = [...dots.matchAll(/M([0-9.]+) ([0-9.]+)h0/g)][${+point}];
  const p = svg.createSVGPoint();
  p.x = +xy[1];
  p.y = +xy[2];
  const s = p.matrixTransform(svg.getScreenCTM());
  return { x: s.x, y: s.y };
})()`);
await send("Input.dispatchMouseEvent",
           { type: "mouseMoved", x: at.x, y: at.y }, sessionId);
await sleep(200);
const shown = await evaluate(sessionId, `(() => {
  const tip = document.getElementById('tip');
  return { text: tip.textContent, visible: tip.style.display === 'block',
           rings: document.querySelectorAll('circle.hover').length };
})()`);
await send("Input.dispatchMouseEvent", { type: "mouseMoved", x: 2, y: 2 },
           sessionId);
await sleep(200);
const left = await evaluate(sessionId, `(() => ({
  visible: document.getElementById('tip').style.display === 'block',
  rings: document.querySelectorAll('circle.hover').length }))()`);
console.log(JSON.stringify({ shown, left }));
clearTimeout(timer);
await send("Browser.close");
child.kill();
process.exit(0);
