// The board's page: columns with filters, the inbox of everything awaiting a person (each with
// the controls its kind needs), and a ticket with its request, the agent at work (live output),
// its runs, its diff with line comments, its artifacts and a replayable timeline. Plain DOM, no
// build step. Text from the board goes in through textContent; the only markup inserted is
// what the server rendered from Markdown with md4c (raw HTML off), and links in it are checked
// again here.
'use strict';

const STATUSES = ['backlog', 'research', 'ready', 'planning', 'implementing', 'review', 'done'];
const TYPES = ['task', 'bug', 'feature', 'chore', 'epic'];
const $ = (sel, root = document) => root.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// --- Rendered Markdown (md4c, on the server) ---
const SAFE_URL = /^(https?:|mailto:|#|\/|\.{0,2}\/|[^:]*$)/i;

function markdownNode(html) {
  const box = el('div', { class: 'markdown' });
  const template = document.createElement('template');
  template.innerHTML = html; // inert until adopted: nothing in it runs here
  for (const a of template.content.querySelectorAll('a[href]')) {
    if (!SAFE_URL.test(a.getAttribute('href'))) a.removeAttribute('href');
    a.setAttribute('rel', 'noopener noreferrer');
    a.setAttribute('target', '_blank');
  }
  for (const img of template.content.querySelectorAll('img')) {
    if (!SAFE_URL.test(img.getAttribute('src') || '')) img.removeAttribute('src');
  }
  box.append(template.content);
  return box;
}

// --- The API ---
const state = {
  as: localStorage.getItem('board.as') || '',
  filters: { text: '', type: '', label: '', priority: '' },
  comments: new Map(), // ticket id -> [{file, line, text}] for the next rejection
  replay: new Map(), // ticket id -> the seq the person moved the slider to
  open: new Set(), // what a person opened: a run's output or prompt (`${id}:${run}:${what}`), `create`
  live: null, // the run followed live: {key, node, source, timer}
  diffs: new Map(), // `${id}:${seq}` -> the diff's text
  inbox: [],
};

// The token comes once, in the link the server printed (`/?token=...`). It is kept in this
// origin's storage, which no other port of the host can read, and shown as a header; never in
// a cookie, which the browser would send to every port of the host.
function takeToken() {
  const params = new URLSearchParams(location.search);
  if (!params.has('token')) return;
  localStorage.setItem('board.token', params.get('token'));
  history.replaceState(null, '', location.pathname + location.hash);
}
takeToken();

function headers() {
  const out = {};
  const token = localStorage.getItem('board.token');
  if (token) out.Authorization = `Bearer ${token}`;
  if (state.as) out['X-Board-As'] = state.as;
  return out;
}

async function api(path, body) {
  const init = { credentials: 'omit', headers: headers() };
  if (body !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = 'application/json';
    init.headers['X-Board-Request'] = '1';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  const type = res.headers.get('Content-Type') || '';
  let data = text;
  if (type.startsWith('application/json')) {
    try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  }
  if (!res.ok) {
    const message = data && data.error ? data.error : `${res.status} ${res.statusText}`;
    const err = new Error(res.status === 401 ? 'A token is needed: open the link the server printed.' : message);
    err.status = res.status;
    throw err;
  }
  return data;
}

// Server-sent events read with fetch, since EventSource cannot send the token's header.
// `on` maps an event's type to its handler (`message` for untyped ones), plus `open`, `error`
// and `refused`. A dropped stream is opened again, resuming from the last id seen, until
// close(); one the server refuses (no token, no such run) is not, as EventSource does.
function subscribe(url, on) {
  const stream = { closed: false, abort: new AbortController() };
  stream.close = () => { stream.closed = true; stream.abort.abort(); };
  let lastId = '';
  let pendingId = null; // an id takes effect with its event's blank line, as EventSource's does
  const dispatch = (type, data) => {
    const handler = on[type || 'message'];
    if (handler) handler({ data, lastEventId: lastId });
  };
  const read = async () => {
    const init = { credentials: 'omit', cache: 'no-store', signal: stream.abort.signal, headers: headers() };
    if (lastId) init.headers['Last-Event-ID'] = lastId;
    const res = await fetch(url, init);
    if (res.status >= 400 && res.status < 500) {
      stream.closed = true;
      if (on.refused) on.refused(res.status);
      return;
    }
    if (!res.ok || !res.body) throw new Error(`${res.status} ${res.statusText}`);
    if (on.open) on.open();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let type = '';
    let data = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end).replace(/\r$/, '');
        buffer = buffer.slice(end + 1);
        if (line === '') {
          if (pendingId !== null) lastId = pendingId;
          pendingId = null;
          if (data.length) dispatch(type, data.join('\n'));
          type = '';
          data = [];
          continue;
        }
        const colon = line.indexOf(':');
        if (colon === 0) continue; // a comment: the server's keep-alive
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') type = text;
        else if (field === 'data') data.push(text);
        else if (field === 'id') pendingId = text;
      }
    }
  };
  (async () => {
    while (!stream.closed) {
      try { await read(); } catch { /* told below, unless closed */ }
      if (stream.closed) return;
      if (on.error) on.error();
      await new Promise((resume) => setTimeout(resume, 2000));
    }
  })();
  return stream;
}

function flash(message, isError = false) {
  const box = $('#flash');
  box.textContent = message || '';
  box.className = isError ? 'error' : '';
  if (message && !isError) setTimeout(() => { if (box.textContent === message) box.textContent = ''; }, 4000);
}

