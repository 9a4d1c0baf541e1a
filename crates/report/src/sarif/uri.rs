//! File paths as SARIF artifact locations: relative to the source root
//! (`uriBaseId: %SRCROOT%`) when the file is under it, an absolute
//! `file://` URI otherwise. Each path segment is percent-encoded, so a
//! space, `#`, `%` or a byte outside ASCII still makes a valid URI
//! reference.

use std::path::{Path, PathBuf};

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde_sarif::sarif::ArtifactLocation;

/// The `uriBaseId` of every relative URI in the log.
pub(crate) const SRCROOT: &str = "%SRCROOT%";

/// What a path segment keeps: RFC 3986's unreserved characters and the
/// sub-delimiters; everything else is percent-encoded (`:` too, so that a
/// relative reference never reads as a scheme).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b':')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'@')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The folder that relative URIs are relative to.
#[derive(Debug, Clone)]
pub(crate) struct SourceRoot {
    /// As given, made absolute.
    given: PathBuf,
    /// With symbolic links resolved, as PHP names the files it includes.
    real: PathBuf,
}

impl SourceRoot {
    /// `dir` (relative to the current directory if relative), which must be
    /// an existing directory.
    pub fn new(dir: &Path) -> std::io::Result<SourceRoot> {
        let given = std::path::absolute(dir)?;
        let real = given.canonicalize()?;
        if !real.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                "not a directory",
            ));
        }
        Ok(SourceRoot { given, real })
    }

    /// The absolute URI `%SRCROOT%` stands for, ending in `/`.
    pub fn base_uri(&self) -> String {
        let mut uri = file_uri(&self.real.to_string_lossy());
        if !uri.ends_with('/') {
            uri.push('/');
        }
        uri
    }

    /// `path` under the root, as `a/b.php`; `None` outside it.
    fn relative<'a>(&self, path: &'a str) -> Option<&'a str> {
        [&self.real, &self.given].into_iter().find_map(|root| {
            let root = root.to_str()?.trim_end_matches('/');
            path.strip_prefix(root)?
                .strip_prefix('/')
                .filter(|rest| !rest.is_empty())
        })
    }

    /// The artifact location of the file at `path`: relative to
    /// `%SRCROOT%` under the root (a relative path counts as under it), an
    /// absolute `file://` URI elsewhere.
    pub fn location(&self, path: &str) -> ArtifactLocation {
        let relative = if path.starts_with('/') {
            self.relative(path)
        } else {
            Some(path.trim_start_matches("./"))
        };
        match relative {
            Some(relative) => ArtifactLocation {
                uri: Some(encode_path(relative)),
                uri_base_id: Some(SRCROOT.to_string()),
                ..Default::default()
            },
            None => ArtifactLocation {
                uri: Some(file_uri(path)),
                ..Default::default()
            },
        }
    }

    /// `text` with the root's absolute path taken out of every path in it
    /// (`/abs/root/src/A.php` → `src/A.php`): a finding's signature as it
    /// reads wherever the project is checked out.
    pub fn without_root(&self, text: &str) -> String {
        let mut text = text.to_string();
        for root in [&self.real, &self.given] {
            if let Some(root) = root.to_str() {
                let prefix = format!("{}/", root.trim_end_matches('/'));
                if prefix != "/" {
                    text = text.replace(&prefix, "");
                }
            }
        }
        text
    }
}

/// `a b/c#.php` → `a%20b/c%23.php`.
fn encode_path(path: &str) -> String {
    path.split('/')
        .map(|segment| utf8_percent_encode(segment, SEGMENT).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// An absolute path as a `file://` URI.
fn file_uri(path: &str) -> String {
    format!("file://{}", encode_path(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, SourceRoot) {
        let dir = tempfile::tempdir().unwrap();
        let root = SourceRoot::new(dir.path()).unwrap();
        (dir, root)
    }

    fn uri(location: &ArtifactLocation) -> (&str, Option<&str>) {
        (
            location.uri.as_deref().unwrap(),
            location.uri_base_id.as_deref(),
        )
    }

    #[test]
    fn a_file_under_the_root_is_relative_to_srcroot() {
        let (dir, root) = root();
        let real = dir.path().canonicalize().unwrap();
        let file = format!("{}/src/Parser.php", real.display());
        assert_eq!(
            uri(&root.location(&file)),
            ("src/Parser.php", Some(SRCROOT))
        );
        assert_eq!(root.base_uri(), format!("file://{}/", real.display()));
    }

    #[test]
    fn a_file_outside_the_root_keeps_an_absolute_file_uri() {
        let (_dir, root) = root();
        assert_eq!(
            uri(&root.location("/usr/share/php/Twig/Lexer.php")),
            ("file:///usr/share/php/Twig/Lexer.php", None)
        );
    }

    #[test]
    fn a_sibling_folder_with_the_root_as_prefix_is_outside() {
        let (dir, root) = root();
        let real = dir.path().canonicalize().unwrap();
        let sibling = format!("{}-other/a.php", real.display());
        assert_eq!(uri(&root.location(&sibling)).1, None);
    }

    #[test]
    fn odd_bytes_are_percent_encoded() {
        let (dir, root) = root();
        let real = dir.path().canonicalize().unwrap();
        let file = format!("{}/my dir/a#b%c:d?.php", real.display());
        assert_eq!(
            uri(&root.location(&file)).0,
            "my%20dir/a%23b%25c%3Ad%3F.php"
        );
        assert_eq!(
            uri(&root.location("/tmp/ünï code/x.php")).0,
            "file:///tmp/%C3%BCn%C3%AF%20code/x.php"
        );
    }

    #[test]
    fn the_root_as_given_counts_as_well_as_its_real_path() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("project")).unwrap();
        std::os::unix::fs::symlink(real.join("project"), real.join("link")).unwrap();
        let root = SourceRoot::new(&real.join("link")).unwrap();
        for file in [
            format!("{}/link/lib/A.php", real.display()),
            format!("{}/project/lib/A.php", real.display()),
        ] {
            assert_eq!(uri(&root.location(&file)), ("lib/A.php", Some(SRCROOT)));
        }
    }

    #[test]
    fn signatures_lose_the_root() {
        let (dir, root) = root();
        let real = dir.path().canonicalize().unwrap();
        let signature = format!(
            "warning Warning at {r}/lib/Rtf.php:26 in pack < RtfText::hexByte ({r}/lib/Rtf.php)",
            r = real.display()
        );
        assert_eq!(
            root.without_root(&signature),
            "warning Warning at lib/Rtf.php:26 in pack < RtfText::hexByte (lib/Rtf.php)"
        );
    }

    #[test]
    fn a_root_that_is_not_a_directory_is_an_error() {
        let (dir, _) = root();
        assert!(SourceRoot::new(&dir.path().join("missing")).is_err());
        std::fs::write(dir.path().join("file"), "").unwrap();
        assert!(SourceRoot::new(&dir.path().join("file")).is_err());
    }
}
