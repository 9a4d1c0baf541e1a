"""Running the campaigns of an evaluation and measuring each the same way.

Each target x configuration x trial is an independent `php-fuzz fuzz`
campaign in its own folder. Trial i uses `--seed i` in every configuration.
Measurements: coverage over time (the campaign's statistics file), final
coverage counted by replaying the final corpus with `report-coverage` (one
instrumentation for every configuration, so none measures itself), the time
to each distinct finding, and exec/s.
"""

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Run:
    target: str
    config: str
    trial: int
    folder: Path
    exit_code: int = -1
    final_coverage: int = 0
    execs_per_sec: float = 0.0
    # (elapsed seconds, edges) samples
    coverage_over_time: list = field(default_factory=list)
    # finding key -> seconds to its first hit
    findings: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "target": self.target, "config": self.config, "trial": self.trial, "exit_code": self.exit_code,
            "final_coverage": self.final_coverage, "execs_per_sec": self.execs_per_sec,
            "coverage_over_time": self.coverage_over_time, "findings": self.findings,
        }


def campaign_folder(out: Path, target: Path, config: str, trial: int) -> Path:
    return out / "runs" / target_label(target) / config / f"trial-{trial}"


def finished_run(binary: Path, target: Path, config: str, flags: str, trial: int, seconds: float,
                 out: Path) -> "Run | None":
    """A campaign an earlier, interrupted evaluation finished with the same settings, if any."""
    folder = campaign_folder(out, target, config, trial)
    try:
        saved = json.loads((folder / "run.json").read_text())
    except (OSError, ValueError):
        return None
    if saved.get("settings") != campaign_settings(binary, target, flags, seconds):
        return None
    data = saved["run"]
    run = Run(data["target"], data["config"], data["trial"], folder, exit_code=data["exit_code"],
              final_coverage=data["final_coverage"], execs_per_sec=data["execs_per_sec"],
              coverage_over_time=[tuple(s) for s in data["coverage_over_time"]], findings=data["findings"])
    return run


def campaign_settings(binary: Path, target: Path, flags: str, seconds: float) -> dict:
    """What must match for a saved campaign to count in a resumed evaluation."""
    stat = binary.stat()
    return {"binary": str(binary), "binary_size": stat.st_size, "binary_mtime": int(stat.st_mtime),
            "target": str(target), "flags": flags, "seconds": seconds}


def seeded_corpus(folder: Path, target: Path) -> Path:
    """FOLDER/corpus, holding a copy of the target's seeds/ folder, if any."""
    corpus = folder / "corpus"
    corpus.mkdir(parents=True)
    seeds = target.parent / "seeds"
    if seeds.is_dir():
        for seed in seeds.iterdir():
            if seed.is_file():
                shutil.copy(seed, corpus)
    return corpus


def run_campaign(binary: Path, target: Path, config: str, flags: str, trial: int, seconds: float, out: Path) -> Run:
    folder = campaign_folder(out, target, config, trial)
    shutil.rmtree(folder, ignore_errors=True)
    corpus = seeded_corpus(folder, target)
    stats = folder / "stats.jsonl"
    command = [str(binary), "fuzz", str(target), str(corpus), "--seed", str(trial), "--max-time", str(seconds),
               "--artifact-dir", str(folder / "findings"), "--stats", str(stats), "--quiet", *shlex.split(flags)]
    with open(folder / "fuzz.log", "w") as log:
        code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT).returncode
    run = Run(target_label(target), config, trial, folder, exit_code=code)
    read_stats(run, stats)
    run.final_coverage = replayed_coverage(binary, target, corpus, folder / "coverage")
    saved = {"settings": campaign_settings(binary, target, flags, seconds), "run": run.to_json()}
    (folder / "run.json").write_text(json.dumps(saved))
    return run


def read_stats(run: Run, stats: Path) -> None:
    if not stats.is_file():
        return
    for line in stats.read_text().splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line
        kind = event.get("event")
        if kind in ("sample", "end"):
            run.coverage_over_time.append((event["elapsed"], event["cov"]))
        if kind == "end" and event["elapsed"] > 0:
            run.execs_per_sec = event["runs"] / event["elapsed"]
        if kind == "crash":
            key = finding_key(run.folder, event)
            run.findings.setdefault(key, event["elapsed"])


def finding_key(folder: Path, event: dict) -> str:
    """The finding's signature from its report, else its kind and summary."""
    artifact = Path(event.get("artifact", ""))
    if not artifact.is_absolute():
        artifact = folder / "findings" / artifact.name
    sidecar = artifact.with_suffix(".json")
    try:
        return json.loads(sidecar.read_text())["signature"]
    except (OSError, ValueError, KeyError):
        return f"{event.get('kind')} {event.get('summary')}"


