//! What the commands print on stdout. A reader that goes away early
//! (`php-fuzz report-coverage … | head -1`) ends the printing quietly: the
//! command still finishes its work and exits with its own code. Any other
//! write error is an error.

use std::fmt::Display;
use std::io::{self, ErrorKind, Write};

use anyhow::Context;

pub struct Stdout {
    out: io::StdoutLock<'static>,
    /// The reader has gone: nothing more is written.
    closed: bool,
}

impl Stdout {
    pub fn lock() -> Stdout {
        Stdout {
            out: io::stdout().lock(),
            closed: false,
        }
    }

    /// Writes `bytes` as they are.
    pub fn write(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.out.write_all(bytes).and_then(|()| self.out.flush()) {
            Err(err) if err.kind() == ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            result => result.context("cannot write to stdout"),
        }
    }

    /// Writes `line` and a newline.
    pub fn line(&mut self, line: impl Display) -> anyhow::Result<()> {
        self.write(format!("{line}\n").as_bytes())
    }
}
