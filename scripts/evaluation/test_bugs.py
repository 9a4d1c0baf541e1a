"""The known-bug mode's parts (`scripts/evaluate --bugs`):
`python3 -m unittest scripts/evaluation/test_bugs.py`.

Matching a finding's report to a bug, reading repro.php's lines, censoring
times at --seconds, bugs found per trial and the pairwise statistics on
them, the generated target, selecting bugs, and fetching a library with no
mirror (a local git repository stands for GitHub).
"""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation import bug_catalog, bug_report, bugs, stats  # noqa: E402
from evaluation.bugs import BugRun, match_finding  # noqa: E402

ROOT = Path("/w/bug/vulnerable")
WARNING = {"kind": "warning", "class": "Warning", "message": "Undefined array key", "site": "src/Parser.php:12"}
TIMEOUT = {"kind": "timeout", "class": "timeout", "site_files": ["src/Lexer.php"]}
OVERFLOW = {"kind": "stack-overflow", "class": "stack-overflow", "site_files": ["src/Block.php"]}


def report(kind="warning", cls="Warning", message='Undefined array key "x"', file="/w/bug/vulnerable/src/Parser.php",
           line=12, trace=""):
    return {"kind": kind, "class": cls, "message": message, "file": file, "line": line, "trace": trace}


class MatchingAFinding(unittest.TestCase):
    def test_a_warning_matches_on_kind_class_message_and_site(self):
        self.assertTrue(match_finding(report(), WARNING, ROOT))
        self.assertFalse(match_finding(report(line=13), WARNING, ROOT), "another line")
        self.assertFalse(match_finding(report(cls="Deprecated"), WARNING, ROOT), "another class")
        self.assertFalse(match_finding(report(kind="exception"), WARNING, ROOT), "another kind")
        self.assertFalse(match_finding(report(message="Trying to access array offset on null"), WARNING, ROOT),
                         "another message on the same line")
        self.assertFalse(match_finding(report(file="/w/bug/vulnerable/lib/Parser.php"), WARNING, ROOT), "another file")

    def test_the_site_must_be_inside_the_vulnerable_tree(self):
        # the fixed tree has the same relative path: not the fuzzed code
        self.assertFalse(match_finding(report(file="/w/bug/fixed/src/Parser.php"), WARNING, ROOT))
        self.assertFalse(match_finding(report(file="/w/bug/vulnerable-old/src/Parser.php"), WARNING, ROOT))
        self.assertFalse(match_finding(report(file="src/Parser.php"), WARNING, ROOT))

    def test_an_exception_matches_on_its_class(self):
        expected = {"kind": "exception", "class": "TypeError", "message": "abs()", "site": "Parser.php:718"}
        found = report(kind="exception", cls="TypeError", message="abs(): Argument #1 ($num) must be of type int",
                       file="/w/bug/vulnerable/Parser.php", line=718)
        self.assertTrue(match_finding(found, expected, ROOT))
        self.assertFalse(match_finding(dict(found, **{"class": "ValueError"}), expected, ROOT))

    def test_a_timeout_matches_on_the_innermost_frame_inside_the_library(self):
        trace = ("#0 Acme\\Lexer->next() at /w/bug/vulnerable/src/Lexer.php:40\n"
                 "#1 Acme\\Parser->parse() at /w/bug/vulnerable/src/Parser.php:9\n"
                 "#2 {closure}() at /w/bug/target.php:30\n")
        found = report(kind="timeout", cls="Timeout", file="/w/bug/vulnerable/src/Lexer.php", line=40, trace=trace)
        self.assertTrue(match_finding(found, TIMEOUT, ROOT))
        # caught in a callback the target defines, called from the loop
        callback = "#0 class@anonymous->text() at /w/bug/target.php:12\n" + trace
        self.assertTrue(match_finding(dict(found, file="/w/bug/target.php", trace=callback), TIMEOUT, ROOT))
        # caught in the library, in a file outside the loop: another hang
        other = "#0 Acme\\Other->slow() at /w/bug/vulnerable/src/Other.php:3\n" + trace
        self.assertFalse(match_finding(dict(found, trace=other), TIMEOUT, ROOT))
        self.assertFalse(match_finding(dict(found, kind="warning"), TIMEOUT, ROOT))

    def test_a_stack_overflow_needs_a_frame_of_the_recursion(self):
        trace = ("#0 Acme\\Parser::line() at /w/bug/vulnerable/src/Parser.php:69\n"
                 "#1 array_map() at [internal]\n"
                 "#2 Acme\\Block->render() at /w/bug/vulnerable/src/Block.php:113\n")
        found = report(kind="stack-overflow", cls="StackOverflow", file="/w/bug/vulnerable/src/Parser.php", line=69,
                       trace=trace)
        self.assertTrue(match_finding(found, OVERFLOW, ROOT))
        self.assertFalse(match_finding(dict(found, trace=trace.replace("Block.php", "Inline.php")), OVERFLOW, ROOT))
        self.assertFalse(match_finding(dict(found, kind="timeout"), OVERFLOW, ROOT))
        anywhere = {"kind": "stack-overflow", "class": "stack-overflow"}
        self.assertTrue(match_finding(found, anywhere, ROOT))
        self.assertFalse(match_finding(dict(found, trace="#0 f() at /elsewhere/x.php:1\n"), anywhere, ROOT))


