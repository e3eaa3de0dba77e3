#!/usr/bin/env bash
# The verifier (Harbor's layout): run the hidden tests against the work dir and write 1 or 0 to
# the reward file. Needs python3 (3.11 or later) with pytest, nothing else, no network. The
# paths default to Harbor's; the bench harness passes its own.
set -u
TESTS_DIR="${AB_TESTS_DIR:-/tests}"
WORK="${AB_WORK_DIR:-/app}"
REWARD="${AB_REWARD_FILE:-/logs/verifier/reward.txt}"
mkdir -p "$(dirname "$REWARD")"
RESULTS="$(mktemp -d)"
verdict=0
# The work dir is the implementer's. Nothing in it runs before the hidden tests import it: it is
# not on the start-up path (no PYTHONPATH; PYTHONSAFEPATH keeps the current folder off), so no
# pytest.py or sitecustomize.py of its own; pytest adds it to sys.path itself (-o pythonpath).
# No ini file, conftest.py, plugin or cache of its choosing takes part (an empty config, the
# hidden tests' folder as root, no plugin autoloading); nothing is written into it; the reward
# file's path is not passed on.
if cd "$WORK"; then
    env -u PYTHONPATH -u AB_REWARD_FILE -u AB_TESTS_DIR -u AB_WORK_DIR \
        PYTHONSAFEPATH=1 PYTHONDONTWRITEBYTECODE=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 \
        python3 -m pytest -q -p no:cacheprovider -c /dev/null --rootdir "$TESTS_DIR" \
        -o "pythonpath='$WORK'" --junitxml "$RESULTS/junit.xml" "$TESTS_DIR"
    status=$?
    # Exit status 0 alone is no pass: code under test can end the process with 0 mid-run, or
    # skip the tests that import it. The report pytest writes last must count tests, and none
    # failed, errored or was skipped.
    if [ "$status" = 0 ] && python3 -I - "$RESULTS/junit.xml" <<'PY'; then
import sys
import xml.etree.ElementTree as ET

try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    sys.exit(1)
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
count = {key: sum(int(s.get(key, 0)) for s in suites) for key in ("tests", "failures", "errors", "skipped")}
sys.exit(0 if count["tests"] > 0 and count["failures"] + count["errors"] + count["skipped"] == 0 else 1)
PY
        verdict=1
    fi
fi
rm -rf "$RESULTS"
# Written last, whatever the run wrote there.
echo "$verdict" >"$REWARD"
