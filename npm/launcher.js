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

/**
 * findBinary(platform, arch, detectLibc) → { binary } of the installed platform package that fits, or { problem } in one line.
 * Only the platform package npm installed for this launcher is run: the one at its own exact
 * version, in the launcher's own node_modules or beside it in the node_modules that holds it —
 * never one found further up the tree (a trial ran a 0.0.1 package planted in a parent
 * directory another user could write, as root: docs/hardening.md §1) — and, off Windows, owned by the
 * caller or root and writable by nobody else, down to the node_modules that holds it.
 */
function findBinary(platform, arch, detectLibc) {
  const own = path.join(__dirname, "..");
  const manifest = JSON.parse(fs.readFileSync(path.join(own, "package.json"), "utf8"));
  const fitting = [];
  const refused = [];
  for (const name of Object.keys(manifest.optionalDependencies || {})) {
    const found = platformPackage(own, name);
    if (!found) continue; // not installed: another platform's package, or --omit=optional
    if (!(found.manifest.os || []).includes(platform) || !(found.manifest.cpu || []).includes(arch)) continue;
    const file = platform === "win32" ? "velesdb-hooks.exe" : "velesdb-hooks";
    const binary = path.join(found.dir, "bin", file);
    const problem = found.manifest.name !== name || found.manifest.version !== manifest.version
      ? "is version " + JSON.stringify(String(found.manifest.version)) + " of " + JSON.stringify(String(found.manifest.name)) + ", not " + name + " " + manifest.version
      : untrusted([binary, path.join(found.dir, "bin"), path.join(found.dir, "package.json"), found.dir, path.dirname(found.dir)]);
    if (problem) refused.push(found.dir + " " + problem);
    else fitting.push({ binary, libc: (found.manifest.libc || [])[0] });
  }
  // npm older than 10.4 ignores `libc` and installs both Linux builds; the C library this
  // Node runs on decides then.
  const chosen = fitting.length > 1 ? fitting.find((candidate) => candidate.libc === detectLibc()) || fitting[0] : fitting[0];
  if (chosen) return { binary: chosen.binary };
  const download = "https://github.com/" + REPOSITORY + "/releases/latest/download";
  const release = "install the release instead: curl -fsSL " + download + "/install.sh | sh, or in PowerShell: irm " + download + "/install.ps1 | iex";
  if (refused.length > 0) {
    return { problem: "velesdb-hooks: refusing to run the platform package " + refused[0] + "; reinstall velesdb-hooks with npm, or " + release };
  }
  return {
    problem: "velesdb-hooks: no binary for " + platform + "-" + arch + " is installed (unsupported platform, or installed with --omit=optional); " + release,
  };
}

/**
 * platformPackage(own, name) → { dir, manifest } where npm puts this launcher's dependency:
 * its own node_modules (nested), else the node_modules holding the launcher (hoisted); nowhere else.
 */
function platformPackage(own, name) {
  const places = [path.join(own, "node_modules", name)];
  if (path.basename(path.dirname(own)) === "node_modules") places.push(path.join(path.dirname(own), name));
  for (const dir of places) {
    let text;
    try {
      text = fs.readFileSync(path.join(dir, "package.json"), "utf8");
    } catch {
      continue;
    }
    try {
      return { dir: fs.realpathSync(dir), manifest: JSON.parse(text) };
    } catch {
      return { dir, manifest: {} };
    }
  }
  return undefined;
}

/** untrusted(paths) → why one of them may not be trusted (not owned by the caller or root, or writable by group or others), or "". */
function untrusted(paths) {
  if (process.platform === "win32" || typeof process.getuid !== "function") return "";
  const uid = process.getuid();
  for (const p of paths) {
    let st;
    try {
      st = fs.statSync(p);
    } catch (error) {
      return "is incomplete (" + path.basename(p) + ": " + (error.code || "unreadable") + ")";
    }
    if (st.uid !== uid && st.uid !== 0) return "belongs to uid " + st.uid + " (" + path.basename(p) + "), neither this user (uid " + uid + ") nor root";
    if ((st.mode & 0o022) !== 0) return "is writable by " + ((st.mode & 0o002) !== 0 ? "others" : "its group") + " (" + path.basename(p) + ", mode " + (st.mode & 0o777).toString(8) + ")";
  }
  return "";
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