def replayed_coverage(binary: Path, target: Path, corpus: Path, report: Path) -> int:
    """Covered blocks of the final corpus, replayed with full instrumentation."""
    result = subprocess.run([str(binary), "report-coverage", str(target), str(corpus), str(report)],
                            capture_output=True, text=True)
    coverage = report / "coverage.json"
    if result.returncode != 0 or not coverage.is_file():
        raise RuntimeError(f"report-coverage failed for {corpus}:\n{result.stderr}")
    return json.loads(coverage.read_text())["totals"]["covered_blocks"]


def target_label(target: Path) -> str:
    """fixtures/real/yaml/target.php -> yaml; other.php -> other."""
    return target.parent.name if target.stem == "target" else target.stem


class Progress:
    """`[3/40] yaml cmp trial 2: 812 blocks; ~12 min left` on stderr."""

    def __init__(self, total: int, seconds: float, parallel: int):
        self.total, self.seconds, self.parallel = total, seconds, parallel
        self.done, self.resumed, self.started = 0, 0, time.monotonic()

    def report(self, run: Run, stream, resumed: bool = False, label: "str | None" = None,
               figures: "str | None" = None) -> None:
        """label (default: target, configuration, trial) and figures (default: blocks, findings, exec/s)."""
        self.done += 1
        if resumed:
            self.resumed += 1
        elapsed = time.monotonic() - self.started
        ran = self.done - self.resumed
        left = (self.total - self.done) * elapsed / ran if ran else (self.total - self.done) * self.seconds
        left /= self.parallel if not ran else 1
        note = " (kept from the earlier run)" if resumed else ""
        label = label or f"{run.target} {run.config} trial {run.trial}"
        figures = figures or f"{run.final_coverage} blocks, {len(run.findings)} findings, {run.execs_per_sec:.0f} exec/s"
        print(f"[{self.done}/{self.total}] {label}{note}: {figures}; ~{left / 60:.1f} min left", file=stream, flush=True)


# nikic/php-fuzzer as one more configuration (--php-fuzzer DIR): the same
# target, seeds and --seconds, measured by the same replay of its final corpus.
PHP_FUZZER = "php-fuzzer"

# Starts php-fuzzer as its bin/php-fuzzer does and prints its own run counter
# and fuzzing time once, when the process ends (SIGINT, its crash cap, the
# target's exit() or a fatal error).
PHP_FUZZER_RUNNER = r"""<?php declare(strict_types=1);
error_reporting(E_ALL);
require getenv('EVALUATE_PHP_FUZZER_DIR') . '/vendor/autoload.php';
$evaluateFuzzer = new PhpFuzzer\Fuzzer();
$evaluateReport = function () use ($evaluateFuzzer): void {
    static $reported = false;
    if ($reported) {
        return;
    }
    $reported = true;
    [$runs, $started] = (function (): array {
        return [$this->runs, isset($this->startTime) ? $this->startTime : null];
    })->call($evaluateFuzzer);
    $seconds = $started === null ? 0.0 : microtime(true) - $started;
    echo "\nEVALUATE-PHP-FUZZER runs=$runs seconds=", sprintf('%.3f', $seconds), "\n";
};
pcntl_async_signals(true);
pcntl_signal(SIGINT, function () use ($evaluateReport): void {
    $evaluateReport();
    exit(130);
});
register_shutdown_function($evaluateReport);
exit($evaluateFuzzer->handleCliArgs());
"""

STATUS_LINE = re.compile(r"^(NEW|REDUCE)\s+run: (\d+) \(\s*\d+/s\), ft: (\d+) .*\bt: (\d+)s\b")


def php_fuzzer_settings(php_fuzzer: Path) -> str:
    """The configuration's 'flags' in the report, and part of what --resume compares.

    Names the reference fuzzer by a digest of its code (bin/ and src/), not
    by the folder it sits in on this machine, so a published report holds
    no local path and a resumed run still sees a changed fuzzer."""
    digest = hashlib.sha256()
    for file in sorted([*php_fuzzer.glob("bin/*"), *php_fuzzer.glob("src/**/*.php")]):
        if file.is_file():
            digest.update(file.relative_to(php_fuzzer).as_posix().encode() + b"\0" + file.read_bytes())
    return f"nikic/php-fuzzer (--php-fuzzer DIR; bin/ and src/ sha256 {digest.hexdigest()[:12]})"


