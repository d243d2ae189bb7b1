// Loads each emud trace (Chrome trace-event JSON) given on the command line
// in two real viewers' importers and fails on anything they would show
// wrong:
//
//   - the Chrome DevTools trace engine (@paulirish/trace_engine, what the
//     DevTools performance panel runs): no console warning or error while it
//     parses; every complete slice kept in its thread's tree (it drops a
//     slice that overlaps its parent), each child inside its parent; and
//     exactly the flows the file describes, each bound to the slices its
//     events' args.slice_id name, in order;
//   - speedscope's app (its published bundle, in jsdom with a WebGL context
//     that draws nothing): its Trace Event Format importer runs and prints no
//     warning ("Tried to end ...", "... still open") or error.
//
// Usage: node check.mjs TRACE.json...   (exit status 1 if any trace fails)

import fs from 'node:fs';
import path from 'node:path';
import {createRequire} from 'node:module';
import jsdom from 'jsdom';
import * as Trace from '@paulirish/trace_engine';
import {polyfillDOMRect} from '@paulirish/trace_engine/analyze-trace.mjs';

const require = createRequire(import.meta.url);
const speedscopeDir = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
const speedscopeBundle = fs.readFileSync(
    path.join(speedscopeDir, fs.readdirSync(speedscopeDir).find(f => /^speedscope-.*\.js$/.test(f))), 'utf8');

polyfillDOMRect();
// The trace engine sorts with Array.prototype.toSorted (node 20); Debian
// 12's node is 18.
if (!Array.prototype.toSorted) {
  Object.defineProperty(Array.prototype, 'toSorted', {value(cmp) { return [...this].sort(cmp); }});
}
// An exception thrown inside a page (speedscope's timers) surfaces here:
// it counts against the trace being imported, or fails the run.
const stray = [];
let uncaught = stray;
process.on('uncaughtException', e => uncaught?.push(String(e?.message ?? e).slice(0, 400)));

// What each flow of the file binds to, by name: the args.slice_id of its
// events, in order.
function expectedFlows(events) {
  const byId = new Map();
  for (const e of events) {
    if (e.ph !== 's' && e.ph !== 't' && e.ph !== 'f') continue;
    if (!byId.has(e.id)) byId.set(e.id, []);
    byId.get(e.id).push(e.args?.slice_id);
  }
  return [...byId.values()].map(ids => ids.join(' → '));
}

function sameMultiset(a, b) {
  const count = new Map();
  for (const x of a) count.set(x, (count.get(x) ?? 0) + 1);
  for (const x of b) count.set(x, (count.get(x) ?? 0) - 1);
  return [...count].filter(([, n]) => n !== 0);
}

async function devtools(file, events) {
  const problems = [];
  const said = [];
  const saved = {warn: console.warn, error: console.error};
  console.warn = (...a) => said.push('warn: ' + a.join(' '));
  console.error = (...a) => said.push('error: ' + a.join(' '));
  let parsed;
  try {
    const model = Trace.TraceModel.Model.createWithAllHandlers();
    await model.parse(events);
    parsed = model.parsedTrace();
    parsed = parsed.data ?? parsed;
  } catch (e) {
    problems.push(`parse threw: ${e.stack ?? e}`);
  } finally {
    Object.assign(console, saved);
  }
  problems.push(...said.map(s => 'said ' + s));
  if (!parsed) return {problems};

  const slices = events.filter(e => e.ph === 'X');
  const tree = parsed.Renderer.entryToNode;
  let kept = 0;
  for (const e of slices) {
    const node = tree.get(e);
    if (!node) {
      problems.push(`dropped slice ${e.name} (slice_id ${e.args?.slice_id}) at ts ${e.ts}: it overlaps its parent`);
      continue;
    }
    kept++;
    const p = node.parent?.entry;
    if (p && (e.ts < p.ts || e.ts + e.dur > p.ts + p.dur)) {
      problems.push(`slice ${e.name} (slice_id ${e.args?.slice_id}) is not inside its parent ${p.name} (slice_id ${p.args?.slice_id})`);
    }
  }
  const want = expectedFlows(events);
  const unnamed = events.filter(e => (e.ph === 's' || e.ph === 't' || e.ph === 'f') && e.args?.slice_id === undefined);
  if (unnamed.length) problems.push(`${unnamed.length} flow events name no slice (args.slice_id)`);
  const got = parsed.Flows.flows.map(f => f.map(e => e.args?.slice_id).join(' → '));
  for (const [flow, n] of sameMultiset(want, got)) {
    problems.push(n > 0 ? `flow ${flow} is not bound as named (${n}×)` : `flow ${flow} bound but not in the file (${-n}×)`);
  }
  return {problems, summary: `${kept}/${slices.length} slices in tree, ${got.length}/${want.length} flows bound`};
}

