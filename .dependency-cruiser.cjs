// The shape of src/ as rules (npm run lint checks them): no import cycle; the core (election,
// verdicts, the alert lifecycle) imports only itself, the wire types and the small interfaces of
// core/; wire/ imports nothing of the program; the core never imports an HTTP or Kubernetes library.
const CORE_ONLY = (folder, allowed) => ({
  name: `${folder}-imports-only-the-core`,
  comment: `src/${folder}/ is core: it imports only ${allowed.join(', ')}`,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: { path: '^src/', pathNot: `^src/(${[folder, ...allowed].join('|')})/` },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle: each file of it can only be understood with all the others.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'wire-imports-nothing',
      comment: 'Wire types (what crosses the network) import nothing else of the program.',
      severity: 'error',
      from: { path: '^src/wire/' },
      to: { path: '^src/', pathNot: '^src/wire/' },
    },
    CORE_ONLY('core', ['wire']),
    CORE_ONLY('election', ['core', 'wire']),
    CORE_ONLY('prober', ['core', 'wire']),
    CORE_ONLY('alerts', ['prober', 'paths', 'core', 'wire']),
    CORE_ONLY('paths', ['core', 'wire']),
    {
      name: 'core-without-io-libraries',
      comment:
        'The core sees small interfaces; express, axios and the Kubernetes client stay at the edge.',
      severity: 'error',
      from: { path: '^src/(wire|core|election|prober|alerts|paths)/' },
      to: { path: '(^|/)node_modules/(express|axios|@kubernetes/client-node)/|^node:http$|^http$' },
    },
    {
      name: 'src-without-tests',
      comment: 'The program never imports its tests or benchmarks.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
