//! How noisy the value targets of a set of shards are: by 40-ply phase, how well each
//! position's search root value q (the teacher's score, in a teacher's shards) predicts
//! the game's result z for the side to move. Per phase: positions, the share of drawn
//! ones, the mean of z, the mean squared error of q against z beside that of the best
//! constant (the variance of z), R² = 1 − MSE(q) / Var(z) (the share of the result's
//! variance the search value explains; 0: no better than a constant), the correlation of
//! q and z, and, over decisive positions with |q| ≥ 0.2, the share where the side q
//! favours won. Directories are walked recursively (a fleet's `gen-N/<worker>/`).
//!
//!     cargo run --release -p records --example value_targets -- data/runs/pocket-copper/selfplay/gen-0003 [MORE_DIRS...]

use records::read_shard;
use std::path::{Path, PathBuf};

const PHASES: usize = 5;

fn shards(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            shards(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "shard") {
            out.push(path);
        }
    }
    Ok(())
}

#[derive(Default, Clone, Copy)]
struct Sums {
    n: f64,
    draws: f64,
    z: f64,
    q: f64,
    zz: f64,
    qq: f64,
    zq: f64,
    decisive_confident: f64,
    agreed: f64,
}

impl Sums {
    fn add(&mut self, z: f64, q: f64) {
        self.n += 1.0;
        self.draws += f64::from(z == 0.0);
        self.z += z;
        self.q += q;
        self.zz += z * z;
        self.qq += q * q;
        self.zq += z * q;
        if z != 0.0 && q.abs() >= 0.2 {
            self.decisive_confident += 1.0;
            self.agreed += f64::from((z > 0.0) == (q > 0.0));
        }
    }

    fn row(&self, label: &str) -> String {
        let n = self.n.max(1.0);
        let (mz, mq) = (self.z / n, self.q / n);
        let var_z = self.zz / n - mz * mz;
        let var_q = self.qq / n - mq * mq;
        let mse = (self.zz - 2.0 * self.zq + self.qq) / n;
        let cov = self.zq / n - mz * mq;
        let r = if var_z > 0.0 && var_q > 0.0 { cov / (var_z * var_q).sqrt() } else { f64::NAN };
        format!(
            "{label}\t{}\t{:.3}\t{:+.3}\t{:.3}\t{:.3}\t{:+.3}\t{:.3}\t{}\t{:.3}",
            self.n,
            self.draws / n,
            mz,
            mse,
            var_z,
            1.0 - mse / var_z,
            r,
            self.decisive_confident,
            self.agreed / self.decisive_confident.max(1.0)
        )
    }
}

fn main() {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    if dirs.is_empty() {
        eprintln!("usage: value_targets SHARD_DIRECTORY [SHARD_DIRECTORY...]");
        std::process::exit(2);
    }
    let mut paths = Vec::new();
    for dir in &dirs {
        if let Err(e) = shards(Path::new(dir), &mut paths) {
            eprintln!("{dir}: {e}");
            std::process::exit(1);
        }
    }
    let mut phases = [Sums::default(); PHASES];
    let mut all = Sums::default();
    let mut skipped = 0;
    for path in &paths {
        let shard = match read_shard(path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("skipping {e}");
                skipped += 1;
                continue;
            }
        };
        for r in &shard.records {
            let q = if r.search_value.is_finite() { r.search_value.clamp(-1.0, 1.0) as f64 } else { 0.0 };
            let z = r.result as f64;
            phases[(r.ply as usize / 40).min(PHASES - 1)].add(z, q);
            all.add(z, q);
        }
    }
    println!("{} shards ({skipped} unreadable)", paths.len() - skipped);
    println!("plies\tpositions\tdrawn\tmean z\tMSE(q,z)\tVar(z)\tR2\tcorr(q,z)\tdecisive |q|>=0.2\tq's side won");
    for (p, s) in phases.iter().enumerate() {
        if s.n > 0.0 {
            let label = if p == PHASES - 1 { format!("{}+", p * 40) } else { format!("{}-{}", p * 40, p * 40 + 39) };
            println!("{}", s.row(&label));
        }
    }
    println!("{}", all.row("all"));
}
