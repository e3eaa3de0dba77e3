#!/usr/bin/env bash
# The verifier (Harbor's layout): run the hidden tests against the work dir and write 1 or 0 to
# the reward file. Needs python3 with pytest, nothing else, no network. The paths default to
# Harbor's; the bench harness passes its own.
set -u
TESTS_DIR="${AB_TESTS_DIR:-/tests}"
WORK="${AB_WORK_DIR:-/app}"
REWARD="${AB_REWARD_FILE:-/logs/verifier/reward.txt}"
mkdir -p "$(dirname "$REWARD")"
echo 0 >"$REWARD"
cd "$WORK" || exit 0
# No plugin, ini file, conftest or cache of the work dir's choosing takes part: the rootdir is
# the hidden tests' folder, the config an empty file, and nothing is written into either tree.
export PYTHONDONTWRITEBYTECODE=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTHONPATH="$WORK"
if python3 -m pytest -q -p no:cacheprovider -c /dev/null --rootdir "$TESTS_DIR" "$TESTS_DIR"; then
    echo 1 >"$REWARD"
fi
