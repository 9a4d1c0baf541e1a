"""Known-bug mode of scripts/evaluate (`--bugs`, docs/evaluate.md): each bug of
bugs/catalog.json is fuzzed at its vulnerable commit, and the campaign stops as
soon as it finds that bug.

- prepare(): the library (and its deps) fetched at the pinned commits, tree
  ids checked, exported into WORK/<bug>/vulnerable and WORK/<bug>/fixed, and
  a php-fuzzer-format WORK/<bug>/target.php written for the vulnerable one.
- run_bug_campaign(): one `php-fuzz fuzz` campaign from a copy of
  bugs/seeds/<format>/, its artifact folder polled every POLL seconds. A
  finding matches the bug when its report names the expected kind, class,
  message and site (match_finding); it counts once confirmed: the same input
  raises the expected signature on the vulnerable commit and not on the
  fixed one, run through bugs/repro.php (confirm). The first confirmed
  finding stops the campaign with SIGINT; its time is the statistics file's
  `crash` event.
"""

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import bug_catalog
from .bug_catalog import Unavailable

SEEDS = bug_catalog.ROOT / "bugs" / "seeds"
DEFAULT_MAX_LEN = 4096
POLL = 0.5
# php-fuzz calls a stack of 50,000 calls an overflow; PHP 8.2 itself only
# dies when the 8 MB C stack runs out, deeper than that for recursion through
# internal functions (array_map, closures). Confirmation runs under a 2 MB
# stack, so an input php-fuzz flags crashes PHP too.
STACK_KB = 2048
FRAME = re.compile(r"^#\d+ .* at (?P<file>.+):(?P<line>\d+)$")


@dataclass
class Prepared:
    entry: dict
    folder: Path
    vulnerable: Path
    fixed: Path
    deps: dict
    target: Path
    seeds: Path

    @property
    def id(self) -> str:
        return self.entry["id"]


@dataclass
class BugRun:
    bug: str
    kind: str
    config: str
    trial: int
    folder: Path
    exit_code: int = -1
    seconds_to_bug: "float | None" = None
    stopped_early: bool = False
    wall_seconds: float = 0.0
    execs_per_sec: float = 0.0
    edges: int = 0
    confirmed: list = field(default_factory=list)
    unconfirmed: list = field(default_factory=list)
    # every finding's signature -> seconds to its first hit
    findings: dict = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return self.seconds_to_bug is not None

    def to_json(self) -> dict:
        return {"bug": self.bug, "kind": self.kind, "config": self.config, "trial": self.trial,
                "exit_code": self.exit_code, "found": self.found, "seconds_to_bug": self.seconds_to_bug,
                "stopped_early": self.stopped_early, "wall_seconds": self.wall_seconds,
                "execs_per_sec": self.execs_per_sec, "edges": self.edges, "confirmed": self.confirmed,
                "unconfirmed": self.unconfirmed, "findings": self.findings}

    @classmethod
    def from_json(cls, data: dict, folder: Path) -> "BugRun":
        keys = ("exit_code", "seconds_to_bug", "stopped_early", "wall_seconds", "execs_per_sec", "edges",
                "confirmed", "unconfirmed", "findings")
        return cls(data["bug"], data["kind"], data["config"], data["trial"], folder, **{k: data[k] for k in keys})


# Choosing and preparing the bugs.

def select(catalog: dict, only: list, kind: "str | None") -> list:
    """The catalog entries to run, in catalog order; SystemExit names unknown ids."""
    entries = catalog["bugs"]
    unknown = [i for i in only or [] if i not in {e["id"] for e in entries}]
    if unknown:
        raise SystemExit(f"--only: no bug {', '.join(unknown)} in the catalog "
                         f"(known: {', '.join(e['id'] for e in entries)})")
    return [e for e in entries if (not only or e["id"] in only) and (kind is None or e["kind"] == kind)]


