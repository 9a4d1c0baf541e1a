#!/usr/bin/env python3
"""Checks the known-bug catalog (bugs/catalog.json) against fetched mirrors.

    bugs/verify.py [--mirrors DIR] [--work DIR] [--only ID ...] [--update]

For each entry: the library's mirror (a bare git directory, DIR/owner+name/repo,
the layout the search tool's fetch verb gives) must hold both commits, and
their trees must have the recorded digests (git tree ids). Both commits are
exported with `git archive` into --work (never into this repository), the
entry is run once on its trigger with bugs/repro.php, and the result is
compared with `expected`: the vulnerable commit must fail with the expected
kind, class and signature site; the fixed commit must not fail there.
An entry whose mirror or commits are missing is skipped with a message.
--update records `reproduced` and `observed` back into the catalog.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPRO = HERE / "repro.php"
LINE = re.compile(r"^BUG (?P<kind>[^:]+): (?P<message>.*) @ (?P<site>[^ ]+)$")


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(mirror), *args], check=True,
                          capture_output=True, text=True).stdout.strip()


def mirror_of(mirrors: Path, library: str) -> Path:
    return mirrors / library.replace("/", "+") / "repo"


def has_commit(mirror: Path, sha: str) -> bool:
    try:
        return git(mirror, "cat-file", "-t", sha) == "commit"
    except subprocess.CalledProcessError:
        return False


def export(mirror: Path, sha: str, dest: Path) -> Path:
    if not dest.is_dir():
        part = dest.with_name(dest.name + ".part")
        part.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "--git-dir", str(mirror), "archive", sha],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(part)], input=archive, check=True)
        part.rename(dest)
    return dest


def run(entry: dict, root: Path, deps: dict, work: Path) -> str:
    autoload = entry["autoload"]
    psr4 = dict(autoload.get("psr4", {}))
    for dep in autoload.get("deps", []):
        for prefix, sub in dep["psr4"].items():
            psr4[prefix] = str(deps[dep["library"]] / sub) + "/"
    spec = {
        "root": str(root),
        "psr4": psr4,
        "files": autoload.get("files", []),
        "entry": entry["entry"],
        "allowed": entry.get("allowed_exceptions", []),
        "error_reporting": entry.get("error_reporting", 32767),
        "timeout": entry.get("timeout_seconds", 10),
    }
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        (Path(tmp) / "spec.json").write_text(json.dumps(spec))
        (Path(tmp) / "input").write_bytes(entry["trigger"].encode("utf-8", "surrogateescape"))
        try:
            proc = subprocess.run(["php", "-d", "display_errors=stderr", "-d", "zend.assertions=-1", str(REPRO),
                                   str(Path(tmp) / "spec.json"), str(Path(tmp) / "input")],
                                  capture_output=True, text=True, timeout=spec["timeout"] + 30)
        except subprocess.TimeoutExpired:
            return "BUG timeout: no answer within the wall-clock limit @ ?"
    if proc.returncode in (-11, 139):
        return "BUG stack-overflow: SIGSEGV (PHP 8.2 has no stack limit; deep recursion) @ ?"
    lines = proc.stdout.strip().splitlines()
    return lines[-1] if lines else f"ERROR: exit {proc.returncode}: {proc.stderr.strip()[-300:]}"


def matches(observed: str, expected: dict) -> bool:
    m = LINE.match(observed)
    if not m:
        return False
    if expected["kind"] == "stack-overflow":
        return m["kind"] == "stack-overflow"
    if expected["kind"] == "timeout":
        return m["kind"] == "timeout" and m["site"].split(":")[0] in expected.get("site_files", [m["site"].split(":")[0]])
    return m["kind"] == expected["class"] and m["site"] == expected["site"] and expected.get("message", "") in m["message"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, default=Path(os.environ.get("WORK", "/work")) / ".mirror")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "php-fuzz-bugs")
    ap.add_argument("--catalog", type=Path, default=HERE / "catalog.json")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--update", action="store_true")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    catalog = json.loads(args.catalog.read_text())
    failures = skipped = 0
    for entry in catalog["bugs"]:
        if args.only and entry["id"] not in args.only:
            continue
        mirror = mirror_of(args.mirrors, entry["library"])
        if not mirror.is_dir():
            print(f"SKIP {entry['id']}: no mirror of {entry['library']} at {mirror} (fetch it first)")
            skipped += 1
            continue
        missing = [c for c in (entry["vulnerable_commit"], entry["fixed_commit"]) if not has_commit(mirror, c)]
        if missing:
            print(f"SKIP {entry['id']}: {mirror} lacks {', '.join(missing)} (a snapshot without that history?)")
            skipped += 1
            continue
        bad = [side for side in ("vulnerable", "fixed")
               if git(mirror, "rev-parse", entry[f"{side}_commit"] + "^{tree}") != entry[f"{side}_tree"]]
        if bad:
            print(f"FAIL {entry['id']}: tree digest differs for {', '.join(bad)}")
            failures += 1
            continue
        deps = {}
        dep_missing = None
        for dep in entry["autoload"].get("deps", []):
            dm = mirror_of(args.mirrors, dep["library"])
            if not dm.is_dir() or not has_commit(dm, dep["commit"]):
                dep_missing = f"{dep['library']} at {dep['commit'][:12]}"
                break
            if git(dm, "rev-parse", dep["commit"] + "^{tree}") != dep["tree"]:
                dep_missing = f"{dep['library']} (tree digest differs)"
                break
            deps[dep["library"]] = export(dm, dep["commit"], args.work / f"{dep['library'].replace('/', '+')}-{dep['commit'][:12]}")
        if dep_missing:
            print(f"SKIP {entry['id']}: dependency {dep_missing} unavailable")
            skipped += 1
            continue
        absent = [f for f in entry["autoload"].get("files", []) if f.startswith("/") and not Path(f).is_file()]
        if absent:
            print(f"SKIP {entry['id']}: system package file(s) missing: {', '.join(absent)}")
            skipped += 1
            continue
        observed = {}
        for side in ("vulnerable", "fixed"):
            sha = entry[f"{side}_commit"]
            root = export(mirror, sha, args.work / f"{entry['library'].replace('/', '+')}-{sha[:12]}")
            observed[side] = run(entry, root, deps, args.work)
        ok = matches(observed["vulnerable"], entry["expected"]) and not matches(observed["fixed"], entry["expected"])
        print(f"{'PASS' if ok else 'FAIL'} {entry['id']}\n    vulnerable: {observed['vulnerable']}\n    fixed:      {observed['fixed']}")
        failures += not ok
        entry["reproduced"] = ok
        entry["observed"] = observed
    if args.update:
        args.catalog.write_text(json.dumps(catalog, indent=2, ensure_ascii=False) + "\n")
    print(f"verify: {failures} failed, {skipped} skipped", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