async function act(button, path, body, done, after) {
  button.disabled = true;
  try {
    await api(path, body);
    flash(done);
    if (after) after();
    await refresh();
  } catch (e) {
    flash(e.message, true);
    button.disabled = false;
  }
}

const ticketPath = (id) => `/api/tickets/${encodeURIComponent(id)}`;

function ago(iso) {
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

function clock(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

// --- Cards and columns ---
function turnOf(t) {
  const s = t.standing;
  if (t.awaiting) return { text: t.awaiting, cls: 'human' };
  if (t.run) return { text: 'running', cls: 'running' };
  if (s && ['wip_held', 'blocked', 'manual', 'backing_off'].includes(s.kind)) return { text: s.turn, cls: 'held' };
  if (t.status === 'done') return { text: t.resolution === 'wont_do' ? 'cancelled' : 'completed', cls: t.resolution === 'wont_do' ? 'cancelled' : 'completed' };
  return { text: s ? s.turn : 'agent', cls: '' };
}

function card(t) {
  const turn = turnOf(t);
  const done = t.status === 'done';
  return el('a', {
    class: 'card' + (done ? (t.resolution === 'wont_do' ? ' cancelled' : ' completed') : ''),
    href: `#/ticket/${encodeURIComponent(t.id)}`, 'data-id': t.id, 'data-status': t.status,
    title: t.standing ? t.standing.why : null,
  },
  el('span', { class: `turn ${turn.cls}`, 'data-turn': turn.text }, turn.text),
  el('div', { class: 'id' }, t.id, t.type && t.type !== 'task' ? ` · ${t.type}` : '',
    el('span', { class: `prio p${t.priority}` }, ` P${t.priority}`),
    el('span', { class: 'age', title: `created ${t.created_at}` }, ` · ${ago(t.created_at)}`)),
  el('div', { class: 'title' }, t.title),
  t.escalated_to ? el('div', { class: 'chased escalated' },
    t.escalated_to.length ? `escalated to ${t.escalated_to.join(', ')}` : 'escalated') :
    t.reminders ? el('div', { class: 'chased' }, `reminded ${t.reminders}×`) : null,
  turn.cls === 'held' ? el('div', { class: 'why-line' }, t.standing.why) : null,
  (t.labels || []).length ? el('div', { class: 'labels' }, t.labels.map((l) => el('span', { class: 'label' }, l))) : null);
}

function matches(t) {
  const f = state.filters;
  if (f.text) {
    const q = f.text.toLowerCase();
    if (!t.id.toLowerCase().includes(q) && !t.title.toLowerCase().includes(q)) return false;
  }
  if (f.type && t.type !== f.type) return false;
  if (f.label && !(t.labels || []).includes(f.label)) return false;
  if (f.priority !== '' && String(t.priority) !== f.priority) return false;
  return true;
}

function filterBar(tickets) {
  const labels = [...new Set(tickets.flatMap((t) => t.labels || []))].sort();
  const set = (key) => (ev) => { state.filters[key] = ev.target.value; refresh(); };
  const select = (key, label, options) => el('select', { 'data-key': `filter:${key}`, 'aria-label': label, onchange: set(key) },
    el('option', { value: '' }, label), options.map(([v, text]) => el('option', { value: v, selected: state.filters[key] === v }, text)));
  return el('div', { class: 'filters', role: 'search' },
    el('input', { type: 'search', 'data-key': 'filter:text', placeholder: 'Search id or title', 'aria-label': 'search', value: state.filters.text, oninput: set('text') }),
    select('type', 'any type', TYPES.map((t) => [t, t])),
    select('label', 'any label', labels.map((l) => [l, l])),
    select('priority', 'any priority', [0, 1, 2, 3, 4].map((p) => [String(p), `P${p}`])));
}

function createForm() {
  // Kept open across live re-renders, as a run's output is: a board that changes while a person
  // writes a ticket must not close the form under them.
  return toggle('create', 'New ticket', createFields, 'section create');
}

function createFields() {
  const title = el('input', { type: 'text', 'data-key': 'create:title', placeholder: 'Title', 'aria-label': 'title', required: true });
  const description = el('textarea', { 'data-key': 'create:description', rows: 3, placeholder: 'Description (Markdown)', 'aria-label': 'description' });
  const priority = el('select', { 'aria-label': 'priority', 'data-key': 'create:priority' },
    [0, 1, 2, 3, 4].map((p) => el('option', { value: p, selected: p === 2 }, `P${p}`)));
  const labels = el('input', { type: 'text', 'data-key': 'create:labels', placeholder: 'labels, comma separated', 'aria-label': 'labels' });
  return el('div', { class: 'actions' }, title, priority, labels, description,
      el('button', {
        class: 'primary create-ticket',
        onclick: (ev) => {
          if (!title.value.trim()) { flash('A ticket needs a title.', true); title.focus(); return; }
          const body = { title: title.value.trim(), description: description.value, priority: Number(priority.value),
            labels: labels.value.split(',').map((s) => s.trim()).filter(Boolean) };
          act(ev.target, '/api/tickets', body, 'Created', () => { title.value = ''; description.value = ''; labels.value = ''; });
        },
      }, 'Create'));
}

function columns(tickets) {
  const wrap = el('section', { class: 'columns', 'aria-label': 'columns' });
  for (const status of STATUSES) {
    const mine = tickets.filter((t) => t.status === status);
    wrap.append(el('div', { class: 'column', 'data-column': status },
      el('h3', {}, `${status} (${mine.length})`), mine.map(card)));
  }
  return wrap;
}

// --- What a person is asked, with the controls its kind needs ---
function answerControls(t, q) {
  const path = `/api/questions/${encodeURIComponent(`${t.id}.${q.id}`)}/answer`;
  const form = el('div', { class: 'actions answer-form', 'data-question': q.id });
  const send = (button, value) => act(button, path, { value }, `Answered ${t.id}.${q.id}`);
  if (q.response_type === 'boolean') {
    for (const [label, value] of [['Yes', true], ['No', false]])
      form.append(el('button', { class: 'choice', onclick: (ev) => send(ev.target, value) }, label));
    return form;
  }
  // Choices are buttons: nothing is chosen until a person chooses.
  for (const o of q.options || [])
    form.append(el('button', { class: 'choice', 'data-option': o.id, onclick: (ev) => send(ev.target, o.id) }, o.label));
  if (q.response_type !== 'choice') {
    const input = el('input', { type: 'text', 'data-key': `answer:${t.id}.${q.id}`, placeholder: 'Your answer', 'aria-label': 'answer' });
    form.append(input, el('button', {
      class: 'primary answer',
      onclick: (ev) => {
        if (!input.value.trim()) { flash('An answer is needed.', true); input.focus(); return; }
        send(ev.target, input.value.trim());
      },
    }, 'Answer'));
  }
  return form;
}

/// The verdict buttons per kind (state-machine.md: what approve and reject mean for each).
const VERDICTS = {
  input: { approve: 'Send answer', reject: 'Cannot proceed: close it', needs: 'approve' },
  approval: { approve: 'Approve', reject: 'Reject', needs: 'reject' },
  review: { approve: 'Approve: done', reject: 'Reject', needs: 'reject' },
  content: { approve: 'Approve', reject: 'Reject', needs: 'reject' },
  checkpoint: { approve: 'Continue', reject: 'Redo', needs: 'reject' },
  escalation: { approve: 'Try again with this direction', reject: 'Close it (won\'t do)', needs: 'approve' },
  work: { approve: 'Done: I did it', reject: 'Give back to the agent', needs: 'reject' },
};

function verdictControls(t, request) {
  const kind = request ? request.kind : t.awaiting;
  const v = VERDICTS[kind] || VERDICTS.approval;
  const comments = state.comments.get(t.id) || [];
  const placeholder = kind === 'input' ? 'Your answer (required)'
    : kind === 'escalation' ? 'Direction for the agent (required to try again)'
      : 'Feedback for the agent (required to reject) or a note';
  const text = el('textarea', { class: 'feedback', 'data-key': `feedback:${t.id}`, rows: 2, placeholder, 'aria-label': 'feedback' });
  const needed = (which) => v.needs === which && !text.value.trim() && !(which === 'reject' && comments.length);
  const approve = el('button', {
    class: 'primary approve', 'data-kind': kind, title: 'a',
    onclick: (ev) => {
      if (needed('approve')) { flash(kind === 'input' ? 'The agent needs your answer: write it first.' : 'Say what the agent should do.', true); text.focus(); return; }
      act(ev.target, `${ticketPath(t.id)}/approve`, { note: text.value }, `${v.approve}: ${t.id}`);
    },
  }, v.approve);
  const reject = el('button', {
    class: 'danger reject', title: 'r',
    onclick: (ev) => {
      if (needed('reject')) { flash('Rejecting needs feedback for the agent.', true); text.focus(); return; }
      const body = { feedback: text.value };
      if (comments.length) body.comments = comments;
      act(ev.target, `${ticketPath(t.id)}/reject`, body, `${v.reject}: ${t.id}`, () => state.comments.delete(t.id));
    },
  }, comments.length ? `${v.reject} with ${comments.length} comment${comments.length > 1 ? 's' : ''}` : v.reject);
  return el('div', { class: 'actions verdict' }, text, approve, reject);
}

function requestBox(t, request, compact) {
  const kind = request ? request.kind : t.awaiting;
  const since = request ? request.since : t.updated_at;
  const item = el('article', { class: `inbox-item kind-${kind}`, 'data-id': t.id, 'data-kind': kind },
    el('div', { class: 'meta' },
      el('span', { class: 'kind' }, kind), ` · ${t.id} · ${t.status} · waiting ${ago(since)}`,
      request && request.asked_by ? ` · asked by ${request.asked_by}` : ''),
    compact ? el('a', { href: `#/ticket/${encodeURIComponent(t.id)}` }, el('strong', {}, t.title)) : null);
  if (request && request.words) item.append(el('blockquote', { class: 'words' }, request.words));
  const questions = request ? request.questions : [];
  for (const q of questions) {
    item.append(el('p', { class: 'question' }, el('strong', {}, `${t.id}.${q.id}: `), q.text));
    item.append(answerControls(t, q));
  }
  if (request && request.artifact) {
    const a = request.artifact;
    item.append(el('p', { class: 'muted' }, 'To judge: ',
      el('a', { href: `#/ticket/${encodeURIComponent(t.id)}` }, a.path), ` (${a.status})${a.summary ? ' · ' + a.summary : ''}`));
  }
  if (kind === 'review' && t.branch) item.append(el('p', { class: 'muted' }, 'The change: ', el('a', { href: `#/ticket/${encodeURIComponent(t.id)}/diff` }, `diff of ${t.branch}`)));
  if (!(t.handoff === 'question' && questions.length)) item.append(verdictControls(t, request));
  return item;
}

function setInboxCount(n) {
  const badge = $('#inbox-count');
  badge.textContent = String(n);
  badge.className = n ? 'badge' : 'badge zero';
}

async function loadInbox() {
  state.inbox = await api('/api/inbox');
  setInboxCount(state.inbox.length);
  return state.inbox;
}

async function showBoard(onlyInbox) {
  const [tickets, inbox] = await Promise.all([onlyInbox ? Promise.resolve([]) : api('/api/tickets?all=1'), loadInbox()]);
  const section = el('section', { class: 'inbox', 'aria-label': 'inbox' }, el('h2', {}, `Awaiting you (${inbox.length})`));
  if (!inbox.length) section.append(el('p', { class: 'muted' }, 'Nothing is waiting for a person.'));
  for (const t of inbox) section.append(requestBox(t, t.request, true));
  // What the view shows comes from these two answers alone: the same answers, the same view.
  const signature = JSON.stringify([onlyInbox, tickets, inbox, state.filters]);
  if (onlyInbox) return Object.assign([section], { signature });
  const shown = tickets.filter(matches);
  return Object.assign([section, el('div', { class: 'board-head' }, el('h2', {}, 'Board'), filterBar(tickets)), createForm(), columns(shown)], { signature });
}

// --- Stats: what `board stats` prints, with the time split as bars ---
function duration(ms) {
  const s = Math.floor(ms / 1000), m = Math.floor(s / 60), h = Math.floor(m / 60), d = Math.floor(h / 24);
  if (d) return `${d}d${h % 24}h`;
  if (h) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  if (m) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

function spreadText(x) {
  return x.count ? `p50 ${duration(x.p50_ms)} · p90 ${duration(x.p90_ms)} · max ${duration(x.max_ms)} (${x.count})` : 'none';
}

async function showStats() {
  const since = state.statsSince || '168h';
  const s = await api(`/api/stats?since=${encodeURIComponent(since)}`);
  const pick = el('select', { 'aria-label': 'window' },
    [['24h', 'last day'], ['168h', 'last week'], ['720h', 'last 30 days']].map(([v, label]) =>
      el('option', { value: v, selected: v === since }, label)));
  pick.addEventListener('change', () => { state.statsSince = pick.value; refresh(); });
  const rows = [
    ['throughput', `${s.completed} completed, ${s.cancelled} cancelled, ${s.created} created`],
    ['cycle time', spreadText(s.cycle_time)],
    ['cost', `$${s.cost_usd.toFixed(2)} in all, $${(s.completed ? s.cost_usd / s.completed : 0).toFixed(2)} per completed ticket; ${s.runs} runs, ${s.failed_runs} failed`],
    ['questions', s.questions.asked ? `${s.questions.asked} asked, ${s.questions.answered} answered (${spreadText(s.questions.answer_time)}), ${s.questions.timed_out} timed out` : 'none asked'],
    ...Object.entries(s.responses).map(([kind, x]) => [`answered: ${kind}`, spreadText(x)]),
  ];
  const parts = [
    ...Object.entries(s.agent_ms).map(([phase, ms]) => [`agent: ${phase}`, ms]),
    ...Object.entries(s.human_ms).map(([kind, ms]) => [`a person: ${kind}`, ms]),
    ...(s.queued_ms ? [["queued (agent's turn)", s.queued_ms]] : []),
  ];
  const total = parts.reduce((sum, [, ms]) => sum + ms, 0);
  const chart = el('div', { class: 'chart', 'aria-label': 'where the time went' }, parts.map(([label, ms]) => {
    const fill = el('span', { class: 'bar-fill' });
    fill.style.width = `${(100 * ms / total).toFixed(1)}%`; // CSSOM: the page's CSP allows no inline style
    return el('div', { class: 'bar-row' }, el('span', { class: 'bar-label' }, label),
      el('span', { class: 'bar' }, fill),
      el('span', { class: 'bar-value' }, `${duration(ms)} · ${Math.round(100 * ms / total)}%`));
  }));
  return [el('div', { class: 'board-head' }, el('h2', {}, 'Stats'), pick),
    el('table', { class: 'stats' }, rows.map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, v)))),
    total ? el('h3', {}, "Where the completed tickets' time went") : el('p', { class: 'muted' }, 'No ticket was completed in this window.'),
    total ? chart : null];
}