def prepare(entry: dict, mirrors: Path, work: Path, git_base: str = bug_catalog.GITHUB, seeds: Path = SEEDS) -> Prepared:
    """Fetch, check and export both commits and the deps, and write the target.
    Raises Unavailable (skip the bug) or DigestMismatch (never use it)."""
    absent = bug_catalog.missing_system_files(entry)
    if absent:
        raise Unavailable(f"system package file(s) missing: {', '.join(absent)}")
    folder = work / entry["id"]
    cache = work / "git"
    roots = {}
    for side in ("vulnerable", "fixed"):
        roots[side] = checked_export(entry["library"], entry[f"{side}_commit"], entry[f"{side}_tree"], mirrors, cache,
                                     git_base, folder / side, f"{entry['id']} ({side} commit)")
    deps = {}
    for dep in entry["autoload"].get("deps", []):
        dest = work / "deps" / f"{bug_catalog.slug(dep['library'])}-{dep['commit'][:12]}"
        deps[dep["library"]] = checked_export(dep["library"], dep["commit"], dep["tree"], mirrors, cache, git_base,
                                              dest, f"{entry['id']} (dependency {dep['library']})")
    target = folder / "target.php"
    write_if_changed(target, target_php(entry, roots["vulnerable"], deps))
    return Prepared(entry, folder, roots["vulnerable"], roots["fixed"], deps, target, seeds / entry["format"])


def checked_export(library: str, sha: str, tree: str, mirrors: Path, cache: Path, git_base: str, dest: Path,
                   what: str) -> Path:
    """dest holding `git archive sha`, its tree id checked first, every time.
    A stamp (dest.tree) keeps an export made for another tree from being used."""
    try:
        git_dir = bug_catalog.fetch_commit(library, sha, mirrors, cache, git_base)
    except Unavailable as e:
        raise Unavailable(f"{library} at {sha[:12]}: {e}")
    bug_catalog.checked(git_dir, sha, tree, what)
    stamp = dest.with_name(dest.name + ".tree")
    if dest.is_dir() and stamp.is_file() and stamp.read_text().strip() == tree:
        return dest.resolve()
    shutil.rmtree(dest, ignore_errors=True)
    stamp.unlink(missing_ok=True)
    bug_catalog.export(git_dir, sha, dest)
    stamp.write_text(tree + "\n")
    return dest.resolve()


def write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def php_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def target_php(entry: dict, root: Path, deps: dict) -> str:
    """A php-fuzzer-format target running the entry on $input, with a PSR-4
    autoloader for the catalog's map (a "" prefix: PSR-0 under that folder)."""
    mapping = bug_catalog.psr4_map(entry, root, deps)
    pairs = "".join(f"\n    {php_string(p)} => {php_string(d)}," for p, d in mapping.items())
    requires = "".join(f"require_once {php_string(f)};\n" for f in bug_catalog.required_files(entry, root))
    allowed = ", ".join("\\" + c.lstrip("\\") + "::class" for c in entry.get("allowed_exceptions", []))
    return f"""<?php
/** @var PhpFuzzer\\Config $config */
// Generated by `scripts/evaluate --bugs` (docs/evaluate.md) for the known bug
// {entry['id']}: {entry['library']} at {entry['vulnerable_commit']}
// (tree {entry['vulnerable_tree']}), exported into {root}.
// Rewritten on every run: edit bugs/catalog.json instead.
$bugAutoload = [{pairs}
];
spl_autoload_register(function (string $class) use ($bugAutoload): void {{
    foreach ($bugAutoload as $prefix => $dir) {{
        if ($prefix === '') {{
            $file = $dir . str_replace(['\\\\', '_'], '/', $class) . '.php';
        }} elseif (strncmp($class, $prefix, strlen($prefix)) === 0) {{
            $file = $dir . str_replace('\\\\', '/', substr($class, strlen($prefix))) . '.php';
        }} else {{
            continue;
        }}
        if (is_file($file)) {{
            require $file;
            return;
        }}
    }}
}});
{requires}error_reporting({int(entry.get('error_reporting', 32767))});

$config->setTarget(function (string $input): void {{
    {entry['entry']}
}});
$config->setMaxLen({int(entry.get('max_len', DEFAULT_MAX_LEN))});
$config->setAllowedExceptions([{allowed}]);
"""


# Matching a finding to the bug, and confirming it.

def relative(path: str, root: Path) -> "str | None":
    """path relative to root, if it lies inside it."""
    for base in {str(root), os.path.realpath(root)}:
        for candidate in {path, os.path.realpath(path)}:
            if candidate.startswith(base.rstrip("/") + "/"):
                return candidate[len(base.rstrip("/")) + 1:]
    return None


def trace_files(trace: str, root: Path) -> list:
    """The files of a report's stack trace, relative to root (frames outside it left out)."""
    files = []
    for line in (trace or "").splitlines():
        m = FRAME.match(line.strip())
        rel = relative(m["file"], root) if m else None
        if rel is not None:
            files.append(rel)
    return files


