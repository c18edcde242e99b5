import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually, harnessEnv, outputTexts, script, waitForState, waitForStateAs } from '../support/engine.js';
import { GitFixtures } from '../support/git.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Warm starts (issue 28): the git object cache, setup snapshots and the path each execution took, against a real
// server, a real database, real git repositories and real setup commands in the suite's sandbox.
const git = new GitFixtures();
let hangar: TestServer;
before(async () => {
  git.createRepo('acme', 'app', { 'README.md': '# app\n', 'package-lock.json': '{"v":1}\n' });
  hangar = await startTestServer(harnessEnv({}, { HANGAR_GIT_BASE_URL: git.baseUrl, HANGAR_SNAPSHOT_TTL: '24h' }));
});
after(async () => {
  await hangar.stop();
  git.remove();
});

async function environment(body: Record<string, unknown>, apiKey?: string): Promise<string> {
  const response = await hangar.request('POST', '/api/v1/environments', {
    body: { name: `env ${Math.random()}`, github_repos: [{ owner: 'acme', repo: 'app' }], ...body },
    apiKey,
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.uid;
}

/** Runs `prompt` in the environment to its end; returns the run, its timeline and its output. */
async function runIn(
  environmentId: string,
  prompt = script({ ls: '.' }),
  extra: Record<string, unknown> = {},
  apiKey?: string,
) {
  const runId = await createRun(hangar, { prompt, config: { environment_id: environmentId }, ...extra }, apiKey);
  const run = apiKey
    ? await waitForStateAs(hangar, apiKey, runId, 'SUCCEEDED', 'FAILED', 'ERROR')
    : await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  const timeline = (await hangar.request('GET', `/agent/runs/${runId}/timeline`, { apiKey })).body.events as Array<{
    event_type: string;
    payload?: Record<string, any>;
  }>;
  const done = timeline.find((event) => event.event_type === 'environment_setup_done')?.payload;
  const setupCommands = timeline.filter((event) => event.event_type === 'environment_setup_command').length;
  const started = timeline.find((event) => event.event_type === 'agent_started')?.payload;
  return { runId, run, done, setupCommands, started, output: () => outputTexts(hangar, runId, apiKey) };
}

async function snapshotRows(environmentId: string) {
  return hangar.db
    .selectFrom('environment_snapshots')
    .selectAll()
    .where('environment_uid', '=', environmentId)
    .execute();
}

/** Every file's bytes under a directory (links not followed), for looking for values that must not be there. */
function allBytes(directory: string): string {
  let text = '';
  for (const entry of fs.readdirSync(directory, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (entry.isFile()) text += fs.readFileSync(full, 'latin1');
  }
  return text;
}

const snapshotsDir = () => path.join(hangar.dataDir, 'snapshots');

describe('warm starts', () => {
  test('cold, then warm from the snapshot, then updated when the repository moves on (setup per setup_on_update)', async () => {
    // The setup counts its runs in a file outside the repository: a warm start must show the count of the cold one.
    const environmentId = await environment({
      setup_commands: ['echo run >> setup-count.txt && cp app/README.md built-readme.txt'],
    });
    const cold = await runIn(environmentId);
    assert.equal(cold.run.state, 'SUCCEEDED', JSON.stringify(cold.run));
    assert.equal(cold.done?.path, 'cold');
    assert.equal(cold.setupCommands, 1);
    for (const step of ['fetch', 'clone', 'setup', 'snapshot'])
      assert.equal(typeof cold.done?.steps_ms[step], 'number');
    assert.equal(typeof cold.started?.start_ms, 'number');
    const [rows] = [await snapshotRows(environmentId)];
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.state, 'ready');

    const warm = await runIn(environmentId, script({ cat: 'setup-count.txt' }, { cat: 'built-readme.txt' }));
    assert.equal(warm.run.state, 'SUCCEEDED', JSON.stringify(warm.run));
    assert.equal(warm.done?.path, 'warm');
    assert.equal(warm.setupCommands, 0, 'a warm start runs no setup');
    assert.equal(typeof warm.done?.steps_ms.restore, 'number');
    assert.deepEqual(await warm.output(), ['run\n', '# app\n']);

    // A commit that touches no lockfile: the repository is brought up to date, setup does not run again.
    const moved = git.commit('acme', 'app', { 'NEW.md': 'new\n' });
    const updated = await runIn(
      environmentId,
      script({ cat: 'setup-count.txt' }, { cat: 'app/NEW.md' }, { cat: 'app/.git/HEAD' }),
    );
    assert.equal(updated.run.state, 'SUCCEEDED', JSON.stringify(updated.run));
    assert.equal(updated.done?.path, 'updated');
    assert.equal(updated.setupCommands, 0);
    const [count, added, head] = await updated.output();
    assert.equal(count, 'run\n');
    assert.equal(added, 'new\n');
    assert.equal(head, 'ref: refs/heads/main\n');
    const afterUpdate = await snapshotRows(environmentId);
    assert.equal(afterUpdate.length, 1, 'the updated snapshot supersedes the old one');
    assert.equal((afterUpdate[0]!.commits as Record<string, string>)['acme/app'], moved);

    // A lockfile change re-runs setup (when_lockfiles_change, the default).
    git.commit('acme', 'app', { 'package-lock.json': '{"v":2}\n' });
    const relocked = await runIn(environmentId, script({ cat: 'setup-count.txt' }));
    assert.equal(relocked.done?.path, 'updated');
    assert.equal(relocked.setupCommands, 1);
    assert.deepEqual(await relocked.output(), ['run\nrun\n']);

    // The environments list shows the newest snapshot.
    const listed = (await hangar.request('GET', '/agent/environments')).body.environments.find(
      (item: { uid: string }) => item.uid === environmentId,
    );
    assert.equal(listed.snapshot.key.length, 16);
    assert.ok(listed.snapshot.size_bytes > 0);
    assert.equal(typeof listed.snapshot.age_seconds, 'number');
  });

  test('cold and warm runs work over their snapshot mounted: what they change, delete or add never reaches it, and the mount goes with the workspace', async () => {
    const environmentId = await environment({ setup_commands: ['echo kept > kept.txt && echo gone > gone.txt'] });
    // The cold run's workspace becomes the snapshot (renamed, not copied) and its agent goes on in an overlay too.
    const cold = await runIn(
      environmentId,
      script({ sh: 'echo cold >> kept.txt && rm gone.txt && echo x > cold.txt' }),
    );
    assert.equal(cold.done?.path, 'cold');
    const [row] = await snapshotRows(environmentId);
    const snapshot = path.join(snapshotsDir(), row!.id);
    const before = allBytes(snapshot);
    const warm = await runIn(
      environmentId,
      script(
        // The workspace, as the run sees it, is an overlay (the server is root here, as with a run user).
        { sh: `awk -v d="$PWD" '$2 == d { print $3; exit }' /proc/self/mounts` },
        {
          sh: 'echo more >> kept.txt && rm gone.txt && echo new > new.txt && echo inplace > app/README.md && cat kept.txt',
        },
      ),
    );
    assert.equal(warm.run.state, 'SUCCEEDED', JSON.stringify(warm.run));
    assert.equal(warm.done?.path, 'warm');
    const [fsType, changed] = await warm.output();
    assert.equal(fsType?.trim(), 'overlay');
    assert.equal(changed, 'kept\nmore\n');
    // The snapshot is as it was.
    assert.equal(fs.readFileSync(path.join(snapshot, 'kept.txt'), 'utf8'), 'kept\n');
    assert.equal(fs.readFileSync(path.join(snapshot, 'gone.txt'), 'utf8'), 'gone\n');
    assert.equal(fs.readFileSync(path.join(snapshot, 'app', 'README.md'), 'utf8'), '# app\n');
    assert.ok(!fs.existsSync(path.join(snapshot, 'new.txt')) && !fs.existsSync(path.join(snapshot, 'cold.txt')));
    assert.equal(allBytes(snapshot), before);
    // Unmounted with its workspace, and its writable layer removed.
    const workspaces = path.join(hangar.dataDir, 'workspaces');
    assert.ok(!fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(workspaces), 'no workspace is still mounted');
    assert.deepEqual(fs.readdirSync(path.join(workspaces, '.layers')), []);
    // The next warm start sees the snapshot, not the last run's changes.
    const again = await runIn(
      environmentId,
      script({ sh: 'cat kept.txt gone.txt app/README.md; ls new.txt 2>&1 | wc -l' }),
    );
    assert.equal(again.done?.path, 'warm');
    assert.deepEqual(await again.output(), ['kept\ngone\n# app\n1\n']);
  });

  test('a changed setup command, image or setup network never reuses an old snapshot', async () => {
    const environmentId = await environment({ setup_commands: ['echo one > marker.txt'] });
    assert.equal((await runIn(environmentId)).done?.path, 'cold');
    assert.equal((await runIn(environmentId)).done?.path, 'warm');
    const put = async (body: Record<string, unknown>) => {
      const response = await hangar.request('PUT', `/api/v1/environments/${environmentId}`, {
        body: { name: 'changed', github_repos: [{ owner: 'acme', repo: 'app' }], ...body },
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
    };
    await put({ setup_commands: ['echo two > marker.txt'] });
    const changed = await runIn(environmentId, script({ cat: 'marker.txt' }));
    assert.equal(changed.done?.path, 'cold');
    assert.deepEqual(await changed.output(), ['two\n']);
    await put({ setup_commands: ['echo two > marker.txt'], docker_image: 'debian:bookworm' });
    assert.equal((await runIn(environmentId)).done?.path, 'cold');
    assert.equal((await runIn(environmentId)).done?.path, 'warm');
    // What setup may reach is an input too: a setup network the environment names (here none) starts cold.
    await put({
      setup_commands: ['echo two > marker.txt'],
      docker_image: 'debian:bookworm',
      network: { setup: 'off' },
    });
    assert.equal((await runIn(environmentId)).done?.path, 'cold');
  });

  test('a failed setup is never snapshotted', async () => {
    const environmentId = await environment({ setup_commands: ['echo partial > partial.txt && exit 3'] });
    const failed = await runIn(environmentId);
    assert.equal(failed.run.state, 'FAILED');
    assert.equal((await snapshotRows(environmentId)).length, 0);
    const again = await runIn(environmentId);
    assert.equal(again.run.state, 'FAILED');
    assert.equal(again.setupCommands, 0, 'the setup ran again (and failed again), from nothing');
  });

  test('two executions that would make the same snapshot at once make one', async () => {
    const environmentId = await environment({ setup_commands: ['echo same > same.txt'] });
    const both = await Promise.all([runIn(environmentId), runIn(environmentId)]);
    for (const { run } of both) assert.equal(run.state, 'SUCCEEDED');
    const rows = await snapshotRows(environmentId);
    assert.equal(rows.length, 1);
    const onDisk = fs.readdirSync(snapshotsDir()).filter((name) => rows.some((row) => row.id === name));
    assert.equal(onDisk.length, 1);
  });

  test('a snapshot never serves another team, even through a shared environment', async () => {
    const environmentId = await environment({ setup_commands: ['echo owner > owner.txt'] });
    assert.equal((await runIn(environmentId)).done?.path, 'cold');
    const guest = await hangar.createTeamWithUser();
    const added = await hangar.request('POST', `/api/v1/environments/${environmentId}/guests`, {
      body: { team_uid: guest.teamUid },
    });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    const guestRun = await runIn(environmentId, script({ ls: '.' }), {}, guest.apiKey);
    assert.equal(guestRun.run.state, 'SUCCEEDED', JSON.stringify(guestRun.run));
    assert.equal(guestRun.done?.path, 'cold');
    assert.equal((await runIn(environmentId)).done?.path, 'warm');
  });

  test('execution-time secrets and a run’s attachments are never in a snapshot', async () => {
    const environmentId = await environment({ setup_commands: ['env > setup-env.txt'] });
    // A run with an attachment is not snapshotted (its files are its own) ...
    const withAttachment = await runIn(environmentId, script({ token: true }), {
      attachments: [
        { file_name: 'private.txt', mime_type: 'text/plain', data: Buffer.from('ATTACHED-VALUE').toString('base64') },
      ],
    });
    assert.equal(withAttachment.run.state, 'SUCCEEDED', JSON.stringify(withAttachment.run));
    assert.equal((await snapshotRows(environmentId)).length, 0);
    // ... and one without is, before its agent gets its task token (and writes anything).
    const cold = await runIn(
      environmentId,
      script({ token: true }, { file: { path: 'agent-wrote.txt', content: 'AGENT-VALUE' } }),
    );
    const token = (await cold.output())[0]!.replace('token:', '');
    assert.ok(token.length > 20);
    const [row] = await snapshotRows(environmentId);
    const bytes = allBytes(path.join(snapshotsDir(), row!.id));
    assert.ok(bytes.includes('HOME='), 'the setup environment is in the snapshot');
    for (const value of [
      token,
      'ATTACHED-VALUE',
      'AGENT-VALUE',
      (await withAttachment.output())[0]!.replace('token:', ''),
    ])
      assert.ok(!bytes.includes(value), `${value.slice(0, 12)}… is not in the snapshot`);
    const warm = await runIn(environmentId, script({ ls: '.' }));
    assert.equal(warm.done?.path, 'warm');
    const listing = JSON.parse((await warm.output())[0]!) as string[];
    assert.ok(!listing.includes('agent-wrote.txt') && !listing.includes('private.txt'));
  });

  test('clones borrow nothing from the mirror: a run that writes where alternates would point corrupts no other run', async () => {
    const mirror = path.join(hangar.dataDir, 'git-cache', 'acme', 'app.git');
    const environmentId = await environment({
      setup_commands: [
        // No alternates to follow; writing one, or into the mirror by its path, reaches nothing of the server's.
        `test ! -e app/.git/objects/info/alternates && echo none > alternates.txt; ` +
          `echo ${mirror}/objects > app/.git/objects/info/alternates; ` +
          `(echo corrupt > ${mirror}/HEAD; echo corrupt > ${mirror}/objects/info/alternates) 2>/dev/null; true`,
      ],
    });
    const attacker = await runIn(environmentId, script({ cat: 'alternates.txt' }));
    assert.equal(attacker.run.state, 'SUCCEEDED', JSON.stringify(attacker.run));
    assert.deepEqual(await attacker.output(), ['none\n']);
    assert.match(fs.readFileSync(path.join(mirror, 'HEAD'), 'utf8'), /^ref: refs\/heads\/main/);
    assert.ok(!fs.existsSync(path.join(mirror, 'objects', 'info', 'alternates')));
    execFileSync('git', ['-C', mirror, 'fsck', '--no-progress'], { stdio: 'ignore' });
    const other = await runIn(await environment({}), script({ cat: 'app/README.md' }));
    assert.equal(other.run.state, 'SUCCEEDED', JSON.stringify(other.run));
    assert.deepEqual(await other.output(), ['# app\n']);
  });

  test('a root server’s clones hard-link the mirror’s objects, which the run can neither write, chmod, truncate nor touch: the mirror stays byte for byte, and another team clones it', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('only a root server (with a run user) clones with hard links');
    // Enough files for the first fetch to keep a pack; the commit after it comes as loose objects.
    const files = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`src/f${i}.txt`, `file ${i}\n`]));
    git.createRepo('acme', 'packed', { 'README.md': '# packed\n', ...files });
    const repos = { github_repos: [{ owner: 'acme', repo: 'packed' }] };
    const first = await environment(repos);
    assert.equal((await runIn(first)).run.state, 'SUCCEEDED');
    // Its snapshot (the workspace, renamed) holds the links too, root's: dropped, it is still removed.
    const [firstSnapshot] = await snapshotRows(first);
    const snapshotPack = path.join(snapshotsDir(), firstSnapshot!.id, 'packed', '.git', 'objects', 'pack');
    for (const name of fs.readdirSync(snapshotPack)) {
      const stat = fs.lstatSync(path.join(snapshotPack, name));
      assert.ok(stat.nlink > 1 && stat.uid === 0, name);
    }
    // On the host, the checkout is the run user's.
    for (const name of ['README.md', '.git/index', '.git/config', '.git/objects/pack'])
      assert.notEqual(fs.lstatSync(path.join(snapshotsDir(), firstSnapshot!.id, 'packed', name)).uid, 0, name);
    assert.equal((await hangar.request('POST', `/api/v1/admin/environments/${first}/rebuild`)).status, 200);
    git.commit('acme', 'packed', { 'NEW.md': 'new\n' });
    assert.equal((await runIn(await environment(repos))).run.state, 'SUCCEEDED');
    const mirror = path.join(hangar.dataDir, 'git-cache', 'acme', 'packed.git');
    const objects = (directory: string) =>
      fs
        .readdirSync(path.join(directory, 'objects'), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)))
        .sort();
    const state = () =>
      objects(mirror).map((name) => {
        const stat = fs.lstatSync(path.join(mirror, name));
        return `${name} ${stat.ino} ${stat.uid} ${(stat.mode & 0o7777).toString(8)} ${stat.mtimeMs} ${fs.readFileSync(path.join(mirror, name), 'base64')}`;
      });
    const before = state();
    assert.ok(
      objects(mirror).some((name) => name.endsWith('.pack')),
      'the mirror holds a pack',
    );
    assert.ok(
      objects(mirror).some((name) => /^objects\/[0-9a-f]{2}\//.test(name)),
      'the mirror holds loose objects',
    );

    const attacker = await runIn(
      await environment({
        ...repos,
        setup_commands: [
          // What the run sees first: who owns what, and which object files are links (inode, link count).
          `cd packed && id -u > ../uid.txt && stat -c '%n %u' README.md .git/config .git/index .git/objects/pack > ../owners.txt && ` +
            `find .git/objects -type f -exec stat -c '%n %i %h %u %a' {} + > ../links.txt && ` +
            // Then every way of changing a linked file in place, each written down when it works ...
            `for f in $(find .git/objects -type f); do ` +
            `test -w "$f" && echo "writable $f"; chmod 666 "$f" 2>/dev/null && echo "chmod $f"; ` +
            `touch "$f" 2>/dev/null && echo "touch $f"; truncate -s 0 "$f" 2>/dev/null && echo "truncate $f"; ` +
            `(echo corrupt >> "$f") 2>/dev/null && echo "append $f"; ` +
            // ... and replacing it, which the run may do: its checkout's names are its own.
            `rm -f "$f" && echo corrupt > "$f" && echo "replaced $f"; done > ../attack.txt 2>&1; true`,
        ],
      }),
      script({ cat: 'uid.txt' }, { cat: 'owners.txt' }, { cat: 'links.txt' }, { cat: 'attack.txt' }),
    );
    assert.equal(attacker.run.state, 'SUCCEEDED', JSON.stringify(attacker.run));
    const [uid, owners, links, attack] = await attacker.output();
    // As the run sees them: in a networked sandbox it is uid 0 of its own user namespace, and root outside is nobody.
    const runUid = uid!.trim();
    // The checkout and the repository's own files and directories are the run user's ...
    for (const line of owners!.trim().split('\n')) assert.equal(line.split(' ')[1], runUid, line);
    // ... the object files are the mirror's very inodes, root's and read-only.
    const linked = links!.trim().split('\n');
    assert.deepEqual(linked.map((line) => line.split(' ')[0]!.replace(/^\.git\//, '')).sort(), objects(mirror));
    for (const line of linked) {
      const [name, inode, count, owner, mode] = line.split(' ');
      const inMirror = fs.lstatSync(path.join(mirror, name!.replace(/^\.git\//, '')));
      assert.equal(Number(inode), inMirror.ino, `${name} is the mirror's inode`);
      assert.ok(Number(count) > 1, line);
      assert.notEqual(owner, runUid, line);
      assert.equal(mode, '444', line);
    }
    // No change in place worked; every replacement did.
    const attempts = attack!.trim().split('\n');
    assert.deepEqual(
      attempts.filter((line) => !line.startsWith('replaced ')),
      [],
    );
    assert.equal(attempts.length, linked.length);
    assert.deepEqual(state(), before, 'the mirror is byte for byte as it was');
    execFileSync('git', ['-C', mirror, 'fsck', '--no-progress'], { stdio: 'ignore' });

    const other = await hangar.createTeamWithUser();
    const otherRun = await runIn(
      await environment(repos, other.apiKey),
      script({ sh: 'cd packed && git fsck --no-progress >/dev/null 2>&1 && cat NEW.md src/f7.txt' }),
      {},
      other.apiKey,
    );
    assert.equal(otherRun.run.state, 'SUCCEEDED', JSON.stringify(otherRun.run));
    assert.deepEqual(await otherRun.output(), ['new\nfile 7\n']);
    // The maintenance after the snapshots taken since removed the dropped one, root's links and all.
    await eventually(
      'the dropped snapshot is removed',
      () => !fs.existsSync(path.join(snapshotsDir(), firstSnapshot!.id)),
    );
  });

  test('a root server’s linked clone is checked out as by hand (no ORIG_HEAD, no reset in the reflog); its snapshot’s size, measured after it is ready, leaves out the objects it shares with the mirror; the removal of a dropped snapshot can be awaited', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('only a root server (with a run user) clones with hard links');
    // Random text: the pack is about the size of the file it holds.
    const bulk = randomBytes(1024 * 1024).toString('hex');
    git.createRepo('acme', 'bulky', { 'README.md': '# bulky\n', 'bulk.txt': bulk });
    const environmentId = await environment({
      github_repos: [{ owner: 'acme', repo: 'bulky' }],
      setup_commands: ['true'],
    });
    assert.equal((await runIn(environmentId)).run.state, 'SUCCEEDED');
    // Ready as soon as it was renamed; its size is measured by the maintenance that follows.
    await hangar.server.engine!.warmStarts!.settled();
    const [row] = await snapshotRows(environmentId);
    const snapshot = path.join(snapshotsDir(), row!.id);
    const repository = path.join(snapshot, 'bulky');
    assert.ok(!fs.existsSync(path.join(repository, '.git', 'ORIG_HEAD')), 'no ORIG_HEAD');
    const reflog = fs
      .readFileSync(path.join(repository, '.git', 'logs', 'HEAD'), 'utf8')
      .trim()
      .split('\n');
    assert.equal(reflog.length, 1, reflog.join('\n'));
    assert.match(reflog[0]!, /\tclone: from /);
    const status = execFileSync('git', ['-c', 'safe.directory=*', '-C', repository, 'status', '--porcelain'], {
      encoding: 'utf8',
    });
    assert.equal(status, '');
    // Every inode under the snapshot once, and the object files it shares with the mirror (more than one link).
    let total = 0;
    let shared = 0;
    const seen = new Set<number>();
    for (const entry of fs.readdirSync(snapshot, { recursive: true, withFileTypes: true })) {
      const stat = fs.lstatSync(path.join(entry.parentPath, entry.name));
      if (seen.has(stat.ino)) continue;
      seen.add(stat.ino);
      total += stat.blocks * 512;
      if (!stat.isDirectory() && stat.nlink > 1) shared += stat.blocks * 512;
    }
    assert.ok(shared >= 1024 * 1024, `the pack is shared with the mirror (${shared} bytes)`);
    const size = Number(row!.size_bytes);
    assert.ok(size >= bulk.length, `the checkout is counted (${size} bytes)`);
    assert.ok(size <= total - shared + 4096 * 4, `${size} bytes counted, ${total} in all, ${shared} shared`);

    // Dropped, then replaced by the next cold run's: its files go in the maintenance that run started, which the
    // server's warm starts let a caller await.
    assert.equal((await hangar.request('POST', `/api/v1/admin/environments/${environmentId}/rebuild`)).status, 200);
    assert.equal((await runIn(environmentId)).done?.path, 'cold');
    await hangar.server.engine!.warmStarts!.settled();
    assert.ok(!fs.existsSync(snapshot), 'the dropped snapshot’s files are gone');
  });

  test('an admin drops an environment’s snapshots: its next run is cold', async () => {
    const environmentId = await environment({ setup_commands: ['true'] });
    await runIn(environmentId);
    assert.equal((await snapshotRows(environmentId)).length, 1);
    const member = await hangar.addUser(hangar.teamUid, 'member');
    const refused = await hangar.request('POST', `/api/v1/admin/environments/${environmentId}/rebuild`, {
      apiKey: member.apiKey,
    });
    assert.equal(refused.status, 403);
    const dropped = await hangar.request('POST', `/api/v1/admin/environments/${environmentId}/rebuild`);
    assert.equal(dropped.status, 200, JSON.stringify(dropped.body));
    assert.equal(dropped.body.snapshots_dropped, 1);
    assert.equal((await runIn(environmentId)).done?.path, 'cold');
  });
});
