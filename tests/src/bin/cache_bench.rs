//! How much of each request's cacheable prefix stays byte-identical to the previous turn's,
//! with skills placed beside the newest user turn (`skills.placement: user`) or in the system
//! prompt (`system`), over the recorded-shape multi-turn sessions of each agent
//! (tests/fixtures/agents/). Retrieval is the proxy's (bundled bank, default settings).

use anyhow::Result;
use metaclaw_config::Placement;
use metaclaw_skills::{Library, Sources};
use metaclaw_tests::agents::{load_all, prefix_shares};

fn main() -> Result<()> {
    let lib = Library::load(&Sources {
        user_dir: None,
        bundled: true,
    });
    println!("agent        placement  turns  mean-prefix-kept  min-prefix-kept");
    for fixture in load_all()? {
        for placement in [Placement::User, Placement::System] {
            let shares = prefix_shares(&lib, &fixture, placement);
            let mean = shares.iter().sum::<f64>() / shares.len().max(1) as f64;
            let min = shares.iter().copied().fold(f64::INFINITY, f64::min);
            println!(
                "{:<12} {:<10} {:>5}  {:>15.1}%  {:>14.1}%",
                fixture.agent,
                placement.as_str(),
                shares.len() + 1,
                mean * 100.0,
                min * 100.0
            );
        }
    }
    Ok(())
}
