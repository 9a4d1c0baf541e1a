//! "While it fuzzes, nothing your library does touches the machine"
//! (README, issue #40, docs/sandbox.md): `fixtures/sandbox/hostile.php`
//! tries every way in `fixtures/sandbox/lib/` on every run to write into a
//! watched folder outside the campaign's scratch folder, start a process,
//! reach a TCP, a UDP and a unix-socket listener, and kill a `sleep` that
//! is no child of php-fuzz, from the harness and from a forked child. With
//! default flags nothing may get through; with the OS wall forced off
//! (`PHP_FUZZ_NO_WALL=1`) the hooks alone must still stop every way they
//! are documented to stop; with the hooks allowing everything
//! (`PHP_FUZZ_NO_HOOKS=1`) the wall alone must stop every way; with
//! `--allow-side-effects` the ways happen, which proves that the observers
//! see them.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{Run, bin, fixture};

/// One campaign at a time: each runs dozens of processes and sockets.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A way of the fixture, as `fixtures/sandbox/list.php` prints it.
#[derive(Debug, Clone)]
struct Way {
    name: String,
    /// `file`, `tcp`, `udp`, `unix`, `signal` or `none`.
    observer: String,
    /// php-fuzz's PHP hooks are documented to stop it.
    hooked: bool,
    /// Why this PHP cannot try it.
    missing: Option<String>,
}

fn ways() -> Vec<Way> {
    let output = Command::new("php")
        .arg(fixture("sandbox/list.php"))
        .output()
        .expect("running php");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let way: serde_json::Value = serde_json::from_str(line).unwrap();
            Way {
                name: way["name"].as_str().unwrap().to_string(),
                observer: way["observer"].as_str().unwrap().to_string(),
                hooked: way["hooked"].as_bool().unwrap(),
                missing: way["missing"].as_str().map(str::to_string),
            }
        })
        .collect()
}

/// What each kind of entry of the watched folder looks like, to see it
/// appear, change or go.
fn snapshot(dir: &Path) -> BTreeMap<String, (u32, u64, i64)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, (meta.mode(), meta.len(), meta.mtime()))
        })
        .collect()
}

/// Listeners that record the first line each connection or datagram says.
struct Observers {
    dir: tempfile::TempDir,
    tcp_port: u16,
    udp_port: u16,
    unix: PathBuf,
    heard: Arc<Mutex<Vec<(String, String)>>>,
    done: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    sleep: Child,
    before: BTreeMap<String, (u32, u64, i64)>,
}

/// The first line a stream says within a second, or `<silent>`.
fn first_line(mut stream: impl Read) -> String {
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 256];
    while !bytes.contains(&b'\n') && bytes.len() < 4096 {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let line = text.lines().next().unwrap_or("").trim().to_string();
    if line.is_empty() {
        "<silent>".to_string()
    } else {
        line
    }
}

