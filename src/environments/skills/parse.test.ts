import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSkillPath, parseSkill } from './parse.js';

test('skill paths: SKILL.md in a folder under a known root', () => {
  for (const path of [
    '.claude/skills/deploy/SKILL.md',
    'skills/review/SKILL.md',
    '.agents/skills/a/b/SKILL.md',
    '.github/skills/x/SKILL.md',
  ]) {
    assert.equal(isSkillPath(path), true, path);
  }
  for (const path of [
    '.claude/skills/SKILL.md',
    'docs/skills/x/SKILL.md',
    'skills/x/skill.md',
    'skills/x/README.md',
    'src/skills/x/SKILL.md',
  ]) {
    assert.equal(isSkillPath(path), false, path);
  }
});

test('a well-formed SKILL.md gives name, description and the body as base prompt', () => {
  const parsed = parseSkill(
    '.claude/skills/deploy/SKILL.md',
    '---\nname: deploy\ndescription: Ship it\n---\n\n# Deploy\n\nRun the pipeline.\n',
  );
  assert.deepEqual(parsed, {
    ok: true,
    name: 'deploy',
    description: 'Ship it',
    basePrompt: '# Deploy\n\nRun the pipeline.',
  });
});

test('CRLF line ends, a byte order mark and extra front matter keys are accepted', () => {
  const parsed = parseSkill(
    'skills/x/SKILL.md',
    '\uFEFF---\r\nname: x\r\ndescription: "y: z"\r\nlicense: MIT\r\n---\r\nbody\r\n',
  );
  assert.deepEqual(parsed, { ok: true, name: 'x', description: 'y: z', basePrompt: 'body' });
});

test('malformed files say what failed, named after their folder when the name is unknown', () => {
  const cases: Array<[string, RegExp, string]> = [
    ['# no front matter', /no YAML front matter/, 'deploy'],
    ['---\nname: deploy\ndescription: x\n', /not closed/, 'deploy'],
    ['---\nname: [unclosed\ndescription: x\n---\n', /not valid YAML/, 'deploy'],
    ['---\n- a\n- b\n---\n', /mapping/, 'deploy'],
    ['---\ndescription: x\n---\n', /no name/, 'deploy'],
    ['---\nname: 5\ndescription: x\n---\n', /no name/, 'deploy'],
    ['---\nname: shipper\n---\nbody', /no description/, 'shipper'],
    ['---\nname: shipper\ndescription: "  "\n---\nbody', /no description/, 'shipper'],
  ];
  for (const [text, reason, name] of cases) {
    const parsed = parseSkill('.claude/skills/deploy/SKILL.md', text);
    assert.equal(parsed.ok, false, text);
    if (parsed.ok) continue;
    assert.match(parsed.error, reason, text);
    assert.equal(parsed.name, name, text);
  }
});
