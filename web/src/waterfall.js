// The model's reasons for one decision as a waterfall: from the bias (the model's expected
// margin) each feature's exact TreeSHAP value steps the margin up or down, largest first, to
// the decision's margin. Values are the server's, unrounded in the table; the bars are an SVG
// whose direction is also said in words (readable without colour).
import { h } from 'preact';
import htm from 'htm';

const html = htm.bind(h);

// The steps shown as bars: the largest "shown" contributions, then the rest summed.
export function waterfallSteps(attribution, shown = 12) {
  const nonzero = attribution.features.filter((f) => f.contribution !== 0);
  nonzero.sort((a, b) => Math.abs(b.contribution) - Math.abs(a.contribution) ||
                         a.feature.localeCompare(b.feature));
  const steps = nonzero.slice(0, shown).map((f) => ({ label: f.feature, value: f.value,
                                                      contribution: f.contribution }));
  const rest = nonzero.slice(shown);
  if (rest.length > 0) {
    steps.push({ label: `${rest.length} other features`, value: null,
                 contribution: rest.reduce((s, f) => s + f.contribution, 0) });
  }
  return steps;
}

function fmt(x, digits = 4) {
  return x === null || x === undefined ? 'missing' : Number(x).toFixed(digits);
}

export function Waterfall({ attribution }) {
  const steps = waterfallSteps(attribution);
  const rowH = 22, labelW = 220, barW = 360, pad = 8;
  let run = attribution.bias;
  const points = [attribution.bias];
  for (const s of steps) { run += s.contribution; points.push(run); }
  const lo = Math.min(...points, 0), hi = Math.max(...points, 0);
  const span = hi - lo || 1;
  const x = (v) => labelW + ((v - lo) / span) * barW;
  const rows = [{ label: 'bias (expected margin)', from: lo < 0 && hi > 0 ? 0 : lo, to: attribution.bias, kind: 'bias' }];
  run = attribution.bias;
  for (const s of steps) {
    rows.push({ label: s.label, from: run, to: run + s.contribution,
                kind: s.contribution >= 0 ? 'up' : 'down' });
    run += s.contribution;
  }
  rows.push({ label: 'margin', from: lo < 0 && hi > 0 ? 0 : lo, to: attribution.margin, kind: 'total' });
  const height = rows.length * rowH + 2 * pad;
  return html`
    <figure class="waterfall">
      <svg role="img" aria-label="waterfall of the model's contributions"
           viewBox=${`0 0 ${labelW + barW + 90} ${height}`} width="100%">
        <line x1=${x(0)} x2=${x(0)} y1="0" y2=${height} class="axis" />
        ${rows.map((r, i) => {
          const y = pad + i * rowH;
          const x0 = x(Math.min(r.from, r.to)), x1 = x(Math.max(r.from, r.to));
          return html`<g class=${`step ${r.kind}`}>
            <text x=${labelW - 6} y=${y + 15} text-anchor="end">${r.label}</text>
            <rect x=${x0} y=${y + 3} width=${Math.max(x1 - x0, 1)} height=${rowH - 6} />
            <text x=${x1 + 4} y=${y + 15}>${r.kind === 'up' ? '▲ +' : r.kind === 'down' ? '▼ ' : ''}${
              r.kind === 'up' || r.kind === 'down' ? fmt(r.to - r.from) : fmt(r.to)}</text>
          </g>`;
        })}
      </svg>
      <figcaption>
        bias ${fmt(attribution.bias)} + contributions = margin ${fmt(attribution.sum)}
        (the model's margin ${fmt(attribution.margin)}, score ${fmt(attribution.score)};
        recorded score ${fmt(attribution.recorded_score)}), model ${attribution.model_version}
      </figcaption>
    </figure>
    <details class="contributions">
      <summary>Every feature (${attribution.features.length})</summary>
      <table class="attribution">
        <thead><tr><th>feature</th><th>value</th><th>contribution</th></tr></thead>
        <tbody>
          ${attribution.features.map((f) => html`
            <tr data-feature=${f.feature} data-contribution=${String(f.contribution)}>
              <td>${f.feature}</td><td>${fmt(f.value, 6)}</td><td>${String(f.contribution)}</td>
            </tr>`)}
        </tbody>
      </table>
    </details>`;
}