def run_php_fuzzer_campaign(php_fuzzer: Path, binary: Path, target: Path, trial: int, seconds: float,
                            out: Path) -> Run:
    """One php-fuzzer campaign: the target's seeds copied into its corpus,
    stopped with SIGINT after `seconds` (it has no time limit), its final
    corpus replayed with `report-coverage` like every other configuration's.
    It has no seed option: trial i does not fix its random choices."""
    folder = campaign_folder(out, target, PHP_FUZZER, trial)
    shutil.rmtree(folder, ignore_errors=True)
    corpus, findings = seeded_corpus(folder, target), folder / "findings"
    findings.mkdir()
    runner = folder / "runner.php"
    runner.write_text(PHP_FUZZER_RUNNER)
    # Its crash-*.txt files go to its working directory. Same memory limit as
    # php-fuzz's default --rss-limit-mb (the CLI's default is unlimited).
    command = ["php", "-d", "memory_limit=2048M", str(runner), "fuzz", str(target), str(corpus)]
    env = dict(os.environ, EVALUATE_PHP_FUZZER_DIR=str(php_fuzzer))
    lines = []
    started = time.monotonic()
    proc = subprocess.Popen(command, cwd=findings, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)

    def read():
        for raw in proc.stdout:
            lines.append((time.monotonic() - started, raw.decode("utf-8", "replace").rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    interrupted = killed = False
    while proc.poll() is None:
        now = time.monotonic() - started
        if not interrupted and now >= seconds:
            os.killpg(proc.pid, signal.SIGINT)
            interrupted = True
        if not killed and now >= seconds + 30:
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
        time.sleep(0.05)
    reader.join(timeout=5)
    # fuzz.log: php-fuzzer's output, each line after the second it arrived and a tab.
    with open(folder / "fuzz.log", "w") as log:
        log.writelines(f"{t:.3f}\t{line}\n" for t, line in lines)
    run = Run(target_label(target), PHP_FUZZER, trial, folder, exit_code=proc.returncode)
    parsed = parse_php_fuzzer_log(lines)
    run.execs_per_sec = parsed["execs_per_sec"]
    run.findings = parsed["findings"]
    # Its status lines count features (edge x hit-count bucket), not edges:
    # not comparable with php-fuzz's `cov`, so no coverage over time.
    run.final_coverage = replayed_coverage(binary, target, corpus, folder / "coverage")
    (folder / "php-fuzzer.json").write_text(json.dumps(parsed))
    saved = {"settings": campaign_settings(binary, target, php_fuzzer_settings(php_fuzzer), seconds),
             "run": run.to_json()}
    (folder / "run.json").write_text(json.dumps(saved))
    return run


def parse_php_fuzzer_log(lines: list) -> dict:
    """php-fuzzer's output, as (second it arrived, text) pairs, to figures.

    - runs and fuzzing seconds from the runner's last line, else from the
      last NEW/REDUCE status line (`run: N`, `t: Ns`);
    - features over time from the status lines: (second it arrived, `ft`);
    - findings: each `CRASH in PATH!` report, keyed by the first line of the
      crash text that follows (the exception and where it was thrown), at
      the second the report arrived; `DUPLICATE CRASH` lines are counted;
    - whether it stopped at its cap of crash reports.
    """
    out = {"runs": 0, "fuzz_seconds": 0.0, "execs_per_sec": 0.0, "features_over_time": [], "findings": {},
           "crash_reports": 0, "duplicate_crashes": 0, "capped": False, "corpus_crash": False}
    final = None
    expect_crash_text = None
    for arrived, text in lines:
        if expect_crash_text is not None:
            if text.strip():
                out["findings"].setdefault(php_fuzzer_finding_key(text.strip()), expect_crash_text)
                expect_crash_text = None
            continue
        if m := STATUS_LINE.match(text):
            out["runs"], out["fuzz_seconds"] = int(m.group(2)), float(m.group(4))
            out["features_over_time"].append((round(arrived, 3), int(m.group(3))))
        elif m := re.match(r"EVALUATE-PHP-FUZZER runs=(\d+) seconds=([\d.]+)", text):
            final = (int(m.group(1)), float(m.group(2)))
        elif text.startswith("CRASH in ") and text.endswith("!"):
            out["crash_reports"] += 1
            expect_crash_text = round(arrived, 3)
        elif text.startswith("CORPUS CRASH in "):
            out["corpus_crash"] = True
        elif text == "DUPLICATE CRASH":
            out["duplicate_crashes"] += 1
        elif text.startswith("Maximum of ") and text.endswith("crashes reached, aborting"):
            out["capped"] = True
    if final is not None:
        out["runs"], out["fuzz_seconds"] = final
    if out["fuzz_seconds"] > 0:
        out["execs_per_sec"] = round(out["runs"] / out["fuzz_seconds"], 1)
    return out


def php_fuzzer_finding_key(first_line: str) -> str:
    """A crash's first line, without what its error handler adds: a warning
    turned into `Error: [2] MSG in FILE on line N in .../Fuzzer.php:501`
    becomes `[2] MSG at FILE:N`; an exception keeps its own first line."""
    m = re.match(r"^Error: (\[\d+\] .*) in (\S+) on line (\d+) in \S+/src/Fuzzer\.php:\d+$", first_line)
    return f"{m.group(1)} at {m.group(2)}:{m.group(3)}" if m else first_line