// --- A ticket: the agent at work, its runs, its diff ---
function stopLive() {
  if (!state.live) return;
  state.live.source.close();
  clearInterval(state.live.timer);
  state.live = null;
}

/// The running agent's output, followed live. The same node is kept across re-renders of
/// the page, so what streamed in is not lost when something else on the ticket changes.
function livePanel(t) {
  const key = `${t.id}:${t.run.id}`;
  if (state.live && state.live.key === key) return state.live.node;
  stopLive();
  const out = el('pre', { class: 'run-output live-output', 'aria-live': 'off' });
  const elapsed = el('span', { class: 'elapsed' }, '0:00');
  const status = el('span', { class: 'run-status' }, 'running');
  const started = Date.parse(t.run.started_at);
  const node = el('div', { class: 'section live-run', 'data-run': t.run.id },
    el('h2', {}, `Agent at work: run ${t.run.id} · ${t.run.phase} · `, elapsed, ' · ', status),
    el('p', { class: 'muted' }, `cost so far on this ticket: $${Number(t.cost_usd || 0).toFixed(2)}`),
    promptDetails(t.id, t.run.id), out);
  const append = (text) => {
    out.append(document.createTextNode(text));
    // A bounded view: the oldest text goes when it grows past a few hundred kilobytes.
    while (out.textContent.length > 400000 && out.firstChild) out.firstChild.remove();
    out.scrollTop = out.scrollHeight;
  };
  const source = subscribe(`${ticketPath(t.id)}/runs/${encodeURIComponent(t.run.id)}/stream`, {
    skipped: (ev) => append(`… (${JSON.parse(ev.data).skipped} earlier bytes: see the full output below)\n`),
    output: (ev) => append(JSON.parse(ev.data).text),
    end: (ev) => {
      const run = JSON.parse(ev.data)[0] || {};
      status.textContent = `${run.end || 'ended'}${run.signal ? ' · ' + run.signal : ''}`;
      clearInterval(state.live && state.live.timer);
      source.close();
    },
  });
  const timer = setInterval(() => { elapsed.textContent = clock(Date.now() - started); }, 1000);
  elapsed.textContent = clock(Date.now() - started);
  state.live = { key, node, source, timer };
  return node;
}

