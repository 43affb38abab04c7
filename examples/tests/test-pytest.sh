#!/bin/sh
# examples/pytest: a user's pytest suite whose fixture starts a two-host fabric and runs rping's
# server on A and client on B, run with pytest against rdmaemu on PATH. Two-host traffic stays
# inside the hosts' `rdmaemu run` sandboxes: skipped (77) where the machine permits none.
set -u
. "${RDMAEMU_TOP_SRCDIR:-.}/examples/tests/example_env.sh"
# Debian's python3-pytest installs pytest-3 (and pytest)
pytest=$(command -v pytest-3 || command -v pytest) ||
	{ echo "SKIP: python3-pytest is not installed (scripts/bootstrap)"; exit 77; }
command -v rping >/dev/null 2>&1 || { echo "SKIP: rping (rdmacm-utils) is not installed"; exit 77; }
inside=$(rdmaemu run --fabric "$s/examples/pytest/two-hosts.fabric" --node A -- readlink /proc/self/ns/net 2>/dev/null)
rdmaemu daemon stop >/dev/null 2>&1
if [ -z "$inside" ] || [ "$inside" = "$(readlink /proc/self/ns/net)" ]; then
	echo "SKIP: rdmaemu run has no sandbox (network namespace) here"
	exit 77
fi
example_copy pytest
"$pytest" -q -p no:cacheprovider --basetemp="$t/pytest-tmp" --junitxml="$t/junit.xml" . >"$t/pytest.log" 2>&1 ||
	{ cat "$t/pytest.log"; exit 1; }
grep -qE '^1 passed' "$t/pytest.log" || { echo "FAIL: pytest did not pass one test"; cat "$t/pytest.log"; exit 1; }
grep -q 'name="test_rping_a_to_b"' "$t/junit.xml" || { echo "FAIL: test_rping_a_to_b did not run"; exit 1; }
echo "ok pytest: rping from B to A on a two-host fabric"