def match_finding(report: dict, expected: dict, root: Path) -> bool:
    """Whether php-fuzz's report of a finding (its .json) names the expected bug:
    - exception / warning: kind, class, message fragment, and `file:line`
      (relative to the vulnerable tree) = the expected site;
    - timeout: the innermost frame inside the vulnerable tree is in one of
      `site_files` (the loop is caught wherever it is, possibly in a callback
      of the target's own code);
    - stack-overflow: the kind, a frame inside the vulnerable tree, and one in
      `site_files` if given (the recursion's cycle)."""
    kind = report.get("kind")
    frames = trace_files(report.get("trace"), root)
    if expected["kind"] == "timeout":
        return kind == "timeout" and bool(frames) and frames[0] in expected.get("site_files", [])
    if expected["kind"] == "stack-overflow":
        files = expected.get("site_files")
        return kind == "stack-overflow" and bool(frames) and (not files or any(f in files for f in frames))
    rel = relative(str(report.get("file") or ""), root)
    return (rel is not None and kind == expected["kind"] and report.get("class") == expected["class"]
            and expected.get("message", "") in str(report.get("message", ""))
            and f"{rel}:{report.get('line')}" == expected["site"])


def confirm(prep: Prepared, data: bytes) -> "tuple[bool, dict]":
    """The input raises the expected signature on the vulnerable commit and not
    on the fixed one (bugs/repro.php, outside php-fuzz)."""
    entry = prep.entry
    stack = STACK_KB if entry["expected"]["kind"] == "stack-overflow" else None
    scratch = prep.folder / "tmp"
    observed = {"vulnerable": bug_catalog.run_repro(entry, prep.vulnerable, prep.deps, data, scratch, stack)}
    if not bug_catalog.matches(observed["vulnerable"], entry["expected"]):
        return False, observed
    observed["fixed"] = bug_catalog.run_repro(entry, prep.fixed, prep.deps, data, scratch, stack)
    return not bug_catalog.matches(observed["fixed"], entry["expected"]), observed


class Watch:
    """Reads each new finding report in an artifact folder once, and confirms those matching the bug."""

    def __init__(self, prep: Prepared, findings: Path, started: float):
        self.prep, self.findings, self.started = prep, findings, started
        self.seen, self.confirmed, self.unconfirmed = set(), [], []

    def scan(self) -> None:
        if not self.findings.is_dir():
            return
        for sidecar in sorted(self.findings.glob("*.json")):
            if sidecar.name in self.seen:
                continue
            artifact = sidecar.with_suffix(".txt")
            try:
                report = json.loads(sidecar.read_text())
                data = artifact.read_bytes()
            except (OSError, ValueError):
                continue  # still being written: the next poll reads it
            self.seen.add(sidecar.name)
            if not match_finding(report, self.prep.entry["expected"], self.prep.vulnerable):
                continue
            ok, observed = confirm(self.prep, data)
            record = {"artifact": artifact.name, "seen_after": round(time.monotonic() - self.started, 3),
                      "signature": report.get("signature"), "observed": observed}
            (self.confirmed if ok else self.unconfirmed).append(record)


# One campaign.

def campaign_folder(out: Path, bug: str, config: str, trial: int) -> Path:
    return out / "runs" / bug / config / f"trial-{trial}"


def seeded_corpus(folder: Path, seeds: Path) -> Path:
    corpus = folder / "corpus"
    corpus.mkdir(parents=True)
    if seeds.is_dir():
        for seed in sorted(seeds.iterdir()):
            if seed.is_file():
                shutil.copy(seed, corpus)
    return corpus


def run_bug_campaign(binary: Path, prep: Prepared, config: str, flags: str, trial: int, seconds: float,
                     out: Path) -> BugRun:
    folder = campaign_folder(out, prep.id, config, trial)
    shutil.rmtree(folder, ignore_errors=True)
    corpus = seeded_corpus(folder, prep.seeds)
    findings, stats = folder / "findings", folder / "stats.jsonl"
    command = [str(binary), "fuzz", str(prep.target), str(corpus), "--seed", str(trial), "--max-time", str(seconds),
               "--artifact-dir", str(findings), "--stats", str(stats), "--quiet", *shlex.split(flags)]
    run = BugRun(prep.id, prep.entry["kind"], config, trial, folder)
    started = time.monotonic()
    watch = Watch(prep, findings, started)
    with open(folder / "fuzz.log", "w") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        run.exit_code, run.stopped_early = supervise(proc, watch, seconds, started)
    watch.scan()  # reports saved as the campaign ended
    run.wall_seconds = round(time.monotonic() - started, 3)
    crash_times = read_stats(run, stats)
    for record in watch.confirmed:
        record["elapsed"] = crash_times.get(record["artifact"], record["seen_after"])
    run.confirmed, run.unconfirmed = watch.confirmed, watch.unconfirmed
    if run.confirmed:
        run.seconds_to_bug = min(min(r["elapsed"] for r in run.confirmed), seconds)
    return run


