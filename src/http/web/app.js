// The board's page: columns, the inbox of everything awaiting a person, a ticket with its
// artifacts and a replayable timeline. Plain DOM, no build step; every piece of text from the
// board goes in through textContent or escape(), never as markup.
'use strict';

const STATUSES = ['backlog', 'research', 'ready', 'planning', 'implementing', 'review', 'done'];
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

function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({
    '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
  }[c]));
}

// --- Markdown: a small, safe subset. The text is escaped first; only our tags are added. ---
function inline(text) {
  let out = escape(text);
  out = out.replace(/`([^`]+)`/g, '<code>$1</code>');
  out = out.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
  out = out.replace(/(^|[^*])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>');
  out = out.replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g,
    '<a href="$2" rel="noopener noreferrer" target="_blank">$1</a>');
  return out;
}

function renderMarkdown(source) {
  let text = source.replace(/\r\n?/g, '\n');
  // Front matter is shown by the page as fields, not as text.
  const fm = /^---\n[\s\S]*?\n(---|\.\.\.)\n/.exec(text);
  if (fm) text = text.slice(fm[0].length);
  const lines = text.split('\n');
  const html = [];
  let para = [];
  let list = null;
  const flushPara = () => { if (para.length) { html.push('<p>' + inline(para.join(' ')) + '</p>'); para = []; } };
  const flushList = () => { if (list) { html.push(`</${list}>`); list = null; } };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^```/.test(line)) {
      flushPara(); flushList();
      const code = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) code.push(lines[i]);
      html.push('<pre><code>' + escape(code.join('\n')) + '</code></pre>');
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flushPara(); flushList();
      const level = Math.min(heading[1].length + 2, 6);
      html.push(`<h${level}>${inline(heading[2])}</h${level}>`);
      continue;
    }
    const item = /^\s*([-*]|\d+\.)\s+(.*)$/.exec(line);
    if (item) {
      flushPara();
      const kind = /\d/.test(item[1]) ? 'ol' : 'ul';
      if (list !== kind) { flushList(); html.push(`<${kind}>`); list = kind; }
      html.push('<li>' + inline(item[2]) + '</li>');
      continue;
    }
    if (/^\s*$/.test(line)) { flushPara(); flushList(); continue; }
    if (/^>\s?/.test(line)) { flushPara(); flushList(); html.push('<blockquote>' + inline(line.replace(/^>\s?/, '')) + '</blockquote>'); continue; }
    flushList();
    para.push(line);
  }
  flushPara(); flushList();
  const div = el('div', { class: 'markdown' });
  div.innerHTML = html.join('\n');
  return div;
}

// --- The API ---
const state = { as: localStorage.getItem('board.as') || '', lastEventId: null };

async function api(path, body) {
  const init = { credentials: 'same-origin', headers: {} };
  if (state.as) init.headers['X-Board-As'] = state.as;
  if (body !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = 'application/json';
    init.headers['X-Board-Request'] = '1';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!res.ok) {
    const message = data && data.error ? data.error : `${res.status} ${res.statusText}`;
    const err = new Error(res.status === 401 ? 'A token is needed: open the link the server printed.' : message);
    err.status = res.status;
    throw err;
  }
  return data;
}

function flash(message, isError = false) {
  const box = $('#flash');
  box.textContent = message || '';
  box.className = isError ? 'error' : '';
  if (message && !isError) setTimeout(() => { if (box.textContent === message) box.textContent = ''; }, 4000);
}

async function act(button, path, body, done) {
  button.disabled = true;
  try {
    await api(path, body);
    flash(done);
    await refresh();
  } catch (e) {
    flash(e.message, true);
    button.disabled = false;
  }
}

function turnLabel(t) {
  if (t.awaiting) return { text: t.awaiting, human: true };
  if (t.run) return { text: 'running', human: false };
  if (t.blocked) return { text: 'blocked', human: false };
  return { text: t.status === 'done' ? '' : 'agent', human: false };
}

