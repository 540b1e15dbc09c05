// The plots and the graph of a case: uPlot for the series, cytoscape for who paid whom. Both
// draw into a DOM node that preact leaves alone (a ref), and are destroyed with it.
import { h } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import htm from 'htm';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import cytoscape from 'cytoscape';

const html = htm.bind(h);

function xRange(x) {
  const lo = Math.min(...x), hi = Math.max(...x);
  return hi - lo < 3600 ? [lo - 86400, hi + 86400] : [lo, hi];
}

// "series": [{label, values}] over "x" (Unix seconds); drawn with points and lines, each
// series in its own dash pattern so that they are told apart without colour.
export function TimeSeries({ title, x, series, height = 220 }) {
  const ref = useRef(null);
  useEffect(() => {
    if (!ref.current || x.length === 0) return undefined;
    const dashes = [[], [6, 4], [2, 3], [10, 3, 2, 3], [1, 6]];
    const opts = {
      title,
      width: Math.max(ref.current.clientWidth || 640, 320),
      height,
      series: [{}, ...series.map((s, i) => ({
        label: s.label, stroke: ['#1f4e79', '#7a3b00', '#2e6b2e', '#6b2e6b', '#444'][i % 5], width: 1.5,
        dash: dashes[i % 5], points: { show: true, size: 5 }, scale: s.scale || 'y',
      }))],
      // Points within an hour get a day either side instead of a range of years.
      scales: { x: { time: true, range: xRange(x) } },
      axes: [{}, { scale: 'y', size: 70 }, ...(series.some((s) => s.scale === 'n') ? [{ scale: 'n', side: 1 }] : [])],
    };
    const plot = new uPlot(opts, [x, ...series.map((s) => s.values)], ref.current);
    return () => plot.destroy();
  }, [title, x, series, height]);
  if (x.length === 0) return html`<p class="muted">Nothing to plot.</p>`;
  return html`<div class="plot" ref=${ref} />`;
}

// Payments as a directed graph: "edges" [{from, to, count, amount}], "focus" the subject.
// Edges on a cycle through the subject are drawn thick and dashed and listed in words.
export function PaymentGraph({ edges, focus, cycles }) {
  const ref = useRef(null);
  useEffect(() => {
    if (!ref.current) return undefined;
    const nodes = new Set([focus]);
    for (const e of edges) { nodes.add(e.from); nodes.add(e.to); }
    const onCycle = new Set(cycles.flatMap((c) => c.map((n, i) => `${n}>${c[(i + 1) % c.length]}`)));
    const cy = cytoscape({
      container: ref.current,
      elements: [
        ...[...nodes].map((id) => ({ data: { id, label: id }, classes: id === focus ? 'focus' : '' })),
        ...edges.map((e, i) => ({
          data: { id: `e${i}`, source: e.from, target: e.to, label: `${e.count}×` },
          classes: onCycle.has(`${e.from}>${e.to}`) ? 'cycle' : '',
        })),
      ],
      layout: { name: nodes.size > 60 ? 'grid' : 'cose', animate: false },
      style: [
        { selector: 'node', style: { label: 'data(label)', 'font-size': 9, width: 14, height: 14,
                                     'background-color': '#6b7b8c' } },
        { selector: 'node.focus', style: { shape: 'diamond', width: 22, height: 22,
                                           'background-color': '#1f4e79' } },
        { selector: 'edge', style: { width: 1, 'curve-style': 'bezier', 'target-arrow-shape': 'triangle',
                                     'line-color': '#9aa5b1', 'target-arrow-color': '#9aa5b1',
                                     label: 'data(label)', 'font-size': 7 } },
        { selector: 'edge.cycle', style: { width: 3, 'line-style': 'dashed', 'line-color': '#a33',
                                           'target-arrow-color': '#a33' } },
      ],
    });
    return () => cy.destroy();
  }, [edges, focus, cycles]);
  return html`<div class="graph" ref=${ref} role="img"
    aria-label=${`payments around ${focus}: ${edges.length} edges`} />`;
}

// Cycles through "focus" in the directed edges, at most "limit" long (nodes), each once.
export function cyclesThrough(edges, focus, limit = 4) {
  const out = new Map();
  for (const e of edges) {
    if (!out.has(e.from)) out.set(e.from, []);
    out.get(e.from).push(e.to);
  }
  const found = [];
  const walk = (path) => {
    const last = path[path.length - 1];
    for (const next of out.get(last) || []) {
      if (next === focus && path.length > 1) found.push([...path]);
      else if (!path.includes(next) && path.length < limit) walk([...path, next]);
    }
  };
  walk([focus]);
  return found;
}
