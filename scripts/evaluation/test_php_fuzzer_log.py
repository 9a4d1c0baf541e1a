"""Parsing nikic/php-fuzzer's output for `scripts/evaluate --php-fuzzer`:
`python3 -m unittest scripts/evaluation/test_php_fuzzer_log.py`.

testdata/php-fuzzer-json-parser.log is an excerpt of a real campaign's
fuzz.log (php-fuzzer 23e440d on fixtures/json-parser/target.php for 8 s):
lines picked from it, none changed but the run folder, written RUN.
"""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.campaigns import parse_php_fuzzer_log, php_fuzzer_finding_key  # noqa: E402

SAMPLE = Path(__file__).resolve().parent / "testdata" / "php-fuzzer-json-parser.log"


def sample_lines():
    lines = []
    for raw in SAMPLE.read_text().splitlines():
        arrived, _, text = raw.partition("\t")
        lines.append((float(arrived), text))
    return lines


class PhpFuzzerLog(unittest.TestCase):
    def test_runs_and_exec_per_second_come_from_the_runner_line(self):
        parsed = parse_php_fuzzer_log(sample_lines())
        self.assertEqual(parsed["runs"], 166128)
        self.assertEqual(parsed["fuzz_seconds"], 7.874)
        self.assertEqual(parsed["execs_per_sec"], round(166128 / 7.874, 1))

    def test_without_the_runner_line_the_last_status_line_counts(self):
        lines = [l for l in sample_lines() if not l[1].startswith("EVALUATE-PHP-FUZZER")]
        parsed = parse_php_fuzzer_log(lines)
        self.assertEqual((parsed["runs"], parsed["fuzz_seconds"]), (166031, 8.0))

    def test_features_over_time_follow_new_and_reduce_lines(self):
        features = parse_php_fuzzer_log(sample_lines())["features_over_time"]
        self.assertEqual(len(features), 15)
        self.assertEqual(features[0], (0.146, 115))
        self.assertEqual(features[-1], (8.013, 630))

    def test_each_crash_report_is_a_finding_at_the_second_it_arrived(self):
        parsed = parse_php_fuzzer_log(sample_lines())
        self.assertEqual(parsed["crash_reports"], 3)
        self.assertEqual(parsed["duplicate_crashes"], 1)
        self.assertFalse(parsed["capped"])
        self.assertEqual(parsed["findings"], {
            "[2] Uninitialized string offset 2 at /work/wt-bench/fixtures/json-parser/JsonParser.php:262": 0.618,
            "[2] Uninitialized string offset 5 at /work/wt-bench/fixtures/json-parser/JsonParser.php:262": 0.637,
            "TypeError: Fixture\\JsonParser::utf8(): Argument #1 ($code) must be of type int, null given, called in "
            "/work/wt-bench/fixtures/json-parser/JsonParser.php on line 220 and defined in "
            "/work/wt-bench/fixtures/json-parser/JsonParser.php:239": 6.998,
        })

    def test_the_crash_cap_and_a_crashing_corpus_are_noticed(self):
        parsed = parse_php_fuzzer_log([(1.0, "Maximum of 100 crashes reached, aborting"),
                                       (0.5, "CORPUS CRASH in /c/x.txt!")])
        self.assertTrue(parsed["capped"])
        self.assertTrue(parsed["corpus_crash"])

    def test_an_exception_keeps_its_first_line_as_key(self):
        self.assertEqual(php_fuzzer_finding_key("Error: Timeout of 1 seconds exceeded in /t/a.php:12"),
                         "Error: Timeout of 1 seconds exceeded in /t/a.php:12")


if __name__ == "__main__":
    unittest.main()