def supervise(proc: subprocess.Popen, watch: Watch, seconds: float, started: float) -> "tuple[int, bool]":
    """Polls the findings until the campaign ends; SIGINT once the bug is
    confirmed (or 60 s past --max-time), SIGKILL 30 s after that. Returns
    the exit code and whether the bug stopped the campaign."""
    interrupted_at, for_bug, killed = None, False, False
    while proc.poll() is None:
        watch.scan()
        now = time.monotonic()
        if interrupted_at is None and (watch.confirmed or now - started > seconds + 60):
            for_bug = bool(watch.confirmed)
            signal_group(proc, signal.SIGINT)
            interrupted_at = now
        elif interrupted_at is not None and not killed and now - interrupted_at > 30:
            signal_group(proc, signal.SIGKILL)
            killed = True
        try:
            proc.wait(timeout=POLL)
        except subprocess.TimeoutExpired:
            pass
    return proc.returncode, for_bug


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    """The campaign's process group (php-fuzz and its harnesses), as Ctrl-C would."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass  # it just ended


def read_stats(run: BugRun, stats: Path) -> dict:
    """Fills exec/s, edges and findings from the statistics file; returns artifact name -> crash elapsed."""
    crash_times = {}
    if not stats.is_file():
        return crash_times
    for line in stats.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a torn last line
        kind = event.get("event")
        if kind == "end" and event.get("elapsed", 0) > 0:
            run.execs_per_sec = event["runs"] / event["elapsed"]
        if kind in ("sample", "end"):
            run.edges = event.get("cov", run.edges)
        if kind == "crash":
            name = Path(event.get("artifact", "")).name
            crash_times.setdefault(name, event["elapsed"])
            run.findings.setdefault(finding_key(run.folder / "findings" / name, event), event["elapsed"])
    return crash_times


def finding_key(artifact: Path, event: dict) -> str:
    try:
        return json.loads(artifact.with_suffix(".json").read_text())["signature"]
    except (OSError, ValueError, KeyError):
        return f"{event.get('kind')} {event.get('summary')}"


# Resuming.

def campaign_settings(binary: Path, prep: Prepared, flags: str, seconds: float) -> dict:
    """What must match for a saved bug campaign to count in a resumed evaluation."""
    stat = binary.stat()
    entry = prep.entry
    bug = {k: entry.get(k) for k in ("library", "vulnerable_tree", "fixed_tree", "expected", "autoload", "kind")}
    return {"binary": str(binary), "binary_size": stat.st_size, "binary_mtime": int(stat.st_mtime),
            "target": str(prep.target), "target_sha256": digest([prep.target]), "bug": bug,
            "seeds_sha256": digest(sorted(p for p in prep.seeds.glob("*") if p.is_file()) if prep.seeds.is_dir() else []),
            "flags": flags, "seconds": seconds}


def digest(files: list) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def save(run: BugRun, settings: dict) -> None:
    (run.folder / "run.json").write_text(json.dumps({"settings": settings, "run": run.to_json()}, indent=1))


def finished_run(binary: Path, prep: Prepared, config: str, flags: str, trial: int, seconds: float,
                 out: Path) -> "BugRun | None":
    folder = campaign_folder(out, prep.id, config, trial)
    try:
        saved = json.loads((folder / "run.json").read_text())
    except (OSError, ValueError):
        return None
    if saved.get("settings") != campaign_settings(binary, prep, flags, seconds):
        return None
    return BugRun.from_json(saved["run"], folder)


def describe(run: BugRun) -> str:
    """The progress line's figures for one bug campaign."""
    what = (f"found in {run.seconds_to_bug:.1f} s" + (" (stopped)" if run.stopped_early else "")
            if run.found else "not found")
    extra = f", {len(run.unconfirmed)} unconfirmed" if run.unconfirmed else ""
    return f"{what}{extra}, {len(run.findings)} findings, {run.execs_per_sec:.0f} exec/s"
