//! Every chart renders valid-looking SVG for real, empty, tiny and hostile inputs, in both
//! themes.

use chrono::NaiveDate;
use metaclaw_charts::{
    ChartError, HEIGHT, Theme, WIDTH, kl, loss, prm_distribution, reward, success_rate,
    turns_per_day,
};

type StepChart = fn(&[(u64, f64)], Theme) -> Result<String, ChartError>;

const STEP_CHARTS: &[(&str, StepChart)] = &[
    ("Mean reward per step", reward),
    ("Loss per step", loss),
    ("Success rate per step", success_rate),
    ("KL divergence per step", kl),
];

const THEMES: [Theme; 2] = [Theme::Light, Theme::Dark];

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2025, 3, d).unwrap()
}

/// Minimal structural check: one `<svg>` root of the chart size, closed, with the title.
fn assert_svg(svg: &str, title: &str) {
    assert!(
        svg.starts_with("<svg"),
        "not an svg: {}",
        &svg[..svg.len().min(80)]
    );
    assert!(svg.trim_end().ends_with("</svg>"), "unclosed svg");
    assert_eq!(svg.matches("<svg").count(), 1);
    assert!(svg.contains(&format!("width=\"{WIDTH}\"")), "width");
    assert!(svg.contains(&format!("height=\"{HEIGHT}\"")), "height");
    assert!(
        svg.contains(&format!("aria-label=\"{title}\"")),
        "aria-label"
    );
    assert!(svg.contains(&format!(">\n{title}\n</text>")), "title text");
    // Every opened text element is closed.
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
}

fn has_data_marks(svg: &str) -> bool {
    svg.contains("<polyline") || svg.contains("<circle")
}

fn is_placeholder(svg: &str) -> bool {
    svg.contains(">\nNo data yet\n</text>")
}

/// The number of filled rects, minus the background.
fn filled_rects(svg: &str) -> usize {
    svg.lines()
        .filter(|l| l.starts_with("<rect") && !l.contains("fill=\"none\""))
        .count()
        .saturating_sub(1)
}

fn ramp(n: u64) -> Vec<(u64, f64)> {
    (0..n)
        .map(|i| (i * 10, (i as f64 * 0.37).sin() * 0.4 + 0.5))
        .collect()
}

#[test]
fn step_charts_draw_lines_with_title_and_axes() {
    for &(title, chart) in STEP_CHARTS {
        for theme in THEMES {
            let svg = chart(&ramp(40), theme).unwrap();
            assert_svg(&svg, title);
            assert!(svg.contains("<polyline"), "{title}: no line");
            assert!(!is_placeholder(&svg), "{title}");
            assert!(
                svg.contains(">\nstep\n</text>"),
                "{title}: x axis description"
            );
        }
    }
}

#[test]
fn reward_has_a_moving_average_and_a_legend() {
    let svg = reward(&ramp(30), Theme::Light).unwrap();
    assert!(svg.contains(">\nmean reward\n</text>"));
    assert!(svg.contains(">\nmoving average (5 steps)\n</text>"));
    // Two data lines (plus the two legend swatches).
    assert!(svg.matches("<polyline").count() >= 4);
    // The moving average colour differs from the raw series colour.
    assert!(svg.contains("stroke=\"#0969DA\"") && svg.contains("stroke=\"#BC4C00\""));
}

#[test]
fn success_rate_is_shown_in_percent() {
    let svg = success_rate(&[(1, 0.25), (2, 0.5), (3, 0.75)], Theme::Light).unwrap();
    assert!(svg.contains(">\n100%\n</text>"));
    assert!(svg.contains(">\n0%\n</text>"));
}

#[test]
fn empty_inputs_render_a_placeholder_not_an_error() {
    for &(title, chart) in STEP_CHARTS {
        for theme in THEMES {
            let svg = chart(&[], theme).unwrap();
            assert_svg(&svg, title);
            assert!(is_placeholder(&svg), "{title}");
            assert!(!has_data_marks(&svg), "{title}");
        }
    }
    for theme in THEMES {
        let svg = prm_distribution(&[], theme).unwrap();
        assert_svg(&svg, "PRM score distribution");
        assert!(is_placeholder(&svg));
        let svg = turns_per_day(&[], theme).unwrap();
        assert_svg(&svg, "Turns per day");
        assert!(is_placeholder(&svg));
    }
    // Zero counts have nothing to show either.
    assert!(is_placeholder(
        &prm_distribution(&[(-1, 0), (0, 0), (1, 0)], Theme::Light).unwrap()
    ));
    assert!(is_placeholder(
        &turns_per_day(&[(day(1), 0), (day(2), 0)], Theme::Dark).unwrap()
    ));
}

