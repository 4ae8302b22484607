// A Node program whose readConfig() blocks in fs.readFileSync on a FIFO
// that a child writes 50 ms after opening it, N times; it times each of
// its own readFileSync calls (process.hrtime.bigint: CLOCK_MONOTONIC) and
// writes "<total ns> <reads>" to argv[3].
const fs = require('fs');
const { execFileSync, spawn } = require('child_process');

function readConfig(path) {
  const t0 = process.hrtime.bigint();
  const text = fs.readFileSync(path, 'utf8');
  return [text, process.hrtime.bigint() - t0];
}

function serve(path, n) {
  let total = 0n, reads = 0;
  for (let i = 0; i < n; i++) {
    spawn('sh', ['-c', `exec 3>${path}; sleep 0.05; echo config >&3`]);
    const [text, ns] = readConfig(path);
    if (text === 'config\n') reads++;
    total += ns;
  }
  return [total, reads];
}

const [fifo, n, out] = process.argv.slice(2);
execFileSync('mkfifo', [fifo]);
const [total, reads] = serve(fifo, Number(n));
fs.writeFileSync(out, `${total} ${reads}\n`);
