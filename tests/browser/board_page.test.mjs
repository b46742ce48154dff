// The board's page in Debian's headless Chromium, driven by playwright-core (no browser
// download: executablePath is the system chromium). Starts board_http_serve on a temporary
// board of three tickets, approves one and rejects another with feedback through the page,
// then moves the third with the `board` CLI and waits for the page to show it in its new
// column (live, through the event stream). Saves screenshots in $BOARD_SCREENSHOT_DIR.
//
// Environment: BOARD_BIN (the built `board`), BOARD_HTTP_SERVE (the built board_http_serve),
// BOARD_SCREENSHOT_DIR (default: the current folder), CHROMIUM (default /usr/bin/chromium).

import { chromium } from 'playwright-core';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';

const boardBin = process.env.BOARD_BIN;
const serveBin = process.env.BOARD_HTTP_SERVE;
const shots = process.env.BOARD_SCREENSHOT_DIR || process.cwd();
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!boardBin || !serveBin) {
  console.error('set BOARD_BIN and BOARD_HTTP_SERVE to the built binaries');
  process.exit(2);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'board-browser-'));
const boardDir = path.join(tmp, 'board');
const profile = path.join(tmp, 'profile');
const board = (...args) =>
  execFileSync(boardBin, [...args, '--board', boardDir], { encoding: 'utf8', env: { ...process.env, USER: 'setup' } });
const show = (id) => JSON.parse(board('show', id, '--json'));
const log = (id) => board('log', id, '--json').trim().split('\n').map((l) => JSON.parse(l));

let server;
let browser;
const started = Date.now();
const step = (what) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${what}`);

try {
  fs.mkdirSync(boardDir);
  execFileSync(boardBin, ['init', boardDir, '--prefix', 'PROJ'], { encoding: 'utf8' });
  const ids = [
    board('create', 'Approve me', '--awaiting', 'approval', '--json'),
    board('create', 'Reject me', '--awaiting', 'approval', '--json'),
    board('create', 'Move me', '--json'),
  ].map((out) => JSON.parse(out).id);
  const [approveId, rejectId, moveId] = ids;
  step(`board ${boardDir}: ${ids.join(', ')}`);

  const urlFile = path.join(tmp, 'url');
  server = spawn(serveBin, [boardDir, '127.0.0.1:0', '--rescan', '200', '--url-file', urlFile], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 200 && !fs.existsSync(urlFile); i++) await new Promise((r) => setTimeout(r, 50));
  const url = fs.readFileSync(urlFile, 'utf8').trim();
  step(`server at ${url}`);

  // A fresh profile each run (Playwright passes it as --user-data-dir).
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  const page = browser.pages()[0] || (await browser.newPage());
  page.on('pageerror', (e) => console.error('page error:', e.message));
  page.setDefaultTimeout(15000);
  await page.goto(url);
  await page.fill('#as-name', 'tester');
  await page.press('#as-name', 'Enter');
  await page.locator('#as-name').dispatchEvent('change');
  await page.waitForSelector('#live.on');
  step('page loaded, live');

  // Approve the first through the inbox.
  const approveItem = page.locator(`.inbox-item[data-id="${approveId}"]`);
  await approveItem.locator('button.approve').click();
  await approveItem.waitFor({ state: 'detached' });
  let events = log(approveId);
  let last = events[events.length - 1];
  assert.equal(last.type, 'verdict');
  assert.equal(last.verdict, 'approved');
  assert.equal(last.by, 'human:tester');
  assert.equal(show(approveId).awaiting, undefined);
  step(`approved ${approveId} through the page`);

  // Reject the second with feedback; without feedback the page refuses first.
  const rejectItem = page.locator(`.inbox-item[data-id="${rejectId}"]`);
  await rejectItem.locator('button.reject').click();
  await page.waitForSelector('#flash.error');
  await rejectItem.locator('textarea.feedback').fill('Needs a test for the empty case.');
  await rejectItem.locator('button.reject').click();
  await rejectItem.waitFor({ state: 'detached' });
  events = log(rejectId);
  last = events[events.length - 1];
  assert.equal(last.type, 'verdict');
  assert.equal(last.verdict, 'rejected');
  assert.equal(last.note, 'Needs a test for the empty case.');
  assert.equal(last.by, 'human:tester');
  step(`rejected ${rejectId} with feedback through the page`);

  // The CLI moves the third; the page shows it in its new column without a reload.
  await page.waitForSelector(`[data-column="backlog"] .card[data-id="${moveId}"]`);
  const before = await page.evaluate(() => performance.timeOrigin);
  board('start', moveId);  // backlog -> the first phase, by the CLI
  const moved = show(moveId).status;
  assert.notEqual(moved, 'backlog');
  await page.waitForSelector(`[data-column="${moved}"] .card[data-id="${moveId}"]`);
  assert.equal(await page.evaluate(() => performance.timeOrigin), before, 'the page was not reloaded');
  assert.equal(await page.locator(`[data-column="backlog"] .card[data-id="${moveId}"]`).count(), 0);
  step(`${moveId} moved to ${moved} live`);

  fs.mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: path.join(shots, 'board-page.png'), fullPage: true });

  // The ticket page: timeline and replay slider; and a phone-sized screen.
  await page.goto(`${url.replace(/\?.*$/, '')}#/ticket/${rejectId}`);
  await page.waitForSelector('.timeline li');
  await page.locator('.replay input[type=range]').fill('1');
  await page.waitForSelector('.replay .state >> text=after #1');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(shots, 'board-ticket-phone.png'), fullPage: true });
  step(`screenshots in ${shots}`);
  console.log('browser test: OK');
} catch (e) {
  console.error('browser test: FAILED:', e);
  process.exitCode = 1;
} finally {
  if (browser) await browser.close().catch(() => {});
  if (server) server.kill('SIGTERM');
  fs.rmSync(tmp, { recursive: true, force: true });
}
