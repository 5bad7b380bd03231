/**
 * The layers of src/ (docs/architecture.md), checked by `npm run lint`:
 *   app.ts, main.ts, deps.ts,       the composition: may import anything
 *   composition/
 *   faces: http/ (REST), mcp/, cli/ never each other, never the store or the limiter
 *   edge/                           the HTTP server the web faces are mounted on
 *   views/                          what results look like to clients
 *   domain/                         the rules; imports catalog/ and the ports, never a face
 *   catalog/, store/, limits/       the data's layers; never the domain or a face
 *   planners/                       adapters of the domain's Planner port; only the composition picks one
 *   collectors/                     the collectors' HTTP client and schedule; only the composition uses them
 *   payments/, notify/, oauth/,     Stripe, the outgoing webhook, the OAuth server, SMTP mail: adapters
 *   mail/                           of domain ports, composition only
 */
const faces = ['^src/http/', '^src/mcp/', '^src/cli/'];
const composition = '^src/((app|main|deps)[.]ts$|composition/)';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Modules form no import cycle.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...faces.map((face) => ({
      name: `no-face-to-face (${face})`,
      severity: 'error',
      comment: 'A face never imports another face: what they share lives in views/, domain/ or edge/.',
      from: { path: face },
      to: { path: faces.filter((other) => other !== face) },
    })),
    {
      name: 'no-face-to-store',
      severity: 'error',
      comment: 'Faces reach storage, limits and the planner adapters only through the domain.',
      from: { path: faces },
      to: {
        path: [
          '^src/store/',
          '^src/limits/',
          '^src/planners/',
          '^src/collectors/',
          '^src/payments/',
          '^src/notify/',
          '^src/mail/',
          '^src/oauth/',
        ],
      },
    },
    {
      name: 'no-face-to-composition',
      severity: 'error',
      comment: 'Faces get their services handed in; only types of the composition root may be named.',
      from: { path: [...faces, '^src/edge/', '^src/views/', '^src/domain/'] },
      to: { path: composition, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'edge-serves-faces',
      severity: 'error',
      comment: 'The edge knows no face.',
      from: { path: '^src/edge/' },
      to: { path: [...faces, '^src/app[.]ts$'] },
    },
    {
      name: 'views-are-below-faces',
      severity: 'error',
      comment: 'Views are shared by the faces and import none of them, nor the edge or the store adapters.',
      from: { path: '^src/views/' },
      to: { path: [...faces, '^src/edge/', '^src/store/(sqlite|postgres)/', '^src/limits/'] },
    },
    {
      name: 'domain-is-below-faces',
      severity: 'error',
      comment: 'The domain imports no face, view or edge module, and no adapter: only ports.',
      from: { path: '^src/domain/' },
      to: {
        path: [
          ...faces,
          '^src/edge/',
          '^src/views/',
          '^src/store/(sqlite|postgres)/',
          '^src/limits/redis/',
          '^src/planners/',
          '^src/collectors/',
          '^src/payments/',
          '^src/notify/',
          '^src/mail/',
          '^src/oauth/',
        ],
      },
    },
    {
      name: 'data-layers-are-below-the-domain',
      severity: 'error',
      comment: 'The catalog, the store and the limiter never import the domain, a view, the edge or a face.',
      from: { path: ['^src/catalog/', '^src/store/', '^src/limits/'] },
      to: { path: ['^src/domain/', '^src/views/', '^src/edge/', ...faces] },
    },
    {
      name: 'no-generated-clients',
      severity: 'error',
      comment:
        'The service is what the clients are generated from (clients/, npm run clients): never the reverse.',
      from: { path: ['^src/', '^bin/'] },
      to: { path: '^clients/' },
    },
    {
      name: 'catalog-is-not-storage',
      severity: 'error',
      comment: 'The catalog describes datasets; the store keeps rows.',
      from: { path: '^src/catalog/' },
      to: { path: '^src/store/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