class ReproLines(unittest.TestCase):
    def test_repro_output_is_matched_like_a_report(self):
        self.assertTrue(bug_catalog.matches('BUG Warning: Undefined array key "x" @ src/Parser.php:12', WARNING))
        self.assertFalse(bug_catalog.matches('BUG Warning: Undefined array key "x" @ src/Parser.php:13', WARNING))
        self.assertFalse(bug_catalog.matches("BUG Notice: Undefined array key 1 @ src/Parser.php:12", WARNING))
        self.assertFalse(bug_catalog.matches("OK: no error", WARNING))

    def test_a_timeout_counts_in_its_site_files_or_outside_the_library(self):
        line = "BUG timeout: Maximum execution time of 5 seconds exceeded @ {}"
        self.assertTrue(bug_catalog.matches(line.format("src/Lexer.php:40"), TIMEOUT))
        self.assertTrue(bug_catalog.matches(line.format("/src/bugs/repro.php(57) : eval()'d code:1"), TIMEOUT))
        self.assertFalse(bug_catalog.matches(line.format("src/Other.php:3"), TIMEOUT))
        self.assertTrue(bug_catalog.matches("BUG stack-overflow: SIGSEGV @ ?", OVERFLOW))


def run(bug, config, trial, seconds_to_bug=None, kind="code-parser"):
    return BugRun(bug, kind, config, trial, Path("/nowhere"), seconds_to_bug=seconds_to_bug)


class Censoring(unittest.TestCase):
    def test_a_trial_that_did_not_find_the_bug_counts_as_the_full_time(self):
        runs = [run("b", "a", 1, 3.5), run("b", "a", 2), run("b", "a", 3, 12.0), run("b", "other", 1, 1.0)]
        times, found = bug_report.censored_times(runs, "b", "a", 3, 10.0)
        self.assertEqual(times, [3.5, 10.0, 10.0], "not found and past --seconds: censored at 10")
        self.assertEqual(found, [True, False, True])
        # a trial with no campaign at all (none ran) is not found either
        self.assertEqual(bug_report.censored_times(runs, "b", "a", 4, 10.0)[0][3], 10.0)

    def test_median_time_is_over_the_trials_that_found_it(self):
        runs = [run("b", "a", 1, 2.0), run("b", "a", 2), run("b", "a", 3, 6.0)]
        figures = bug_report.bug_figures(runs, "b", ["a"], 3, 30.0)["configs"]["a"]
        self.assertEqual((figures["found_in"], figures["trials"], figures["median_seconds"]), (2, 3, 4.0))
        self.assertEqual(figures["times"], [2.0, 30.0, 6.0])
        none = bug_report.bug_figures([run("b", "a", 1)], "b", ["a"], 1, 30.0)["configs"]["a"]
        self.assertIsNone(none["median_seconds"])

    def test_a12_on_time_is_the_chance_that_a_finds_it_faster(self):
        runs = [run("b", "fast", t, 1.0 * t) for t in (1, 2, 3)] + [run("b", "slow", t, 10.0 + t) for t in (1, 2)]
        runs.append(run("b", "slow", 3))  # not found: 20 s
        pair = bug_report.bug_figures(runs, "b", ["fast", "slow"], 3, 20.0)["pairwise"][0]
        self.assertEqual((pair["a"], pair["b"]), ("fast", "slow"))
        self.assertEqual(pair["a12_faster"], 1.0)
        self.assertAlmostEqual(pair["p_value"], stats.p_value([1, 2, 3], [11, 12, 20]))
        flipped = bug_report.bug_figures(runs, "b", ["slow", "fast"], 3, 20.0)["pairwise"][0]
        self.assertEqual(flipped["a12_faster"], 0.0)
        nobody = bug_report.bug_figures([], "b", ["fast", "slow"], 3, 20.0)["pairwise"][0]
        self.assertEqual((nobody["p_value"], nobody["a12_faster"]), (1.0, 0.5), "all censored: no difference")


