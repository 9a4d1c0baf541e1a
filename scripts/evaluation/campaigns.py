"""Running the campaigns of an evaluation and measuring each the same way.

Each target x configuration x trial is an independent `php-fuzz fuzz`
campaign in its own folder. Trial i uses `--seed i` in every configuration.
Measurements: coverage over time (the campaign's statistics file), final
coverage counted by replaying the final corpus with `report-coverage` (one
instrumentation for every configuration, so none measures itself), the time
to each distinct finding, and exec/s.
"""

import json
import shlex
import shutil
import subprocess
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


def run_campaign(binary: Path, target: Path, config: str, flags: str, trial: int, seconds: float, out: Path) -> Run:
    folder = campaign_folder(out, target, config, trial)
    shutil.rmtree(folder, ignore_errors=True)
    corpus = folder / "corpus"
    corpus.mkdir(parents=True)
    seeds = target.parent / "seeds"
    if seeds.is_dir():
        for seed in seeds.iterdir():
            if seed.is_file():
                shutil.copy(seed, corpus)
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

    def report(self, run: Run, stream, resumed: bool = False) -> None:
        self.done += 1
        if resumed:
            self.resumed += 1
        elapsed = time.monotonic() - self.started
        ran = self.done - self.resumed
        left = (self.total - self.done) * elapsed / ran if ran else (self.total - self.done) * self.seconds
        left /= self.parallel if not ran else 1
        note = " (kept from the earlier run)" if resumed else ""
        print(f"[{self.done}/{self.total}] {run.target} {run.config} trial {run.trial}{note}: "
              f"{run.final_coverage} blocks, {len(run.findings)} findings, {run.execs_per_sec:.0f} exec/s; "
              f"~{left / 60:.1f} min left", file=stream, flush=True)
