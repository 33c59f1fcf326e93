//! Server-side SVG charts for the dashboard, drawn with plotters.
//!
//! Every chart is a pure function from data to an SVG document (about 720×320) in the
//! light or dark [`Theme`]. Empty input renders a "No data yet" placeholder instead of an
//! error; non-finite values (NaN, ±∞) are skipped; a single point or all-equal values get
//! a padded axis range instead of a panic.
//!
//! Text is laid out with the embedded DejaVu Sans (plotters' `ab_glyph` font backend), so
//! no system fonts, fontconfig or freetype are needed at build or run time. The SVG itself
//! names the font family `sans-serif`, which the browser resolves.

use std::error::Error as StdError;
use std::str::FromStr;
use std::sync::OnceLock;

use chrono::{Days, NaiveDate};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::{
    ChartBuilder, Circle, Color, DrawingArea, EmptyElement, FontStyle, IntoDrawingArea, IntoFont,
    LineSeries, PathElement, RGBColor, Rectangle, SVGBackend, SeriesLabelPosition, Text, TextStyle,
};
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of every chart, in SVG user units (pixels).
pub const WIDTH: u32 = 720;
/// Height of every chart.
pub const HEIGHT: u32 = 320;

/// Window of the moving average in [`reward`].
pub const MOVING_AVERAGE_WINDOW: usize = 5;

/// At most this many days are drawn by [`turns_per_day`] (the most recent ones).
pub const MAX_DAYS: usize = 366;

/// Series with at most this many points also get a dot per point.
const MARKER_LIMIT: usize = 60;

const FONT_FAMILY: &str = "sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// What can go wrong while drawing a chart.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// The embedded font could not be registered with plotters (a corrupt build).
    #[error("the embedded chart font could not be loaded")]
    Font,
    /// plotters failed to draw.
    #[error("drawing the chart failed: {0}")]
    Draw(#[source] Box<dyn StdError + Send + Sync>),
}

/// The input to [`Theme::from_str`] was neither `light` nor `dark`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown chart theme {0:?} (expected \"light\" or \"dark\")")]
pub struct ParseThemeError(pub String);

/// Colour scheme of a chart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Theme {
    #[default]
    Light,
    Dark,
}

impl Theme {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Light => "light",
            Self::Dark => "dark",
        }
    }

    fn palette(self) -> Palette {
        match self {
            Self::Light => Palette {
                background: RGBColor(0xFF, 0xFF, 0xFF),
                text: RGBColor(0x1F, 0x23, 0x28),
                muted: RGBColor(0x57, 0x60, 0x6A),
                axis: RGBColor(0x6E, 0x77, 0x81),
                grid: RGBColor(0xD8, 0xDE, 0xE4),
                primary: RGBColor(0x09, 0x69, 0xDA),
                secondary: RGBColor(0xBC, 0x4C, 0x00),
                negative: RGBColor(0xCF, 0x22, 0x2E),
                neutral: RGBColor(0x6E, 0x77, 0x81),
                positive: RGBColor(0x1A, 0x7F, 0x37),
            },
            Self::Dark => Palette {
                background: RGBColor(0x0D, 0x11, 0x17),
                text: RGBColor(0xE6, 0xED, 0xF3),
                muted: RGBColor(0x9D, 0xA7, 0xB3),
                axis: RGBColor(0x8B, 0x94, 0x9E),
                grid: RGBColor(0x30, 0x36, 0x3D),
                primary: RGBColor(0x58, 0xA6, 0xFF),
                secondary: RGBColor(0xF0, 0x88, 0x3E),
                negative: RGBColor(0xF8, 0x51, 0x49),
                neutral: RGBColor(0x8B, 0x94, 0x9E),
                positive: RGBColor(0x3F, 0xB9, 0x50),
            },
        }
    }
}

impl FromStr for Theme {
    type Err = ParseThemeError;