function lazyText(key, url, className) {
  const box = el('pre', { class: className }, 'Loading…');
  api(url).then((text) => { box.textContent = text || '(nothing)'; })
    .catch((e) => { box.textContent = e.message; });
  return box;
}

function toggle(key, label, make, className) {
  const details = el('details', { 'data-open': key, open: state.open.has(key) }, el('summary', {}, label));
  if (className) details.className = className;
  let filled = false;
  const fill = () => { if (!filled && details.open) { filled = true; details.append(make()); } };
  details.addEventListener('toggle', () => {
    if (details.open) state.open.add(key); else state.open.delete(key);
    fill();
  });
  fill();
  return details;
}

function promptDetails(id, run) {
  return toggle(`${id}:${run}:prompt`, 'The prompt it was given',
    () => lazyText(`${id}:${run}:prompt`, `${ticketPath(id)}/runs/${encodeURIComponent(run)}/prompt`, 'run-prompt'));
}

function runsSection(t, runs) {
  if (!runs.length) return null;
  const rows = runs.slice().reverse().map((r) => el('li', { class: 'run', 'data-run': r.run },
    el('div', {}, el('strong', {}, `run ${r.run}`), ` · ${r.phase} · attempt ${r.attempt}`,
      ` · ${r.end ? r.end : 'running'}${r.signal ? ' · ' + r.signal : ''}${r.exit ? ' · exit ' + r.exit : ''}`,
      ` · ${r.duration_ms ? clock(r.duration_ms) : '—'} · $${Number(r.cost_usd || 0).toFixed(2)}`,
      r.error ? el('div', { class: 'error-text' }, r.error) : null),
    promptDetails(t.id, r.run),
    toggle(`${t.id}:${r.run}:output`, 'What it printed',
      () => lazyText(`${t.id}:${r.run}:output`, `${ticketPath(t.id)}/runs/${encodeURIComponent(r.run)}/output`, 'run-output'))));
  return el('div', { class: 'section runs' }, el('h2', {}, `Runs (${runs.length})`), el('ul', { class: 'run-list' }, rows));
}

