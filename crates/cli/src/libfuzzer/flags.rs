//! libFuzzer's flags, in one table (as libFuzzer's FuzzerFlags.def): the
//! name, default and meaning of each, from which the `Flags` struct, the
//! parser and `-help=1` are all made, so they cannot drift apart.
//!
//! The parsing is libFuzzer's, not getopt's: any `-name=value` argument is a
//! flag wherever it stands, the last of duplicates wins, numbers parse like
//! libFuzzer's `MyStol` (leading digits, no error), `--anything` is ignored,
//! an unknown `-flag` is warned about and ignored, and everything else is an
//! input (a file or a corpus directory).

use std::ffi::OsString;

/// What php-fuzz does with a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// It has libFuzzer's meaning.
    Used,
    /// Accepted so that command lines written for libFuzzer run; no effect.
    Accepted,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct FlagInfo {
    pub name: &'static str,
    /// As `-help=1` shows it.
    pub default: &'static str,
    pub support: Support,
    pub meaning: &'static str,
}

/// A flag's value type: parsed the way libFuzzer parses it.
trait FlagValue: Sized {
    fn parse_flag(text: &str) -> Self;
}

impl FlagValue for i64 {
    /// libFuzzer's MyStol: an optional `-`, then digits up to the first
    /// non-digit; anything else is 0.
    fn parse_flag(text: &str) -> i64 {
        let (sign, digits) = match text.strip_prefix('-') {
            Some(rest) => (-1, rest),
            None => (1, text),
        };
        let mut value: i64 = 0;
        for b in digits.bytes().take_while(u8::is_ascii_digit) {
            value = value.saturating_mul(10).saturating_add(i64::from(b - b'0'));
        }
        sign * value
    }
}

impl FlagValue for Option<i64> {
    fn parse_flag(text: &str) -> Option<i64> {
        Some(i64::parse_flag(text))
    }
}

impl FlagValue for Option<String> {
    fn parse_flag(text: &str) -> Option<String> {
        Some(text.to_string())
    }
}

macro_rules! flags {
    ($( $name:ident: $ty:ty = $default:expr, $shown:literal, $support:ident, $meaning:literal; )*) => {
        /// The values of libFuzzer's flags after parsing.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Flags {
            $( pub $name: $ty, )*
        }

        impl Default for Flags {
            fn default() -> Flags {
                Flags { $( $name: $default, )* }
            }
        }

        /// Every flag, in `-help=1` order.
        pub const TABLE: &[FlagInfo] = &[
            $( FlagInfo {
                name: stringify!($name),
                default: $shown,
                support: Support::$support,
                meaning: $meaning,
            }, )*
        ];

        impl Flags {
            /// Sets flag `name` from its text; false if there is no such flag.
            fn set(&mut self, name: &str, value: &str) -> bool {
                match name {
                    $( stringify!($name) => self.$name = FlagValue::parse_flag(value), )*
                    _ => return false,
                }
                true
            }
        }
    };
}

