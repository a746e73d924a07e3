//! How closely the int8 network follows the f32 one, on positions neither was calibrated on.
//!
//! ```text
//! quant-agreement [--model models/pocket-copper] [--positions 10000] [--seed 20261128]
//!                 [--threads 1] [--kernel best|avx2|avx512vnni] [--out FILE.json]
//! ```
//!
//! Plays `--positions` distinct positions with the f32 network from the model's variant start
//! (moves drawn from its policy, seeded: `neteval::quant::play_positions`; the int8
//! network is calibrated on another seed's positions, `CALIBRATION_SEED`), then evaluates
//! each with both networks through the search's evaluator and prints (and writes to `--out`)
//! the top-1 move agreement, the mean and largest |Δvalue| and the mean total-variation
//! distance of the priors, with the int8 kernel this CPU ran (`--kernel`: the fastest it
//! has, or a named one, e.g. AVX2's on a CPU that also has AVX-512 VNNI). Exit status 1 below the
//! targets (top-1 ≥ 98%, mean |Δvalue| ≤ 0.02), 2 on bad arguments or a model that fails
//! to load.

use model::Precision;
use neteval::quant::{agreement, play_positions, with_int8_on, with_precision, CALIBRATION_POSITIONS, CALIBRATION_SEED};
use neteval::NetEvaluator;
use rules::Variant;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

struct Args {
    model: PathBuf,
    positions: usize,
    seed: u64,
    threads: usize,
    kernel: Option<model::QuantKernel>,
    out: Option<PathBuf>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args { model: "models/pocket-copper".into(), positions: 10_000, seed: 20_261_128, threads: 1, kernel: None, out: None };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut it = argv.iter();
    while let Some(key) = it.next() {
        let val = it.next().ok_or_else(|| format!("{key} needs a value"))?;
        let num = |what: &str| val.parse::<u64>().map_err(|e| format!("{key} {val}: {what} expected ({e})"));
        match key.as_str() {
            "--model" => a.model = val.into(),
            "--positions" => a.positions = num("a count")? as usize,
            "--seed" => a.seed = num("a seed")?,
            "--threads" => a.threads = (num("a thread count")? as usize).max(1),
            "--out" => a.out = Some(val.into()),
            "--kernel" => {
                a.kernel = match val.as_str() {
                    "best" => None,
                    "avx2" => Some(model::QuantKernel::Avx2),
                    "avx512vnni" => Some(model::QuantKernel::Avx512Vnni),
                    other => return Err(format!("--kernel {other}: expected best, avx2 or avx512vnni")),
                }
            }
            other => return Err(format!("unknown argument {other} (--model, --positions, --seed, --threads, --kernel, --out)")),
        }
    }
    if a.seed == CALIBRATION_SEED {
        return Err(format!("--seed {CALIBRATION_SEED} is the calibration seed: held-out positions need another"));
    }
    if a.positions == 0 {
        return Err("--positions must be at least 1".into());
    }
    Ok(a)
}

fn run(a: &Args) -> Result<bool, String> {
    model::init_cpu_threads(a.threads);
    let manifest = model::read_manifest(&a.model).map_err(|e| e.to_string())?;
    let tag = manifest.game.ok_or_else(|| format!("model {} names no variant", a.model.display()))?;
    let variant: &'static Variant = Variant::load(&tag.variant, &tag.options).map_err(|e| e.to_string())?;
    let net = model::load_inference(&a.model).map_err(|e| e.to_string())?;
    let f32_eval = NetEvaluator::new(net.clone(), variant)?;
    let t = Instant::now();
    let int8 = match a.kernel {
        None => with_precision(net, variant, Precision::Int8)?,
        Some(kernel) => with_int8_on(net, variant, kernel)?,
    };
    let calibrate_s = t.elapsed().as_secs_f64();
    let kernel = int8.int8_kernel().map_or("none (f32 fallback)", |k| k.name());
    let int8_eval = NetEvaluator::new(int8, variant)?;
    let t = Instant::now();
    let games = play_positions(&f32_eval, variant, a.positions, a.seed);
    let play_s = t.elapsed().as_secs_f64();
    let r = agreement(&f32_eval, &int8_eval, &games);
    let pass = r.top1() >= 0.98 && r.mean_abs_value <= 0.02;
    let json = format!(
        "{{\"model\": \"{}\", \"variant\": \"{}\", \"kernel\": \"{kernel}\", \"calibration_positions\": {CALIBRATION_POSITIONS}, \"calibration_seed\": {CALIBRATION_SEED}, \
         \"calibration_s\": {calibrate_s:.2}, \"positions\": {}, \"seed\": {}, \"play_s\": {play_s:.2}, \"top1\": {:.5}, \"mean_abs_dvalue\": {:.6}, \
         \"max_abs_dvalue\": {:.5}, \"mean_policy_tv\": {:.5}, \"targets_met\": {pass}}}",
        a.model.display(),
        variant.name,
        r.positions,
        a.seed,
        r.top1(),
        r.mean_abs_value,
        r.max_abs_value,
        r.mean_policy_tv
    );
    println!("{json}");
    if let Some(out) = &a.out {
        std::fs::write(out, format!("{json}\n")).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(pass)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("quant-agreement: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("quant-agreement: {e}");
            ExitCode::from(2)
        }
    }
}