/// `git diff` as files of lines, each line with its number in the new file (where it has one).
function parseDiff(text) {
  const files = [];
  let file = null;
  let oldLine = 0;
  let newLine = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) {
      const m = / b\/(.*)$/.exec(line);
      file = { path: m ? m[1] : line.slice(11), lines: [], added: 0, removed: 0 };
      files.push(file);
      continue;
    }
    if (!file) continue;
    if (line.startsWith('+++ ')) { if (line !== '+++ /dev/null') file.path = line.slice(4).replace(/^b\//, ''); continue; }
    if (line.startsWith('--- ') || line.startsWith('index ') || line.startsWith('new file') || line.startsWith('deleted file') || line.startsWith('similarity') || line.startsWith('rename ')) continue;
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) { oldLine = Number(hunk[1]); newLine = Number(hunk[2]); file.lines.push({ kind: 'hunk', text: line }); continue; }
    if (line.startsWith('+')) { file.lines.push({ kind: 'add', text: line.slice(1), line: newLine++ }); file.added++; }
    else if (line.startsWith('-')) { file.lines.push({ kind: 'del', text: line.slice(1), old: oldLine++ }); file.removed++; }
    else if (line.startsWith(' ')) { file.lines.push({ kind: 'ctx', text: line.slice(1), line: newLine++, old: oldLine++ }); }
    else if (line.startsWith('\\')) file.lines.push({ kind: 'note', text: line });
  }
  return files;
}

function commentForm(t, file, line, row) {
  const text = el('textarea', { class: 'comment-text', rows: 2, 'aria-label': `comment on ${file}:${line}`, placeholder: `Comment on ${file}:${line}` });
  const form = el('tr', { class: 'comment-form' }, el('td', { colspan: 3 }, text,
    el('div', { class: 'actions' },
      el('button', {
        class: 'primary save-comment',
        onclick: () => {
          if (!text.value.trim()) { flash('The comment is empty.', true); text.focus(); return; }
          const list = state.comments.get(t.id) || [];
          list.push({ file, line, text: text.value.trim() });
          state.comments.set(t.id, list);
          form.remove(); // saved: not a form to keep open across the re-render
          refresh();
        },
      }, 'Add comment'),
      el('button', { onclick: () => form.remove() }, 'Cancel'))));
  row.after(form);
  text.focus();
}

