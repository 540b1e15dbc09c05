// The analysts' workbench (docs/workbench.md): the queue, a case, the dashboard. One client of
// /v1/cases among others; it holds no state the server does not (the token aside).
import { h, render } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import htm from 'htm';
import './style.css';
import { ApiError, download, get, post, query, setToken, token, upload } from './api.js';
import { Waterfall } from './waterfall.js';
import { PaymentGraph, TimeSeries, cyclesThrough } from './charts.js';

const html = htm.bind(h);

const OUTCOMES = ['suspicious_reported', 'not_suspicious', 'false_positive', 'valuable_alert'];
const STATES = ['unclosed', 'open', 'in_review', 'escalated', 'awaiting_approval', 'closed'];

function useRoute() {
  const [hash, setHash] = useState(location.hash || '#/queue');
  useEffect(() => {
    const on = () => setHash(location.hash || '#/queue');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash.slice(1).split('/').filter(Boolean).map(decodeURIComponent);
}

const go = (path) => { location.hash = `#${path}`; };
const fmtTime = (t) => (t ? t.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : '—');
const fmtScore = (s) => (s === null || s === undefined ? '—' : Number(s).toFixed(3));
const money = (micros) => (micros / 1e6).toLocaleString('en', { maximumFractionDigits: 2 });

function ErrorNote({ error }) {
  if (!error) return null;
  const where = error.field ? ` (${error.field})` : '';
  return html`<p class="error" role="alert">${error.message}${where}</p>`;
}

// Loads "path" while "deps" change; {data, error, reload}.
function useGet(path, deps) {
  const [state, setState] = useState({ data: null, error: null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    if (!path) return undefined;
    get(path).then((data) => live && setState({ data, error: null }),
                   (error) => live && setState({ data: null, error }));
    return () => { live = false; };
  }, [path, tick, ...deps]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

function Login({ onDone }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    setToken(value.trim());
    try {
      await get('/v1/cases?limit=1');
      onDone();
    } catch (err) {
      setToken('');
      setError(err);
    }
  };
  return html`
    <main class="login">
      <h1>vigil workbench</h1>
      <form onSubmit=${submit}>
        <label for="token">Access token (analyst or supervisor: <code>vigil token create</code>)</label>
        <input id="token" type="password" autocomplete="off" value=${value}
               onInput=${(e) => setValue(e.target.value)} required autofocus />
        <button type="submit" id="sign-in">Sign in</button>
      </form>
      <${ErrorNote} error=${error} />
    </main>`;
}

const COLUMNS = [
  ['id', 'case'], ['subject', 'account'], ['state', 'state'], ['owner', 'owner'],
  ['priority', 'priority'], ['max_score', 'score'], ['alerts', 'alerts'], ['blocks', 'blocks'],
  ['amount_reporting_micros', 'amount'], ['opened', 'opened'], ['reasons', 'reasons'],
];

function Queue() {
  const [filters, setFilters] = useState({ state: 'unclosed', owner: '', reason: '', min_score: '',
                                           overdue: false, order: 'priority', limit: 200 });
  const [offset, setOffset] = useState(0);
  const [sort, setSort] = useState({ key: '', down: true });
  const [error, setError] = useState(null);
  const path = `/v1/cases${query({ ...filters, offset })}`;
  const { data, error: loadError, reload } = useGet(path, []);
  const set = (k) => (e) => {
    setOffset(0);
    setFilters({ ...filters, [k]: e.target.type === 'checkbox' ? e.target.checked : e.target.value });
  };
  const takeNext = async () => {
    try {
      const r = await post('/v1/cases/next');
      go(`/case/${r.case.id}`);
    } catch (err) { setError(err); }
  };
  const rows = useMemo(() => {
    const list = data ? [...data.cases] : [];
    if (sort.key) {
      const k = sort.key;
      list.sort((a, b) => {
        const x = Array.isArray(a[k]) ? a[k].join() : a[k], y = Array.isArray(b[k]) ? b[k].join() : b[k];
        const c = x === y ? 0 : (x ?? -1) > (y ?? -1) ? 1 : -1;
        return sort.down ? -c : c;
      });
    }
    return list;
  }, [data, sort]);
  const header = (key, label) => {
    const on = sort.key === key;
    return html`<th aria-sort=${on ? (sort.down ? 'descending' : 'ascending') : 'none'}>
      <button class="sort" onClick=${() => setSort({ key, down: on ? !sort.down : true })}>
        ${label}${on ? (sort.down ? ' ↓' : ' ↑') : ''}</button></th>`;
  };
  return html`
    <section>
      <div class="toolbar">
        <button id="take-next" class="primary" onClick=${takeNext}>Take next case</button>
        <label>state <select id="f-state" value=${filters.state} onChange=${set('state')}>
          ${STATES.map((s) => html`<option value=${s}>${s}</option>`)}</select></label>
        <label>owner <input id="f-owner" value=${filters.owner} onChange=${set('owner')}
          placeholder="token:…" size="12" /></label>
        <label>reason <input id="f-reason" value=${filters.reason} onChange=${set('reason')}
          placeholder="rule or list hit" size="14" /></label>
        <label>score ≥ <input id="f-score" type="number" min="0" max="1" step="0.05"
          value=${filters.min_score} onChange=${set('min_score')} size="5" /></label>
        <label><input id="f-overdue" type="checkbox" checked=${filters.overdue}
          onChange=${set('overdue')} /> overdue</label>
        <label>server order <select value=${filters.order} onChange=${set('order')}>
          ${['priority', 'opened', 'updated', 'alerts'].map((s) => html`<option value=${s}>${s}</option>`)}
        </select></label>
        <label>per page <select value=${filters.limit} onChange=${set('limit')}>
          ${[50, 200, 1000].map((n) => html`<option value=${n}>${n}</option>`)}</select></label>
      </div>
      <${ErrorNote} error=${error || loadError} />
      ${data && html`
        <p class="count" id="queue-count">${data.total} cases; ${data.cases.length} shown from
          ${data.total ? offset + 1 : 0}
          <button disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - filters.limit))}>previous</button>
          <button disabled=${offset + data.cases.length >= data.total}
                  onClick=${() => setOffset(offset + Number(filters.limit))}>next</button>
          <button onClick=${reload}>refresh</button></p>
        <table class="queue" id="queue">
          <thead><tr>${COLUMNS.map(([k, l]) => header(k, l))}</tr></thead>
          <tbody>${rows.map((c) => html`
            <tr data-case=${c.id}>
              <td><a href=${`#/case/${c.id}`}>${c.id}</a></td>
              <td>${c.subject}${c.subject_name ? html`<br /><small>${c.subject_name}</small>` : ''}</td>
              <td>${c.state}${c.overdue ? html` <strong class="overdue">overdue</strong>` : ''}</td>
              <td>${c.owner || '—'}</td><td class="num">${c.priority.toFixed(1)}</td>
              <td class="num">${fmtScore(c.max_score)}</td><td class="num">${c.alerts}</td>
              <td class="num">${c.blocks}</td><td class="num">${money(c.amount_reporting_micros || 0)}</td>
              <td>${fmtTime(c.opened)}</td><td>${c.reasons.join(', ')}</td>
            </tr>`)}</tbody>
        </table>`}
    </section>`;
}

function ActionForm({ id, label, fields, onSubmit }) {
  const [values, setValues] = useState({});
  return html`
    <form class="action" id=${id} onSubmit=${(e) => { e.preventDefault(); onSubmit(values); }}>
      ${fields.map((f) => (f.options
        ? html`<label>${f.label} <select name=${f.name} required
              onChange=${(e) => setValues({ ...values, [f.name]: e.target.value })}>
              <option value="">choose…</option>
              ${f.options.map((o) => html`<option value=${o}>${o.replace(/_/g, ' ')}</option>`)}
            </select></label>`
        : html`<label>${f.label} <textarea name=${f.name} rows="2" required=${f.required}
              onInput=${(e) => setValues({ ...values, [f.name]: e.target.value })} /></label>`))}
      <button type="submit">${label}</button>
    </form>`;
}

function AttachForm({ caseId, onDone, onError }) {
  const [file, setFile] = useState(null);
  const [text, setText] = useState('');
  const submit = async (e) => {
    e.preventDefault();
    try {
      await upload(`/v1/cases/${encodeURIComponent(caseId)}/attachments${query({ name: file.name, text })}`, file);
      onDone();
    } catch (err) { onError(err); }
  };
  return html`<form class="action" id="attach" onSubmit=${submit}>
    <label>file (PDF, PNG, JPEG, text, CSV) <input type="file" name="file" required
      accept="application/pdf,image/png,image/jpeg,text/plain,text/csv,.csv,.txt"
      onChange=${(e) => setFile(e.target.files[0] || null)} /></label>
    <label>what it is <input name="text" onInput=${(e) => setText(e.target.value)} /></label>
    <button type="submit">Attach</button></form>`;
}

function HitReview({ hit, reviews, onReview }) {
  const [verdict, setVerdict] = useState('');
  const [expires, setExpires] = useState('');
  const [text, setText] = useState('');
  const done = reviews.filter((r) => r.hit === hit.code);
  const submit = (e) => {
    e.preventDefault();
    const body = { hit: hit.code, verdict, text };
    if (verdict === 'cleared') body.expires = `${expires}T00:00:00Z`;
    onReview(body);
  };
  return html`<li class="hit" data-hit=${hit.code}>
    <code>${hit.code}</code> ${hit.text}
    ${done.map((r) => html`<div class="verdict" data-verdict=${r.verdict}>${'reviewed: '}<strong
      >${r.verdict.replace(/_/g, ' ')}</strong> by ${r.actor}
      ${r.expires ? ` until ${fmtTime(r.expires)}` : ''} — ${r.text}</div>`)}
    <form class="action review" onSubmit=${submit}>
      <label>verdict <select name="verdict" required onChange=${(e) => setVerdict(e.target.value)}>
        <option value="">choose…</option>
        <option value="true_match">true match</option>
        <option value="false_match">false match</option>
        <option value="cleared">false match: clear this party until…</option>
      </select></label>
      ${verdict === 'cleared' && html`<label>until <input name="expires" type="date" required
        onInput=${(e) => setExpires(e.target.value)} /></label>`}
      <label>why <textarea name="text" rows="1" required onInput=${(e) => setText(e.target.value)} /></label>
      <button type="submit">Record verdict</button>
    </form></li>`;
}

function Decision({ caseId, sequence, reviews, onReview }) {
  const { data, error } = useGet(`/v1/cases/${encodeURIComponent(caseId)}/decision?sequence=${sequence}`, []);
  const [proofError, setProofError] = useState(null);
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (!data) return html`<p class="muted">Loading record ${sequence}…</p>`;
  const d = data.record.decision || {};
  const rules = (d.reasons || []).filter((r) => r.kind === 'rule');
  const hits = (d.reasons || []).filter((r) => r.kind === 'screening' && !r.shadow);
  const cleared = (d.reasons || []).filter((r) => r.kind === 'screening' && r.shadow);
  const mine = reviews.filter((r) => r.alert === sequence);
  const proof = async () => {
    try {
      setProofError(null);
      await download(`/v1/cases/${encodeURIComponent(caseId)}/proof?sequence=${sequence}`,
                     `${caseId}-${sequence}.proof.json`);
    } catch (err) { setProofError(err); }
  };
  return html`
    <section class="decision" id="decision" data-sequence=${sequence}>
      <h3>Record ${sequence}: ${d.action} · score ${fmtScore(d.score)}</h3>
      <p>policy ${d.policy_version || '—'} · model ${d.model_version || '—'} ·
        decided ${fmtTime(data.record.decided)} · leaf <code>${data.record.leaf_hash.slice(0, 16)}…</code>
        <button id="proof" onClick=${proof}>Download audit proof</button></p>
      <${ErrorNote} error=${proofError} />
      <h4>Rules that fired</h4>
      ${rules.length ? html`<ul>${rules.map((r) => html`<li><code>${r.code}</code> ${r.text}${r.shadow ? ' (shadow)' : ''}</li>`)}</ul>`
                     : html`<p class="muted">none</p>`}
      <h4>Screening hits</h4>
      ${hits.length ? html`<ul class="hits" id="hits">${hits.map((r) => html`<${HitReview} hit=${r}
          reviews=${mine} onReview=${(body) => onReview({ ...body, sequence })} />`)}</ul>`
                    : html`<p class="muted">none</p>`}
      ${cleared.length ? html`<p>Cleared, not counted: ${cleared.map((r) => html`<span class="cleared"><code>${r.code}</code> ${r.text}</span>`)}</p>` : ''}
      <h4>Why the model scored it so</h4>
      ${data.attribution ? html`<${Waterfall} attribution=${data.attribution} />`
                         : html`<p class="muted" id="no-attribution">${data.attribution_unavailable}</p>`}
    </section>`;
}

// Edges of the case's payments, then of its counterparties' own cases (a second hop).
function useGraph(c, alerts) {
  const [edges, setEdges] = useState([]);
  useEffect(() => {
    let live = true;
    const add = (map, a) => {
      const k = `${a.subject}>${a.counterparty}`;
      const e = map.get(k) || { from: a.subject, to: a.counterparty, count: 0, amount: 0 };
      e.count += 1;
      e.amount += (a.amount_reporting_micros || 0) / 1e6;
      map.set(k, e);
    };
    const map = new Map();
    alerts.forEach((a) => add(map, a));
    setEdges([...map.values()]);
    const counterparties = [...new Set(alerts.map((a) => a.counterparty))].slice(0, 25);
    Promise.all(counterparties.map(async (cp) => {
      const list = await get(`/v1/cases${query({ subject: cp, limit: 3 })}`);
      return Promise.all(list.cases.map((k) => get(`/v1/cases/${encodeURIComponent(k.id)}`)));
    })).then((details) => {
      if (!live) return;
      details.flat().forEach((d) => d.alerts.forEach((a) => add(map, a)));
      setEdges([...map.values()]);
    }, () => {});
    return () => { live = false; };
  }, [c.id, alerts.length]);
  return edges;
}

function CaseView({ id }) {
  const { data, error, reload } = useGet(`/v1/cases/${encodeURIComponent(id)}`, [id]);
  const [actionError, setActionError] = useState(null);
  const [selected, setSelected] = useState(null);
  const act = useCallback(async (verb, body) => {
    try {
      setActionError(null);
      await post(`/v1/cases/${encodeURIComponent(id)}/${verb}`, body);
      reload();
    } catch (err) { setActionError(err); }
  }, [id]);
  const alerts = data ? data.alerts : [];
  const edges = useGraph(data ? data.case : { id }, alerts);
  const cycles = useMemo(() => (data ? cyclesThrough(edges, data.case.subject) : []), [edges, data]);
  // Each alerted payment against the account's own history, as its decision saw it.
  const history = useGet(`/v1/cases/${encodeURIComponent(id)}/series`, [id, alerts.length]);
  const series = useMemo(() => {
    const h = history.data;
    if (!h) return { x: [], series: [] };
    const col = (name) => h.features.indexOf(name);
    // uPlot wants x ascending; the log's order is the decisions', not always the payments'.
    const points = [...h.points].sort((a, b) => Date.parse(a.event_time) - Date.parse(b.event_time));
    const x = points.map((p) => Date.parse(p.event_time) / 1000);
    const pick = (name) => points.map((p) => (col(name) >= 0 ? p.values[col(name)] : null));
    return { x, series: [
      { label: 'amount (reporting currency)', values: points.map((p) => p.amount_reporting) },
      { label: 'the account\'s mean amount before it', values: pick('orig_amount_ewma_mean') },
      { label: 'its payments out in 24 h', values: pick('orig_out_count_24h'), scale: 'n' },
    ] };
  }, [history.data]);
  useEffect(() => {
    if (data && selected === null && alerts.length) setSelected(alerts[alerts.length - 1].sequence);
  }, [data]);
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (!data) return html`<p class="muted">Loading ${id}…</p>`;
  const c = data.case;
  const forms = [];
  if (c.state === 'open' || c.state === 'escalated') forms.push(html`<button id="claim" class="primary" onClick=${() => act('claim')}>Claim</button>`);
  if (c.state === 'in_review' || c.state === 'escalated') {
    forms.push(html`<button id="release" onClick=${() => act('release')}>Release to queue</button>`);
    forms.push(html`<${ActionForm} id="escalate" label="Escalate" fields=${[{ name: 'text', label: 'why', required: true }]} onSubmit=${(v) => act('escalate', v)} />`);
    forms.push(html`<${ActionForm} id="close" label="Close" fields=${[
      { name: 'outcome', label: 'outcome', options: OUTCOMES }, { name: 'text', label: 'rationale', required: true }]}
      onSubmit=${(v) => act('close', v)} />`);
  }
  if (c.state === 'awaiting_approval') {
    forms.push(html`<button id="approve" class="primary" onClick=${() => act('approve')}>Approve closing</button>`);
    forms.push(html`<${ActionForm} id="reject" label="Send back" fields=${[{ name: 'text', label: 'why', required: true }]} onSubmit=${(v) => act('reject', v)} />`);
  }
  if (c.state === 'closed' && c.outcome === 'suspicious_reported') {
    const report = (format, name) => download(
      `/v1/cases/${encodeURIComponent(c.id)}/report?format=${format}`, name).catch(setActionError);
    forms.push(html`<button id="report-goaml" onClick=${() => report('goaml', `${c.id}.goaml.xml`)}>
      Download goAML report draft</button>`);
    forms.push(html`<button id="report-html" onClick=${() => report('html', `${c.id}.report.html`)}>
      Download readable report</button>`);
  }
  if (c.state === 'closed') forms.push(html`<${ActionForm} id="reopen" label="Reopen" fields=${[{ name: 'text', label: 'why', required: true }]} onSubmit=${(v) => act('reopen', v)} />`);
  if (c.state !== 'closed') forms.push(html`<${ActionForm} id="assign" label="Assign (supervisor)" fields=${[{ name: 'assignee', label: 'to', required: true }]} onSubmit=${(v) => act('assign', v)} />`);
  return html`
    <article class="case" id="case" data-case=${c.id} data-state=${c.state}>
      <header>
        <h2>${c.id}: ${c.subject}${c.subject_name ? ` (${c.subject_name})` : ''}</h2>
        <p><strong id="case-state">${c.state.replace(/_/g, ' ')}</strong> · owner ${c.owner || 'none'} ·
          ${c.alerts} alerts (${c.blocks} BLOCK, ${c.screening_hits} with a watchlist hit) ·
          highest score ${fmtScore(c.max_score)} · ${money(c.amount_reporting_micros || 0)} in the
          reporting currency · payments ${fmtTime(c.first_payment)} to ${fmtTime(c.last_payment)}
          ${c.outcome ? html` · outcome <strong id="case-outcome">${c.outcome.replace(/_/g, ' ')}</strong>` : ''}</p>
        ${c.rationale ? html`<p>rationale: ${c.rationale}</p>` : ''}
      </header>
      <div class="actions">${forms}</div>
      <${ErrorNote} error=${actionError} />
      <div class="columns">
        <section>
          <h3>Payments that alerted</h3>
          <table class="alerts" id="alerts">
            <thead><tr><th>record</th><th>time</th><th>action</th><th>score</th><th>to</th><th>amount</th><th>reasons</th></tr></thead>
            <tbody>${alerts.map((a) => html`
              <tr data-sequence=${a.sequence} class=${selected === a.sequence ? 'selected' : ''}
                  aria-selected=${selected === a.sequence}>
                <td><button class="link" onClick=${() => setSelected(a.sequence)}>${a.sequence}</button></td>
                <td>${fmtTime(a.event_time)}</td><td>${a.action}</td><td class="num">${fmtScore(a.score)}</td>
                <td>${a.counterparty}</td><td class="num">${a.amount} ${a.currency}</td>
                <td>${a.reasons.join(', ')}</td>
              </tr>`)}</tbody>
          </table>
          ${selected !== null && html`<${Decision} key=${selected} caseId=${c.id} sequence=${selected}
            reviews=${data.timeline.filter((e) => e.kind === 'review_hit')}
            onReview=${(body) => act('screening', body)} />`}
        </section>
        <section>
          <h3>Behaviour in the window</h3>
          <${TimeSeries} title="alerted payments against the account's baseline" x=${series.x} series=${series.series} />
          <h3>Counterparties, two hops</h3>
          <${PaymentGraph} edges=${edges} focus=${c.subject} cycles=${cycles} />
          <p id="cycles">${cycles.length ? `Cycles back to ${c.subject}: ${cycles.map((p) => p.join(' → ')).join('; ')}`
                                         : 'No cycle back to the account among these payments.'}</p>
          <h3>Timeline</h3>
          <${ActionForm} id="note" label="Add note" fields=${[{ name: 'text', label: 'note', required: true }]}
            onSubmit=${(v) => act('note', v)} />
          <${AttachForm} caseId=${c.id} onDone=${reload} onError=${setActionError} />
          <ol class="timeline" id="timeline">
            ${data.timeline.map((e) => html`<li data-kind=${e.kind}>
              <time>${fmtTime(e.at)}</time> <strong>${e.kind.replace(/_/g, ' ')}</strong> by ${e.actor}
              ${e.assignee ? ` → ${e.assignee}` : ''}${e.outcome ? ` (${e.outcome.replace(/_/g, ' ')})` : ''}
              ${e.hit ? ` ${e.hit} on ${e.party} (record ${e.alert}): ${e.verdict.replace(/_/g, ' ')}${e.expires ? ` until ${fmtTime(e.expires)}` : ''}` : ''}
              ${e.sha256 ? html` <button class="link" onClick=${() => download(
                `/v1/cases/${encodeURIComponent(c.id)}/attachment?sha256=${e.sha256}`, e.file_name)
                .catch(setActionError)}>${e.file_name}</button> (${e.media_type}, ${e.size} bytes, SHA-256 ${e.sha256.slice(0, 12)}…)` : ''}
              ${e.text ? html`<blockquote>${e.text}</blockquote>` : ''}</li>`)}
          </ol>
        </section>
      </div>
    </article>`;
}

function Drift() {
  const { data, error } = useGet('/v1/drift', []);
  if (error) {
    return html`<p class="muted" id="drift">${error.status === 404 ? 'Drift monitoring is off on this server.' : error.message}</p>`;
  }
  if (!data) return html`<p class="muted">Loading…</p>`;
  const rank = { none: 0, L1: 1, L2: 2, L3: 3 };
  const ranked = [...data.subjects].sort((a, b) => rank[b.level] - rank[a.level] || a.name.localeCompare(b.name));
  return html`<div id="drift">
    <p>Monitor level <strong>${data.level}</strong>${data.frozen ? html` · <strong>model frozen</strong> (rules decide)` : ''}
      · ${(data.drifted_share * 100).toFixed(1)}% of features at L2 or above · ${data.rows} payments observed</p>
    <table class="drift"><thead><tr><th>feature</th><th>level</th></tr></thead>
      <tbody>${ranked.slice(0, 25).map((f) => html`<tr data-feature=${f.name}><td><code>${f.name}</code></td><td>${f.level}</td></tr>`)}</tbody>
    </table>${ranked.length > 25 ? html`<p class="muted">${ranked.length - 25} more features (GET /v1/drift)</p>` : ''}</div>`;
}

function Dashboard() {
  const { data, error } = useGet('/v1/cases/stats', []);
  const ready = useGet('/readyz', []);
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const x = data.days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
  const pct = (r) => (r === null ? '—' : `${(r * 100).toFixed(1)}%`);
  const closed = data.cases - data.outcomes.unclosed;
  const versions = ready.data || {};
  return html`
    <section class="dashboard" id="dashboard">
      <div class="tiles">
        <div><span>cases</span><strong id="d-cases">${data.cases}</strong></div>
        ${Object.entries(data.states).map(([k, v]) => html`<div><span>${k.replace(/_/g, ' ')}</span><strong id=${`d-state-${k}`}>${v}</strong></div>`)}
        <div><span>overdue</span><strong>${data.overdue}</strong></div>
        <div><span>time to close, median</span><strong>${data.close_hours_median === null ? '—' : `${data.close_hours_median.toFixed(1)} h`}</strong></div>
        <div><span>90th percentile</span><strong>${data.close_hours_p90 === null ? '—' : `${data.close_hours_p90.toFixed(1)} h`}</strong></div>
      </div>
      <h3>Outcomes of ${closed} closed cases</h3>
      <table class="outcomes" id="outcomes"><tbody>
        ${Object.entries(data.outcomes).filter(([k]) => k !== 'unclosed').map(([k, v]) => html`
          <tr data-outcome=${k}><th>${k.replace(/_/g, ' ')}</th><td class="num">${v}</td>
          <td class="num">${closed ? pct(v / closed) : '—'}</td></tr>`)}
      </tbody></table>
      <h3>Cases per day</h3>
      <${TimeSeries} title="cases opened and closed" x=${x} series=${[
        { label: 'opened', values: data.days.map((d) => d.opened) },
        { label: 'closed', values: data.days.map((d) => d.closed) }]} />
      <h3>Cases opened per day by rule (the five most frequent)</h3>
      <${TimeSeries} title="cases opened, by rule" x=${x} series=${data.reasons.slice(0, 5).map((r) => ({
        label: r.reason, values: data.days.map((d) => d.opened_by_reason[r.reason] || 0) }))} />
      <h3>By rule and watchlist hit</h3>
      <table class="reasons" id="reasons">
        <thead><tr><th>reason</th><th class="num">cases</th><th class="num">closed</th><th class="num">false positive</th>
          <th class="num">suspicious</th><th class="num">false-positive rate</th></tr></thead>
        <tbody>${data.reasons.map((r) => html`<tr data-reason=${r.reason}>
          <td><code>${r.reason}</code></td><td class="num">${r.cases}</td>
          <td class="num">${r.cases - r.outcomes.unclosed}</td>
          <td class="num">${r.outcomes.false_positive}</td><td class="num">${r.outcomes.suspicious_reported}</td>
          <td class="num" data-rate=${r.false_positive_rate === null ? '' : String(r.false_positive_rate)}>${pct(r.false_positive_rate)}</td></tr>`)}
        </tbody>
      </table>
      <h3>By the model's score band</h3>
      <table class="bands" id="bands">
        <thead><tr><th>highest score</th><th class="num">cases</th><th class="num">closed</th>
          <th class="num">false positive</th><th class="num">false-positive rate</th></tr></thead>
        <tbody>${data.bands.filter((b) => b.cases > 0).map((b) => html`<tr data-band=${b.band}>
          <td>${b.band.replace('_', ' ')}</td><td class="num">${b.cases}</td>
          <td class="num">${b.cases - b.outcomes.unclosed}</td><td class="num">${b.outcomes.false_positive}</td>
          <td class="num">${pct(b.false_positive_rate)}</td></tr>`)}</tbody>
      </table>
      <h3>Drift of the inputs (highest level first)</h3>
      <${Drift} />
      <h3>In force</h3>
      <pre class="versions">${JSON.stringify(versions, null, 2)}</pre>
    </section>`;
}

function App() {
  const [signedIn, setSignedIn] = useState(Boolean(token()));
  const route = useRoute();
  useEffect(() => {
    const onError = (e) => {
      if (e.reason instanceof ApiError && e.reason.status === 401) setSignedIn(false);
    };
    addEventListener('unhandledrejection', onError);
    return () => removeEventListener('unhandledrejection', onError);
  }, []);
  if (!signedIn) return html`<${Login} onDone=${() => setSignedIn(true)} />`;
  const [view, arg] = route;
  return html`
    <header class="top">
      <strong>vigil</strong>
      <nav>
        <a href="#/queue" aria-current=${view === 'queue' ? 'page' : undefined}>Queue</a>
        <a href="#/dashboard" aria-current=${view === 'dashboard' ? 'page' : undefined}>Dashboard</a>
        <button id="sign-out" onClick=${() => { setToken(''); setSignedIn(false); }}>Sign out</button>
      </nav>
    </header>
    <main>
      ${view === 'case' && arg ? html`<${CaseView} key=${arg} id=${arg} />`
        : view === 'dashboard' ? html`<${Dashboard} />` : html`<${Queue} />`}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app'));
