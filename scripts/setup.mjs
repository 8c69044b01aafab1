// `npm run setup`: install (the pinned pnpm) and build everything, each skipped when nothing it
// depends on changed since it last ran (scripts/setup-steps.mjs). `npm run demo` and `npm test`
// start with it.
import { setupIfChanged } from './setup-steps.mjs';

setupIfChanged((line) => console.log(line));