function diffSection(t, text) {
  const files = parseDiff(text);
  const comments = state.comments.get(t.id) || [];
  const section = el('div', { class: 'section diff', id: 'diff' },
    el('h2', {}, `The change: ${t.branch} (${files.length} file${files.length === 1 ? '' : 's'})`));
  if (!files.length) { section.append(el('p', { class: 'muted' }, 'No difference from the base branch.')); return section; }
  section.append(el('ul', { class: 'diff-files' }, files.map((f) => el('li', {}, el('code', {}, f.path), ` `,
    el('span', { class: 'added' }, `+${f.added}`), ' ', el('span', { class: 'removed' }, `−${f.removed}`)))));
  if (comments.length) {
    section.append(el('div', { class: 'pending-comments' },
      el('p', {}, `${comments.length} comment${comments.length > 1 ? 's' : ''} will go with your rejection:`),
      el('ul', {}, comments.map((c, i) => el('li', {}, el('code', {}, `${c.file}:${c.line}`), ` ${c.text} `,
        el('button', { class: 'remove-comment', onclick: () => { comments.splice(i, 1); refresh(); } }, 'remove'))))));
  }
  for (const f of files) {
    const table = el('table', { class: 'diff-table', 'data-file': f.path });
    for (const l of f.lines) {
      if (l.kind === 'hunk' || l.kind === 'note') { table.append(el('tr', { class: `d-${l.kind}` }, el('td', { colspan: 3 }, l.text))); continue; }
      const commentable = l.line !== undefined && t.awaiting === 'review';
      const row = el('tr', { class: `d-${l.kind}`, 'data-line': l.line === undefined ? null : l.line },
        el('td', { class: 'ln' }, l.kind === 'del' ? l.old : l.line),
        el('td', { class: 'add-cell' }, commentable ? el('button', {
          class: 'add-comment', title: `comment on ${f.path}:${l.line}`, 'aria-label': `comment on ${f.path}:${l.line}`,
          onclick: (ev) => commentForm(t, f.path, l.line, ev.target.closest('tr')),
        }, '+') : ''),
        el('td', { class: 'code' }, (l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' ') + l.text));
      table.append(row);
      for (const c of comments.filter((c) => c.file === f.path && c.line === l.line && l.kind !== 'del'))
        table.append(el('tr', { class: 'd-comment' }, el('td', { colspan: 3 }, el('strong', {}, 'you: '), c.text)));
    }
    section.append(el('h3', { class: 'diff-file' }, f.path), el('div', { class: 'diff-scroll' }, table));
  }
  return section;
}

async function loadDiff(t) {
  const key = `${t.id}:${t.seq}`;
  if (!state.diffs.has(key)) state.diffs.set(key, await api(`${ticketPath(t.id)}/diff`));
  return state.diffs.get(key);
}

function fields(t) {
  const rows = [
    ['status', t.status + (t.resolution ? ` (${t.resolution === 'wont_do' ? 'cancelled' : 'completed'})` : '')],
    ['awaiting', t.awaiting ? `${t.awaiting} (${t.handoff})` : '—'],
    ['type', t.type], ['priority', `P${t.priority}`],
    ['labels', (t.labels || []).join(', ') || '—'],
    ['parent', t.parent || '—'], ['blocked by', (t.blocked_by || []).join(', ') || '—'],
    ['runs', `${t.runs_total} ($${Number(t.cost_usd || 0).toFixed(2)})`],
    ['branch', t.branch || '—'],
    ['seq', t.seq],
  ];
  if (t.shipped) rows.push(['shipped', `${t.shipped.how} ${t.shipped.ref || ''}`]);
  return el('dl', { class: 'fields' }, rows.map(([k, v]) => [el('dt', {}, k), el('dd', {}, String(v))]));
}

function describeEvent(e) {
  const extra = e.status || e.verdict || e.text || e.title || e.signal || e.value || e.reason || e.note || '';
  return `${e.type}${extra ? ': ' + String(extra) : ''}`;
}

/// The whole state after a seq, as fields a person compares.
function stateAt(s) {
  const t = s.ticket;
  const artifacts = Object.entries(t.artifacts || {}).map(([k, a]) => `${k} ${a.status}`).join(', ') || '—';
  const questions = (t.questions || []).map((q) => `${q.id} ${q.status}${q.answer ? ' → ' + q.answer : ''}`).join(', ') || '—';
  const rows = [
    ['status', t.status + (t.resolution ? ` (${t.resolution})` : '')],
    ['awaiting', t.awaiting ? `${t.awaiting} (${t.handoff})` : '—'],
    ['run', t.run ? `${t.run.id} (${t.run.phase})` : '—'],
    ['attempts', `${t.phase_attempts} · iterations ${t.phase_iterations}`],
    ['artifacts', artifacts], ['questions', questions],
    ['runs', `${t.runs_total} ($${Number(t.cost_usd || 0).toFixed(2)})`],
    ['notes', (t.notes || []).length],
  ];
  const last = (t.notes || []).slice(-3).map((n) => el('li', {}, `${n.from}${n.author ? ':' + n.author : ''}: ${n.text}`));
  return [el('p', {}, el('strong', {}, `after #${s.seq}`), s.event ? ` (${describeEvent(s.event)})` : ''),
    el('dl', { class: 'fields' }, rows.map(([k, v]) => [el('dt', {}, k), el('dd', {}, String(v))])),
    last.length ? el('ul', { class: 'muted' }, last) : null];
}