    /// `light` or `dark`, ignoring ASCII case and surrounding whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("light") {
            Ok(Self::Light)
        } else if t.eq_ignore_ascii_case("dark") {
            Ok(Self::Dark)
        } else {
            Err(ParseThemeError(s.to_owned()))
        }
    }
}

impl std::fmt::Display for Theme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy)]
struct Palette {
    background: RGBColor,
    text: RGBColor,
    muted: RGBColor,
    axis: RGBColor,
    grid: RGBColor,
    primary: RGBColor,
    secondary: RGBColor,
    negative: RGBColor,
    neutral: RGBColor,
    positive: RGBColor,
}

type DrawResult = Result<(), Box<dyn StdError + Send + Sync>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

// ---------------------------------------------------------------------------------------
// Public charts
// ---------------------------------------------------------------------------------------

/// Mean reward per training step, with its trailing moving average over
/// [`MOVING_AVERAGE_WINDOW`] steps, and a legend.
pub fn reward(steps: &[(u64, f64)], theme: Theme) -> Result<String, ChartError> {
    let points = clean(steps);
    let average = moving_average(&points, MOVING_AVERAGE_WINDOW);
    let p = theme.palette();
    line_chart(
        &LineChart {
            title: "Mean reward per step",
            y_desc: "reward",
            lines: vec![
                Line {
                    label: "mean reward",
                    points,
                    color: p.primary,
                    width: 2,
                },
                Line {
                    label: "moving average (5 steps)",
                    points: average,
                    color: p.secondary,
                    width: 2,
                },
            ],
            include: None,
            legend: true,
            percent: false,
        },
        theme,
    )
}

/// Training loss per step.
pub fn loss(steps: &[(u64, f64)], theme: Theme) -> Result<String, ChartError> {
    single_line("Loss per step", "loss", steps, None, false, theme)
}

/// Success rate per step, values in 0..=1, drawn as percentages on a 0–100 % axis.
pub fn success_rate(steps: &[(u64, f64)], theme: Theme) -> Result<String, ChartError> {
    single_line(
        "Success rate per step",
        "success rate",
        steps,
        Some((0.0, 1.0)),
        true,
        theme,
    )
}

/// KL divergence to the reference policy per step (on-policy distillation).
pub fn kl(steps: &[(u64, f64)], theme: Theme) -> Result<String, ChartError> {
    single_line("KL divergence per step", "KL", steps, None, false, theme)
}

/// How many turns the process reward model scored −1, 0 and +1. Scores outside −1..=1 are
/// ignored and repeated scores are summed; all-zero counts render as "No data yet".
pub fn prm_distribution(counts: &[(i8, u64)], theme: Theme) -> Result<String, ChartError> {
    const TITLE: &str = "PRM score distribution";
    let mut totals = [0u64; 3];
    for &(score, count) in counts {
        if let Some(slot) = usize::try_from(i16::from(score) + 1)
            .ok()
            .and_then(|i| totals.get_mut(i))
        {
            *slot = slot.saturating_add(count);
        }
    }
    let p = theme.palette();
    let bars = vec![
        Bar {
            label: "−1 (bad)".to_owned(),
            value: totals[0],
            color: p.negative,
        },
        Bar {
            label: "0 (neutral)".to_owned(),
            value: totals[1],
            color: p.neutral,
        },
        Bar {
            label: "+1 (good)".to_owned(),
            value: totals[2],
            color: p.positive,
        },
    ];
    bar_chart(
        &BarChart {
            title: TITLE,
            x_desc: "score",
            y_desc: "turns",
            bars,
            value_labels: true,
        },
        theme,
    )
}

