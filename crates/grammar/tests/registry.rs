//! Every built-in grammar loads with this tree-sitter and parses its sample.

use php_fuzz_grammar::{Grammar, InputParser, grammars};

#[test]
fn every_grammar_loads_and_parses_its_sample_without_errors() {
    for info in grammars() {
        let grammar = Grammar::from_info(info).unwrap();
        let parsed = InputParser::new(&grammar).parse(info.sample.as_bytes());
        assert!(
            !parsed.has_error(),
            "{}: the sample has a syntax error",
            info.name
        );
        assert!(parsed.sites().len() > 5, "{}: too few subtrees", info.name);
    }
}

#[test]
fn php_is_first_and_the_default_features_bring_json_and_the_others() {
    // sql is an opt-in feature (2.5 MB); see docs/grammar.md.
    let names: Vec<_> = grammars().iter().map(|g| g.name).collect();
    assert_eq!(names[0], "php");
    for name in ["json", "css", "html", "yaml", "markdown", "javascript"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
}

#[test]
fn code_grammars_name_identifier_kinds_the_language_has() {
    for info in grammars().iter().filter(|g| g.code) {
        let grammar = Grammar::from_info(info).unwrap();
        let parsed = InputParser::new(&grammar).parse(info.sample.as_bytes());
        assert!(
            !parsed.identifiers().is_empty(),
            "{}: no identifiers in the sample",
            info.name
        );
    }
}

#[test]
fn an_unknown_grammar_names_the_known_ones() {
    let err = Grammar::load("cobol").unwrap_err().to_string();
    assert!(
        err.contains("cobol") && err.contains("php") && err.contains("json"),
        "{err}"
    );
}

#[test]
fn what_the_engine_shares_between_workers_is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<Grammar>();
    shared::<php_fuzz_grammar::ParsedInput>();
    shared::<php_fuzz_grammar::FragmentPool>();
    fn owned<T: Send>() {}
    owned::<php_fuzz_grammar::GrammarMutator>();
    owned::<InputParser>();
}

#[test]
fn every_grammar_describes_itself_for_the_grammars_command() {
    for info in grammars() {
        assert!(
            !info.description.is_empty() && !info.sample.is_empty(),
            "{}",
            info.name
        );
        assert_eq!(
            php_fuzz_grammar::find(info.name).map(|g| g.name),
            Some(info.name)
        );
    }
}

#[test]
fn every_lexicon_parses_without_errors_and_gives_escape_and_number_fragments() {
    let mut with_lexicon = 0;
    for info in grammars().iter().filter(|g| !g.lexicon.is_empty()) {
        with_lexicon += 1;
        let grammar = Grammar::from_info(info).unwrap();
        let parsed = InputParser::new(&grammar).parse(info.lexicon.as_bytes());
        assert!(
            !parsed.has_error(),
            "{}: the lexicon has a syntax error",
            info.name
        );
        let mut pool = php_fuzz_grammar::FragmentPool::default();
        let pinned = pool.add_pinned(&parsed);
        assert!(pinned > 100, "{}: only {pinned} fragments", info.name);
        assert_eq!(pool.stats().pinned, pinned);
    }
    assert!(with_lexicon >= 1, "no grammar has a lexicon");
}

#[test]
fn the_php_lexicon_holds_each_escape_form_and_number_base() {
    let lexicon = Grammar::load("php").unwrap().info().lexicon;
    for form in [
        r"\x41",
        r"\u{1F600}",
        r"\101",
        r"\e",
        "0x7FFFFFFFFFFFFFFF",
        "0b1010",
        "0o17",
        "1e309",
        "<<<'EOT'",
        "<<<EOT",
        "?->",
        "<=>",
        "??=",
        "#[",
    ] {
        assert!(lexicon.contains(form), "the php lexicon lacks {form}");
    }
}
