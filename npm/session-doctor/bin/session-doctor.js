#!/usr/bin/env node
// The `session-doctor` command of the npm package: runs the prebuilt binary of
// this platform, which npm installs as one optional dependency of this package
// (`@session-doctor/<platform>-<arch>`, as esbuild and biome ship theirs), with
// the arguments, standard streams and exit status passed through.
// SESSION_DOCTOR_BINARY names another binary to run.
"use strict";

const { spawnSync } = require("child_process");
const path = require("path");

const PACKAGES = {
  "darwin arm64": "@session-doctor/darwin-arm64",
  "darwin x64": "@session-doctor/darwin-x64",
  "linux arm64": "@session-doctor/linux-arm64",
  "linux x64": "@session-doctor/linux-x64",
  "win32 x64": "@session-doctor/win32-x64",
};

function fail(message) {
  process.stderr.write(`session-doctor (npm): ${message}\n`);
  process.exit(2);
}

function binary() {
  if (process.env.SESSION_DOCTOR_BINARY) {
    return process.env.SESSION_DOCTOR_BINARY;
  }
  const platform = `${process.platform} ${process.arch}`;
  const pkg = PACKAGES[platform];
  if (!pkg) {
    fail(`no prebuilt binary for ${platform}; build it with Rust: cargo install session-doctor`);
  }
  const exe = process.platform === "win32" ? "session-doctor.exe" : "session-doctor";
  let manifest;
  try {
    // Beside this package (npm's layout), or in the project it runs in.
    manifest = require.resolve(`${pkg}/package.json`, { paths: [__dirname, process.cwd()] });
  } catch {
    fail(
      `${pkg}, the package holding the binary for ${platform}, is not installed ` +
        "(npm leaves optional dependencies out with --omit=optional or --no-optional): reinstall without it",
    );
  }
  return path.join(path.dirname(manifest), "bin", exe);
}

const exe = binary();
const run = spawnSync(exe, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
if (run.error) {
  fail(`cannot run ${exe}: ${run.error.message}`);
}
if (run.signal) {
  process.kill(process.pid, run.signal);
}
process.exit(run.status === null ? 1 : run.status);
