//! The pipe protocol between the engine and the PHP harness (docs/protocol.md).
//!
//! Each frame is a 12-byte [`Header`] (magic, sequence number, payload
//! length) followed by the payload, a bincode 2 encoding (fixed-width
//! integers, little-endian) of a [`Request`] or an [`Event`]. The PHP side
//! speaks the same layout with pack()/unpack(). Strings from PHP are byte
//! strings: messages often quote the input.

use std::io::{self, Write};

use bincode::{BorrowDecode, Encode};

pub fn config() -> impl bincode::config::Config {
    bincode::config::standard()
        .with_fixed_int_encoding()
        .with_little_endian()
}

/// Bumped whenever the layout changes; both sides come from one binary.
pub const PROTOCOL_VERSION: u32 = 5;

/// The first bytes of every frame, `F5 70 66 02`: 0xF5 never occurs in
/// UTF-8, so text a target writes into a pipe is never taken for a frame.
pub const MAGIC: u32 = 0x0266_70F5;
pub const HEADER_BYTES: usize = 12;

/// What precedes every frame's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub magic: u32,
    /// Counts the frames each side sent, from 0; catches lost or foreign bytes.
    pub seq: u32,
    pub len: u32,
}

impl Header {
    pub fn parse(bytes: &[u8; HEADER_BYTES]) -> Header {
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        Header {
            magic: word(0),
            seq: word(4),
            len: word(8),
        }
    }
}

/// Engine → harness.
#[derive(Debug, Encode)]
pub enum Request<'a> {
    Init {
        target: &'a [u8],
        style: u8,
        timeout_ms: u64,
        flush_interval_ms: u64,
        dedup_traces: bool,
        /// A call stack deeper than this is a runaway recursion.
        max_stack_depth: u32,
        /// Every block also notes the PHP stack, so a fatal error's report
        /// has it (a harness started to re-run one input, never to fuzz).
        catch_fatal_stack: bool,
        /// The source server serves the `cmplog` rendering: the detectors'
        /// hooks log their comparisons too.
        log_comparisons: bool,
        /// The detectors the engine chose; `None`: the target's, else all.
        detectors: Option<Vec<&'a [u8]>>,
        /// `--allow-side-effects`.
        allow_side_effects: bool,
        /// The campaign's scratch folder, where runs may write.
        scratch_dir: &'a [u8],
    },
    Run {
        /// The engine will ask for the trace every few milliseconds (so a
        /// run that kills the process leaves its last blocks behind): the
        /// harness sends it without looking at the stack.
        streaming: bool,
        /// The timeout of this batch's runs (it may change after the
        /// seeds, see `--timeout`).
        timeout_ms: u64,
        /// A run past this (0: never) answers SIGALRM with `Stuck` and goes
        /// on: the engine stops it there if a known hang was stuck at that
        /// place, else lets it reach the timeout.
        stuck_ms: u64,
        inputs: InputList<'a>,
    },
    Source {
        code: Option<&'a [u8]>,
    },
    Shutdown,
    /// Mutants wanted from the target's custom mutator and crossover.
    Mutate {
        items: &'a [MutationItem<'a>],
    },
    /// Reply to `MutateRequest`: the built-in mutators' output.
    Mutated {
        data: &'a [u8],
    },
    /// To a loaded harness: become the fork server (answered by `ForkServing`).
    ForkServer,
    /// To the fork server: fork a harness, which opens the named pipes at
    /// these paths as its requests and events pipes.
    Fork {
        request_path: &'a [u8],
        event_path: &'a [u8],
    },
}

/// One mutant wanted: `$mutator($data, $maxLen, $seed)`, or with
/// `crossover`, `$crossOver($data, $partner, $maxLen, $seed)`.
#[derive(Debug, Clone, Copy, Encode)]
pub struct MutationItem<'a> {
    pub crossover: bool,
    pub seed: u32,
    pub max_len: u64,
    pub data: &'a [u8],
    pub partner: &'a [u8],
}

