#!/usr/bin/env bash
# Installs bubblewrap (Debian's `bubblewrap`: the `bwrap` binary agentls runs every command,
# test and linter in) and checks that it can actually build a sandbox here. A fast no-op
# when it is already installed. Idempotent; safe on every CI run (as root or with sudo).
#
#   bash scripts/deps/sandbox.sh
#
# The check runs `bwrap` the way agentls does (new user, PID, network and mount namespaces);
# if the kernel refuses (no user namespaces), it prints the reason and the fix but does not
# fail: agentls then falls back as docs/sandbox.md describes, and the tests say so.
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/deps/lib/apt.sh
source scripts/deps/lib/apt.sh
log() { echo "sandbox-deps: $*"; }

if ! command -v bwrap >/dev/null; then
  t0=$SECONDS
  log "apt-get install bubblewrap"
  apt_install bubblewrap
  log "bubblewrap installed in $((SECONDS - t0))s"
fi

if bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL \
  --ro-bind / / --proc /proc --dev /dev --tmpfs /tmp -- /bin/true 2>/tmp/agentls-bwrap-check.$$; then
  log "$(bwrap --version) builds sandboxes here (uid $(id -u))"
else
  log "bwrap is installed but cannot build a sandbox here: $(cat /tmp/agentls-bwrap-check.$$)"
  log "fix: enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1," \
    "or kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 24.04+)"
fi
rm -f /tmp/agentls-bwrap-check.$$
