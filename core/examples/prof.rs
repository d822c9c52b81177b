use agent_intercom_core::canonical;
use std::time::Instant;
fn main() {
    let doc = canonical::parse(agent_intercom_core::corpus::CORPUS_JSON).unwrap();
    let text = canonical::canonical_json(&doc).unwrap();
    let n = 5000;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(canonical::canonical_json_of_text(&text).unwrap());
    }
    println!("stream canonical {:?}", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(canonical::canonical_hash_of_text("d", &text).unwrap());
    }
    println!("stream hash {:?}", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(std::str::from_utf8(text.as_bytes()).unwrap());
    }
    println!("utf8 validate {:?}", t.elapsed() / n);
}
