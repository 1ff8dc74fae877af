#!/usr/bin/env bash
# Issue 33's benches that the README's performance table needs measured at idle, in
# sequence, sized to finish within 12 minutes on 2 cores, writing each bench's output and a
# summary (one line per figure against its target) to bench/results/idle-<UTC time>/.
#
#   bash bench/idle_suite.sh            # the idle run (the machine otherwise quiet)
#   bash bench/idle_suite.sh --tiny     # a dry run on a tiny corpus, small sizes (~2 min)
#
# Each bench records the load it ran at and marks figures above load 1.5 "not comparable";
# the summary repeats that mark. Each bench has a time limit (the sum is 12 minutes); one
# that hits it is reported as such and the suite goes on. Needs the corpus of
# bench/fetch_corpus.py (~/.cache/agentls-bench/corpus, or AGENTLS_BENCH_CORPUS).
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f "$repo/.venv/bin/activate" ]; then
    # shellcheck disable=SC1091
    source "$repo/.venv/bin/activate"
fi
corpus="${AGENTLS_BENCH_CORPUS:-$HOME/.cache/agentls-bench/corpus}"
tiny=0
[ "${1:-}" = "--tiny" ] && tiny=1

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$here/results/idle-$stamp"
[ "$tiny" = 1 ] && out="$here/results/dry-run-$stamp"
mkdir -p "$out"
work="$(mktemp -d -t agentls-idle-suite-XXXXXX)"
trap 'rm -rf "$work"' EXIT

if [ "$tiny" = 1 ]; then
    # the same layout as the real corpus (depcache_bench needs its four folders), 25 files each
    for name in django three types-node typescript; do
        (cd "$corpus/$name" && find . -type f \( -name '*.py' -o -name '*.ts' -o -name '*.js' \) |
            sort | head -25 | while read -r f; do
                mkdir -p "$work/corpus/$name/$(dirname "$f")"
                cp "$f" "$work/corpus/$name/$f"
            done)
    done
    corpus="$work/corpus"
    cli=(--runs 1); rss=(--starts 1); edits=(--edits 30); grep_sizes=(--repeat 1 --only Query --no-check)
    first=(--starts 1); index=(--repeat 1); deps=(--rounds 1)
else
    cli=(--runs 8); rss=(--starts 3); edits=(--edits 1000); grep_sizes=(--repeat 2 --no-check)
    first=(--starts 6); index=(--repeat 1); deps=(--rounds 1)
fi

{
    echo "idle suite $stamp (tiny=$tiny), corpus $corpus, git $(git -C "$repo" rev-parse --short HEAD 2>/dev/null)"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
} | tee "$out/conditions.txt"

suite_start=$SECONDS
run() {  # run NAME LIMIT_S SCRIPT ARGS...
    local name="$1" limit="$2"
    shift 2
    local began=$SECONDS
    echo "== $name ($*), limit ${limit}s, load $(cut -d' ' -f1 /proc/loadavg)"
    # unbuffered: a bench stopped at its limit keeps the figures it printed
    (cd "$here" && PYTHONUNBUFFERED=1 timeout --kill-after=10 "$limit" python "$@") >"$out/$name.txt" 2>&1
    local rc=$?
    [ "$rc" = 124 ] && echo "TIME LIMIT (${limit}s) reached" >>"$out/$name.txt"
    echo "   done in $((SECONDS - began))s, exit $rc"
}

run cli_latency 100 cli_latency.py "${cli[@]}"
run idle_rss 70 idle_rss.py "${rss[@]}"
run edit_stall 110 edit_stall.py "${edits[@]}"
run grep_first 70 grep_first.py --corpus "$corpus" "${first[@]}"
run grep_bench 190 grep_bench.py --corpus "$corpus" "${grep_sizes[@]}"
run index_bench 80 index_bench.py --corpus "$corpus" "${index[@]}"
run depcache_bench 100 depcache_bench.py --corpus "$corpus" "${deps[@]}"

echo "suite took $((SECONDS - suite_start))s; load after: $(cut -d' ' -f1-3 /proc/loadavg)" |
    tee -a "$out/conditions.txt"
python "$here/idle_summary.py" "$out" | tee "$out/summary.txt"
echo "results: $out"
