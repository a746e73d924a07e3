//! `copper`: the project's command-line program.

mod arena;
mod config;
mod plot;
mod run_loop;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use rules::{perft, Position, Variant};
use std::time::Instant;

#[derive(Parser)]
#[command(name = "copper", version, about = "Self-play training and evaluation for shogi variants")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Which variant, with which rule options.
#[derive(clap::Args, Clone)]
struct VariantArgs {
    /// A shipped variant (pocket-copper, shogi, hand-shogi, minishogi) or a variant file (.toml).
    #[arg(long, short = 'v', default_value = "pocket-copper")]
    variant: String,
    /// A rule option as NAME=CHOICE (repeatable), e.g. --option start=both-in-hand.
    #[arg(long = "option", short = 'o', value_parser = parse_option)]
    options: Vec<(String, String)>,
}

fn parse_option(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
        .ok_or_else(|| format!("option '{s}' must be NAME=CHOICE"))
}

impl VariantArgs {
    fn load(&self) -> Result<&'static Variant> {
        Ok(Variant::load(&self.variant, &self.options)?)
    }
}

#[derive(Subcommand)]
enum Command {
    /// Count the leaf nodes of the legal-move tree (with --divide, per first move).
    Perft {
        #[command(flatten)]
        variant: VariantArgs,
        /// Depth in plies.
        depth: u32,
        /// Position in SFEN (the variant's start position if omitted).
        #[arg(long)]
        sfen: Option<String>,
        /// USI moves to play from the position first.
        #[arg(long, num_args = 0.., value_delimiter = ' ')]
        moves: Vec<String>,
        /// Print the count below each legal move.
        #[arg(long)]
        divide: bool,
    },
    /// The training loop: self-play, training and evaluation, generation after
    /// generation, in a run directory; the same command resumes an interrupted run.
    Train {
        /// Run configuration (TOML; see configs/).
        #[arg(long, default_value = "configs/default.toml")]
        config: std::path::PathBuf,
        /// Override the config's run_dir.
        #[arg(long)]
        run_dir: Option<std::path::PathBuf>,
        /// Override the config's number of generations.
        #[arg(long)]
        generations: Option<u32>,
        /// Override the config's thread count (1 makes a seeded run reproducible).
        #[arg(long)]
        threads: Option<usize>,
        /// No progress bars (summary lines and logs only).
        #[arg(long)]
        quiet: bool,
    },
    /// Self-play only: play the config's games of one generation with a model (or the
    /// uniform stand-in) and write shards.
    Selfplay {
        #[arg(long, default_value = "configs/default.toml")]
        config: std::path::PathBuf,
        /// Model directory to play with; the uniform-prior stand-in if omitted.
        #[arg(long)]
        model: Option<std::path::PathBuf>,
        /// Number of games (overrides the config).
        #[arg(long)]
        games: Option<u32>,
        /// Directory for the shards.
        #[arg(long)]
        out: std::path::PathBuf,
        #[arg(long)]
        quiet: bool,
    },
    /// Benchmark self-play with the config's network (random weights unless --model):
    /// simulations/s, positions/s, games per hour, CPU use, time inside the network.
    BenchSelfplay {
        #[arg(long, default_value = "configs/default.toml")]
        config: std::path::PathBuf,
        #[arg(long)]
        model: Option<std::path::PathBuf>,
        /// Games to play.
        #[arg(long, default_value_t = 16)]
        games: u32,
    },
    /// Describe a variant: pieces, options, start positions.
    Variant {
        #[command(flatten)]
        variant: VariantArgs,
    },
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn,copper=info".into()))
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = run(Cli::parse()) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Perft { variant, depth, sfen, moves, divide } => {
            let v = variant.load()?;
            let mut pos = match &sfen {
                Some(s) => Position::from_sfen(v, s).with_context(|| format!("in --sfen \"{s}\""))?,
                None => Position::start(v),
            };
            for m in moves.iter().filter(|m| !m.is_empty()) {
                let mv = pos.parse_usi(m).with_context(|| format!("in --moves at position {}", pos.to_sfen()))?;
                pos.play_unchecked(mv);
            }
            let t = Instant::now();
            let nodes = if divide {
                let mut total = 0;
                for (m, n) in perft::divide(&pos, depth) {
                    println!("{}: {}", pos.move_to_usi(m), n);
                    total += n;
                }
                total
            } else {
                perft::perft(&pos, depth)
            };
            let secs = t.elapsed().as_secs_f64();
            println!("nodes {nodes}");
            eprintln!("time {secs:.3} s, {:.2} M nodes/s", nodes as f64 / secs / 1e6);
        }
        Command::Train { config, run_dir, generations, threads, quiet } => {
            let mut cfg = config::RunConfig::load(&config)?;
            if let Some(d) = run_dir {
                cfg.run_dir = d;
            }
            if let Some(g) = generations {
                cfg.generations = g;
            }
            if let Some(t) = threads {
                cfg.threads = t;
            }
            cfg.validate()?;
            run_loop::train_loop(&cfg, !quiet)?;
        }
        Command::Selfplay { config, model, games, out, quiet } => {
            let mut cfg = config::RunConfig::load(&config)?;
            if let Some(n) = games {
                cfg.selfplay.games = n;
            }
            cfg.validate()?;
            run_loop::standalone_selfplay(&cfg, model.as_deref(), &out, !quiet)?;
        }
        Command::BenchSelfplay { config, model, games } => {
            let cfg = config::RunConfig::load(&config)?;
            run_loop::bench_selfplay(&cfg, model.as_deref(), games)?;
        }
        Command::Variant { variant } => {
            let v = variant.load()?;
            println!("{} ({}x{}), promotion zone {} ranks", v.title, v.geometry.files, v.geometry.ranks, v.promotion_zone[0].count() / v.geometry.files as u32);
            println!("pieces:");
            for k in v.kinds() {
                let info = v.kind(k);
                println!("  {:3} {}", info.token, info.name);
            }
            println!("options:");
            for (name, choice) in &v.options {
                let spec = &v.option_specs[name];
                let choices: Vec<_> = spec.choices.keys().cloned().collect();
                println!("  {name}={choice}  [{}]  {}", choices.join("|"), spec.description);
            }
            println!("start: {}", v.start_sfen);
        }
    }
    Ok(())
}
