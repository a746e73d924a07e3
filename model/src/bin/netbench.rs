//! Throughput benchmark of the network on the CPU (burn-flex and the folded engine) or a
//! GPU (`--device`).
//!
//! Prints one JSON object per measurement (same schema as `bench/torch_net.py`):
//! `{"engine", "size", "kind": "infer"|"train", "batch", "device", "dtype", "per_s"}`.
//!
//! ```text
//! netbench [--threads 2] [--sizes 6x64,4x48] [--batches 1,16,64,256] [--train-batch 256]
//!          [--seconds 3] [--planes 100] [--policy-planes 140] [--height 9] [--width 9]
//!          [--engines burn,burn_ref,folded,train,train_ref] [--device cpu|vulkan|wgpu|libtorch[:N]|libtorch-cpu|cuda[:N]]
//!          [--dtype f32|f16|bf16] [--rounds 1] [--model DIR]
//!
//! `--dtype` makes that the device's float type (burn's `Device::configure`: every tensor,
//! the weights and activations included, in half precision; off the CPU only).
//! `--device` puts `burn`, `burn_ref`, `train` and `train_ref` on that device (a `vulkan`,
//! `gpu`, `tch` or `cuda` build; each measurement reads its result back, so the device has
//! finished); `folded` is CPU-only and skipped there.
//! Engines: `burn` = `Net::forward` on burn-flex (with the conv3x3 extension), `burn_ref` =
//! `Net::forward_reference` (burn-flex's own conv2d), `folded` = `InferenceNet` (Winograd),
//! `folded_im2col` = `InferenceNet` with Winograd off, `int8` = `InferenceNet` with the
//! int8 tower (`InferenceNet::with_int8`, calibrated on 256 seeded random inputs of the
//! benchmark's kind; the kernel this CPU runs is printed on stderr),
//! `train` = `TrainStep`, `train_ref` = the same step with burn's own conv2d.
//! `--rounds N` measures the CPU inference engines N times each, alternating engine by
//! engine (so a load change hits both), and with `folded` and `int8` both on prints the
//! median of the per-round ratios as `{"ratio": "int8/folded", ...}`.
//! `--model DIR` benchmarks that model's config and weights instead of a random network.
//! ```

use std::time::Instant;

use model::{init_cpu_threads, DeviceSpec, InferenceNet, Net, NetConfig, TrainBatch, TrainConfig, TrainStep};
use rand::{Rng, SeedableRng};

// As `copper` (cli/src/main.rs), so that the benchmark measures what training runs.
#[global_allocator]
static ALLOCATOR: model::allocator::MiMalloc = model::allocator::MiMalloc;

struct Args {
    threads: usize,
    sizes: Vec<(usize, usize)>,
    batches: Vec<usize>,
    train_batch: usize,
    seconds: f64,
    planes: usize,
    policy_planes: usize,
    height: usize,
    width: usize,
    engines: Vec<String>,
    device: DeviceSpec,
    dtype: &'static str,
    rounds: usize,
    model: Option<std::path::PathBuf>,
}

/// Bad input ends the benchmark with what was wrong, not a panic.
fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("netbench: {message}");
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut a = Args {
        threads: 2,
        sizes: vec![(6, 64)],
        batches: vec![1, 16, 64, 256],
        train_batch: 256,
        seconds: 3.0,
        planes: 100,
        policy_planes: 140,
        height: 9,
        width: 9,
        engines: ["burn", "burn_ref", "folded", "train", "train_ref"].map(String::from).to_vec(),
        device: DeviceSpec::Cpu,
        dtype: "f32",
        rounds: 1,
        model: None,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        let key = argv[i].as_str();
        let Some(val) = argv.get(i + 1).cloned() else { fail(format!("{key} needs a value")) };
        fn number<T: std::str::FromStr>(key: &str, v: &str) -> T {
            v.parse().unwrap_or_else(|_| fail(format!("{key} {v:?}: not a number")))
        }
        let list = |v: &str| -> Vec<usize> { v.split(',').map(|x| number(key, x)).collect() };
        match key {
            "--threads" => a.threads = number(key, &val),
            "--sizes" => {
                a.sizes = val
                    .split(',')
                    .map(|s| {
                        let (b, c) = s.split_once('x').unwrap_or_else(|| fail(format!("--sizes {s:?}: expected BLOCKSxCHANNELS, e.g. 4x48")));
                        (number(key, b), number(key, c))
                    })
                    .collect()
            }
            "--batches" => a.batches = list(&val),
            "--train-batch" => a.train_batch = number(key, &val),
            "--seconds" => a.seconds = number(key, &val),
            "--planes" => a.planes = number(key, &val),
            "--policy-planes" => a.policy_planes = number(key, &val),
            "--height" => a.height = number(key, &val),
            "--width" => a.width = number(key, &val),
            "--rounds" => a.rounds = number::<usize>(key, &val).max(1),
            "--model" => a.model = Some(val.clone().into()),
            "--engines" => a.engines = val.split(',').map(String::from).collect(),
            "--device" => a.device = val.parse().unwrap_or_else(|e| fail(format!("--device {val:?}: {e}"))),
            "--dtype" => {
                a.dtype = match val.as_str() {
                    "f32" => "f32",
                    "f16" => "f16",
                    "bf16" => "bf16",
                    other => fail(format!("--dtype {other:?}: expected f32, f16 or bf16")),
                }
            }
            other => fail(format!("unknown argument {other:?} (the usage is at the top of model/src/bin/netbench.rs)")),
        }
        i += 2;
    }
    a
}

