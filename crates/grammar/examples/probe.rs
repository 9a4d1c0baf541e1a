use php_fuzz_grammar::{FragmentPool, Grammar, GrammarMutation, GrammarMutator, InputParser, Sources};
use rand::{RngExt, SeedableRng};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let grammar = Grammar::load(&args[1]).unwrap();
    let kind = GrammarMutation::ALL.into_iter().find(|k| k.name() == args[2]).unwrap();
    let mut parser = InputParser::new(&grammar);
    let mut corpus = vec![];
    for path in &args[3..] {
        let p = parser.parse(&std::fs::read(path).unwrap());
        if !p.has_error() { corpus.push(p); }
    }
    let mut pool = FragmentPool::default();
    for e in &corpus { pool.add(e); }
    let mut m = GrammarMutator::new(grammar.info().code);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
    let mut out = Vec::new();
    let mut shown = 0;
    for _ in 0..20000 {
        let input = &corpus[rng.random_range(0..corpus.len())];
        if !m.apply(kind, &mut rng, Sources { input, partner: Some(input), pool: &pool }, 1 << 20, &mut out) { continue; }
        if parser.parse(&out).has_error() {
            // show the diff region
            let a = input.data(); let b = &out;
            let pre = a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
            let suf = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count().min(a.len() - pre).min(b.len() - pre);
            let lo = pre.saturating_sub(40);
            println!("--- before: {:?}\n    after:  {:?}", String::from_utf8_lossy(&a[lo..(a.len() - suf + 20).min(a.len())]), String::from_utf8_lossy(&b[lo..(b.len() - suf + 20).min(b.len())]));
            shown += 1;
            if shown > 12 { break; }
        }
    }
}