function timeline(t, events) {
  const last = events.length ? events[events.length - 1].seq : 0;
  const chosen = state.replay.get(t.id);
  const at = chosen !== undefined && chosen <= last ? chosen : last;
  const stateBox = el('div', { class: 'state' });
  const items = events.map((e) => el('li', { 'data-seq': e.seq, class: e.seq > at ? 'future' : null },
    el('span', { class: 'seq' }, `#${e.seq}`), `${new Date(e.at).toLocaleString()} · ${e.by} · ${describeEvent(e)}`));
  const slider = el('input', { type: 'range', min: 1, max: Math.max(last, 1), value: at, 'aria-label': 'replay to seq' });
  const label = el('span', { class: 'replay-at' }, chosen !== undefined ? `at #${at} of ${last}` : `now (#${last})`);
  let pending = 0;
  const replay = async () => {
    const seq = Number(slider.value);
    // Where the person put it stays put while the ticket changes; at the end it follows.
    if (seq >= last) state.replay.delete(t.id); else state.replay.set(t.id, seq);
    label.textContent = seq >= last ? `now (#${last})` : `at #${seq} of ${last}`;
    items.forEach((li) => li.classList.toggle('future', Number(li.dataset.seq) > seq));
    const mine = ++pending;
    try {
      const s = await api(`${ticketPath(t.id)}/state?seq=${seq}`);
      if (mine === pending) stateBox.replaceChildren(...stateAt(s).filter(Boolean));
    } catch (e) { stateBox.textContent = e.message; }
  };
  slider.addEventListener('input', replay);
  const back = el('button', { class: 'replay-now', onclick: () => { slider.value = String(last); replay(); } }, 'Back to now');
  replay();
  return el('div', { class: 'section replay' }, el('h2', {}, 'Timeline'),
    el('label', {}, 'Replay to seq ', slider), el('div', {}, label, ' ', back), stateBox, el('ol', { class: 'timeline' }, items));
}

function noteAndCancel(t) {
  const note = el('textarea', { class: 'note-text', 'data-key': `note:${t.id}`, rows: 2, placeholder: 'A note on this ticket', 'aria-label': 'note' });
  const reason = el('input', { type: 'text', class: 'cancel-reason', 'data-key': `cancel:${t.id}`, placeholder: 'Why cancel (optional)', 'aria-label': 'cancel reason' });
  return el('div', { class: 'section' }, el('h2', {}, 'Note or cancel'),
    el('div', { class: 'actions' }, note, el('button', {
      class: 'add-note',
      onclick: (ev) => {
        if (!note.value.trim()) { flash('The note is empty.', true); note.focus(); return; }
        act(ev.target, `${ticketPath(t.id)}/note`, { text: note.value }, `Noted on ${t.id}`, () => { note.value = ''; });
      },
    }, 'Add note')),
    t.status === 'done' ? null : el('div', { class: 'actions' }, reason, el('button', {
      class: 'danger cancel-ticket',
      onclick: (ev) => {
        if (!window.confirm(`Cancel ${t.id}? It closes as won't do.`)) return;
        act(ev.target, `${ticketPath(t.id)}/cancel`, { reason: reason.value }, `Cancelled ${t.id}`);
      },
    }, 'Cancel ticket')));
}

async function showTicket(id, focus) {
  const enc = ticketPath(id);
  const [t, events, runs, inbox] = await Promise.all([
    api(`${enc}?html=1`), api(`${enc}/events`), api(`${enc}/runs`), loadInbox(),
  ]);
  const parts = [];
  const resolution = t.resolution === 'wont_do' ? 'cancelled' : t.resolution ? 'completed' : null;
  parts.push(el('div', { class: 'ticket-head' }, el('h2', {}, `${t.id} · ${t.title}`),
    resolution ? el('span', { class: `resolution ${resolution}` }, resolution) : null));
  if (t.standing && t.standing.kind !== 'awaiting') parts.push(el('p', { class: `why why-${t.standing.kind}` }, el('strong', {}, 'Why here: '), t.standing.why));
  const inboxItem = inbox.find((i) => i.id === id);
  if (t.awaiting) {
    parts.push(requestBox(t, inboxItem ? inboxItem.request : null, false));
    parts.push(el('p', { class: 'muted keys' }, 'Keys: a approve · r reject · n next in the inbox'));
  }
  if (t.run) parts.push(livePanel(t));
  else if (state.live && state.live.key.startsWith(`${id}:`)) parts.push(state.live.node); // its end stays readable
  if (t.branch) {
    try { parts.push(diffSection(t, await loadDiff(t))); } catch (e) { parts.push(el('div', { class: 'section diff' }, el('h2', {}, 'The change'), el('p', { class: 'muted' }, e.message))); }
  }
  parts.push(el('div', { class: 'section' }, fields(t), t.description_html ? markdownNode(t.description_html) : null));
  const artifacts = Object.entries(t.artifacts || {});
  if (artifacts.length) {
    const section = el('div', { class: 'section artifacts' }, el('h2', {}, 'Artifacts'));
    for (const [kind, a] of artifacts) {
      section.append(toggle(`${id}:artifact:${kind}`, `${kind} · ${a.status}${a.summary ? ' · ' + a.summary : ''}`, () => {
        const body = el('div', {}, el('p', { class: 'muted' }, 'Loading…'));
        api(`${enc}/artifacts/${encodeURIComponent(a.path)}?html=1`)
          .then((html) => body.replaceChildren(markdownNode(html)))
          .catch((e) => body.replaceChildren(el('p', { class: 'muted' }, `cannot load ${a.path}: ${e.message}`)));
        return body;
      }));
    }
    parts.push(section);
  }
  parts.push(runsSection(t, runs));
  if ((t.notes || []).length) {
    parts.push(el('div', { class: 'section notes' }, el('h2', {}, 'Notes'),
      t.notes.map((n) => el('p', { class: `note from-${n.from}` }, el('span', { class: 'muted' }, `${n.from}${n.author ? ':' + n.author : ''} · ${ago(n.at)} ago · `), n.text))));
  }
  parts.push(noteAndCancel(t));
  parts.push(timeline(t, events));
  if (focus === 'diff') requestAnimationFrame(() => { const d = $('#diff'); if (d) d.scrollIntoView(); });
  // The ticket (its standing included), its log, runs and request; what the person did on
  // the page re-renders by itself, not through the feed.
  const signature = JSON.stringify([id, focus, t, events.length ? events[events.length - 1].seq : 0, runs, inboxItem || null]);
  return Object.assign(parts.filter(Boolean), { signature });
}