class BugsPerTrial(unittest.TestCase):
    RUNS = [
        # config a: trial 1 finds x, y, z; trial 2 finds x; trial 3 finds x, z
        run("x", "a", 1, 1.0), run("y", "a", 1, 2.0, "other-format"), run("z", "a", 1, 3.0),
        run("x", "a", 2, 1.0), run("y", "a", 2, None, "other-format"), run("z", "a", 2),
        run("x", "a", 3, 1.0), run("y", "a", 3, None, "other-format"), run("z", "a", 3, 5.0),
        # config b: finds nothing but y in trial 2
        run("x", "b", 1), run("y", "b", 1, None, "other-format"), run("z", "b", 1),
        run("x", "b", 2), run("y", "b", 2, 9.0, "other-format"), run("z", "b", 2),
        run("x", "b", 3), run("y", "b", 3, None, "other-format"), run("z", "b", 3),
    ]

    def test_counts_per_trial(self):
        self.assertEqual(bug_report.bugs_per_trial(self.RUNS, ["x", "y", "z"], "a", 3), [3, 1, 2])
        self.assertEqual(bug_report.bugs_per_trial(self.RUNS, ["x", "y", "z"], "b", 3), [0, 1, 0])
        self.assertEqual(bug_report.bugs_per_trial(self.RUNS, ["y"], "a", 3), [1, 0, 0])

    def test_group_figures_and_pairwise(self):
        group = bug_report.group_figures(self.RUNS, ["x", "y", "z"], ["a", "b"], 3)
        self.assertEqual(group["bugs_per_trial"]["a"], {"values": [3, 1, 2], "median": 2, "mean": 2})
        self.assertEqual(group["bugs_per_trial"]["b"]["values"], [0, 1, 0])
        pair = group["pairwise"][0]
        # pairs (3,0)(3,1)(3,0)(1,0)(1,1)(1,0)(2,0)(2,1)(2,0): 8 wins, 1 tie
        self.assertAlmostEqual(pair["a12"], 8.5 / 9)
        self.assertAlmostEqual(pair["p_value"], stats.p_value([3, 1, 2], [0, 1, 0]))

    def test_the_summary_splits_by_kind(self):
        entries = [{"id": i, "library": "acme/x", "kind": k, "format": "f", "expected": WARNING,
                    "vulnerable_commit": "c"} for i, k in (("x", "code-parser"), ("y", "other-format"),
                                                            ("z", "code-parser"))]
        summary = bug_report.summarize(self.RUNS, entries, {"a": "", "b": "--no-cmp"}, 3, 10.0,
                                       [{"id": "w", "reason": "no mirror"}], "catalog.json")
        groups = summary["bug_groups"]
        self.assertEqual(groups["code-parser"]["bugs"], ["x", "z"])
        self.assertEqual(groups["code-parser"]["bugs_per_trial"]["a"]["values"], [2, 1, 2])
        self.assertEqual(groups["other-format"]["bugs_per_trial"]["b"]["values"], [0, 1, 0])
        self.assertEqual(groups["all"]["bugs_per_trial"]["a"]["values"], [3, 1, 2])
        self.assertEqual(summary["bugs"]["z"]["configs"]["a"]["found_in"], 2)
        page = bug_report.page(summary)
        for text in ("x", "no mirror", "P(A finds the bug faster than B)", "P(a trial of A finds more"):
            self.assertIn(text, page)
        self.assertNotIn("<script", page)


ENTRY = {
    "id": "acme-key", "library": "acme/tiny", "kind": "code-parser", "format": "tiny",
    "vulnerable_commit": "a" * 40, "vulnerable_tree": "b" * 40,
    "entry": "(new \\Acme\\Tiny\\Parser())->parse($input);",
    "allowed_exceptions": ["Acme\\Tiny\\ParseError"], "error_reporting": 8191,
    "autoload": {"psr4": {"Acme\\Tiny\\": "src/", "": "legacy/"}, "files": ["src/functions.php"]},
}


