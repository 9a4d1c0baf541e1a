"""What ClusterFuzz makes of a crash report: its stack analyzer (the
`clusterfuzz` PyPI package) parses the output read from stdin, as a fuzz
task's crash does, and prints the crash type, the crash state and whether
ClusterFuzz treats it as a security issue, as one JSON object.

Usage: php-fuzz libfuzzer ... | python clusterfuzz_stack.py
"""
import json
import sys

from clusterfuzz._internal.crash_analysis import crash_analyzer
from clusterfuzz.stacktraces import StackParser

output = sys.stdin.read()
parser = StackParser(symbolized=True, detect_ooms_and_hangs=True, include_ubsan=True)
state = parser.parse(output)
print(json.dumps({
    "crash_type": state.crash_type,
    "crash_state": state.crash_state,
    "security": crash_analyzer.is_security_issue(output, state.crash_type, state.crash_address),
}))