/// A batch's inputs, encoded as bincode's `Vec<Vec<u8>>` straight from the
/// flat arena they live in.
#[derive(Debug, Clone, Copy)]
pub struct InputList<'a> {
    pub data: &'a [u8],
    pub ends: &'a [usize],
}

impl Encode for InputList<'_> {
    fn encode<E: bincode::enc::Encoder>(
        &self,
        encoder: &mut E,
    ) -> Result<(), bincode::error::EncodeError> {
        (self.ends.len() as u64).encode(encoder)?;
        let mut start = 0;
        for &end in self.ends {
            self.data[start..end].encode(encoder)?;
            start = end;
        }
        Ok(())
    }
}

/// Harness → engine.
#[derive(Debug, BorrowDecode)]
pub enum Event<'a> {
    Ready {
        php_version: &'a [u8],
        signals: bool,
        max_len: u64,
        dictionaries: Vec<&'a [u8]>,
        allowed_exceptions: Vec<&'a [u8]>,
        load_warnings: Vec<Problem<'a>>,
        /// Coverage of loading the target file itself.
        coverage: &'a [u8],
        /// From `$config->setGrammar()`; empty if not called.
        grammar: &'a [u8],
        custom_mutator: bool,
        custom_crossover: bool,
        /// The detectors on.
        detectors: Vec<&'a [u8]>,
        /// The folders runs may write in (empty: side effects allowed).
        writable: Vec<&'a [u8]>,
        /// A typed target's parameters, JSON (docs/autofuzz.md); empty for bytes.
        arguments: &'a [u8],
    },
    LoadFailed {
        problem: Problem<'a>,
    },
    SourceRequest {
        path: &'a [u8],
    },
    Outcomes {
        first: u32,
        outcomes: Vec<Outcome<'a>>,
    },
    CoverageChunk {
        index: u32,
        coverage: &'a [u8],
    },
    Died {
        index: u32,
        status: u8,
        problem: Problem<'a>,
        coverage: &'a [u8],
    },
    /// The comparisons run `index` logged (code in the `cmplog` rendering
    /// only), sent before the `Outcomes` that holds the run.
    CmpLog {
        index: u32,
        log: &'a [u8],
    },
    /// Answer to `Mutate`: one mutant per item, each at most its `max_len`.
    Mutants {
        mutants: Vec<&'a [u8]>,
    },
    /// `\PhpFuzz\mutate()` inside a custom mutator: the `call`-th of the item with `seed`.
    MutateRequest {
        seed: u32,
        call: u32,
        max_len: u64,
        data: &'a [u8],
    },
    /// The custom mutator or crossover threw or raised a warning.
    MutatorFailed {
        problem: Problem<'a>,
    },
    /// Answer to `ForkServer`: serving, or why not (the harness then goes
    /// on as a plain harness).
    ForkServing {
        available: bool,
        reason: &'a [u8],
    },
    /// Answer to `Fork`: the child's pid, or 0 and why the fork failed.
    Forked {
        pid: u32,
        error: &'a [u8],
    },
    /// A forked harness's first frame on its own pipes.
    Started {
        pid: u32,
    },
    /// Run `index` is past the known-hang limit (`Run::stuck_ms`) and goes
    /// on; it has run for `micros`, and `problem` says where it is. Sent
    /// after the outcomes before it.
    Stuck {
        index: u32,
        micros: u64,
        problem: Problem<'a>,
    },
}

#[derive(Debug, BorrowDecode)]
pub struct Outcome<'a> {
    pub status: u8,
    /// The run's trace is the one already sent with this hash; `coverage` is empty.
    pub repeat: bool,
    /// xxh3 of the trace (trace style, clean runs), else 0.
    pub trace_hash: u64,
    /// How long the run took, in microseconds (saturating).
    pub micros: u32,
    pub coverage: &'a [u8],
    pub problem: Option<Problem<'a>>,
}