/// Turns per day. Days missing between the first and the last are drawn as 0; repeated
/// days are summed; at most the last [`MAX_DAYS`] days are drawn. All-zero counts render
/// as "No data yet".
pub fn turns_per_day(days: &[(NaiveDate, u64)], theme: Theme) -> Result<String, ChartError> {
    const TITLE: &str = "Turns per day";
    let Some(last) = days.iter().map(|(d, _)| *d).max() else {
        return no_data(TITLE, theme);
    };
    let first = days.iter().map(|(d, _)| *d).min().unwrap_or(last);
    let span = usize::try_from(last.signed_duration_since(first).num_days())
        .unwrap_or(0)
        .min(MAX_DAYS - 1);
    let first = last
        .checked_sub_days(Days::new(span as u64))
        .unwrap_or(first);
    let mut totals = vec![0u64; span + 1];
    for &(day, count) in days {
        if let Ok(i) = usize::try_from(day.signed_duration_since(first).num_days())
            && let Some(slot) = totals.get_mut(i)
        {
            *slot = slot.saturating_add(count);
        }
    }
    let p = theme.palette();
    let bars = totals
        .into_iter()
        .enumerate()
        .map(|(i, value)| Bar {
            label: first
                .checked_add_days(Days::new(i as u64))
                .map(|d| d.format("%b %-d").to_string())
                .unwrap_or_default(),
            value,
            color: p.primary,
        })
        .collect();
    bar_chart(
        &BarChart {
            title: TITLE,
            x_desc: "day",
            y_desc: "turns",
            bars,
            value_labels: false,
        },
        theme,
    )
}

// ---------------------------------------------------------------------------------------
// Data preparation
// ---------------------------------------------------------------------------------------

/// Finite values only, ordered by step.
fn clean(points: &[(u64, f64)]) -> Vec<(u64, f64)> {
    let mut out: Vec<(u64, f64)> = points
        .iter()
        .copied()
        .filter(|(_, v)| v.is_finite())
        .collect();
    out.sort_by_key(|&(step, _)| step);
    out
}

/// Trailing mean of each point and the up to `window - 1` points before it.
fn moving_average(points: &[(u64, f64)], window: usize) -> Vec<(u64, f64)> {
    let window = window.max(1);
    (0..points.len())
        .map(|i| {
            let from = (i + 1).saturating_sub(window);
            let slice = &points[from..=i];
            let mean = slice.iter().map(|(_, v)| v).sum::<f64>() / slice.len() as f64;
            (points[i].0, mean)
        })
        .collect()
}

/// The x range: the steps' extent, widened by one step each side if it is a single step.
fn x_range(lines: &[Line]) -> (u64, u64) {
    let steps = lines.iter().flat_map(|l| l.points.iter().map(|(s, _)| *s));
    let lo = steps.clone().min().unwrap_or(0);
    let hi = steps.max().unwrap_or(0);
    if lo == hi {
        (lo.saturating_sub(1), hi.saturating_add(1))
    } else {
        (lo, hi)
    }
}

/// The y range: the values' extent (plus `include`), padded by 5 %; equal values get a
/// band around them. Never empty, never infinite.
fn y_range(values: impl Iterator<Item = f64>, include: Option<(f64, f64)>) -> (f64, f64) {
    const LIMIT: f64 = f64::MAX / 4.0;
    let (mut lo, mut hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if let Some((a, b)) = include {
        lo = lo.min(a);
        hi = hi.max(b);
    }
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    // Keep hi - lo and the padding representable.
    lo = lo.clamp(-LIMIT, LIMIT);
    hi = hi.clamp(-LIMIT, LIMIT);
    let span = hi - lo;
    if span > 0.0 {
        let pad = span * 0.05;
        (lo - pad, hi + pad)
    } else {
        // 10 % of the value, unless that is zero or too small to move it (subnormals).
        let pad = lo.abs() * 0.1;
        let pad = if pad > 0.0 && lo - pad < lo { pad } else { 1.0 };
        (lo - pad, hi + pad)
    }
}

/// A y-axis tick label with as many decimals as the axis span needs.
fn format_value(v: f64, span: f64) -> String {
    if v.abs() >= 1e6 || (v != 0.0 && v.abs() < 1e-4 && span < 1e-3) {
        return format!("{v:.2e}");
    }
    let decimals = if span >= 20.0 {
        0
    } else if span >= 2.0 {
        1
    } else if span >= 0.2 {
        2
    } else if span >= 0.02 {
        3
    } else {
        4
    };
    let text = format!("{v:.decimals$}");
    // Small negatives rounded to zero ("-0.00") lose their sign.
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_owned(),
        _ => text,
    }
}

