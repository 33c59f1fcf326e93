//! Retrieval latency over generated banks of 1k and 10k skills (BM25F, the default mode).
//! Each generated skill has trigger phrases in Latin-script words and in Chinese characters,
//! like the bundled bank, and queries come in English-like and Chinese forms.
//!
//! `cargo run --release -p metaclaw-tests --bin skills-bench`

use std::time::Instant;

use metaclaw_skills::{Library, RetrievalConfig, Skill, SkillSource, States, retrieve};

/// A deterministic pseudo-random generator, so every run measures the same banks.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// 20k distinct words drawn with a skewed (Zipf-like) frequency, as in natural text: a few
/// words are everywhere, most are rare.
fn vocabulary() -> Vec<String> {
    (0..20_000).map(|i| format!("w{i}")).collect()
}

fn words(rng: &mut Lcg, vocab: &[String], n: usize) -> String {
    (0..n)
        .map(|_| {
            let u = (rng.next() % 1_000_000) as f64 / 1_000_000.0;
            vocab[((u * u * u) * vocab.len() as f64) as usize].as_str()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Chinese text: characters from the 3,000 after U+4E00, with the same skew.
fn hanzi(rng: &mut Lcg, n: usize) -> String {
    (0..n)
        .map(|_| {
            let u = (rng.next() % 1_000_000) as f64 / 1_000_000.0;
            char::from_u32(0x4E00 + ((u * u) * 3000.0) as u32).unwrap_or('中')
        })
        .collect()
}

fn bank(n: usize, vocab: &[String]) -> Library {
    let mut rng = Lcg(n as u64);
    let skills = (0..n)
        .map(|i| {
            let mut triggers = String::new();
            for _ in 0..12 {
                triggers.push_str(&format!("        - \"{}\"\n", words(&mut rng, vocab, 6)));
            }
            for _ in 0..4 {
                triggers.push_str(&format!("        - \"{}\"\n", hanzi(&mut rng, 7)));
            }
            let text = format!(
                "---\nname: skill-{i}\ndescription: \"Use when {}\"\ncategory: coding\nmetadata:\n  metaclaw:\n    triggers:\n      any:\n{triggers}---\n{}\n",
                words(&mut rng, vocab, 30),
                words(&mut rng, vocab, 220)
            );
            Skill::parse(&text, format!("gen/{i}").into(), SkillSource::User)
                .expect("generated skill parses")
        })
        .collect();
    Library::from_skills(skills, Vec::new())
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let vocab = vocabulary();
    let cfg = RetrievalConfig::default();
    let states = States::new();
    println!("| bank | index build | query | p50 | p99 | max |");
    println!("|---|---|---|---|---|---|");
    for n in [1_000, 10_000] {
        let started = Instant::now();
        let lib = bank(n, &vocab);
        let build = started.elapsed();
        let mut rng = Lcg(7);
        for (label, len) in [
            ("short (12 words)", 12),
            ("long (300 words)", 300),
            ("Chinese (20 characters)", 0),
        ] {
            let queries: Vec<String> = (0..500)
                .map(|_| {
                    if len == 0 {
                        hanzi(&mut rng, 20)
                    } else {
                        words(&mut rng, &vocab, len)
                    }
                })
                .collect();
            let mut times: Vec<f64> = queries
                .iter()
                .map(|q| {
                    let t = Instant::now();
                    let r = retrieve(&lib, &states, q, &cfg, None);
                    std::hint::black_box(r);
                    t.elapsed().as_secs_f64() * 1000.0
                })
                .collect();
            times.sort_by(f64::total_cmp);
            println!(
                "| {n} skills | {:.0} ms | {label} | {:.3} ms | {:.3} ms | {:.3} ms |",
                build.as_secs_f64() * 1000.0,
                percentile(&times, 0.5),
                percentile(&times, 0.99),
                times[times.len() - 1]
            );
        }
    }
}