// --- Keys: a approve, r reject, n next ---
document.addEventListener('keydown', (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const tag = (ev.target.tagName || '').toLowerCase();
  if (tag === 'input' || tag === 'textarea' || tag === 'select' || ev.target.isContentEditable) return;
  const box = $('#view .inbox-item');
  if (ev.key === 'a' && box) { const b = $('button.approve', box); if (b) { ev.preventDefault(); b.click(); } }
  else if (ev.key === 'r' && box) { const f = $('textarea.feedback', box); if (f) { ev.preventDefault(); f.focus(); } }
  else if (ev.key === 'n') {
    const m = /^#\/ticket\/([^/]+)/.exec(location.hash);
    const current = m ? decodeURIComponent(m[1]) : null;
    const next = state.inbox.find((i) => i.id !== current);
    if (next) { ev.preventDefault(); location.hash = `#/ticket/${encodeURIComponent(next.id)}`; }
  }
});

// --- Routing and live updates ---
let rendering = null;
let again = false;
let forced = false; // a refresh asked by the person, not by the feed: always drawn
let shown = null; // the signature of what the view shows

// `fromFeed`: something changed somewhere on the board. The view is drawn again only when
// what it shows changed, so a person's click or typing is not undone by a change elsewhere.
async function refresh(fromFeed = false) {
  if (!fromFeed) forced = true;
  if (rendering) { again = true; return rendering; }
  rendering = (async () => {
    do {
      again = false;
      const force = forced;
      forced = false;
      const through = state.lastEventId; // what this pass's answers include at least
      const view = $('#view');
      const hash = location.hash || '#/';
      let parts;
      const m = /^#\/ticket\/([^/]+)(?:\/(diff))?$/.exec(hash);
      if (!m || !state.live || !state.live.key.startsWith(`${decodeURIComponent(m[1])}:`)) stopLive();
      try {
        parts = m ? await showTicket(decodeURIComponent(m[1]), m[2])
          : hash === '#/stats' ? await showStats() : await showBoard(hash === '#/inbox');
      } catch (e) {
        parts = [el('p', { class: 'muted' }, e.message)];
        if (e.status === 401) flash(e.message, true);
      }
      document.body.dataset.settled = through || ''; // for tests: the view is up to date
      if (!force && parts.signature !== undefined && parts.signature === shown) continue;
      shown = parts.signature;
      // Keep what a person is typing across a live re-render: read only now, after the
      // fetch, so that what was typed while it was under way is kept too.
      const typed = {};
      view.querySelectorAll('[data-key]').forEach((n) => { if (n.value) typed[n.dataset.key] = n.value; });
      const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
      const scroll = window.scrollY;
      const openForms = [...view.querySelectorAll('tr.comment-form')].map((f) => ({ at: f.previousElementSibling, form: f }));
      view.replaceChildren(...parts);
      view.querySelectorAll('[data-key]').forEach((n) => {
        if (typed[n.dataset.key] !== undefined) n.value = typed[n.dataset.key];
        if (focused && n.dataset.key === focused) n.focus();
      });
      // A comment being written on the diff stays open where it was.
      for (const { at, form } of openForms) {
        if (!at) continue;
        const table = at.closest('table');
        const again2 = table && view.querySelector(`table.diff-table[data-file="${CSS.escape(table.dataset.file)}"] tr[data-line="${at.dataset.line}"]`);
        if (again2) again2.after(form);
      }
      window.scrollTo(0, scroll);
    } while (again);
  })();
  try { await rendering; } finally { rendering = null; }
}

let timer = null;
function soon() {
  clearTimeout(timer);
  timer = setTimeout(() => refresh(true), 150);
}

function connect() {
  const live = $('#live');
  const on = () => { live.textContent = 'live'; live.className = 'live on'; };
  subscribe('/api/events', {
    open: on,
    hello: on,
    error: () => { live.textContent = 'reconnecting'; live.className = 'live off'; },
    refused: (status) => {
      live.textContent = status === 401 ? 'not live: open the link the server printed' : `not live (${status})`;
      live.className = 'live off';
    },
    reset: () => soon(),
    message: (ev) => {
      state.lastEventId = ev.lastEventId;
      document.body.dataset.lastEvent = ev.lastEventId;
      soon();
    },
  });
}

document.addEventListener('DOMContentLoaded', () => {
  const who = $('#as-name');
  who.value = state.as;
  who.addEventListener('change', () => {
    state.as = who.value.trim();
    localStorage.setItem('board.as', state.as);
  });
  window.addEventListener('hashchange', () => { window.scrollTo(0, 0); refresh(); });
  connect();
  refresh();
});
