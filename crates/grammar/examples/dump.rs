use php_fuzz_grammar::{Grammar, InputParser};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let grammar = Grammar::load(&args[1]).unwrap();
    let p = InputParser::new(&grammar).parse(args[2].as_bytes());
    for (i, n) in p.nodes().iter().enumerate() {
        let mut depth = 0; let mut a = n.parent; while a != u32::MAX { depth += 1; a = p.node(a).parent; }
        println!("{:3} {}{} [{}..{}] named={} field={} ctx={} {:?}", i, "  ".repeat(depth), grammar.kind_name(n.kind), n.start, n.end, n.is_named(), n.field, n.is_contextual(), String::from_utf8_lossy(p.text(i as u32)));
    }
}
