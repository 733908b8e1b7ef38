// A release names one version everywhere: package.json, the lockfile, the changelog's latest
// release, the example overlay's image tag and the image tags the docs show; the changelog keeps
// Keep a Changelog's shape; the README names every Node line engines admits.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import semver from 'semver';

const ROOT = new URL('../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string; engines: { node: string } };

describe('a release', () => {
  it('has a semantic version, the same in package-lock.json', () => {
    expect(semver.valid(pkg.version), pkg.version).to.equal(pkg.version);
    const lock = JSON.parse(read('package-lock.json')) as {
      version: string;
      packages: Record<string, { version?: string }>;
    };
    expect(lock.version).to.equal(pkg.version);
    expect(lock.packages['']?.version).to.equal(pkg.version);
  });

  it("is CHANGELOG.md's latest release, below an Unreleased section, releases newest first and dated", () => {
    const headings = [...read('CHANGELOG.md').matchAll(/^## (.*)$/gm)].map((m) => m[1] ?? '');
    expect(headings[0]).to.equal('[Unreleased]');
    const releases = headings.slice(1).map((h) => {
      const m = /^\[(\S+)\] - (\d{4}-\d{2}-\d{2})$/.exec(h);
      expect(m, `"${h}": ## [X.Y.Z] - YYYY-MM-DD`).to.not.equal(null);
      expect(semver.valid(m?.[1] ?? ''), h).to.not.equal(null);
      return m?.[1] ?? '';
    });
    expect(releases[0]).to.equal(pkg.version);
    expect(releases).to.deep.equal([...releases].sort(semver.rcompare));
  });

  it("is the example overlay's image tag, and every knh image tag and KNH_VERSION the docs show", () => {
    const overlay = read('deploy/kustomize/overlays/example/kustomization.yaml');
    expect(/^\s+newTag: (\S+)$/m.exec(overlay)?.[1]).to.equal(pkg.version);
    for (const doc of ['README.md', 'docs/deploying.md', 'docs/development.md']) {
      const text = read(doc);
      const tags = [...text.matchAll(/(?:\/knh:|KNH_VERSION=)(\d+\.\d+\.\d+[^\s"]*)/g)];
      if (doc !== 'README.md')
        expect(
          tags.some(([t]) => t.startsWith('KNH_VERSION')),
          doc,
        ).to.equal(true);
      for (const [, tag] of tags) {
        // development.md's release steps show the next version, one past this one.
        const expected =
          doc === 'docs/development.md' ? semver.gt(tag ?? '', pkg.version) : tag === pkg.version;
        expect(expected, `${doc}: knh:${tag}`).to.equal(true);
      }
    }
  });

  it('names in the README every Node line engines admits', () => {
    const lines = [...pkg.engines.node.matchAll(/>=(\d+)/g)].map((m) => m[1] ?? '');
    expect(lines.length).to.be.greaterThan(0);
    const needs = /^Needs Node\.js (.*)$/m.exec(read('README.md'))?.[1] ?? '';
    for (const line of lines) expect(needs, `Node ${line}`).to.match(new RegExp(`\\b${line}\\b`));
  });
});