/// Runs `f` twice to warm up, then until `seconds` have passed (at least 3 times).
fn timed(seconds: f64, mut f: impl FnMut()) -> (usize, f64) {
    f();
    f();
    let start = Instant::now();
    let mut iters = 0;
    loop {
        f();
        iters += 1;
        let el = start.elapsed().as_secs_f64();
        if el >= seconds && iters >= 3 {
            return (iters, el);
        }
    }
}

fn report(a: &Args, engine: &str, size: &str, kind: &str, batch: usize, per_s: f64) {
    let (device, dtype) = (a.device, a.dtype);
    println!("{{\"engine\": \"{engine}\", \"size\": \"{size}\", \"kind\": \"{kind}\", \"batch\": {batch}, \"device\": \"{device}\", \"dtype\": \"{dtype}\", \"per_s\": {per_s:.2}}}");
}

fn random_input(rng: &mut impl Rng, len: usize) -> Vec<f32> {
    (0..len).map(|_| if rng.random::<f32>() < 0.1 { 1.0 } else { 0.0 }).collect()
}

fn softmax_rows(rng: &mut impl Rng, rows: usize, cols: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..rows * cols).map(|_| rng.random::<f32>().exp()).collect();
    for row in v.chunks_exact_mut(cols) {
        let s: f32 = row.iter().sum();
        row.iter_mut().for_each(|x| *x /= s);
    }
    v
}

