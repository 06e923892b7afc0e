//! Prints how the claims detector reads each sentence of its input (`cargo run -p
//! arthur-agents --example explain -- "text"`, or lines on stdin): the rule that fired, and
//! whether the claim still counts in an answer to a request about the world.

fn main() {
    use arthur_agents::turn::claims::{explain, explain_for, sentences, Request};
    let args: Vec<String> = std::env::args().skip(1).collect();
    let input = if args.is_empty() { std::io::read_to_string(std::io::stdin()).unwrap() } else { args.join(" ") };
    for line in input.lines().filter(|l| !l.trim().is_empty()) {
        for s in sentences(line) {
            match (explain(&s), explain_for(&s, Request::World)) {
                (Some(v), w) => println!("CLAIM world={}\t{v}\t{s}", w.is_some()),
                (None, _) => println!("ok\t{s}"),
            }
        }
    }
}
