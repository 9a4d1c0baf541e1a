"""The known-bug catalog (bugs/catalog.json): loading it, fetching its
libraries at pinned commits, and running one input through bugs/repro.php.

Shared by bugs/verify.py (checks each entry on its trigger) and
`scripts/evaluate --bugs` (fuzzes each vulnerable commit).

- A library comes from its bare mirror, MIRRORS/owner+name/repo (the layout
  the search tool's fetch gives), else from a shallow fetch of the one
  commit (`git fetch --depth 1 GIT_BASE/owner/name COMMIT`) into a cache.
- Its tree id (`git rev-parse COMMIT^{tree}`) must equal the catalog's: a
  mismatch raises DigestMismatch and the code is never used.
- Unavailable (no mirror, no network, no such commit) raises Unavailable,
  with the reason: the caller skips the entry.
"""

import json
import os
import re
import resource
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
REPRO = ROOT / "bugs" / "repro.php"
CATALOG = ROOT / "bugs" / "catalog.json"
GITHUB = "https://github.com/"
LINE = re.compile(r"^BUG (?P<kind>[^:]+): (?P<message>.*) @ (?P<site>.+)$")
KINDS = ("code-parser", "other-format")


class Unavailable(Exception):
    """The code cannot be had here (no mirror, no network, no such commit): skip the entry."""


class DigestMismatch(Exception):
    """A commit's tree differs from the catalog's digest: never use it."""


def load_catalog(path: Path) -> dict:
    try:
        catalog = json.loads(Path(path).read_text())
    except OSError as e:
        raise SystemExit(f"catalog {path}: {e.strerror or e}")
    except ValueError as e:
        raise SystemExit(f"catalog {path}: not JSON: {e}")
    if not isinstance(catalog, dict) or not isinstance(catalog.get("bugs"), list):
        raise SystemExit(f"catalog {path}: expected an object with a `bugs` list")
    return catalog


def git(git_dir: Path, *args: str, timeout: float = 600) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, text=True,
                          timeout=timeout).stdout.strip()


def slug(library: str) -> str:
    """owner/name -> owner+name (the mirror folder's name)."""
    return library.replace("/", "+")


def mirror_of(mirrors: Path, library: str) -> "Path | None":
    """The bare git directory of the library's mirror, if any: MIRRORS/owner+name/repo,
    or MIRRORS/owner+name itself when that is a bare repository."""
    folder = Path(mirrors) / slug(library)
    for candidate in (folder / "repo", folder):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def has_commit(git_dir: Path, sha: str) -> bool:
    try:
        return git(git_dir, "cat-file", "-t", sha) == "commit"
    except subprocess.CalledProcessError:
        return False


def tree_of(git_dir: Path, sha: str) -> str:
    return git(git_dir, "rev-parse", sha + "^{tree}")


def fetch_commit(library: str, sha: str, mirrors: Path, cache: Path, git_base: str = GITHUB) -> Path:
    """A git directory holding `sha` of `library`: its mirror, else a shallow fetch
    of that one commit into CACHE/owner+name.git. Raises Unavailable."""
    mirror = mirror_of(mirrors, library)
    if mirror is not None and has_commit(mirror, sha):
        return mirror
    why = f"no mirror of {library} in {mirrors}" if mirror is None else f"its mirror {mirror} lacks {sha[:12]}"
    cached = Path(cache) / (slug(library) + ".git")
    if cached.is_dir() and has_commit(cached, sha):
        return cached
    url = git_base.rstrip("/") + "/" + library
    try:
        if not cached.is_dir():
            cached.mkdir(parents=True)
            subprocess.run(["git", "init", "--quiet", "--bare", str(cached)], check=True, capture_output=True)
        env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
        subprocess.run(["git", "--git-dir", str(cached), "fetch", "--quiet", "--depth", "1", url, sha],
                       check=True, capture_output=True, text=True, timeout=300, env=env)
    except subprocess.CalledProcessError as e:
        last = (e.stderr or "").strip().splitlines()
        raise Unavailable(f"{why}, and fetching {url} {sha[:12]} failed: {last[-1] if last else e}")
    except subprocess.TimeoutExpired:
        raise Unavailable(f"{why}, and fetching {url} {sha[:12]} took over 300 s")
    if not has_commit(cached, sha):
        raise Unavailable(f"{why}, and {url} did not give {sha[:12]}")
    return cached