flags! {
    runs: i64 = -1, "-1", Used,
        "Number of inputs to run (-1: no limit). With input files: run each this many times (at least once).";
    max_total_time: i64 = 0, "0", Used,
        "If positive, stop fuzzing after this many seconds.";
    timeout: Option<i64> = None, "3", Used,
        "Seconds one input may run before it is a timeout (default: php-fuzz's --timeout).";
    rss_limit_mb: Option<i64> = None, "2048", Used,
        "Memory limit of the PHP process in MB, 0 for none (default: php-fuzz's --rss-limit-mb).";
    malloc_limit_mb: Option<i64> = None, "0", Used,
        "If positive, one allocation larger than this many MB is an out-of-memory (malloc(N)); 0: -rss_limit_mb. PHP's memory_limit is the smaller of the two.";
    max_len: i64 = 0, "0", Used,
        "Longest input to generate; 0: setMaxLen(), else the larger of 1024 and the largest seed.";
    len_control: i64 = 100, "100", Used,
        "Grow the length limit after len_control * log(limit) runs without new coverage; 0: no length control.";
    seed: i64 = 0, "0", Used,
        "Random seed; 0 picks one (printed as INFO: Seed).";
    dict: Option<String> = None, "", Used,
        "Dictionary file (AFL/libFuzzer format), added to the target's addDictionary().";
    artifact_prefix: Option<String> = None, "./", Used,
        "Prefix of crash-, timeout- and oom- files: a directory with a trailing / or any path prefix.";
    exact_artifact_path: Option<String> = None, "", Used,
        "Write the artifact (or -minimize_crash's result) to exactly this path.";
    print_final_stats: i64 = 0, "0", Used,
        "If 1, print stat:: lines at the end.";
    jobs: i64 = 0, "0", Used,
        "Fuzz with several PHP processes in one campaign (workers of them; see -workers).";
    workers: i64 = 0, "0", Used,
        "Parallel PHP processes for -jobs; 0: min(jobs, cores / 2).";
    fork: i64 = 0, "0", Used,
        "Fuzz with this many PHP processes in one campaign (php-fuzz's workers survive crashes anyway).";
    merge: i64 = 0, "0", Used,
        "If 1, merge the inputs of the second and later directories that add coverage into the first.";
    merge_control_file: Option<String> = None, "", Used,
        "Progress file of -merge=1: a merge killed and run again resumes from it.";
    minimize_crash: i64 = 0, "0", Used,
        "If 1, shrink the crashing input given while it crashes the same way (use -runs or -max_total_time).";
    create_missing_dirs: i64 = 0, "0", Used,
        "If 1, create the corpus and artifact directories when missing.";
    verbosity: i64 = 1, "1", Used,
        "0: no progress lines.";
    error_exitcode: i64 = 77, "77", Used,
        "Exit code when a crash is found.";
    timeout_exitcode: i64 = 70, "70", Used,
        "Exit code when a timeout is found.";
    interrupted_exitcode: i64 = 72, "72", Used,
        "Exit code after SIGINT.";
    help: i64 = 0, "0", Used,
        "Print this help.";
    use_value_profile: i64 = 0, "0", Used,
        "If 1, the closeness of compared operands is a feature (php-fuzz --use-value-profile).";
    entropic: i64 = 0, "0", Used,
        "If 1, pick corpus entries by the Entropic power schedule (php-fuzz --entropic; off by default here, unlike libFuzzer).";
    entropic_feature_frequency_threshold: i64 = 255, "255", Used,
        "With -entropic=1: features hit fewer times than this are always rare.";
    entropic_number_of_rarest_features: i64 = 100, "100", Used,
        "With -entropic=1: keep at least this many rarest features.";
    entropic_scale_per_exec_time: i64 = 0, "0", Used,
        "With -entropic=1: scale an input's energy by its execution time (slower inputs less).";
    close_fd_mask: i64 = 0, "0", Accepted,
        "Accepted; what the PHP target prints is discarded anyway (php-fuzz --show-output shows it).";
    reload: i64 = 1, "1", Accepted,
        "Accepted; php-fuzz --reload imports what other processes write to the corpus.";
    detect_leaks: i64 = 1, "1", Accepted,
        "Accepted; PHP has no leak detector.";
    shrink: i64 = 0, "0", Accepted,
        "Accepted; php-fuzz reduces corpus entries (REDUCE) anyway.";
    reduce_inputs: i64 = 1, "1", Accepted,
        "Accepted; php-fuzz reduces corpus entries (REDUCE) anyway.";
}

/// A command line taken apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedArgs {
    pub flags: Flags,
    /// Files or directories, in order.
    pub inputs: Vec<OsString>,
    /// Warnings and notes to print, as libFuzzer words them.
    pub messages: Vec<String>,
    /// Accepted-only flags that were given.
    pub accepted: Vec<&'static str>,
}

/// Parses a libFuzzer command line (without the program name).
pub fn parse(args: &[OsString]) -> ParsedArgs {
    let mut parsed = ParsedArgs::default();
    let mut told_about_dashes = false;
    for arg in args {
        let Some(text) = arg.to_str().filter(|t| t.starts_with('-')) else {
            parsed.inputs.push(arg.clone());
            continue;
        };
        if let Some(rest) = text.strip_prefix("--") {
            if !told_about_dashes {
                told_about_dashes = true;
                parsed
                    .messages
                    .push("INFO: libFuzzer ignores flags that start with '--'".into());
            }
            if let Some((name, _)) = rest.split_once('=')
                && TABLE.iter().any(|f| f.name == name)
            {
                parsed.messages.push(format!(
                    "WARNING: did you mean '{}' (single dash)?",
                    &text[1..]
                ));
            }
            continue;
        }
        let known = text[1..]
            .split_once('=')
            .is_some_and(|(name, value)| parsed.flags.set(name, value));
        if !known {
            parsed.messages.push(format!(
                "WARNING: unrecognized flag '{text}'; use -help=1 to list all flags"
            ));
            continue;
        }
        let name = text[1..].split_once('=').map_or("", |(n, _)| n);
        if let Some(info) = TABLE
            .iter()
            .find(|f| f.name == name && f.support == Support::Accepted)
            && !parsed.accepted.contains(&info.name)
        {
            parsed.accepted.push(info.name);
        }
    }
    parsed
}