impl Observers {
    fn start() -> Observers {
        let dir = tempfile::tempdir().unwrap();
        // What the ways that rename, delete or chmod find there.
        std::fs::write(dir.path().join("rename_out"), "x").unwrap();
        std::fs::write(dir.path().join("unlink"), "x").unwrap();
        std::fs::create_dir(dir.path().join("rmdir")).unwrap();
        std::fs::write(dir.path().join("chmod"), "x").unwrap();
        std::fs::set_permissions(
            dir.path().join("chmod"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let done = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();

        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        let tcp_port = tcp.local_addr().unwrap().port();
        tcp.set_nonblocking(true).unwrap();
        let unix = dir.path().join("listener.sock");
        let unix_listener = UnixListener::bind(&unix).unwrap();
        unix_listener.set_nonblocking(true).unwrap();
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        let udp_port = udp.local_addr().unwrap().port();
        udp.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();

        {
            let (heard, done) = (Arc::clone(&heard), Arc::clone(&done));
            threads.push(std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    let mut idle = true;
                    if let Ok((mut stream, _)) = tcp.accept() {
                        idle = false;
                        stream.set_nonblocking(false).unwrap();
                        // An FTP server's greeting, which ftp_connect() waits for.
                        let _ = stream.write_all(b"220 php-fuzz\r\n");
                        stream
                            .set_read_timeout(Some(Duration::from_millis(500)))
                            .unwrap();
                        let heard = Arc::clone(&heard);
                        std::thread::spawn(move || {
                            let line = first_line(&stream);
                            heard.lock().unwrap().push(("tcp".into(), line));
                        });
                    }
                    if let Ok((stream, _)) = unix_listener.accept() {
                        idle = false;
                        stream.set_nonblocking(false).unwrap();
                        stream
                            .set_read_timeout(Some(Duration::from_millis(500)))
                            .unwrap();
                        let heard = Arc::clone(&heard);
                        std::thread::spawn(move || {
                            let line = first_line(&stream);
                            heard.lock().unwrap().push(("unix".into(), line));
                        });
                    }
                    if idle {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            }));
        }
        {
            let (heard, done) = (Arc::clone(&heard), Arc::clone(&done));
            threads.push(std::thread::spawn(move || {
                let mut buffer = [0u8; 2048];
                while !done.load(Ordering::Relaxed) {
                    if let Ok((n, _)) = udp.recv_from(&mut buffer) {
                        let line = first_line(&buffer[..n]);
                        heard.lock().unwrap().push(("udp".into(), line));
                    }
                }
            }));
        }
        let sleep = Command::new("sleep").arg("600").spawn().unwrap();
        let before = snapshot(dir.path());
        Observers {
            dir,
            tcp_port,
            udp_port,
            unix,
            heard,
            done,
            threads,
            sleep,
            before,
        }
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "PHP_FUZZ_SANDBOX_DIR",
                self.dir.path().display().to_string(),
            ),
            ("PHP_FUZZ_SANDBOX_TCP", self.tcp_port.to_string()),
            ("PHP_FUZZ_SANDBOX_UDP", self.udp_port.to_string()),
            ("PHP_FUZZ_SANDBOX_UNIX", self.unix.display().to_string()),
            ("PHP_FUZZ_SANDBOX_PID", self.sleep.id().to_string()),
        ]
    }

    /// Stops listening; what reached the machine.
    fn finish(mut self) -> Seen {
        // Connections accepted last are still being read.
        std::thread::sleep(Duration::from_millis(700));
        self.done.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            thread.join().unwrap();
        }
        let after = snapshot(self.dir.path());
        let mut entries = BTreeMap::new();
        for (name, state) in &after {
            match self.before.get(name) {
                None => entries.insert(name.clone(), "appeared"),
                Some(old) if old.0 != state.0 => entries.insert(name.clone(), "changed mode"),
                Some(old) if old != state => entries.insert(name.clone(), "changed"),
                Some(_) => None,
            };
        }
        for name in self.before.keys() {
            if !after.contains_key(name) {
                entries.insert(name.clone(), "went");
            }
        }
        let sleep_killed = self.sleep.try_wait().unwrap().is_some();
        let _ = self.sleep.kill();
        let _ = self.sleep.wait();
        let heard = self.heard.lock().unwrap().clone();
        Seen {
            entries,
            heard,
            sleep_killed,
        }
    }
}

/// What reached the observers.
#[derive(Debug)]
struct Seen {
    /// Watched entries that appeared, changed or went, with what happened.
    entries: BTreeMap<String, &'static str>,
    /// (listener, first line) of each connection and datagram.
    heard: Vec<(String, String)>,
    sleep_killed: bool,
}

impl Seen {
    /// Whether `way` got through.
    fn reached(&self, way: &Way) -> bool {
        let name = way.name.as_str();
        match way.observer.as_str() {
            "file" => self.entries.keys().any(|entry| {
                entry == name
                    || entry == &format!("sess_{name}")
                    || entry
                        .strip_prefix(name)
                        .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('-'))
            }),
            "signal" => self.sleep_killed,
            "none" => false,
            listener => self.heard.iter().any(|(l, line)| {
                l == listener
                    && line
                        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .any(|word| word == name)
            }),
        }
    }

    /// Everything that touched the machine, one offender a line.
    fn offenders(&self) -> Vec<String> {
        let mut offenders: Vec<String> = self
            .entries
            .iter()
            .map(|(name, what)| format!("watched folder: {name} {what}"))
            .collect();
        offenders.extend(
            self.heard
                .iter()
                .map(|(listener, line)| format!("{listener} listener heard: {line}")),
        );
        if self.sleep_killed {
            offenders.push("the sleep outside php-fuzz was killed".to_string());
        }
        offenders
    }
}

/// Fuzzes the hostile target for `runs` runs with `extra` flags and `env`.
fn campaign(
    runs: u32,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Run, Seen, Vec<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("corpus")).unwrap();
    // mail() and error_log(…, 1, …) run sendmail_path: a script that
    // touches the watched file its first argument names.
    let sendmail = dir.path().join("sendmail.sh");
    std::fs::write(
        &sendmail,
        "cat >/dev/null\ntouch \"$PHP_FUZZ_SANDBOX_DIR/${1:-error_log_mail}\"\n",
    )
    .unwrap();
    let observers = Observers::start();
    let runs = runs.to_string();
    let sendmail_path = format!("sendmail_path=/bin/sh {}", sendmail.display());
    let mut command = Command::new(bin());
    command
        .args(["fuzz"])
        .arg(fixture("sandbox/hostile.php"))
        .args([
            "corpus",
            "--max-runs",
            &runs,
            "--seed",
            "1",
            "--timeout",
            "60",
        ])
        .args(["--artifact-dir", "artifacts", "--ini", &sendmail_path])
        .args(extra)
        .current_dir(dir.path())
        .env_remove("CI")
        .env_remove("PHP_FUZZ_NO_WALL")
        .env_remove("PHP_FUZZ_NO_HOOKS");
    for (key, value) in observers.env() {
        command.env(key, value);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let started = Instant::now();
    let run = Run {
        output: command.output().expect("running php-fuzz"),
    };
    eprintln!("campaign of {runs} runs: {:?}", started.elapsed());
    let seen = observers.finish();
    let reports = common::finding_reports(&dir.path().join("artifacts"));
    (run, seen, reports)
}

