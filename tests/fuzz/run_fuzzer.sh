#!/usr/bin/env bash
# Runs a fuzzer (session or cudart) for GVIRTUS_FUZZ_SECONDS (default 60) from the committed
# seeds plus what earlier runs found (CORPUS, kept in the build tree), and prints the run's
# figures. usage: run_fuzzer.sh FUZZER SEEDS CORPUS
# Exit status: libFuzzer's (non-zero when it found a crash, a leak or a sanitizer report; the
# report is printed and the reproducer is written next to CORPUS, named in the report).
set -uo pipefail
fuzzer="$(realpath "$1")" seeds="$(realpath "$2")" corpus="$(realpath -m "$3")"
seconds="${GVIRTUS_FUZZ_SECONDS:-60}"
mkdir -p "$corpus"
cd "$(dirname "$corpus")"
log="$corpus.log"
"$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 "$corpus" "$seeds" > "$log" 2>&1
status=$?
if [ "$status" -ne 0 ]; then
  grep -vE "^#[0-9]+\s+(NEW|REDUCE|pulse)" "$log" | tail -80
else
  grep -E "^Done|^stat::" "$log"
  echo "corpus: $(ls "$corpus" | wc -l) inputs in $corpus (seeds: $seeds)"
fi
exit "$status"
