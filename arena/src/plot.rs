//! Plots drawn as SVG (no fonts or native libraries needed): training curves, ratings
//! with their intervals, Elo over generations.

use plotters::prelude::*;
use std::path::Path;

/// A named series of (x, y) points.
/// The category colours of every plot (matplotlib's tab10), so one series keeps its colour across plots.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub struct Series<'a> {
    pub name: &'a str,
    pub points: Vec<(f64, f64)>,
    pub color: RGBColor,
}

/// The smallest and largest of `values`, widened by `widen` on each side when they are
/// equal (a single point still gets an axis); `None` when there is no value.
fn range(values: impl Iterator<Item = f64>, widen: f64) -> Option<(f64, f64)> {
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    if lo > hi {
        return None;
    }
    Some(if hi <= lo { (lo - widen, hi + widen) } else { (lo, hi) })
}

/// Line chart of several series; points are also marked when a series is short.
pub fn line_chart(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Series]) -> Result<(), String> {
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.iter().copied()).filter(|p| p.1.is_finite()).collect();
    let (Some((x0, x1)), Some((y0, y1))) = (range(all.iter().map(|p| p.0), 1.0), range(all.iter().map(|p| p.1), 0.5)) else { return Ok(()) };
    let pad = (y1 - y0) * 0.05;
    let tmp = path.with_extension("svg.tmp");
    {
        let root = SVGBackend::new(&tmp, (900, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| format!("{e:?}"))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, (y0 - pad)..(y1 + pad))
            .map_err(|e| format!("{e:?}"))?;
        chart.configure_mesh().x_desc(x_label).y_desc(y_label).draw().map_err(|e| format!("{e:?}"))?;
        for s in series {
            let color = s.color;
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), color.stroke_width(2)))
                .map_err(|e| format!("{e:?}"))?
                .label(s.name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
            if s.points.len() <= 60 {
                chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|e| format!("{e:?}"))?;
            }
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(|e| format!("{e:?}"))?;
        root.present().map_err(|e| format!("{e:?}"))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// A value with its interval, e.g. a rating.
pub struct Interval {
    pub label: String,
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

/// One row per item: the value as a dot and its interval as a horizontal bar (a rating
/// list, or Black's score per start). Items are drawn top to bottom in the given order.
pub fn interval_chart(path: &Path, title: &str, x_label: &str, items: &[Interval]) -> Result<(), String> {
    let finite: Vec<f64> = items.iter().flat_map(|i| [i.value, i.lo, i.hi]).filter(|x| x.is_finite()).collect();
    let Some((x0, x1)) = range(finite.iter().copied(), 1.0) else { return Ok(()) };
    let pad = (x1 - x0) * 0.08;
    let n = items.len();
    let tmp = path.with_extension("svg.tmp");
    {
        let root = SVGBackend::new(&tmp, (900, (120 + 34 * n) as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| format!("{e:?}"))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(220)
            .build_cartesian_2d((x0 - pad)..(x1 + pad), -0.5f64..(n as f64 - 0.5))
            .map_err(|e| format!("{e:?}"))?;
        let labels: Vec<String> = items.iter().map(|i| i.label.clone()).collect();
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_labels(n.max(1))
            .y_label_formatter(&|y| {
                let k = y.round();
                if (y - k).abs() < 1e-6 && k >= 0.0 && (k as usize) < labels.len() {
                    labels[labels.len() - 1 - k as usize].clone()
                } else {
                    String::new()
                }
            })
            .draw()
            .map_err(|e| format!("{e:?}"))?;
        let blue = RGBColor(31, 119, 180);
        for (k, it) in items.iter().enumerate() {
            let y = (n - 1 - k) as f64;
            let (lo, hi) = (if it.lo.is_finite() { it.lo } else { x0 - pad }, if it.hi.is_finite() { it.hi } else { x1 + pad });
            chart.draw_series(LineSeries::new(vec![(lo, y), (hi, y)], blue.stroke_width(3))).map_err(|e| format!("{e:?}"))?;
            if it.value.is_finite() {
                chart.draw_series(std::iter::once(Circle::new((it.value, y), 5, blue.filled()))).map_err(|e| format!("{e:?}"))?;
            }
        }
        root.present().map_err(|e| format!("{e:?}"))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// Line chart of series with a band per point (value, lo, hi), e.g. Elo over generations.
/// A named series of (x, value, lo, hi) points in one colour.
pub type Band<'a> = (&'a str, RGBColor, Vec<(f64, f64, f64, f64)>);

pub fn band_chart(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Band]) -> Result<(), String> {
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.2.iter().flat_map(|p| [(p.0, p.2), (p.0, p.3)])).filter(|p| p.1.is_finite()).collect();
    let (Some((x0, x1)), Some((y0, y1))) = (range(all.iter().map(|p| p.0), 1.0), range(all.iter().map(|p| p.1), 1.0)) else { return Ok(()) };
    let pad = (y1 - y0) * 0.05;
    let tmp = path.with_extension("svg.tmp");
    {
        let root = SVGBackend::new(&tmp, (900, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| format!("{e:?}"))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, (y0 - pad)..(y1 + pad))
            .map_err(|e| format!("{e:?}"))?;
        chart.configure_mesh().x_desc(x_label).y_desc(y_label).draw().map_err(|e| format!("{e:?}"))?;
        for (name, color, pts) in series {
            let color = *color;
            for p in pts.iter().filter(|p| p.2.is_finite() && p.3.is_finite()) {
                chart.draw_series(LineSeries::new(vec![(p.0, p.2), (p.0, p.3)], color.mix(0.5).stroke_width(2))).map_err(|e| format!("{e:?}"))?;
            }
            chart
                .draw_series(LineSeries::new(pts.iter().filter(|p| p.1.is_finite()).map(|p| (p.0, p.1)), color.stroke_width(2)))
                .map_err(|e| format!("{e:?}"))?
                .label(*name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
            chart.draw_series(pts.iter().filter(|p| p.1.is_finite()).map(|p| Circle::new((p.0, p.1), 3, color.filled()))).map_err(|e| format!("{e:?}"))?;
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(|e| format!("{e:?}"))?;
        root.present().map_err(|e| format!("{e:?}"))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_ranges() {
        assert_eq!(range(std::iter::empty(), 1.0), None);
        assert_eq!(range([3.0].into_iter(), 1.0), Some((2.0, 4.0)));
        assert_eq!(range([5.0, 1.0, 2.0].into_iter(), 1.0), Some((1.0, 5.0)));
    }

    #[test]
    fn charts_are_written_and_empty_ones_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.svg");
        line_chart(&p, "t", "x", "y", &[Series { name: "s", points: vec![(1.0, 2.0), (2.0, 3.0)], color: RGBColor(0, 0, 0) }]).unwrap();
        assert!(std::fs::read_to_string(&p).unwrap().contains("<svg"));
        let q = dir.path().join("empty.svg");
        line_chart(&q, "t", "x", "y", &[]).unwrap();
        band_chart(&q, "t", "x", "y", &[]).unwrap();
        interval_chart(&q, "t", "x", &[]).unwrap();
        assert!(!q.exists());
    }
}