// ---------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------

fn ensure_font() -> Result<(), ChartError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, FONT_BYTES).is_ok()
    });
    if ok { Ok(()) } else { Err(ChartError::Font) }
}

/// Draws on a fresh canvas filled with the theme's background and returns the SVG, with
/// `role="img"` and the title as its accessible name.
fn render(
    title: &str,
    theme: Theme,
    draw: impl FnOnce(&Area<'_>) -> DrawResult,
) -> Result<String, ChartError> {
    ensure_font()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&theme.palette().background)
            .map_err(|e| ChartError::Draw(e.into()))?;
        draw(&root).map_err(ChartError::Draw)?;
        root.present().map_err(|e| ChartError::Draw(e.into()))?;
    }
    let mut label = String::new();
    for c in title.chars() {
        match c {
            '<' => label.push_str("&lt;"),
            '>' => label.push_str("&gt;"),
            '&' => label.push_str("&amp;"),
            '"' => label.push_str("&quot;"),
            c => label.push(c),
        }
    }
    Ok(match svg.strip_prefix("<svg ") {
        Some(rest) => format!("<svg role=\"img\" aria-label=\"{label}\" {rest}"),
        None => svg,
    })
}

fn font(size: f64, color: RGBColor) -> TextStyle<'static> {
    (FONT_FAMILY, size).into_font().color(&color)
}

/// Draws the title and returns the area below it.
fn titled<'a>(
    root: &Area<'a>,
    title: &str,
    p: &Palette,
) -> Result<Area<'a>, Box<dyn StdError + Send + Sync>> {
    Ok(root.titled(title, font(20.0, p.text))?)
}

/// The placeholder for a chart without data: title and a centered "No data yet".
fn no_data(title: &str, theme: Theme) -> Result<String, ChartError> {
    let p = theme.palette();
    render(title, theme, |root| {
        let area = titled(root, title, &p)?;
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (i32::try_from(w).unwrap_or(0), i32::try_from(h).unwrap_or(0));
        area.draw(&Rectangle::new(
            [(24, 8), (w - 24, h - 16)],
            p.grid.stroke_width(1),
        ))?;
        let style = font(18.0, p.muted).pos(Pos::new(HPos::Center, VPos::Center));
        area.draw_text("No data yet", &style, (w / 2, h / 2 - 4))?;
        Ok(())
    })
}

struct Line {
    label: &'static str,
    points: Vec<(u64, f64)>,
    color: RGBColor,
    width: u32,
}

struct LineChart {
    title: &'static str,
    y_desc: &'static str,
    /// The first line decides whether there is data at all.
    lines: Vec<Line>,
    /// A y range that is always shown (e.g. 0..1 for rates).
    include: Option<(f64, f64)>,
    legend: bool,
    /// Tick labels as percentages of 1.
    percent: bool,
}

fn single_line(
    title: &'static str,
    y_desc: &'static str,
    steps: &[(u64, f64)],
    include: Option<(f64, f64)>,
    percent: bool,
    theme: Theme,
) -> Result<String, ChartError> {
    line_chart(
        &LineChart {
            title,
            y_desc,
            lines: vec![Line {
                label: y_desc,
                points: clean(steps),
                color: theme.palette().primary,
                width: 2,
            }],
            include,
            legend: false,
            percent,
        },
        theme,
    )
}