class Target(unittest.TestCase):
    def test_the_target_is_php_fuzzer_format_and_valid_php(self):
        text = bugs.target_php(ENTRY, Path("/w/it's/vulnerable"), {})
        self.assertIn("$config->setTarget(function (string $input): void {\n"
                      "    (new \\Acme\\Tiny\\Parser())->parse($input);\n});", text)
        self.assertIn("$config->setMaxLen(4096);", text)
        self.assertIn("$config->setAllowedExceptions([\\Acme\\Tiny\\ParseError::class]);", text)
        self.assertIn("error_reporting(8191);", text)
        self.assertIn("'Acme\\\\Tiny\\\\' => '/w/it\\'s/vulnerable/src/'", text)
        self.assertIn("require_once '/w/it\\'s/vulnerable/src/functions.php';", text)
        longer = bugs.target_php(dict(ENTRY, max_len=32768, allowed_exceptions=[]), Path("/w"), {})
        self.assertIn("$config->setMaxLen(32768);", longer)
        self.assertIn("$config->setAllowedExceptions([]);", longer)
        with tempfile.NamedTemporaryFile("w", suffix=".php") as f:
            f.write(text)
            f.flush()
            lint = subprocess.run(["php", "-l", f.name], capture_output=True, text=True)
        self.assertEqual(lint.returncode, 0, lint.stdout + lint.stderr)

    def test_the_autoloader_finds_classes_by_psr4_and_psr0(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "src").mkdir()
            (root / "legacy" / "Old").mkdir(parents=True)
            (root / "src" / "functions.php").write_text("<?php function acme_loaded() { return 'files'; }\n")
            (root / "src" / "Parser.php").write_text("<?php namespace Acme\\Tiny; class Parser { "
                                                     "function parse($s) { return \\Old_Thing::twice($s); } }\n")
            (root / "legacy" / "Old" / "Thing.php").write_text("<?php class Old_Thing { static function twice($s) "
                                                              "{ return $s . $s; } }\n")
            target = root / "target.php"
            target.write_text(bugs.target_php(ENTRY, root, {}))
            driver = ("<?php class Cfg { public $t; function setTarget($t) { $this->t = $t; } "
                      "function setMaxLen($n) {} function setAllowedExceptions($e) {} } $config = new Cfg; "
                      f"require {bugs.php_string(str(target))}; ($config->t)('ab'); "
                      "echo acme_loaded(), ' ', (new Acme\\Tiny\\Parser())->parse('xy');")
            out = subprocess.run(["php", "-r", driver[len("<?php "):]], capture_output=True, text=True)
        self.assertEqual(out.stdout, "files xyxy", out.stderr)


class Selecting(unittest.TestCase):
    CATALOG = {"bugs": [{"id": "a", "kind": "code-parser"}, {"id": "b", "kind": "other-format"},
                        {"id": "c", "kind": "code-parser"}]}

    def test_only_and_kind(self):
        ids = lambda entries: [e["id"] for e in entries]  # noqa: E731
        self.assertEqual(ids(bugs.select(self.CATALOG, None, None)), ["a", "b", "c"])
        self.assertEqual(ids(bugs.select(self.CATALOG, ["c", "a"], None)), ["a", "c"])
        self.assertEqual(ids(bugs.select(self.CATALOG, None, "code-parser")), ["a", "c"])
        self.assertEqual(ids(bugs.select(self.CATALOG, ["b"], "code-parser")), [])
        with self.assertRaisesRegex(SystemExit, "no bug nope"):
            bugs.select(self.CATALOG, ["a", "nope"], None)

    def test_a_missing_or_broken_catalog_is_a_clear_error(self):
        with self.assertRaisesRegex(SystemExit, "catalog /no/such.json"):
            bug_catalog.load_catalog(Path("/no/such.json"))
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write("{\"bugs\": 3}")
            f.flush()
            with self.assertRaisesRegex(SystemExit, "a `bugs` list"):
                bug_catalog.load_catalog(Path(f.name))


def git(*args, cwd=None):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