async function speedscope(file, data) {
  const problems = [];
  uncaught = problems;
  const vc = new jsdom.VirtualConsole();
  let importing = false;
  let importer = '';
  const record = kind => (...a) => {
    const s = a.map(String).join(' ');
    if (kind === 'log' && /^Importing as /.test(s)) {
      importing = true;
      importer = s;
    } else if (importing && kind !== 'log' && kind !== 'info') {
      problems.push(`${kind}: ${s.slice(0, 400)}`);
    }
  };
  for (const k of ['log', 'info', 'warn', 'error']) vc.on(k, record(k));
  vc.on('jsdomError', e => { if (importing) problems.push(`jsdom: ${String(e.message ?? e).slice(0, 400)}`); });
  const dom = new jsdom.JSDOM('<!DOCTYPE html><html><head></head><body></body></html>', {
    url: 'http://speedscope.invalid/index.html#localProfilePath=/trace.js',
    runScripts: 'outside-only', pretendToBeVisual: true, virtualConsole: vc,
  });
  const w = dom.window;
  w.TextDecoder = TextDecoder; // jsdom leaves these to the host
  w.TextEncoder = TextEncoder;
  w.matchMedia = () => ({matches: false, addEventListener() {}, removeEventListener() {}, addListener() {}, removeListener() {}});
  w.requestAnimationFrame = () => 0; // nothing is drawn
  w.Element.prototype.scrollIntoView = function () {};
  const gl = new Proxy(function () {}, { // a WebGL context that accepts every call
    get(t, k) { return typeof k === 'string' && /^[A-Z0-9_]+$/.test(k) ? 1 : gl; },
    apply() { return gl; },
  });
  w.HTMLCanvasElement.prototype.getContext = function (kind) { return kind === 'webgl' ? gl : null; };
  w.eval(speedscopeBundle);
  await new Promise(r => setTimeout(r, 0));
  if (!w.speedscope?.loadFileFromBase64) {
    w.close();
    return {problems: ['speedscope did not start (no window.speedscope.loadFileFromBase64)']};
  }
  w.speedscope.loadFileFromBase64(path.basename(file), data.toString('base64'));
  const deadline = Date.now() + 30000;
  while (!/ - speedscope$/.test(w.document.title) && Date.now() < deadline) await new Promise(r => setTimeout(r, 20));
  if (!/ - speedscope$/.test(w.document.title)) problems.push('speedscope did not finish importing in 30 s');
  if (importer !== 'Importing as Trace Event Format profile') problems.push(`speedscope's importer: ${JSON.stringify(importer)}, want the Trace Event Format one`);
  importing = false;
  uncaught = null; // drawing with the stub WebGL context is not the import
  w.close();
  await new Promise(r => setTimeout(r, 0));
  uncaught = stray;
  return {problems, summary: `${importer ? 'imported' : 'not imported'}, ${problems.length} warnings`};
}

console.log(`tracecheck: node ${process.version}, speedscope ${require('speedscope/package.json').version}, ` +
    `@paulirish/trace_engine ${require('@paulirish/trace_engine/package.json').version}, jsdom ${require('jsdom/package.json').version}`);
let passed = 0;
let failed = 0;
for (const file of process.argv.slice(2)) {
  const t0 = Date.now();
  let data, doc;
  try {
    data = fs.readFileSync(file);
    doc = JSON.parse(data.toString('utf8'));
    if (!Array.isArray(doc?.traceEvents)) throw new Error('no traceEvents array');
  } catch (e) {
    console.log(`FAIL ${file}: not a trace: ${e.message}`);
    failed++;
    continue;
  }
  const dt = await devtools(file, doc.traceEvents);
  const ss = await speedscope(file, data);
  const problems = [...dt.problems.map(p => 'DevTools: ' + p), ...ss.problems.map(p => 'speedscope: ' + p)];
  console.log(`${problems.length ? 'FAIL' : 'ok  '} ${file}: DevTools ${dt.summary ?? 'failed'}; speedscope ${ss.summary}; ${Date.now() - t0} ms`);
  for (const p of problems.slice(0, 20)) console.log('    ' + p);
  if (problems.length > 20) console.log(`    ... and ${problems.length - 20} more`);
  if (problems.length) failed++; else passed++;
}
for (const e of stray) console.log(`uncaught exception outside an import: ${e}`);
if (stray.length) failed++;
console.log(`tracecheck: ${passed} passed, ${failed} failed`);
process.exit(failed || passed === 0 ? 1 : 0);