fn line_chart(spec: &LineChart, theme: Theme) -> Result<String, ChartError> {
    if spec.lines.first().is_none_or(|l| l.points.is_empty()) {
        return no_data(spec.title, theme);
    }
    let p = theme.palette();
    let (x_lo, x_hi) = x_range(&spec.lines);
    let (y_lo, y_hi) = y_range(
        spec.lines
            .iter()
            .flat_map(|l| l.points.iter().map(|(_, v)| *v)),
        spec.include,
    );
    let span = y_hi - y_lo;
    let y_fmt = |v: &f64| {
        if spec.percent {
            format!("{:.0}%", v * 100.0)
        } else {
            format_value(*v, span)
        }
    };
    let x_fmt = |v: &u64| v.to_string();

    render(spec.title, theme, |root| {
        let area = titled(root, spec.title, &p)?;
        let mut chart = ChartBuilder::on(&area)
            .margin_left(12)
            .margin_right(24)
            .margin_bottom(8)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)?;
        chart
            .configure_mesh()
            .bold_line_style(p.grid.stroke_width(1))
            .light_line_style(p.grid.mix(0.0))
            .axis_style(p.axis.stroke_width(1))
            .label_style(font(12.0, p.muted))
            .axis_desc_style(font(13.0, p.text))
            .x_desc("step")
            .y_desc(spec.y_desc)
            .x_labels(8)
            .y_labels(6)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .draw()?;

        for line in &spec.lines {
            let color = line.color;
            let style = color.stroke_width(line.width);
            let series = chart.draw_series(LineSeries::new(line.points.iter().copied(), style))?;
            if spec.legend {
                series.label(line.label).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            }
        }
        // Dots make a single point (or a short series) visible; the primary line only.
        if let Some(line) = spec.lines.first()
            && line.points.len() <= MARKER_LIMIT
        {
            let color = line.color;
            chart.draw_series(
                line.points
                    .iter()
                    .map(|&pt| Circle::new(pt, 3, color.filled())),
            )?;
        }
        if spec.legend {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .margin(8)
                .background_style(p.background.mix(0.9))
                .border_style(p.grid)
                .label_font(font(12.0, p.text))
                .draw()?;
        }
        Ok(())
    })
}

struct Bar {
    label: String,
    value: u64,
    color: RGBColor,
}

struct BarChart {
    title: &'static str,
    x_desc: &'static str,
    y_desc: &'static str,
    bars: Vec<Bar>,
    /// Print each bar's value above it.
    value_labels: bool,
}

/// The x axis of a bar chart: bar `i` spans `i..i + 1`; ticks and labels at the centres
/// of every `every`-th bar.
#[derive(Debug, Clone, Copy)]
struct Slots {
    count: usize,
    every: usize,
}

impl Ranged for Slots {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let fraction = value / self.count.max(1) as f64;
        limit.0 + (fraction * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        (0..self.count)
            .step_by(self.every.max(1))
            .map(|i| i as f64 + 0.5)
            .collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.count as f64
    }
}

