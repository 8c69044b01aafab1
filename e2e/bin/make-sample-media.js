#!/usr/bin/env node
// Generates the sample stream into e2e/media (no-op when it is already there).
import { ensureSampleMedia } from '../dist/sample-media.js';

try {
  console.log(`sample stream ready in ${ensureSampleMedia()}`);
} catch (error) {
  console.error(`shoal: ${error.message}`);
  process.exit(1);
}