class Fetching(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.base = Path(self.tmp.name)
        origin = self.base / "remote" / "acme" / "tiny"
        origin.mkdir(parents=True)
        git("init", "--quiet", cwd=origin)
        (origin / "a.txt").write_text("one\n")
        git("add", "a.txt", cwd=origin)
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "one", cwd=origin)
        self.commit = git("rev-parse", "HEAD", cwd=origin)
        self.tree = git("rev-parse", "HEAD^{tree}", cwd=origin)
        self.remote = "file://" + str(self.base / "remote")

    def tearDown(self):
        self.tmp.cleanup()

    def test_without_a_mirror_the_commit_is_fetched_and_checked(self):
        mirrors, work = self.base / "mirrors", self.base / "work"
        dest = work / "bug" / "vulnerable"
        got = bugs.checked_export("acme/tiny", self.commit, self.tree, mirrors, work / "git", self.remote, dest, "t")
        self.assertEqual((got / "a.txt").read_text(), "one\n")
        self.assertTrue((work / "git" / "acme+tiny.git").is_dir(), "cached under --work")
        with self.assertRaisesRegex(bug_catalog.DigestMismatch, "the catalog says 0000"):
            bugs.checked_export("acme/tiny", self.commit, "0" * 40, mirrors, work / "git", self.remote,
                                work / "other", "t")
        self.assertFalse((work / "other").exists(), "a mismatching tree is never exported")

    def test_a_mirror_is_used_first(self):
        mirrors = self.base / "mirrors"
        git("clone", "--quiet", "--bare", str(self.base / "remote" / "acme" / "tiny"), str(mirrors / "acme+tiny" / "repo"))
        got = bug_catalog.fetch_commit("acme/tiny", self.commit, mirrors, self.base / "cache", "file:///nowhere")
        self.assertEqual(got, mirrors / "acme+tiny" / "repo")

    def test_unavailable_code_says_why(self):
        with self.assertRaisesRegex(bug_catalog.Unavailable, "no mirror of acme/ghost .* fetching file://"):
            bug_catalog.fetch_commit("acme/ghost", self.commit, self.base / "mirrors", self.base / "cache", self.remote)
        with self.assertRaisesRegex(bug_catalog.Unavailable, "fetching"):
            bug_catalog.fetch_commit("acme/tiny", "1" * 40, self.base / "mirrors", self.base / "cache", self.remote)


class Watching(unittest.TestCase):
    def test_each_report_is_read_once_when_whole_and_matched_ones_are_confirmed(self):
        with tempfile.TemporaryDirectory() as tmp:
            findings = Path(tmp)
            prep = bugs.Prepared({"expected": WARNING}, findings, ROOT, Path("/w/bug/fixed"), {}, findings / "t.php",
                                 findings)
            (findings / "crash-1.txt").write_bytes(b"AB")
            (findings / "crash-1.json").write_text('{"kind": "warn')  # being written
            (findings / "crash-2.txt").write_bytes(b"zz")
            (findings / "crash-2.json").write_text(json.dumps(report(line=99)))
            watch = bugs.Watch(prep, findings, 0.0)
            with mock.patch.object(bugs, "confirm", return_value=(True, {"vulnerable": "BUG"})) as confirm:
                watch.scan()
                self.assertEqual(confirm.call_count, 0, "no match yet: crash-2 is elsewhere, crash-1 half written")
                (findings / "crash-1.json").write_text(json.dumps(report()))
                watch.scan()
                watch.scan()
            confirm.assert_called_once_with(prep, b"AB")
            self.assertEqual([c["artifact"] for c in watch.confirmed], ["crash-1.txt"])
            with mock.patch.object(bugs, "confirm", return_value=(False, {"vulnerable": "BUG", "fixed": "BUG"})):
                (findings / "crash-3.txt").write_bytes(b"AC")
                (findings / "crash-3.json").write_text(json.dumps(report()))
                watch.scan()
            self.assertEqual([c["artifact"] for c in watch.unconfirmed], ["crash-3.txt"])

    def test_time_to_bug_comes_from_the_crash_event(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "findings").mkdir()
            (folder / "findings" / "crash-1.json").write_text(json.dumps({"signature": "sig-1"}))
            lines = [{"event": "sample", "elapsed": 1.0, "cov": 10},
                     {"event": "crash", "elapsed": 1.25, "kind": "warning", "artifact": "/x/findings/crash-1.txt"},
                     {"event": "end", "elapsed": 2.0, "runs": 500, "cov": 12}]
            (folder / "stats.jsonl").write_text("\n".join(json.dumps(e) for e in lines) + "\n{\"torn")
            r = BugRun("b", "code-parser", "a", 1, folder)
            times = bugs.read_stats(r, folder / "stats.jsonl")
        self.assertEqual(times, {"crash-1.txt": 1.25})
        self.assertEqual((r.findings, r.execs_per_sec, r.edges), ({"sig-1": 1.25}, 250.0, 12))


if __name__ == "__main__":
    unittest.main()