/// `-help=1`'s text.
pub fn help(program: &str) -> String {
    let width = TABLE.iter().map(|f| f.name.len()).max().unwrap_or(0);
    let mut text = format!(
        "Usage:\n\nTo run fuzzing pass 0 or more directories.\n\
         {program} [-flag1=val1 [-flag2=val2 ...] ] [dir1 [dir2 ...] ]\n\n\
         To run individual tests without fuzzing pass 1 or more files:\n\
         {program} [-flag1=val1 [-flag2=val2 ...] ] file1 [file2 ...]\n\n\
         Flags: (strictly in form -flag=value)\n"
    );
    for flag in TABLE {
        text.push_str(&format!(
            " {:width$}\t{}\t{}\n",
            flag.name, flag.default, flag.meaning
        ));
    }
    text.push_str("\nFlags starting with '--' will be ignored.\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(args: &[&str]) -> ParsedArgs {
        parse(&args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn flags_anywhere_last_wins_inputs_in_order() {
        let p = parse_str(&[
            "-timeout=25",
            "corpus",
            "-runs=4",
            "-seed=1337",
            "seeds",
            "-runs=7",
            "-dict=a.dict",
        ]);
        assert_eq!(p.flags.timeout, Some(25));
        assert_eq!(p.flags.runs, 7);
        assert_eq!(p.flags.seed, 1337);
        assert_eq!(p.flags.dict.as_deref(), Some("a.dict"));
        assert_eq!(p.inputs, vec![OsString::from("corpus"), "seeds".into()]);
        assert!(p.messages.is_empty(), "{:?}", p.messages);
    }

    #[test]
    fn dashes_and_unknown_flags_are_ignored_with_libfuzzers_words() {
        let p = parse_str(&[
            "--",
            "-seed=1337",
            "--max_len=9",
            "-foo_bar=1",
            "-runs",
            "x",
        ]);
        assert_eq!(p.flags.seed, 1337);
        assert_eq!(p.flags.max_len, 0);
        assert_eq!(p.inputs, vec![OsString::from("x")]);
        assert_eq!(
            p.messages,
            vec![
                "INFO: libFuzzer ignores flags that start with '--'",
                "WARNING: did you mean '-max_len=9' (single dash)?",
                "WARNING: unrecognized flag '-foo_bar=1'; use -help=1 to list all flags",
                "WARNING: unrecognized flag '-runs'; use -help=1 to list all flags",
            ]
        );
    }

    #[test]
    fn numbers_parse_like_libfuzzers_mystol() {
        assert_eq!(i64::parse_flag("25"), 25);
        assert_eq!(i64::parse_flag("-1"), -1);
        assert_eq!(i64::parse_flag("12abc"), 12);
        assert_eq!(i64::parse_flag("abc"), 0);
        assert_eq!(i64::parse_flag(""), 0);
    }

    #[test]
    fn the_table_and_the_struct_agree() {
        let mut flags = Flags::default();
        for info in TABLE {
            assert!(flags.set(info.name, "1"), "{} has no field", info.name);
        }
        assert!(!flags.set("no_such_flag", "1"));
        let names: std::collections::HashSet<_> = TABLE.iter().map(|f| f.name).collect();
        assert_eq!(names.len(), TABLE.len(), "a flag is listed twice");
        let text = help("T");
        for info in TABLE {
            assert!(
                text.contains(info.meaning),
                "{} missing from help",
                info.name
            );
        }
    }

    #[test]
    fn accepted_only_flags_are_reported_once() {
        let p = parse_str(&["-detect_leaks=0", "-close_fd_mask=3", "-detect_leaks=1"]);
        assert_eq!(p.accepted, vec!["detect_leaks", "close_fd_mask"]);
    }
}
