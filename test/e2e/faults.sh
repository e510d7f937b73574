#!/usr/bin/env bash
# The fault campaign's short form: two trials of tools/faults with fixed seeds
# (each migrates a simulated fleet to DRA and back under three random faults,
# judged by the independent observer tools/cmd/faultwatch). A violation or an
# end state not reached fails the test; the failing trial's folder is kept.
set -euo pipefail
exec "$(dirname "$0")/../../tools/faults" --trials 2 --seed 7 --faults 3