/// The ways this PHP can try, after listing the others with their reason.
fn tried_ways() -> Vec<Way> {
    let (tried, missing): (Vec<Way>, Vec<Way>) =
        ways().into_iter().partition(|w| w.missing.is_none());
    for way in &missing {
        eprintln!(
            "not tried: {} ({})",
            way.name,
            way.missing.as_deref().unwrap_or("")
        );
    }
    assert!(tried.len() >= 30, "{tried:#?}");
    tried
}

/// No finding but side effects, and php-fuzz did not crash.
fn assert_only_side_effects(run: &Run, reports: &[serde_json::Value]) {
    assert!(
        [0, 77].contains(&run.code()) && !run.stderr().contains("panicked"),
        "{}",
        run.all()
    );
    for report in reports {
        assert_eq!(report["kind"], "side-effect", "{report:#}\n{}", run.all());
    }
}

#[test]
fn nothing_the_hostile_target_tries_touches_the_machine() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tried = tried_ways();
    let (run, seen, reports) = campaign(80, &[], &[]);
    let through: Vec<&str> = tried
        .iter()
        .filter(|w| seen.reached(w))
        .map(|w| w.name.as_str())
        .collect();
    let offenders = seen.offenders();
    assert!(
        offenders.is_empty(),
        "{} of {} ways got through: {through:?}\n{}\n{}",
        through.len(),
        tried.len(),
        offenders.join("\n"),
        run.all()
    );
    assert_only_side_effects(&run, &reports);
}

#[test]
fn the_hooks_alone_stop_every_way_they_are_documented_to_stop() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tried = tried_ways();
    let (run, seen, reports) = campaign(80, &[], &[("PHP_FUZZ_NO_WALL", "1")]);
    let through: Vec<&Way> = tried.iter().filter(|w| seen.reached(w)).collect();
    eprintln!(
        "with the hooks alone, {} of {} ways got through:",
        through.len(),
        tried.len()
    );
    for way in &through {
        eprintln!("  {} ({})", way.name, way.observer);
    }
    let hooked: Vec<&str> = through
        .iter()
        .filter(|w| w.hooked)
        .map(|w| w.name.as_str())
        .collect();
    assert!(
        hooked.is_empty(),
        "hooked ways got through: {hooked:?}\n{}\n{}",
        seen.offenders().join("\n"),
        run.all()
    );
    assert_only_side_effects(&run, &reports);
    // Each refusal the harness saw is a finding (one per run: 80 runs
    // report most of them).
    assert!(reports.len() >= 30, "{reports:#?}\n{}", run.all());
}

#[test]
fn the_wall_alone_stops_every_way() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tried = tried_ways();
    // The hooks let everything through; only the operating system refuses.
    let (run, seen, _reports) = campaign(20, &[], &[("PHP_FUZZ_NO_HOOKS", "1")]);
    assert!(
        run.stderr().contains("INFO: sandbox: Landlock ABI"),
        "{}",
        run.all()
    );
    let through: Vec<&str> = tried
        .iter()
        .filter(|w| seen.reached(w))
        .map(|w| w.name.as_str())
        .collect();
    assert!(
        through.is_empty(),
        "with the wall alone, {} of {} ways got through: {through:?}\n{}\n{}",
        through.len(),
        tried.len(),
        seen.offenders().join("\n"),
        run.all()
    );
}

#[test]
fn with_allow_side_effects_the_ways_reach_the_observers() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tried = tried_ways();
    let (run, seen, _reports) = campaign(2, &["--allow-side-effects"], &[]);
    let (through, stopped): (Vec<&Way>, Vec<&Way>) = tried.iter().partition(|w| seen.reached(w));
    for way in &stopped {
        eprintln!(
            "did not reach its observer: {} ({})",
            way.name, way.observer
        );
    }
    // Observable ways that cannot happen here: DNS has no observer.
    let unobservable: BTreeSet<&str> = tried
        .iter()
        .filter(|w| w.observer == "none")
        .map(|w| w.name.as_str())
        .collect();
    let failed: Vec<&str> = stopped
        .iter()
        .map(|w| w.name.as_str())
        .filter(|name| !unobservable.contains(name))
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} ways reached their observers; these did not: {failed:?}\n{}\n{}",
        through.len(),
        tried.len(),
        seen.offenders().join("\n"),
        run.all()
    );
}
