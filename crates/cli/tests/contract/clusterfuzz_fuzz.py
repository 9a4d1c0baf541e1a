"""A fuzz task through ClusterFuzz's own libFuzzer engine (the `clusterfuzz`
PyPI package), as ClusterFuzzLite runs one: prepare, fuzz, then the merge of
the new units, whose stats it prints as one JSON object on the last line.

Usage: python clusterfuzz_fuzz.py TARGET CORPUS_DIR ARTIFACT_DIR SECONDS
"""
import json
import os
import sys

import clusterfuzz.environment
import clusterfuzz.fuzz

target, corpus, artifacts, seconds = sys.argv[1:5]
engine = clusterfuzz.fuzz.get_engine('libFuzzer')
with clusterfuzz.environment.Environment('libFuzzer', 'address', target,
                                         interactive=True):
    options = engine.prepare(corpus, target, os.path.dirname(target))
    result = engine.fuzz(target, options, artifacts, int(seconds))
print(json.dumps(result.stats, default=str))