fn main() {
    model::allocator::keep_freed_memory();
    let a = parse_args();
    init_cpu_threads(a.threads);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    eprintln!("netbench: threads={} device={} loadavg={}", a.threads, a.device, load.trim());
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let on_cpu = a.device == DeviceSpec::Cpu;
    let has = |e: &str| a.engines.iter().any(|x| x == e) && (on_cpu || !(e.starts_with("folded") || e == "int8"));
    let mut device = a.device.device().unwrap_or_else(|e| fail(format!("--device {}: {e}", a.device)));
    let half = match a.dtype {
        "f16" => Some(burn::tensor::FloatDType::F16),
        "bf16" => Some(burn::tensor::FloatDType::BF16),
        _ => None,
    };
    if let Some(dtype) = half {
        assert!(!on_cpu, "--dtype {}: half precision is measured off the CPU only", a.dtype);
        device.configure(dtype).unwrap_or_else(|e| fail(format!("--dtype {}: {e:?}", a.dtype)));
    }
    let train_device = device.clone().autodiff();

    for &(blocks, channels) in &a.sizes {
        let size = format!("{blocks}x{channels}");
        let (net, cfg, size) = match &a.model {
            Some(dir) => {
                let net = model::load_model(dir, &device).unwrap_or_else(|e| fail(format!("--model {}: {e}", dir.display())));
                let cfg = net.config().clone();
                let size = format!("{}x{}", cfg.blocks, cfg.channels);
                (net, cfg, size)
            }
            None => {
                let cfg = NetConfig::new(a.planes, a.height, a.width, a.policy_planes).with_tower(blocks, channels);
                (Net::new(&cfg, &device).unwrap_or_else(|e| fail(format!("--sizes {size}: {e}"))), cfg, size)
            }
        };
        let folded = InferenceNet::from_net(&net);
        let folded_im2col = InferenceNet::from_net(&net).with_winograd(false);
        let int8 = if has("int8") {
            let calibration = random_input(&mut rand::rngs::StdRng::seed_from_u64(1), 256 * cfg.input_len());
            let q = InferenceNet::from_net(&net).with_int8(&calibration).unwrap_or_else(|e| fail(format!("int8: {e}")));
            eprintln!("netbench: int8 engine runs {} (kernel {})", q.precision(), q.int8_kernel().map_or("none: f32 fallback", |k| k.name()));
            Some(q)
        } else {
            None
        };

        for &batch in &a.batches {
            let input = random_input(&mut rng, batch * cfg.input_len());
            if has("burn") {
                let (iters, el) = timed(a.seconds, || {
                    let out = net.forward_flat(&input, batch, &device);
                    if !on_cpu {
                        // Off the CPU, both outputs come back, as a search needs them.
                        std::hint::black_box(out.policy.into_data());
                    }
                    std::hint::black_box(out.value.into_data());
                });
                report(&a, "burn", &size, "infer", batch, (batch * iters) as f64 / el);
            }
            if has("burn_ref") {
                let (iters, el) = timed(a.seconds, || {
                    let x = model::tensor_util::input_tensor(&cfg, &input, batch, &device);
                    let out = net.forward_reference(x);
                    std::hint::black_box(out.value.into_data());
                });
                report(&a, "burn_ref", &size, "infer", batch, (batch * iters) as f64 / el);
            }
            let mut engines = vec![("folded", &folded), ("folded_im2col", &folded_im2col)];
            if let Some(q) = &int8 {
                engines.push(("int8", q));
            }
            let mut ratios = Vec::new();
            for _ in 0..a.rounds {
                let mut this_round = Vec::new();
                for &(engine, net) in &engines {
                    if !has(engine) {
                        continue;
                    }
                    let mut policy = vec![0.0; batch * cfg.policy_len()];
                    let mut value = vec![0.0; batch * 3];
                    let (iters, el) = timed(a.seconds, || {
                        net.forward_into(&input, batch, &mut policy, &mut value);
                        std::hint::black_box(&value);
                    });
                    let per_s = (batch * iters) as f64 / el;
                    report(&a, engine, &size, "infer", batch, per_s);
                    this_round.push((engine, per_s));
                }
                let get = |e: &str| this_round.iter().find(|(x, _)| *x == e).map(|(_, v)| *v);
                if let (Some(f), Some(q)) = (get("folded"), get("int8")) {
                    ratios.push(q / f);
                }
            }
            if !ratios.is_empty() {
                ratios.sort_by(f64::total_cmp);
                let median = ratios[ratios.len() / 2];
                let all: Vec<String> = ratios.iter().map(|r| format!("{r:.3}")).collect();
                println!("{{\"ratio\": \"int8/folded\", \"size\": \"{size}\", \"batch\": {batch}, \"median\": {median:.3}, \"rounds\": [{}]}}", all.join(", "));
            }
        }

        if has("train") || has("train_ref") {
            let b = a.train_batch;
            let tdev = train_device.clone();
            let input = random_input(&mut rng, b * cfg.input_len());
            let pt = softmax_rows(&mut rng, b, cfg.policy_len());
            let vt = softmax_rows(&mut rng, b, 3);
            if has("train") {
                let mut net = Some(Net::new(&cfg, &tdev).unwrap_or_else(|e| fail(format!("--sizes {size}: {e}"))));
                let mut step = TrainStep::new(TrainConfig::default(), tdev.clone());
                let batch = TrainBatch { batch: b, input: &input, policy_target: &pt, value_target: &vt, legal_mask: None };
                let (iters, el) = timed(a.seconds, || {
                    let (n, stats) = step.step(net.take().expect("net"), &batch);
                    std::hint::black_box(stats);
                    net = Some(n);
                });
                report(&a, "burn", &size, "train", b, (b * iters) as f64 / el);
            }
            if has("train_ref") {
                // Same step as TrainStep, with burn's own conv2d (no conv3x3 extension).
                use burn::optim::{AdamWConfig, GradientsParams};
                use model::tensor_util::{input_tensor, matrix};
                let mut net = Some(Net::new(&cfg, &tdev).unwrap_or_else(|e| fail(format!("--sizes {size}: {e}"))));
                let mut optim = AdamWConfig::new().with_weight_decay(1e-4).init();
                let (iters, el) = timed(a.seconds, || {
                    let n = net.take().expect("net");
                    let out = n.forward_reference(input_tensor(&cfg, &input, b, &tdev));
                    let l = model::train::losses(out, matrix(&pt, b, cfg.policy_len(), &tdev), matrix(&vt, b, 3, &tdev), None, 1.0);
                    let grads = GradientsParams::from_grads(l.total.backward(), &n);
                    let n = optim.step(1e-3, n, grads);
                    std::hint::black_box(l.total.into_scalar::<f32>());
                    net = Some(n);
                });
                report(&a, "burn_ref", &size, "train", b, (b * iters) as f64 / el);
            }
        }
    }
}