// --- Views ---
function card(t) {
  const turn = turnLabel(t);
  return el('a', { class: 'card', href: `#/ticket/${encodeURIComponent(t.id)}`, 'data-id': t.id, 'data-status': t.status },
    turn.text ? el('span', { class: 'turn' + (turn.human ? ' human' : '') }, turn.text) : null,
    el('div', { class: 'id' }, t.id, t.type && t.type !== 'task' ? ` · ${t.type}` : ''),
    el('div', { class: 'title' }, t.title));
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

function answerForm(q) {
  const key = `answer:${q.id}`;
  const form = el('div', { class: 'actions', 'data-question': q.id });
  let input;
  if (q.response_type === 'boolean') {
    for (const [label, value] of [['Yes', true], ['No', false]]) {
      form.append(el('button', {
        class: value ? 'primary answer' : 'answer',
        onclick: (ev) => act(ev.target, `/api/questions/${encodeURIComponent(q.id)}/answer`, { value }, `Answered ${q.id}`),
      }, label));
    }
    return form;
  }
  if (q.response_type === 'choice') {
    input = el('select', { 'data-key': key, 'aria-label': 'choice' },
      (q.options || []).map((o) => el('option', { value: o.id }, o.label || o.value || o.id)));
  } else {
    input = el('input', { type: 'text', 'data-key': key, placeholder: 'Your answer', 'aria-label': 'answer' });
  }
  form.append(input, el('button', {
    class: 'primary answer',
    onclick: (ev) => {
      const value = input.value.trim();
      if (!value) { flash('An answer is needed.', true); return; }
      act(ev.target, `/api/questions/${encodeURIComponent(q.id)}/answer`, { value }, `Answered ${q.id}`);
    },
  }, 'Answer'));
  return form;
}

function inboxItem(t, questions) {
  const mine = questions.filter((q) => q.ticket === t.id);
  const feedbackKey = `feedback:${t.id}`;
  const feedback = el('textarea', { class: 'feedback', 'data-key': feedbackKey, rows: 2, placeholder: 'Feedback (required to reject) or a note', 'aria-label': 'feedback' });
  const item = el('article', { class: 'inbox-item', 'data-id': t.id },
    el('div', { class: 'meta' }, `${t.id} · ${t.status} · awaiting ${t.awaiting}`,
      t.handoff ? ` (${t.handoff})` : ''),
    el('a', { href: `#/ticket/${encodeURIComponent(t.id)}` }, el('strong', {}, t.title)));
  for (const q of mine) {
    item.append(el('p', {}, el('strong', {}, `${q.id}: `), q.question || q.text || ''));
    if (q.context) item.append(el('p', { class: 'muted' }, q.context));
    item.append(answerForm(q));
  }
  if (t.handoff !== 'question' || mine.length === 0) {
    item.append(el('div', { class: 'actions' }, feedback,
      el('button', {
        class: 'primary approve',
        onclick: (ev) => act(ev.target, `/api/tickets/${encodeURIComponent(t.id)}/approve`, { note: feedback.value }, `Approved ${t.id}`),
      }, 'Approve'),
      el('button', {
        class: 'danger reject',
        onclick: (ev) => {
          if (!feedback.value.trim()) { flash('Rejecting needs feedback for the agent.', true); feedback.focus(); return; }
          act(ev.target, `/api/tickets/${encodeURIComponent(t.id)}/reject`, { feedback: feedback.value }, `Rejected ${t.id}`);
        },
      }, 'Reject')));
  }
  return item;
}

function inboxSection(inbox, questions) {
  const section = el('section', { class: 'inbox', 'aria-label': 'inbox' },
    el('h2', {}, `Awaiting you (${inbox.length})`));
  if (!inbox.length) section.append(el('p', { class: 'muted' }, 'Nothing is waiting for a person.'));
  for (const t of inbox) section.append(inboxItem(t, questions));
  return section;
}

function setInboxCount(n) {
  const badge = $('#inbox-count');
  badge.textContent = String(n);
  badge.className = n ? 'badge' : 'badge zero';
}

async function showBoard(onlyInbox) {
  const [tickets, inbox, questions] = await Promise.all([
    onlyInbox ? Promise.resolve([]) : api('/api/tickets?all=1'),
    api('/api/inbox'),
    api('/api/questions?pending=1'),
  ]);
  setInboxCount(inbox.length);
  const parts = [inboxSection(inbox, questions)];
  if (!onlyInbox) parts.push(el('h2', {}, 'Board'), columns(tickets));
  return parts;
}

function describeEvent(e) {
  const extra = e.status || e.verdict || e.text || e.title || e.signal || e.value || e.reason || e.note || '';
  return `${e.type}${extra ? ': ' + String(extra).slice(0, 140) : ''}`;
}

function fields(t) {
  const rows = [
    ['status', t.status + (t.resolution ? ` (${t.resolution})` : '')],
    ['awaiting', t.awaiting ? `${t.awaiting} (${t.handoff})` : '—'],
    ['type', t.type], ['priority', t.priority],
    ['labels', (t.labels || []).join(', ') || '—'],
    ['parent', t.parent || '—'], ['blocked by', (t.blocked_by || []).join(', ') || '—'],
    ['runs', `${t.runs_total} ($${Number(t.cost_usd || 0).toFixed(2)})`],
    ['seq', t.seq],
  ];
  return el('dl', { class: 'fields' }, rows.map(([k, v]) => [el('dt', {}, k), el('dd', {}, String(v))]));
}

async function showTicket(id) {
  const enc = encodeURIComponent(id);
  const [t, events, questions] = await Promise.all([
    api(`/api/tickets/${enc}`), api(`/api/tickets/${enc}/events`), api('/api/questions?pending=1'),
  ]);
  const parts = [];
  parts.push(el('div', { class: 'ticket-head' }, el('h2', {}, `${t.id} · ${t.title}`)));
  parts.push(el('div', { class: 'section' }, fields(t),
    t.description ? renderMarkdown(t.description) : null));
  if (t.awaiting) {
    const summary = { ...t, blocked: false };
    parts.push(inboxItem(summary, questions));
  }
  // Artifacts, rendered.
  const artifacts = Object.entries(t.artifacts || {});
  if (artifacts.length) {
    const section = el('div', { class: 'section' }, el('h2', {}, 'Artifacts'));
    for (const [kind, a] of artifacts) {
      const body = el('div', {}, el('p', { class: 'muted' }, 'Loading…'));
      section.append(el('details', { open: true }, el('summary', {}, `${kind} · ${a.status}${a.summary ? ' · ' + a.summary : ''}`), body));
      fetch(`/api/tickets/${enc}/artifacts/${encodeURIComponent(a.path)}`, { credentials: 'same-origin' })
        .then((r) => (r.ok ? r.text() : Promise.reject(new Error(`${r.status}`))))
        .then((text) => body.replaceChildren(renderMarkdown(text)))
        .catch((e) => body.replaceChildren(el('p', { class: 'muted' }, `cannot load ${a.path}: ${e.message}`)));
    }
    parts.push(section);
  }
  if ((t.notes || []).length) {
    parts.push(el('div', { class: 'section' }, el('h2', {}, 'Notes'),
      t.notes.map((n) => el('p', {}, el('span', { class: 'muted' }, `${n.from}${n.author ? ':' + n.author : ''} · `), n.text))));
  }
  // Timeline with a replay slider: the state after any seq, folded by the server.
  const last = events.length ? events[events.length - 1].seq : 0;
  const stateBox = el('div', { class: 'state' });
  const items = events.map((e) => el('li', { 'data-seq': e.seq },
    el('span', { class: 'seq' }, `#${e.seq}`), `${new Date(e.at).toLocaleString()} · ${e.by} · ${describeEvent(e)}`));
  const slider = el('input', { type: 'range', min: 1, max: Math.max(last, 1), value: last, 'aria-label': 'replay to seq' });
  let pending = 0;
  const replay = async () => {
    const seq = Number(slider.value);
    items.forEach((li) => li.classList.toggle('future', Number(li.dataset.seq) > seq));
    const mine = ++pending;
    try {
      const s = await api(`/api/tickets/${enc}/state?seq=${seq}`);
      if (mine !== pending) return;
      stateBox.replaceChildren(el('p', {}, el('strong', {}, `after #${s.seq}: `),
        `${s.ticket.status}${s.ticket.awaiting ? ', awaiting ' + s.ticket.awaiting : ''}, ${s.ticket.notes.length} notes, ${s.ticket.runs_total} runs`));
    } catch (e) { stateBox.textContent = e.message; }
  };
  slider.addEventListener('input', replay);
  parts.push(el('div', { class: 'section replay' }, el('h2', {}, 'Timeline'),
    el('label', {}, 'Replay to seq ', slider), stateBox, el('ol', { class: 'timeline' }, items)));
  replay();
  return parts;
}

// --- Routing and live updates ---
let rendering = null;
let again = false;

async function refresh() {
  if (rendering) { again = true; return rendering; }
  rendering = (async () => {
    do {
      again = false;
      const view = $('#view');
      const hash = location.hash || '#/';
      let parts;
      try {
        const m = /^#\/ticket\/(.+)$/.exec(hash);
        parts = m ? await showTicket(decodeURIComponent(m[1])) : await showBoard(hash === '#/inbox');
      } catch (e) {
        parts = [el('p', { class: 'muted' }, e.message)];
        if (e.status === 401) flash(e.message, true);
      }
      // Keep what a person is typing across a live re-render: read only now, after the
      // fetch, so that what was typed while it was under way is kept too.
      const typed = {};
      view.querySelectorAll('[data-key]').forEach((n) => { if (n.value) typed[n.dataset.key] = n.value; });
      const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
      view.replaceChildren(...parts);
      view.querySelectorAll('[data-key]').forEach((n) => {
        if (typed[n.dataset.key] !== undefined) n.value = typed[n.dataset.key];
        if (focused && n.dataset.key === focused) n.focus();
      });
    } while (again);
  })();
  try { await rendering; } finally { rendering = null; }
}

let timer = null;
function soon() {
  clearTimeout(timer);
  timer = setTimeout(refresh, 150);
}

function connect() {
  const live = $('#live');
  const source = new EventSource('/api/events');
  source.addEventListener('open', () => { live.textContent = 'live'; live.className = 'live on'; });
  source.addEventListener('error', () => { live.textContent = 'reconnecting'; live.className = 'live off'; });
  source.addEventListener('hello', () => { live.textContent = 'live'; live.className = 'live on'; });
  source.addEventListener('reset', () => soon());
  source.addEventListener('message', (ev) => {
    state.lastEventId = ev.lastEventId;
    document.body.dataset.lastEvent = ev.lastEventId;
    soon();
  });
}

document.addEventListener('DOMContentLoaded', () => {
  const who = $('#as-name');
  who.value = state.as;
  who.addEventListener('change', () => {
    state.as = who.value.trim();
    localStorage.setItem('board.as', state.as);
  });
  window.addEventListener('hashchange', refresh);
  connect();
  refresh();
});