def checked(git_dir: Path, sha: str, tree: str, what: str) -> Path:
    """git_dir, once `sha`'s tree is the catalog's `tree`; DigestMismatch otherwise."""
    actual = tree_of(git_dir, sha)
    if actual != tree:
        raise DigestMismatch(f"{what}: the tree of {sha[:12]} in {git_dir} is {actual}, the catalog says {tree}")
    return git_dir


def export(git_dir: Path, sha: str, dest: Path) -> Path:
    """`git archive sha` unpacked into dest (once: an existing dest is kept)."""
    if not dest.is_dir():
        part = dest.with_name(dest.name + ".part")
        subprocess.run(["rm", "-rf", str(part)], check=True)
        part.mkdir(parents=True)
        archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", sha],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(part)], input=archive, check=True)
        part.rename(dest)
    return dest


def missing_system_files(entry: dict) -> list:
    """The absolute `files` (Debian packages under /usr/share/php) that are not here."""
    return [f for f in entry["autoload"].get("files", []) if f.startswith("/") and not Path(f).is_file()]


def psr4_map(entry: dict, root: Path, deps: dict) -> dict:
    """Prefix -> absolute folder (with a trailing slash): the library's and its deps'."""
    result = {}
    for prefix, sub in entry["autoload"].get("psr4", {}).items():
        result[prefix] = str(Path(root) / sub).rstrip("/") + "/"
    for dep in entry["autoload"].get("deps", []):
        for prefix, sub in dep["psr4"].items():
            result[prefix] = str(Path(deps[dep["library"]]) / sub).rstrip("/") + "/"
    return result


def required_files(entry: dict, root: Path) -> list:
    return [f if f.startswith("/") else str(Path(root) / f) for f in entry["autoload"].get("files", [])]


def repro_spec(entry: dict, root: Path, deps: dict) -> dict:
    return {
        "root": str(root),
        "psr4": psr4_map(entry, root, deps),
        "files": required_files(entry, root),
        "entry": entry["entry"],
        "allowed": entry.get("allowed_exceptions", []),
        "error_reporting": entry.get("error_reporting", 32767),
        "timeout": entry.get("timeout_seconds", 10),
    }


def run_repro(entry: dict, root: Path, deps: dict, data: bytes, work: Path, stack_kb: "int | None" = None) -> str:
    """One line: `BUG <kind>: <message> @ <file>:<line>` or `OK: ...` (bugs/repro.php).
    stack_kb limits the C stack (RLIMIT_STACK), so deep recursion crashes sooner."""
    spec = repro_spec(entry, root, deps)
    Path(work).mkdir(parents=True, exist_ok=True)

    def limit_stack():
        if stack_kb is not None:
            resource.setrlimit(resource.RLIMIT_STACK, (stack_kb * 1024, stack_kb * 1024))

    with tempfile.TemporaryDirectory(dir=work) as tmp:
        (Path(tmp) / "spec.json").write_text(json.dumps(spec))
        (Path(tmp) / "input").write_bytes(data)
        try:
            proc = subprocess.run(["php", "-d", "display_errors=stderr", "-d", "zend.assertions=-1", str(REPRO),
                                   str(Path(tmp) / "spec.json"), str(Path(tmp) / "input")],
                                  capture_output=True, text=True, errors="replace", timeout=spec["timeout"] + 30,
                                  preexec_fn=limit_stack)
        except subprocess.TimeoutExpired:
            return "BUG timeout: no answer within the wall-clock limit @ ?"
    if proc.returncode in (-11, 139):
        return "BUG stack-overflow: SIGSEGV (PHP 8.2 has no stack limit; deep recursion) @ ?"
    lines = proc.stdout.strip().splitlines()
    return lines[-1] if lines else f"ERROR: exit {proc.returncode}: {proc.stderr.strip()[-300:]}"


def matches(observed: str, expected: dict) -> bool:
    """Whether a repro.php line shows the expected bug: its kind and class, its
    site (timeouts: one of its site files) and its message fragment."""
    m = LINE.match(observed)
    if not m:
        return False
    if expected["kind"] == "stack-overflow":
        return m["kind"] == "stack-overflow"
    if expected["kind"] == "timeout":
        # Interrupted wherever the loop was: in one of its site files, or
        # outside the library (the entry's own code, e.g. a callback it defines).
        file = m["site"].rsplit(":", 1)[0]
        outside = file.startswith("/") or "eval()'d code" in file
        return m["kind"] == "timeout" and (outside or file in expected.get("site_files", [file]))
    return m["kind"] == expected["class"] and m["site"] == expected["site"] and expected.get("message", "") in m["message"]
