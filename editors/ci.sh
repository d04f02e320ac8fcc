#!/usr/bin/env bash
# Editor integrations, as CI runs them (.ci/run, after `cargo build`):
#   SR_BIN=target/debug/sr editors/ci.sh
# VS Code: npm ci, type-check, bundle, grammar and unit tests, .vsix (offline).
# Neovim: the plugin's headless test against SR_BIN (needs nvim 0.7+:
# apt-get install neovim). Needs node 20+ and npm.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SR_BIN=$(realpath "${SR_BIN:?set SR_BIN to the sr binary, e.g. target/debug/sr}")
export SR_BIN
step() { echo "==> $*"; }

cd "$root/editors/vscode"
step "vscode: npm ci"
npm ci --no-audit --no-fund --loglevel=error

step "vscode: version matches the toolchain's"
toolchain=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
extension=$(node -p 'require("./package.json").version')
if [ "$toolchain" != "$extension" ]; then
  echo "editors/vscode/package.json has version $extension, Cargo.toml $toolchain" >&2
  exit 1
fi

step "vscode: type-check"
npm run --silent typecheck
step "vscode: grammar tests"
npm run --silent test:grammar
step "vscode: unit tests"
npm run --silent test:unit
step "vscode: package (bundles first)"
rm -f ./*.vsix
npm run --silent package -- --out "streetrace-$extension.vsix" | tail -n 1

step "neovim: headless plugin test"
"$root/editors/neovim/test/run.sh"