#[test]
fn single_points_and_flat_series_render() {
    for &(title, chart) in STEP_CHARTS {
        for data in [
            vec![(0, 0.5)],
            vec![(7, 0.0)],
            vec![(u64::MAX, -3.0)],
            vec![(1, 2.0), (2, 2.0), (3, 2.0)],
            vec![(5, 1.0), (5, 1.0)],
        ] {
            let svg = chart(&data, Theme::Light).unwrap();
            assert_svg(&svg, title);
            assert!(!is_placeholder(&svg), "{title} {data:?}");
            // A single point still gets a visible dot.
            assert!(svg.contains("<circle"), "{title} {data:?}");
        }
    }
    let svg = turns_per_day(&[(day(4), 3)], Theme::Light).unwrap();
    assert_eq!(filled_rects(&svg), 1);
    let svg = prm_distribution(&[(1, 1)], Theme::Light).unwrap();
    assert!(!is_placeholder(&svg));
}

#[test]
fn non_finite_values_are_skipped() {
    let hostile = [
        (0, f64::NAN),
        (1, 0.5),
        (2, f64::INFINITY),
        (3, f64::NEG_INFINITY),
        (4, 0.7),
    ];
    for &(title, chart) in STEP_CHARTS {
        let svg = chart(&hostile, Theme::Dark).unwrap();
        assert_svg(&svg, title);
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{title}");
        // Only non-finite values: nothing to draw.
        let svg = chart(&[(0, f64::NAN), (1, f64::INFINITY)], Theme::Dark).unwrap();
        assert!(is_placeholder(&svg), "{title}");
        // Extreme but finite values do not overflow the axis.
        let svg = chart(&[(0, f64::MAX), (1, -f64::MAX), (2, 1e-300)], Theme::Light).unwrap();
        assert_svg(&svg, title);
    }
}

#[test]
fn prm_distribution_draws_three_bars_with_counts() {
    let svg =
        prm_distribution(&[(-1, 4), (0, 10), (1, 25), (3, 99), (1, 5)], Theme::Light).unwrap();
    assert_svg(&svg, "PRM score distribution");
    assert_eq!(filled_rects(&svg), 3);
    for label in ["−1 (bad)", "0 (neutral)", "+1 (good)", "4", "10", "30"] {
        assert!(svg.contains(&format!(">\n{label}\n</text>")), "{label}");
    }
    assert!(
        !svg.contains(">\n99\n</text>"),
        "out-of-range score counted"
    );
    // Missing scores are zero-height bars, not errors.
    let svg = prm_distribution(&[(1, 2)], Theme::Dark).unwrap();
    assert!(!is_placeholder(&svg));
}

#[test]
fn turns_per_day_fills_gaps_and_sums_repeats() {
    let svg = turns_per_day(
        &[(day(3), 5), (day(1), 2), (day(3), 1), (day(5), 0)],
        Theme::Light,
    )
    .unwrap();
    assert_svg(&svg, "Turns per day");
    // Days 1..=5 are five slots; days 2, 4 and 5 are zero-height bars.
    assert!(svg.contains(">\nMar 1\n</text>"));
    assert!(svg.contains(">\nMar 5\n</text>"));
    assert!(filled_rects(&svg) >= 2);
    // A long span is capped and still renders.
    let long: Vec<(NaiveDate, u64)> = (0..2000)
        .map(|i| (day(1) + chrono::Days::new(i), i % 7))
        .collect();
    let svg = turns_per_day(&long, Theme::Dark).unwrap();
    assert_svg(&svg, "Turns per day");
}

#[test]
fn light_and_dark_use_different_colours() {
    type Chart = Box<dyn Fn(Theme) -> String>;
    let cases: Vec<(Chart, &str)> = vec![
        (Box::new(|t| reward(&ramp(12), t).unwrap()), "reward"),
        (Box::new(|t| loss(&[], t).unwrap()), "empty loss"),
        (
            Box::new(|t| prm_distribution(&[(-1, 1), (0, 2), (1, 3)], t).unwrap()),
            "prm",
        ),
        (
            Box::new(|t| turns_per_day(&[(day(1), 3), (day(2), 4)], t).unwrap()),
            "turns",
        ),
    ];
    for (chart, name) in cases {
        let light = chart(Theme::Light);
        let dark = chart(Theme::Dark);
        assert_ne!(light, dark, "{name}");
        // Background first, then text colours.
        assert!(light.contains("fill=\"#FFFFFF\""), "{name}");
        assert!(dark.contains("fill=\"#0D1117\""), "{name}");
        assert!(!dark.contains("fill=\"#FFFFFF\""), "{name}");
        assert!(light.contains("fill=\"#1F2328\""), "{name}: light title");
        assert!(dark.contains("fill=\"#E6EDF3\""), "{name}: dark title");
    }
}

#[test]
fn charts_are_deterministic() {
    assert_eq!(
        reward(&ramp(20), Theme::Dark).unwrap(),
        reward(&ramp(20), Theme::Dark).unwrap()
    );
}

#[test]
fn charts_render_from_many_threads() {
    let handles: Vec<_> = (0..8)
        .map(|i| std::thread::spawn(move || loss(&ramp(10 + i), Theme::Light).unwrap()))
        .collect();
    for h in handles {
        assert_svg(&h.join().unwrap(), "Loss per step");
    }
}
