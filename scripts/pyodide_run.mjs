// Runs a Python file under Pyodide in Node, with gradcalc's Pyodide wheel
// installed by micropip from the local file, as JupyterLite installs it:
//
//   node scripts/pyodide_run.mjs PYODIDE_DIR WHEELS_DIR GRADCALC_WHEEL PROGRAM.py
//
// PYODIDE_DIR holds node_modules/pyodide (`npm install pyodide@VERSION`);
// WHEELS_DIR holds micropip's and packaging's wheels (the npm package has
// the interpreter, not its packages, which Pyodide fetches from its CDN:
// .ci/run takes these two from PyPI instead). PROGRAM.py runs with the
// working directory /work (in Pyodide's file system); what it prints is
// printed, and an exception in it ends this with status 1. Offline: nothing
// is fetched. The modules `*_cases.py` beside PROGRAM.py are importable
// (they go to /cases, on sys.path).
//
// Pyodide gets an interrupt buffer (`pyodide.setInterruptBuffer`, a
// SharedArrayBuffer), as a host that can stop Python sets one, and PROGRAM.py
// can import `pyodide_host` and call `interrupt_after(ms)`: a worker thread
// then writes SIGINT (2) into the buffer `ms` milliseconds later, while the
// program runs on (a student's Ctrl-C, from another thread).
import { readFileSync, readdirSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

const [pyodideDir, wheelsDir, gradcalcWheel, program] = process.argv.slice(2);
if (!program) {
  console.error("usage: node scripts/pyodide_run.mjs PYODIDE_DIR WHEELS_DIR GRADCALC_WHEEL PROGRAM.py");
  process.exit(2);
}
const started = Date.now();
const { loadPyodide } = await import(
  pathToFileURL(join(resolve(pyodideDir), "node_modules", "pyodide", "pyodide.mjs")).href
);
const pyodide = await loadPyodide({
  stdout: (line) => process.stdout.write(line + "\n"),
  stderr: (line) => process.stderr.write(line + "\n"),
});
// micropip and its one dependency, from local files (by path: Pyodide's
// lock file names its own builds, whose hashes differ from PyPI's).
const wheels = readdirSync(wheelsDir)
  .filter((name) => /^(packaging|micropip)-.*\.whl$/.test(name))
  .map((name) => join(resolve(wheelsDir), name));
const interruptBuffer = new Int32Array(new SharedArrayBuffer(4));
pyodide.setInterruptBuffer(interruptBuffer);
const interrupter = new Worker(
  `const { parentPort, workerData } = require("node:worker_threads");
   const clock = new Int32Array(new SharedArrayBuffer(4));
   parentPort.on("message", (ms) => {
     Atomics.wait(clock, 0, 0, ms); // the moment of the key press
     Atomics.store(new Int32Array(workerData), 0, 2);
   });`,
  { eval: true, workerData: interruptBuffer.buffer },
);
interrupter.unref();
pyodide.registerJsModule("pyodide_host", { interrupt_after: (ms) => interrupter.postMessage(ms) });
await pyodide.loadPackage(wheels, { messageCallback: () => {}, errorCallback: (m) => console.error(m) });
const wheelName = basename(gradcalcWheel);
pyodide.FS.mkdirTree("/wheels");
pyodide.FS.writeFile(`/wheels/${wheelName}`, readFileSync(gradcalcWheel));
pyodide.FS.mkdirTree("/work");
pyodide.FS.mkdirTree("/cases");
for (const name of readdirSync(dirname(resolve(program))).filter((n) => n.endsWith("_cases.py"))) {
  pyodide.FS.writeFile(`/cases/${name}`, readFileSync(join(dirname(resolve(program)), name)));
}
await pyodide.runPythonAsync(`
import micropip, os, sys
await micropip.install("emfs:/wheels/${wheelName}")
os.chdir("/work")
sys.path.insert(0, "/cases")
`);
process.stderr.write(`pyodide ${pyodide.version} and the wheel ready in ${Date.now() - started} ms\n`);
try {
  await pyodide.runPythonAsync(readFileSync(program, "utf-8"), { filename: program });
} catch (error) {
  console.error(String(error));
  process.exit(1);
}