fn bar_chart(spec: &BarChart, theme: Theme) -> Result<String, ChartError> {
    let max = spec.bars.iter().map(|b| b.value).max().unwrap_or(0);
    if max == 0 {
        return no_data(spec.title, theme);
    }
    let p = theme.palette();
    let n = spec.bars.len();
    let y_hi = max.saturating_add(max / 8).saturating_add(1);
    // Bar i spans x = i..i+1; label about one bar in `every`, so date labels (~45 px) never
    // overlap, at the bar centres.
    let slots = Slots {
        count: n,
        every: (n * 48).div_ceil(600).max(1),
    };
    let x_fmt = |v: &f64| {
        let i = v.floor();
        if (v - i - 0.5).abs() < 1e-6 && i >= 0.0 {
            spec.bars
                .get(i as usize)
                .map(|b| b.label.clone())
                .unwrap_or_default()
        } else {
            String::new()
        }
    };
    let y_fmt = |v: &u64| v.to_string();
    // Gap on each side of a bar, as a fraction of its slot.
    let gap = match n {
        0..=10 => 0.2,
        11..=40 => 0.12,
        _ => 0.05,
    };

    render(spec.title, theme, |root| {
        let area = titled(root, spec.title, &p)?;
        let mut chart = ChartBuilder::on(&area)
            .margin_left(12)
            .margin_right(24)
            .margin_bottom(8)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(slots, 0u64..y_hi)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .bold_line_style(p.grid.stroke_width(1))
            .light_line_style(p.grid.mix(0.0))
            .axis_style(p.axis.stroke_width(1))
            .label_style(font(12.0, p.muted))
            .axis_desc_style(font(13.0, p.text))
            .x_desc(spec.x_desc)
            .y_desc(spec.y_desc)
            .y_labels(6)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .draw()?;
        chart.draw_series(spec.bars.iter().enumerate().map(|(i, bar)| {
            let x = i as f64;
            Rectangle::new(
                [(x + gap, 0), (x + 1.0 - gap, bar.value)],
                bar.color.filled(),
            )
        }))?;
        if spec.value_labels {
            let style = font(13.0, p.text).pos(Pos::new(HPos::Center, VPos::Bottom));
            chart.draw_series(spec.bars.iter().enumerate().map(|(i, bar)| {
                EmptyElement::at((i as f64 + 0.5, bar.value))
                    + Text::new(bar.value.to_string(), (0, -4), style.clone())
            }))?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_average_is_trailing() {
        let pts: Vec<(u64, f64)> = (0..7).map(|i| (i, i as f64)).collect();
        let avg = moving_average(&pts, 5);
        let values: Vec<f64> = avg.iter().map(|(_, v)| *v).collect();
        assert_eq!(values, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0]);
        assert_eq!(avg[6].0, 6);
    }

    #[test]
    fn clean_drops_non_finite_and_sorts() {
        let pts = [(3, 1.0), (1, f64::NAN), (2, f64::INFINITY), (0, 2.0)];
        assert_eq!(clean(&pts), [(0, 2.0), (3, 1.0)]);
    }

    #[test]
    fn ranges_are_never_empty_or_infinite() {
        assert_eq!(y_range([5.0].into_iter(), None), (4.5, 5.5));
        assert_eq!(y_range([0.0, 0.0].into_iter(), None), (-1.0, 1.0));
        assert_eq!(y_range(std::iter::empty(), None), (0.0, 1.0));
        let tiny = f64::from_bits(1); // the smallest subnormal
        let (lo, hi) = y_range([tiny].into_iter(), None);
        assert!(lo < hi);
        let (lo, hi) = y_range([f64::MAX, -f64::MAX].into_iter(), None);
        assert!(lo.is_finite() && hi.is_finite() && lo < hi);
        let (lo, hi) = y_range([0.5].into_iter(), Some((0.0, 1.0)));
        assert!(lo < 0.0 && hi > 1.0);
        let single = [Line {
            label: "x",
            points: vec![(0, 1.0)],
            color: RGBColor(0, 0, 0),
            width: 1,
        }];
        assert_eq!(x_range(&single), (0, 1));
    }

    #[test]
    fn value_labels_fit_the_span() {
        assert_eq!(format_value(12.0, 100.0), "12");
        assert_eq!(format_value(0.25, 1.0), "0.25");
        assert_eq!(format_value(-0.0, 1.0), "0.00");
        assert_eq!(format_value(-0.001, 1.0), "0.00");
        assert_eq!(format_value(-0.5, 1.0), "-0.50");
        assert_eq!(format_value(2.5e7, 1e8), "2.50e7");
    }

    #[test]
    fn theme_parses() {
        assert_eq!("light".parse::<Theme>().unwrap(), Theme::Light);
        assert_eq!(" Dark ".parse::<Theme>().unwrap(), Theme::Dark);
        assert!("blue".parse::<Theme>().is_err());
        assert_eq!(Theme::Dark.to_string(), "dark");
        assert_eq!(Theme::default(), Theme::Light);
    }
}
