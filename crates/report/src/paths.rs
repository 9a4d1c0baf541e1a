//! Where files are shown relative to, and what their pages are called.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// The pages of the files, relative to the output directory.
pub(crate) const FILES_DIR: &str = "files";

/// The deepest directory that holds every file (`/` or empty when there is none).
pub(crate) fn common_root<'a>(paths: impl IntoIterator<Item = &'a Path>) -> PathBuf {
    let mut root: Option<Vec<Component<'a>>> = None;
    for path in paths {
        let dir = path.parent().unwrap_or(Path::new(""));
        root = Some(match root {
            None => dir.components().collect(),
            Some(mut common) => {
                let same = common
                    .iter()
                    .zip(dir.components())
                    .take_while(|(a, b)| *a == b)
                    .count();
                common.truncate(same);
                common
            }
        });
    }
    root.unwrap_or_default().into_iter().collect()
}

/// `path` relative to `root`, or the whole path when it is not under it.
pub(crate) fn relative(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rest) if !rest.as_os_str().is_empty() => rest.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// Hands out page names, `files/<sanitised relative path>.html`, unique even
/// on case-insensitive file systems and when two paths sanitise alike.
#[derive(Default)]
pub(crate) struct PageNames {
    taken: HashSet<String>,
}

/// Long names keep their end (the file name) and get a hash of the whole.
const MAX_STEM: usize = 120;

impl PageNames {
    pub(crate) fn assign(&mut self, relative: &str) -> String {
        let mut stem: String = relative
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        // No hidden files, no `..`.
        stem = stem.trim_start_matches('.').to_string();
        if stem.is_empty() {
            stem.push_str("file");
        }
        if stem.len() > MAX_STEM {
            let tail = &stem[stem.len() - (MAX_STEM - 17)..];
            stem = format!("{:016x}-{tail}", fnv1a(relative.as_bytes()));
        }
        let mut name = stem.clone();
        let mut n = 1;
        while !self.taken.insert(name.to_ascii_lowercase()) {
            n += 1;
            name = format!("{stem}-{n}");
        }
        format!("{FILES_DIR}/{name}.html")
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_the_deepest_common_directory() {
        let paths = [
            Path::new("/p/src/a/X.php"),
            Path::new("/p/src/b/X.php"),
            Path::new("/p/src/Y.php"),
        ];
        assert_eq!(common_root(paths), PathBuf::from("/p/src"));
        assert_eq!(
            common_root([Path::new("/p/src/a/X.php")]),
            PathBuf::from("/p/src/a")
        );
        assert_eq!(
            common_root([Path::new("/a/X.php"), Path::new("/b/Y.php")]),
            PathBuf::from("/")
        );
        assert_eq!(common_root(std::iter::empty()), PathBuf::new());
        // Components, not characters: /p/src and /p/srcx share only /p.
        assert_eq!(
            common_root([Path::new("/p/src/X.php"), Path::new("/p/srcx/Y.php")]),
            PathBuf::from("/p")
        );
    }

    #[test]
    fn relative_paths_fall_back_to_the_whole_path() {
        assert_eq!(
            relative(Path::new("/p/src/a/X.php"), Path::new("/p/src")),
            "a/X.php"
        );
        assert_eq!(relative(Path::new("/q/X.php"), Path::new("/p")), "/q/X.php");
    }

    #[test]
    fn page_names_are_unique_and_safe() {
        let mut names = PageNames::default();
        assert_eq!(names.assign("a/X.php"), "files/a_X.php.html");
        assert_eq!(names.assign("b/X.php"), "files/b_X.php.html");
        assert_eq!(names.assign("a_X.php"), "files/a_X.php-2.html");
        assert_eq!(
            names.assign("A_x.php"),
            "files/A_x.php-3.html",
            "case-insensitive file systems"
        );
        assert_eq!(names.assign("a_X.php-2"), "files/a_X.php-2-2.html");
        assert_eq!(names.assign("../<&\"'>.php"), "files/______.php.html");
        assert_eq!(names.assign(".."), "files/file.html");
        let long = format!("{}/Deep.php", "dir/".repeat(60));
        let name = names.assign(&long);
        assert!(
            name.len() < 150 && name.ends_with("_Deep.php.html"),
            "{name}"
        );
    }
}
