// Runs the real lande on every sentence of a JSON list and prints the
// reference file that test_langid.py compares the numpy port against.
// Run through ../make_reference.sh, which installs lande@1.0.10 next to a
// copy of this script.
import { readFileSync } from 'node:fs';
import lande from 'lande';

const modules = new URL('./node_modules/', import.meta.url);
const version = (name) =>
  JSON.parse(readFileSync(new URL(`${name}/package.json`, modules), 'utf8')).version;

const sentences = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const cases = sentences.map((text) => ({ text, result: lande(text) }));
const reference = {
  generator: 'testdata/lande_reference.mjs via make_reference.sh',
  lande: version('lande'),
  toygrad: version('toygrad'),
  node: process.version,
};
// One case per line keeps the file small and its diffs readable.
const header = JSON.stringify(reference, null, 1).slice(0, -2);
const lines = cases.map((c) => ' ' + JSON.stringify(c));
process.stdout.write(`${header},\n "cases": [\n${lines.join(',\n')}\n ]\n}\n`);
