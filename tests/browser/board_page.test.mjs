// The board's page in Debian's headless Chromium, driven by playwright-core (no browser
// download: executablePath is the system chromium), against board-daemon --http working a
// board in a real git repository with the fake agent. Once on a desktop screen (1280×900) and
// once on a phone's (390×844), a person through the page:
//   - answers an agent's input request (the page refuses an empty answer first),
//   - picks a choice of an agent's question (no choice is preselected),
//   - approves a plan from the inbox,
//   - watches a running agent's output appear live, then sees the run end,
//   - sees a ticket held by the planning WIP limit labelled as such,
//   - reads the board's stats (figures and a bar per place the time went),
//   - rejects a review with two comments on lines of the diff, and the next implementing
//     prompt holds both as file:line,
//   - approves the second review by keyboard (r: the feedback box, a: approve): it is done.
// Also: the Inbox badge on a direct load of a ticket's page, a replay slider that stays where
// it was put, create, note and cancel from the page. Screenshots go to $BOARD_SCREENSHOT_DIR.
//
// Environment: BOARD_BIN, BOARD_DAEMON, BOARD_FAKE_AGENT (the built programs),
// BOARD_SCREENSHOT_DIR (default: the current folder), CHROMIUM (default /usr/bin/chromium).

import { chromium } from 'playwright-core';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';

const boardBin = process.env.BOARD_BIN;
const daemonBin = process.env.BOARD_DAEMON;
const fakeAgent = process.env.BOARD_FAKE_AGENT;
const shots = process.env.BOARD_SCREENSHOT_DIR || process.cwd();
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!boardBin || !daemonBin || !fakeAgent) {
  console.error('set BOARD_BIN, BOARD_DAEMON and BOARD_FAKE_AGENT to the built programs');
  process.exit(2);
}

