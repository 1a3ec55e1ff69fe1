#!/usr/bin/env node
// velesdb-hooks from npm: this package holds no binary. npm installs, of its optional
// dependencies, the one platform package whose `os`/`cpu`/`libc` fit the machine; this file
// finds it and runs its binary with the same arguments, standard streams, exit code and
// signal. Hooks never come through here: `velesdb-hooks install` copies the binary it runs
// as to its stable path and every hook entry names that path, so no hook starts Node.
// Plain CommonJS with no dependencies and no install script (npm 11 asks users to approve
// those); scripts/build-all.ts stamps the repository line below.
"use strict";
const fs = require("fs");
const path = require("path");
const { spawn } = require("child_process");
const { constants } = require("os");

const REPOSITORY = "OWNER/velesdb-hooks";

/** findBinary(platform, arch, detectLibc) → { binary } of the installed platform package that fits, or { problem } in one line. */
function findBinary(platform, arch, detectLibc) {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"));
  const fitting = [];
  for (const name of Object.keys(manifest.optionalDependencies || {})) {
    let packageJson;
    try {
      packageJson = require.resolve(name + "/package.json", { paths: [path.join(__dirname, "..")] });
    } catch {
      continue; // not installed: another platform's package, or --omit=optional
    }
    const platformPackage = JSON.parse(fs.readFileSync(packageJson, "utf8"));
    if (!(platformPackage.os || []).includes(platform) || !(platformPackage.cpu || []).includes(arch)) continue;
    const file = platform === "win32" ? "velesdb-hooks.exe" : "velesdb-hooks";
    fitting.push({ binary: path.join(path.dirname(packageJson), "bin", file), libc: (platformPackage.libc || [])[0] });
  }
  // npm older than 10.4 ignores `libc` and installs both Linux builds; the C library this
  // Node runs on decides then.
  const chosen = fitting.length > 1 ? fitting.find((candidate) => candidate.libc === detectLibc()) || fitting[0] : fitting[0];
  if (chosen) return { binary: chosen.binary };
  const download = "https://github.com/" + REPOSITORY + "/releases/latest/download";
  return {
    problem:
      "velesdb-hooks: no binary for " + platform + "-" + arch + " is installed (unsupported platform, or installed with --omit=optional); " +
      "install the release instead: curl -fsSL " + download + "/install.sh | sh, or in PowerShell: irm " + download + "/install.ps1 | iex",
  };
}

/** runningLibc() → "glibc" or "musl": what npm itself reads (Node's report names the glibc it runs on). */
function runningLibc() {
  const header = process.report && typeof process.report.getReport === "function" ? process.report.getReport().header : {};
  return header.glibcVersionRuntime ? "glibc" : "musl";
}

function main() {
  const found = findBinary(process.platform, process.arch, runningLibc);
  if (!found.binary) {
    process.stderr.write(found.problem + "\n");
    process.exit(1);
  }
  const child = spawn(found.binary, process.argv.slice(2), { stdio: "inherit", windowsHide: false });
  // A signal sent to this process alone (kill PID, a supervisor's SIGTERM) reaches the binary
  // too; one from the terminal reaches both anyway, and a repeat is harmless.
  const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"].filter((signal) => process.platform !== "win32" || signal === "SIGINT");
  const forward = (signal) => child.kill(signal);
  for (const signal of forwarded) process.on(signal, forward);
  child.on("error", (error) => {
    process.stderr.write("velesdb-hooks: cannot run " + found.binary + " (" + (error.code || error.message) + ")\n");
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    for (const each of forwarded) process.removeListener(each, forward);
    // Die of the same signal, so the caller sees what the binary did (128 + n in a shell).
    // Node ignores SIGPIPE, so a signal it does not die of still ends in 128 + n.
    if (signal) process.kill(process.pid, signal);
    process.exit(signal ? 128 + (constants.signals[signal] || 0) : code === null ? 1 : code);
  });
}

if (require.main === module) main();
else module.exports = { findBinary };
