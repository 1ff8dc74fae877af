# Shared by the install scripts that need Debian packages (sourced, never run on its own: it
# lives in lib/ so that scripts/test-deps.sh, which runs every scripts/deps/*.sh, skips it).
# Callers run from the repository root with `set -euo pipefail`.
#
# Another apt or dpkg may hold the package locks (unattended upgrades on a real machine, or a
# second install script of ours running in parallel). Nothing here fails on "Could not get
# lock": our own scripts take turns (flock), `apt-get install` waits for dpkg's lock
# (-o DPkg::Lock::Timeout), and `apt-get update`, which does not honour that option for the
# lists lock, is retried; each wait says which process holds the lock, for 10 minutes at most.

APT_LOCK_WAIT=600
APT_SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && APT_SUDO="sudo"

# apt_install [--recommends] PKG...: `apt-get update` (once per shell) then `apt-get install`.
apt_install() {
  local recommends=(--no-install-recommends)
  if [ "${1:-}" = "--recommends" ]; then
    recommends=()
    shift
  fi
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "${AGENTLS_APT_UPDATED:-}" ]; then
    apt_locked apt_retrying_update
    AGENTLS_APT_UPDATED=1
  fi
  apt_say_who_holds_the_lock
  apt_locked $APT_SUDO apt-get -o DPkg::Lock::Timeout=$APT_LOCK_WAIT -qq install -y \
    "${recommends[@]}" "$@" >/dev/null
}

# apt_locked CMD...: runs CMD while holding agentls's own apt lock (our scripts take turns).
apt_locked() {
  local lock="${TMPDIR:-/tmp}/agentls-apt.lock"
  (
    flock -w "$APT_LOCK_WAIT" 9 || { echo "apt: waited ${APT_LOCK_WAIT}s for $lock" >&2; exit 1; }
    "$@"
  ) 9>"$lock"
}

# `apt-get update`, retried while another process holds the lists lock.
apt_retrying_update() {
  local deadline=$((SECONDS + APT_LOCK_WAIT)) out
  while ! out=$($APT_SUDO apt-get -o DPkg::Lock::Timeout=$APT_LOCK_WAIT -qq update 2>&1); do
    if [[ "$out" != *"Could not get lock"* ]] || [ "$SECONDS" -ge "$deadline" ]; then
      echo "$out" >&2
      return 1
    fi
    apt_say_who_holds_the_lock
    sleep 3
  done
}

# Prints which process holds an apt/dpkg lock, if one does (apt waits for it).
apt_say_who_holds_the_lock() {
  local lock holder
  for lock in /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock; do
    holder=$(fuser "$lock" 2>/dev/null | tr -s ' ' | sed 's/^ //') || true
    if [ -n "$holder" ]; then
      echo "apt: $lock is held by $(ps -o pid=,comm= -p "${holder%% *}" 2>/dev/null | sed "s/^ *//" ||
        echo "pid $holder"); waiting for it (at most ${APT_LOCK_WAIT}s)"
      return 0
    fi
  done
}