const started = Date.now();
const step = (what) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${what}`);

/// Waits until `check()` returns something truthy, re-checking whenever asked, at most `ms`.
async function until(what, check, ms = 30000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = check();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function scenario(name, viewport, bind) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `board-browser-${name}-`));
  const root = path.join(tmp, 'board');
  const profile = path.join(tmp, 'profile');
  const env = { ...process.env, USER: 'setup', GIT_AUTHOR_NAME: 'ana', GIT_AUTHOR_EMAIL: 'ana@example.test', GIT_COMMITTER_NAME: 'ana', GIT_COMMITTER_EMAIL: 'ana@example.test' };
  const board = (...args) => execFileSync(boardBin, [...args, '--board', root], { encoding: 'utf8', env });
  const git = (...args) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', env });
  const show = (id) => JSON.parse(board('show', id, '--json'));
  const log = (id) => board('log', id, '--json').trim().split('\n').map((l) => JSON.parse(l));
  const script = (id, phase, text) => {
    const dir = path.join(root, 'tickets', id, 'fake-agent');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, phase), text);
  };
  const shot = async (page, what) => {
    fs.mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, `${name}-${what}.png`), fullPage: true });
  };
  let daemon;
  let browser;
  let daemonOutput = '';
  try {
    fs.mkdirSync(path.join(root, 'tickets'), { recursive: true });
    fs.writeFileSync(path.join(root, 'board.yaml'), [
      'prefix: T',
      'auto: { research: true, planning: true }',
      'gates: { research: none, planning: approval }',
      'wip: { research: 0, planning: 1, implementing: 0 }',
      'budget: { max_iterations: 6, max_attempts: 6, retry_backoff: 100ms, retry_backoff_max: 200ms }',
      'daemon: { max_parallel: 4, poll: 1s, debounce: 0s, grace: 300ms }',
      'agents:',
      `  default: { command: [${fakeAgent}], timeout: 120s, sandbox: none, dialect: generic }`,
      '  implementing: { worktree: true }',
      'ship: { policy: none }',
      '',
    ].join('\n'));
    fs.writeFileSync(path.join(root, 'feature.txt'), 'base\n');
    fs.writeFileSync(path.join(root, '.gitignore'), '.board/\ntickets/\n');
    git('init', '-q', '-b', 'main');
    git('add', 'board.yaml', 'feature.txt', '.gitignore');
    git('commit', '-q', '-m', 'init');

    const create = (title) => JSON.parse(board('create', title, '--json')).id;
    const feature = create('Add the feature');
    const asks = create('Which port');
    const chooses = create('Which database');
    const live = create('Read the code slowly');
    script(asks, 'research', 'signal="INPUT_NEEDED: Which port should the server listen on?"\nsignal=COMPLETE\n');
    script(chooses, 'research',
      `signal=COMPLETE question='{"id":"q1","question":"Which database?","type":"blocking","responseType":"choice","options":[{"id":"pg","label":"PostgreSQL"},{"id":"sqlite","label":"SQLite"}]}'\nsignal=COMPLETE\n`);
    script(live, 'research', 'stdout="step one: reading the code" wait=release stdout="step two: done reading" signal=COMPLETE\n');
    script(feature, 'implementing', 'commit=feature.txt signal=COMPLETE\ncommit=feature.txt signal=COMPLETE\n');
    step(`${name}: board ${root}: ${[feature, asks, chooses, live].join(', ')}`);

    daemon = spawn(daemonBin, ['--board', root, '--http', bind, '--log-format', 'text'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    daemon.stdout.on('data', (d) => { daemonOutput += d; });
    daemon.stderr.on('data', (d) => { daemonOutput += d; });
    const port = await until('the daemon to print its page', () => {
      const m = /the board's page: http:\/\/[^/\s]+:(\d+)\//.exec(daemonOutput);
      return m && m[1];
    });
    const token = fs.readFileSync(path.join(root, '.board', 'http-token'), 'utf8').trim();
    const base = `http://127.0.0.1:${port}/`;
    step(`${name}: daemon serving ${base}`);

    browser = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath, headless: true, viewport,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const page = browser.pages()[0] || (await browser.newPage());
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('dialog', (d) => d.accept());
    page.setDefaultTimeout(30000);
    await page.goto(`${base}?token=${token}`);
    // The token leaves the address bar and lives in this origin's storage, never in a cookie
    // (a browser sends cookies to every port of the host, an agent's own server included).
    await page.waitForFunction(() => !location.search);
    assert.equal(await page.evaluate(() => localStorage.getItem('board.token')), token);
    assert.deepEqual(await browser.cookies(), []);
    await page.fill('#as-name', 'tester');
    await page.locator('#as-name').dispatchEvent('change');
    await page.waitForSelector('#live.on');

    // --- The live run: its output appears while the agent works, then the run ends. ---
    await page.goto(`${base}#/ticket/${live}`);
    const output = page.locator('.live-run .live-output');
    await output.filter({ hasText: 'step one: reading the code' }).waitFor();
    assert.equal(await output.textContent().then((t) => t.includes('step two')), false);
    await shot(page, 'live-run');
    fs.writeFileSync(path.join(root, 'tickets', live, 'fake-agent', 'release'), '');
    await output.filter({ hasText: 'step two: done reading' }).waitFor();
    await page.locator('.live-run .run-status', { hasText: 'finished' }).waitFor();
    step(`${name}: ${live}'s output streamed live, and its end`);

    // --- The inbox: what each ticket asks, with its own controls. ---
    await until(`${feature} awaiting plan approval`, () => show(feature).awaiting === 'approval');
    await until(`${asks} awaiting input`, () => show(asks).awaiting === 'input');
    await until(`${chooses} asking`, () => (show(chooses).questions || []).some((q) => q.status === 'pending'));
    await page.goto(`${base}#/inbox`);
    const inputItem = page.locator(`.inbox-item[data-id="${asks}"]`);
    await inputItem.locator('.words', { hasText: 'Which port should the server listen on?' }).waitFor();
    assert.equal(await inputItem.locator('button.approve').textContent(), 'Send answer');
    const choiceItem = page.locator(`.inbox-item[data-id="${chooses}"]`);
    await choiceItem.locator('button.choice', { hasText: 'PostgreSQL' }).waitFor();
    assert.equal(await choiceItem.locator('select').count(), 0, 'no preselected choice');
    await shot(page, 'inbox');

    // An empty answer is refused by the page, saying an answer is needed.
    await inputItem.locator('button.approve').click();
    await page.locator('#flash.error', { hasText: 'needs your answer' }).waitFor();
    await inputItem.locator('textarea.feedback').fill('Port 8080');
    await inputItem.locator('button.approve').click();
    await inputItem.waitFor({ state: 'detached' });
    let last = log(asks).filter((e) => e.type === 'verdict').pop();
    assert.equal(last.verdict, 'approved');
    assert.equal(last.note, 'Port 8080');
    assert.equal(last.by, 'human:tester');
    step(`${name}: answered ${asks}'s input request`);

    await choiceItem.locator('button.choice', { hasText: 'SQLite' }).click();
    await choiceItem.waitFor({ state: 'detached' });
    const answered = show(chooses).questions.find((q) => q.id === 'q1');
    assert.equal(answered.status, 'answered');
    assert.match(answered.answer, /^sqlite$/i); // the option's value
    step(`${name}: picked a choice for ${chooses}.q1`);

    // --- A ticket held by the planning WIP limit is labelled as such. ---
    // The plan awaiting approval holds planning's one slot; the answered tickets finish
    // research and wait for it.
    await page.goto(`${base}#/`);
    const held = page.locator(`.card[data-id="${asks}"] .turn.held`);
    await held.filter({ hasText: 'wip 1/1' }).waitFor();
    await page.locator(`.card[data-id="${asks}"] .why-line`, { hasText: 'waits for room in planning' }).waitFor();
    await shot(page, 'board-wip-held');
    step(`${name}: ${asks} shows as held by the WIP limit`);

    // --- Approve the plan from the inbox. ---
    const planItem = page.locator(`.inbox-item[data-id="${feature}"]`);
    await planItem.locator('button.approve').click();
    await planItem.waitFor({ state: 'detached' });
    assert.equal(log(feature).filter((e) => e.type === 'verdict').pop().verdict, 'approved');
    step(`${name}: approved ${feature}'s plan`);

    // --- The review: two comments on lines of the diff, then reject. ---
    await until(`${feature} awaiting review`, () => show(feature).awaiting === 'review', 60000);
    await page.goto(`${base}#/ticket/${feature}`);
    const diff = page.locator('.diff-table[data-file="feature.txt"]');
    await diff.waitFor();
    for (const [line, text] of [[1, 'keep the base line as it was'], [2, 'name the run in full']]) {
      await diff.locator(`tr[data-line="${line}"] button.add-comment`).click();
      await diff.locator('tr.comment-form textarea').fill(text);
      await diff.locator('tr.comment-form button.save-comment').click();
      await page.locator('.pending-comments li', { hasText: text }).waitFor();
    }
    const reject = page.locator('.inbox-item button.reject');
    assert.equal(await reject.textContent(), 'Reject with 2 comments');
    await page.locator('.inbox-item textarea.feedback').fill('Two small things.');
    await shot(page, 'review-diff-comments');
    await reject.click();
    await until(`${feature} back in implementing`, () => log(feature).some((e) => e.type === 'verdict' && e.verdict === 'rejected'));
    const prompt2 = path.join(root, 'tickets', feature, 'fake-agent', 'prompt-implementing-2.md');
    await until('the second implementing run', () => fs.existsSync(prompt2), 60000);
    const promptText = fs.readFileSync(prompt2, 'utf8');
    assert.ok(promptText.includes('Two small things.'), 'the feedback is in the next prompt');
    assert.ok(promptText.includes('feature.txt:1: keep the base line as it was'), 'comment 1 with file:line');
    assert.ok(promptText.includes('feature.txt:2: name the run in full'), 'comment 2 with file:line');
    step(`${name}: rejected ${feature} with two diff comments; the next implementing prompt has both`);

    // --- The second review is approved: done. ---
    await until(`${feature} awaiting review again`, () => {
      const t = show(feature);
      return t.awaiting === 'review' && t.runs_total >= 6;
    }, 60000);
    // A direct load of a ticket's page counts the inbox too.
    await page.goto('about:blank');
    await page.goto(`${base}#/ticket/${feature}`);
    await page.locator('#inbox-count:not(.zero)').waitFor();
    assert.ok(Number(await page.locator('#inbox-count').textContent()) >= 1);
    // By keyboard: r goes to the feedback box, a approves.
    await page.locator('.inbox-item button.approve', { hasText: 'Approve: done' }).waitFor();
    await page.locator('h2').first().click();
    await page.keyboard.press('r');
    assert.equal(await page.evaluate(() => document.activeElement.classList.contains('feedback')), true);
    await page.locator('h2').first().click();
    await page.keyboard.press('a');
    await until(`${feature} done`, () => show(feature).status === 'done');
    await page.locator('.resolution.completed').waitFor();
    step(`${name}: approved ${feature}'s review: done`);

    // --- The replay slider stays where it was put while the ticket changes. ---
    const slider = page.locator('.replay input[type=range]');
    await slider.fill('2');
    await page.locator('.replay .state', { hasText: 'after #2' }).waitFor();
    board('note', feature, 'a note from the CLI', '--from', 'human');
    await page.locator('.notes', { hasText: 'a note from the CLI' }).waitFor();
    assert.equal(await slider.inputValue(), '2');
    await page.locator('.replay .state', { hasText: 'after #2' }).waitFor();
    step(`${name}: the replay slider stayed at #2 through a live change`);

    // --- A change elsewhere on the board leaves this page as it is (a click or a comment
    // being written is not undone); a change of this ticket draws it again. ---
    const head = '#view .ticket-head';
    await page.evaluate((sel) => { document.querySelector(sel).dataset.mark = 'kept'; }, head);
    const heard = await page.evaluate(() => document.body.dataset.lastEvent);
    board('note', asks, 'a note elsewhere', '--from', 'human');
    await page.waitForFunction((before) => document.body.dataset.lastEvent !== before &&
      document.body.dataset.settled === document.body.dataset.lastEvent, heard);
    assert.equal(await page.evaluate((sel) => document.querySelector(sel).dataset.mark, head), 'kept');
    board('note', feature, 'another note from the CLI', '--from', 'human');
    await page.locator('.notes', { hasText: 'another note from the CLI' }).waitFor();
    assert.equal(await page.evaluate((sel) => document.querySelector(sel).dataset.mark, head), undefined);
    step(`${name}: a change to ${asks} left ${feature}'s page as it was; its own change redrew it`);

    // --- Create, note and cancel from the page. ---
    await page.goto(`${base}#/`);
    await page.locator('details.create summary').click();
    await page.fill('[data-key="create:title"]', 'Made on the page');
    await page.locator('button.create-ticket').click();
    const made = await until('the new ticket', () => JSON.parse(board('list', '--json')).find((t) => t.title === 'Made on the page'));
    await page.goto(`${base}#/ticket/${made.id}`);
    await page.fill('textarea.note-text', 'noted on the page');
    await page.locator('button.add-note').click();
    await page.locator('.notes', { hasText: 'noted on the page' }).waitFor();
    await page.fill('input.cancel-reason', 'not needed');
    await page.locator('button.cancel-ticket').click();
    await page.locator('.resolution.cancelled').waitFor();
    assert.equal(show(made.id).resolution, 'wont_do');
    await page.goto(`${base}#/`);
    await page.locator(`.card.cancelled[data-id="${made.id}"]`).waitFor();
    await page.locator(`.card.completed[data-id="${feature}"]`).waitFor();
    await shot(page, 'board');
    step(`${name}: created, noted and cancelled ${made.id} from the page`);

    // --- Stats: the figures `board stats` prints, and where the done ticket's time went. ---
    await page.goto(`${base}#/stats`);
    await page.locator('table.stats', { hasText: '1 completed, 1 cancelled' }).waitFor();
    const bars = page.locator('.chart .bar-row');
    await bars.first().waitFor();
    assert.equal(await page.locator('.chart .bar-row', { hasText: 'a person: approval' }).count(), 1);
    const width = await page.locator('.chart .bar-fill').first().evaluate((n) => n.getBoundingClientRect().width);
    assert.ok(width > 0, 'the bars are drawn');
    await shot(page, 'stats');
    step(`${name}: stats shows the completed ticket and where its time went`);
    assert.deepEqual(errors, [], 'no script errors on the page');
  } catch (e) {
    console.error(`--- daemon output (${name}) ---\n${daemonOutput.slice(-4000)}`);
    throw e;
  } finally {
    if (browser) await browser.close().catch(() => {});
    if (daemon) {
      daemon.kill('SIGTERM');
      await new Promise((r) => (daemon.exitCode !== null ? r() : daemon.on('exit', r)));
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  await scenario('desktop', { width: 1280, height: 900 }, '127.0.0.1:0');
  // Bound to every address, the server wants the token for reads too: every request the
  // page makes, the live streams included, must carry it.
  await scenario('phone', { width: 390, height: 844 }, '0.0.0.0:0');
  step(`screenshots in ${shots}`);
  console.log('browser test: OK');
} catch (e) {
  console.error('browser test: FAILED:', e);
  process.exitCode = 1;
}
