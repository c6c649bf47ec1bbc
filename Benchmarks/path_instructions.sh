#!/bin/bash
# Instructions per operation of each resolve path (`WeaveBenchmarks cases`), counted by callgrind:
# a run of N operations minus a run of none, so start-up and calibration drop out. Unlike ns/op,
# the count does not move with this VM's phases, so it compares two builds of WeaveDI exactly.
# Clock reads count as the instructions that emulate them (valgrind), not as their time; hashing
# is seeded the same in every run (SWIFT_DETERMINISTIC_HASHING), or named look-ups would vary.
# Usage: Benchmarks/path_instructions.sh WEAVEBENCHMARKS_BINARY [CASE-PREFIX…]  (default: every case)
# Environment: WEAVE_PROFILE_AFTER_OVERRIDE=1 / WEAVE_PROFILE_AFTER_VALUES=1 pass through (see main.swift).
set -euo pipefail
binary=$1
shift
operations=200000
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Without debug information valgrind starts in seconds rather than a minute.
objcopy --strip-debug "$binary" "$work/bench"
count() { # CASE OPERATIONS -> instructions of the whole run
    SWIFT_DETERMINISTIC_HASHING=1 WEAVE_PROFILE_OPERATIONS=$2 valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/bench" profile "$1" 1 >/dev/null 2>&1
    awk '/^summary:/ { print $2 }' "$work/out"
}
if [ $# -eq 0 ]; then mapfile -t cases < <("$binary" cases); else cases=("$@"); fi
echo "| path | instructions/op |"
echo "|---|---:|"
for name in "${cases[@]}"; do
    none=$(count "$name" 0)
    some=$(count "$name" "$operations")
    echo "| $name | $(awk -v a="$none" -v b="$some" -v n="$operations" 'BEGIN { printf "%.1f", (b - a) / n }') |"
done
