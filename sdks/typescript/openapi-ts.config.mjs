// The generation of src/generated/ from the committed API description (scripts/sdks.sh).
// OPENAPI_DOC and OPENAPI_TS_OUTPUT let the staleness check generate elsewhere from another copy.
import { fileURLToPath } from 'node:url';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

export default {
  input: process.env.OPENAPI_DOC ?? here('../../docs/openapi.json'),
  output: {
    path: process.env.OPENAPI_TS_OUTPUT ?? here('src/generated'),
    // Imports end in .js, as NodeNext's ESM needs, wherever the output is written.
    tsConfigPath: here('tsconfig.json'),
  },
  // The fetch client is written into the output: the package needs nothing beyond fetch.
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
};
