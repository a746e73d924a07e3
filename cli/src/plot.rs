//! Plots of a run, drawn as SVG (no fonts or native libraries needed).

use anyhow::{anyhow, Result};
use plotters::prelude::*;
use std::path::Path;

/// A named series of (x, y) points.
pub struct Series<'a> {
    pub name: &'a str,
    pub points: Vec<(f64, f64)>,
    pub color: RGBColor,
}

/// Line chart of several series; points are also marked when a series is short.
pub fn line_chart(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Series]) -> Result<()> {
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.iter().copied()).filter(|p| p.1.is_finite()).collect();
    if all.is_empty() {
        return Ok(());
    }
    let (mut x0, mut x1) = all.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (mut y0, mut y1) = all.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    if x1 <= x0 {
        x0 -= 1.0;
        x1 += 1.0;
    }
    if y1 <= y0 {
        y0 -= 0.5;
        y1 += 0.5;
    }
    let pad = (y1 - y0) * 0.05;
    let tmp = path.with_extension("svg.tmp");
    {
        let root = SVGBackend::new(&tmp, (900, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, (y0 - pad)..(y1 + pad))
            .map_err(|e| anyhow!("{e:?}"))?;
        chart.configure_mesh().x_desc(x_label).y_desc(y_label).draw().map_err(|e| anyhow!("{e:?}"))?;
        for s in series {
            let color = s.color;
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), color.stroke_width(2)))
                .map_err(|e| anyhow!("{e:?}"))?
                .label(s.name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
            if s.points.len() <= 60 {
                chart
                    .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                    .map_err(|e| anyhow!("{e:?}"))?;
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| anyhow!("{e:?}"))?;
        root.present().map_err(|e| anyhow!("{e:?}"))?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}