#[derive(Debug, Clone, BorrowDecode)]
pub struct Problem<'a> {
    pub class: &'a [u8],
    pub message: &'a [u8],
    pub file: &'a [u8],
    pub line: u32,
    pub trace: &'a [u8],
    pub frames: Vec<Frame<'a>>,
}

#[derive(Debug, Clone, BorrowDecode)]
pub struct Frame<'a> {
    pub file: &'a [u8],
    pub line: u32,
    pub function: &'a [u8],
}

/// Run statuses as the harness encodes them.
pub mod status {
    pub const OK: u8 = 0;
    pub const EXCEPTION: u8 = 1;
    pub const WARNING: u8 = 2;
    pub const TIMEOUT: u8 = 3;
    pub const FATAL: u8 = 4;
    pub const EXIT: u8 = 5;
    pub const OUT_OF_MEMORY: u8 = 6;
    /// The harness found the call stack deeper than `max_stack_depth`.
    pub const STACK_OVERFLOW: u8 = 7;
    /// A bug detector's finding (docs/detectors.md).
    pub const SECURITY: u8 = 8;
    /// A side effect the harness refused; the run went on.
    pub const SIDE_EFFECT: u8 = 9;
}

/// Encodes `request` as frame number `seq` into `buf` (cleared first).
pub fn encode_request(buf: &mut Vec<u8>, seq: u32, request: &Request<'_>) -> io::Result<()> {
    buf.clear();
    buf.extend_from_slice(&[0; HEADER_BYTES]);
    bincode::encode_into_std_write(request, buf, config()).map_err(io::Error::other)?;
    let len = u32::try_from(buf.len() - HEADER_BYTES)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "request larger than 4 GiB"))?;
    buf[..4].copy_from_slice(&MAGIC.to_le_bytes());
    buf[4..8].copy_from_slice(&seq.to_le_bytes());
    buf[8..12].copy_from_slice(&len.to_le_bytes());
    Ok(())
}

/// Encodes `request` as frame number `seq` and writes it.
pub fn write_request(
    out: &mut impl Write,
    buf: &mut Vec<u8>,
    seq: u32,
    request: &Request<'_>,
) -> io::Result<()> {
    encode_request(buf, seq, request)?;
    out.write_all(buf)?;
    out.flush()
}

