#!/usr/bin/env bash
# Editor integrations, as CI runs them (.ci/run, after `cargo build`):
#   SR_BIN=target/debug/sr editors/ci.sh
# VS Code: npm ci, type-check, bundle, grammar and unit tests, .vsix (offline).
# Neovim: the plugin's headless test against SR_BIN, on the nvim on PATH
# (0.7+: apt-get install neovim) and on Neovim 0.11 (.ci/setup installs it). Needs node 20+ and npm.
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
# Neovim 0.11 (native configuration; pulls diagnostics without refresh), as
# .ci/setup installs it.
nvim_011=${SR_NVIM_011:-${SR_NVIM_011_VENV:-$HOME/.cache/streetrace/nvim-0.11.4}/bin/nvim}
if [ -x "$nvim_011" ]; then
  step "neovim 0.11: headless plugin test"
  NVIM="$nvim_011" "$root/editors/neovim/test/run.sh"
elif [ -n "${CI:-}" ]; then
  echo "Neovim 0.11 is missing at $nvim_011: run .ci/setup" >&2
  exit 1
else
  echo "!!! SKIPPED the Neovim 0.11 test: no $nvim_011 (run .ci/setup) !!!"
fi