pub fn decode_event(payload: &[u8]) -> Result<Event<'_>, bincode::error::DecodeError> {
    let (event, used) = bincode::borrow_decode_from_slice(payload, config())?;
    if used != payload.len() {
        return Err(bincode::error::DecodeError::OtherString(format!(
            "{} trailing bytes after the event",
            payload.len() - used
        )));
    }
    Ok(event)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The layout as the PHP side writes and reads it, field by field.
    fn u32le(n: u32) -> Vec<u8> {
        n.to_le_bytes().to_vec()
    }

    fn u64le(n: u64) -> Vec<u8> {
        n.to_le_bytes().to_vec()
    }

    /// A string: its u64 length, then its bytes.
    fn string(bytes: &[u8]) -> Vec<u8> {
        [u64le(bytes.len() as u64), bytes.to_vec()].concat()
    }

    /// A request: the header (magic, sequence number, payload length), then the payload.
    fn request(seq: u32, payload: Vec<u8>) -> Vec<u8> {
        [
            u32le(MAGIC),
            u32le(seq),
            u32le(payload.len() as u32),
            payload,
        ]
        .concat()
    }

    #[test]
    fn run_request_layout_matches_the_php_reader() {
        let data = b"abXYZ";
        let ends = [2, 5];
        let mut buf = Vec::new();
        let mut out = Vec::new();
        write_request(
            &mut out,
            &mut buf,
            7,
            &Request::Run {
                streaming: true,
                timeout_ms: 1500,
                stuck_ms: 120,
                inputs: InputList { data, ends: &ends },
            },
        )
        .unwrap();
        assert_eq!(MAGIC.to_le_bytes(), [0xF5, b'p', b'f', 2]);
        // Run (1), streaming, the timeout, the known-hang limit, two inputs.
        let inputs = [u64le(2), string(b"ab"), string(b"XYZ")].concat();
        let payload = [u32le(1), vec![1], u64le(1500), u64le(120), inputs].concat();
        assert_eq!(payload.len(), 4 + 1 + 8 + 8 + 8 + 8 + 2 + 8 + 3);
        assert_eq!(out, request(7, payload));
        let header = Header::parse(out[..HEADER_BYTES].try_into().unwrap());
        assert_eq!((header.magic, header.seq), (MAGIC, 7));
        assert_eq!(header.len as usize, out.len() - HEADER_BYTES);
    }

    #[test]
    fn mutate_request_layout_matches_the_php_reader() {
        let items = [MutationItem {
            crossover: true,
            seed: 7,
            max_len: 9,
            data: b"ab",
            partner: b"c",
        }];
        let mut buf = Vec::new();
        encode_request(&mut buf, 3, &Request::Mutate { items: &items }).unwrap();
        // Mutate (4), one item: crossover, seed, max length, data, partner.
        let item = [vec![1], u32le(7), u64le(9), string(b"ab"), string(b"c")].concat();
        let payload = [u32le(4), u64le(1), item].concat();
        assert_eq!(payload.len(), 4 + 8 + 1 + 4 + 8 + 10 + 9);
        assert_eq!(buf, request(3, payload));
    }

    #[test]
    fn outcomes_event_decodes_from_the_php_layout() {
        // Outcomes (3) from input 7, one: OK, not a repeat, the trace's
        // hash, the time, the coverage, no problem.
        let outcome = [
            vec![status::OK, 0],
            u64le(0xabcd),
            u32le(1234),
            string(&[5, 0, 0, 0]),
        ];
        let p = [u32le(3), u32le(7), u64le(1), outcome.concat(), vec![0]].concat();
        match decode_event(&p).unwrap() {
            Event::Outcomes { first, outcomes } => {
                assert_eq!(first, 7);
                assert_eq!(outcomes.len(), 1);
                assert_eq!(outcomes[0].coverage, &[5, 0, 0, 0]);
                assert_eq!(outcomes[0].trace_hash, 0xabcd);
                assert_eq!(outcomes[0].micros, 1234);
                assert!(!outcomes[0].repeat);
                assert!(outcomes[0].problem.is_none());
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn cmp_log_event_decodes_from_the_php_layout() {
        let p = [u32le(6), u32le(2), string(b"abc")].concat();
        match decode_event(&p).unwrap() {
            Event::CmpLog { index, log } => {
                assert_eq!(index, 2);
                assert_eq!(log, b"abc");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn stuck_event_decodes_from_the_php_layout() {
        // Stuck (13) on input 4 after 120 ms: class, message, file, line,
        // trace, one frame.
        let frame = [string(b"/t.php"), u32le(9), string(b"spin()")].concat();
        let problem = [
            string(b"Timeout"),
            string(b"past the limit"),
            string(b"/t.php"),
            u32le(9),
            string(b"#0 spin() at /t.php:9\n"),
            u64le(1),
            frame,
        ]
        .concat();
        let p = [u32le(13), u32le(4), u64le(120_000), problem].concat();
        match decode_event(&p).unwrap() {
            Event::Stuck {
                index,
                micros,
                problem,
            } => {
                assert_eq!((index, micros), (4, 120_000));
                assert_eq!(problem.line, 9);
                assert_eq!(problem.frames[0].function, b"spin()");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn trailing_bytes_are_an_error() {
        let p = [u32le(2), string(b"x"), vec![0xff]].concat();
        assert!(decode_event(&p).is_err());
    }
}
