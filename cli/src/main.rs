//! `copper`: the project's command-line program.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use rules::{perft, Position, Variant};
use std::time::Instant;

// Training allocates and frees activation-sized buffers every step: see model::allocator.
#[global_allocator]
static ALLOCATOR: model::allocator::MiMalloc = model::allocator::MiMalloc;

#[derive(Parser)]
#[command(name = "copper", version, about = "Self-play training and evaluation for shogi variants")]
#[command(arg_required_else_help = true, help_template = "{about-with-newline}\n{usage-heading} {usage}{after-help}\n\nOptions:\n{options}")]
#[command(after_help = grouped_commands())]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The commands by what people do with them, one line each (what `copper` alone and
/// `copper --help` print; `copper help COMMAND` has the rest and an example).
const COMMAND_GROUPS: &[(&str, &[(&str, &str)])] = &[
    (
        "Train a player",
        &[
            ("train", "the training loop on a config: teacher stage, then self-play generations (resumable)"),
            ("ladder", "rate every generation of a run against fixed anchors (Elo by generation and CPU-hour)"),
            ("bench-selfplay", "self-play speed of a config's network on this machine"),
            ("selfplay", "play one generation's self-play games into shards"),
            ("average", "the mean of several saved models (weight averaging of a run's last generations)"),
            ("grow", "a saved model grown into a wider and deeper network that plays the same moves (to train on with more capacity)"),
            ("distill", "a fresh network of any size trained on a run's games, its held-out loss beside the run's own model"),
        ],
    ),
    (
        "Play and study",
        &[
            ("play", "a board in the browser: play the models and analyse positions and games"),
            ("view", "one HTML page of a run, a tournament, a study or a file of games"),
            ("usi", "a model or a baseline as a USI engine, for GUIs and match runners"),
        ],
    ),
    (
        "Tournaments",
        &[("arena", "matches, gauntlets and round-robins with Elo, SPRT and game records"), ("tune", "SPSA tuning of a player's parameters by game pairs")],
    ),
    (
        "Balance of Pocket Shogi Copper",
        &[
            ("balance", "Black's score at each start of the start family, per strength tier"),
            ("balance-pool", "pool studies played apart into one table, tiers compared"),
            ("balance-price", "the edge's price: the budget ratio at which the first mover scores level"),
        ],
    ),
    ("Many machines", &[("trainer", "the trainer of a run in a store (S3 or a directory)"), ("worker", "a self-play and tournament worker of a store")]),
    (
        "Tools",
        &[
            ("perft", "count the legal-move tree (checks the rules engine)"),
            ("variant", "a variant's pieces, options and starts"),
            ("help", "the help of a command, with an example"),
        ],
    ),
];

fn grouped_commands() -> String {
    let width = COMMAND_GROUPS.iter().flat_map(|(_, c)| c.iter()).map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (group, commands) in COMMAND_GROUPS {
        out += &format!("{}{group}:\n", if out.is_empty() { "" } else { "\n" });
        for (name, line) in *commands {
            out += &format!("  {name:width$}  {line}\n");
        }
    }
    out += "\nStart with: copper train --config configs/default.toml (README.md: the first hour)";
    out
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
    s.split_once('=').map(|(a, b)| (a.trim().to_string(), b.trim().to_string())).ok_or_else(|| format!("option '{s}' must be NAME=CHOICE"))
}

impl VariantArgs {
    fn load(&self) -> Result<&'static Variant> {
        Ok(Variant::load(&self.variant, &self.options)?)
    }
}

/// Where a fleet role finds the run, and who it is.
#[derive(clap::Args, Clone)]
struct FleetArgs {
    /// The run's root: s3://bucket/prefix (credentials and endpoint from the AWS_*
    /// variables), file:///dir or a directory.
    #[arg(long, env = "COPPER_STORE")]
    store: String,
    /// This role's name in the store (its games, its claims); a restarted process with
    /// the same id goes on where it stopped. Default: the host name.
    #[arg(long, env = "COPPER_ID")]
    id: Option<String>,
    /// Local directory for downloaded models, games not yet uploaded and (trainer) its
    /// copy of the run.
    #[arg(long, env = "COPPER_WORK_DIR", default_value = "data/fleet")]
    work_dir: std::path::PathBuf,
    /// Seconds between looks at the store while waiting.
    #[arg(long, default_value_t = 2.0)]
    poll_seconds: f64,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
}

impl FleetArgs {
    fn id(&self) -> String {
        self.id.clone().unwrap_or_else(|| {
            std::env::var("HOSTNAME")
                .ok()
                .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "worker".into())
        })
    }
    fn seconds(flag: &str, s: f64) -> Result<std::time::Duration> {
        anyhow::ensure!((0.0..1e7).contains(&s), "--{flag} must be a number of seconds >= 0, not {s}");
        Ok(std::time::Duration::from_secs_f64(s))
    }
    fn store(&self) -> Result<store::Store> {
        Ok(store::Store::open(&self.store)?)
    }
}

#[derive(Subcommand)]
enum Command {
    /// Count the leaf nodes of the legal-move tree (with --divide, per first move).
    #[command(after_help = "Example:\n  copper perft -v shogi 4 --divide")]
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
    /// Average several saved models of one network shape into one (stochastic weight
    /// averaging: the mean of a run's last few generations, as KataGo exports for play).
    #[command(
        after_help = "Example:\n  copper average --out data/runs/pocket-copper/models/mean-101-104 data/runs/pocket-copper/models/gen-0101 data/runs/pocket-copper/models/gen-0102 data/runs/pocket-copper/models/gen-0103 data/runs/pocket-copper/models/gen-0104"
    )]
    Average {
        /// Directory the mean model is written to (`model.json` and weights).
        #[arg(long)]
        out: std::path::PathBuf,
        /// Model directories to average (two or more; one network config and one game).
        #[arg(required = true, num_args = 2..)]
        models: Vec<std::path::PathBuf>,
    },
    /// Grow a saved model into a network with more residual blocks and channels that computes
    /// the same function (new channels read by nothing yet, new blocks the identity until
    /// trained), so that `copper train --from-model` goes on from its strength with more
    /// capacity. The run's config names the grown size in `[network]`.
    #[command(after_help = "Example:\n  copper grow --model models/pocket-copper --blocks 6 --channels 64 --out data/runs/grown-6x64")]
    Grow {
        /// The model directory to grow.
        #[arg(long)]
        model: std::path::PathBuf,
        /// Residual blocks of the grown network (at least the model's).
        #[arg(long)]
        blocks: usize,
        /// Channels of the grown network (at least the model's).
        #[arg(long)]
        channels: usize,
        /// Directory the grown model is written to (`model.json` and weights).
        #[arg(long)]
        out: std::path::PathBuf,
        /// Seed of the new weights.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Train a fresh network (of the run's shape or another) on the stored games of a
    /// run's generations, measuring held-out losses as it goes beside the run's own model
    /// of the last generation on the same held-out games: is the run's network full (a
    /// larger one, same positions, same steps)? Also starts a larger network from a run's
    /// data. Resumable: the same command goes on where it stopped.
    #[command(
        after_help = "Example:\n  copper distill --run data/runs/pocket-copper --generations 57..72 --network 6x64 --steps 6000 --out data/distill/6x64"
    )]
    Distill {
        /// The run directory whose games are trained on.
        #[arg(long)]
        run: std::path::PathBuf,
        /// Generations whose games are used, FIRST..LAST (0 is the teacher's games).
        #[arg(long)]
        generations: String,
        /// The network as BLOCKSxCHANNELS (default: the run's).
        #[arg(long)]
        network: Option<String>,
        /// Optimiser steps (0: only measure the run's model of the last generation on the
        /// held-out games and on as many training positions).
        #[arg(long, default_value_t = 6000)]
        steps: u32,
        /// Steps between held-out measurements.
        #[arg(long, default_value_t = 500)]
        report_every: u32,
        /// The first rate after the warm-up (default: the run's teacher rate, the one a fresh
        /// network trains at, else its training rate).
        #[arg(long)]
        learning_rate: Option<f64>,
        /// The rate of the last step as a fraction of the first (cosine decay over all steps).
        #[arg(long, default_value_t = 0.1)]
        final_lr_fraction: f64,
        /// Held-out positions measured at each report.
        #[arg(long, default_value_t = 4096)]
        validation_positions: usize,
        /// Seed of the fresh network's weights and of the order the positions are drawn in.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output directory (model/, curve.tsv, curve.svg, trainer.ckpt).
        #[arg(long)]
        out: std::path::PathBuf,
        /// Training threads.
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// A self-play worker of a run in a store (`--store`): plays games with the newest
    /// model and uploads each as it ends, until the run's last model is out. Any number
    /// run at once, on one machine or many; safe to kill and restart (docs/FLEET.md).
    #[command(after_help = "Example:\n  copper worker --store s3://bucket/run1 --threads 2 --allow-engine /usr/games/fairy-stockfish")]
    Worker {
        #[command(flatten)]
        fleet: FleetArgs,
        /// Worker threads (each with selfplay.games_in_flight games); default: every core.
        #[arg(long, env = "COPPER_THREADS")]
        threads: Option<usize>,
        /// Stop after this many games.
        #[arg(long)]
        max_games: Option<u64>,
        /// Only play the games of tournaments and studies published in the store
        /// (`copper arena --store`, `copper balance --store`), no self-play.
        #[arg(long, conflicts_with = "no_jobs")]
        jobs_only: bool,
        /// Never play tournaments' and studies' games (by default the worker plays them
        /// whenever it has no self-play to do).
        #[arg(long)]
        no_jobs: bool,
        /// A USI engine that tournaments' and studies' games may run on this worker
        /// (repeatable): a program, started with no arguments or options, or a spec
        /// fixing how it starts (`usi:PATH,arg=ARG,option.NAME=VALUE`). A job naming any
        /// other engine, or this one started otherwise, is refused: write access to the
        /// store must not mean running commands on every worker.
        #[arg(long = "allow-engine", value_name = "PATH|SPEC")]
        allow_engine: Vec<String>,
    },
    /// The trainer of a run in a store (`--store`): waits for each generation's games,
    /// trains, publishes the next model and evaluates it. A second trainer on the same
    /// run loses the claim to the generation and stops (docs/FLEET.md).
    #[command(after_help = "Example:\n  copper trainer --store s3://bucket/run1 --config configs/default.toml")]
    Trainer {
        #[command(flatten)]
        fleet: FleetArgs,
        /// Run configuration (TOML): starts the run, or must match the stored one. Without
        /// it the trainer goes on with the run the store holds.
        #[arg(long, env = "COPPER_CONFIG")]
        config: Option<std::path::PathBuf>,
        /// Override the config's number of generations.
        #[arg(long)]
        generations: Option<u32>,
        /// Override the config's thread count.
        #[arg(long, env = "COPPER_THREADS")]
        threads: Option<usize>,
        /// Seconds the claim race waits for other trainers' claims (longer than any put).
        #[arg(long, default_value_t = 2.0)]
        settle_seconds: f64,
        /// Seconds of silence after which a trainer's claim is void (a replacement with
        /// another --id then takes the generation over).
        #[arg(long, default_value_t = 120.0)]
        lease_seconds: f64,
        /// Without --config: a USI engine the stored config's teacher or evaluation anchor
        /// may start (repeatable; a program, or `usi:PATH,arg=…,option.NAME=VALUE` fixing
        /// how it starts). The store is not trusted to name programs.
        #[arg(long = "allow-engine", value_name = "PATH|SPEC")]
        allow_engine: Vec<String>,
    },
    /// The training loop: self-play, training and evaluation, generation after
    /// generation, in a run directory; the same command resumes an interrupted run.
    #[command(after_help = "Example:\n  copper train --config configs/default.toml")]
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
        /// Override the device of training and of the self-play network (training.device
        /// and selfplay.device): cpu, vulkan (a build with --features vulkan), wgpu
        /// (--features gpu) or cuda[:N] (--features cuda).
        #[arg(long)]
        device: Option<model::DeviceSpec>,
        /// Start from this trained model (e.g. a shipped one, models/pocket-copper) as
        /// generation 0 instead of the uniform search or the teacher stage (the config's
        /// initial_model).
        #[arg(long)]
        from_model: Option<std::path::PathBuf>,
        /// With --from-model: still play the config's teacher games, only for the share
        /// of each self-play batch the [teacher] section keeps (generation 0 is the model,
        /// not trained on them). Without it --from-model plays no teacher games.
        #[arg(long, requires = "from_model")]
        keep_teacher: bool,
        /// No progress bars (summary lines and logs only).
        #[arg(long)]
        quiet: bool,
    },
    /// Self-play only: play the config's games of one generation with a model (or the
    /// uniform stand-in) and write shards.
    #[command(after_help = "Example:\n  copper selfplay --config configs/quick.toml --games 8 --out data/selfplay-try")]
    Selfplay {
        /// Run configuration (TOML; see configs/): its variant, network and self-play settings.
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
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Benchmark self-play with the config's network (random weights unless --model):
    /// simulations/s, positions/s, games per hour, CPU use, time inside the network.
    #[command(after_help = "Example:\n  copper bench-selfplay --config configs/default.toml --model models/pocket-copper --games 64")]
    BenchSelfplay {
        /// Run configuration (TOML; see configs/): its network and self-play settings.
        #[arg(long, default_value = "configs/default.toml")]
        config: std::path::PathBuf,
        /// A trained model directory instead of random weights of the config's shape.
        #[arg(long)]
        model: Option<std::path::PathBuf>,
        /// Games to play.
        #[arg(long, default_value_t = 16)]
        games: u32,
    },
    /// Describe a variant: pieces, options, start positions.
    #[command(after_help = "Example:\n  copper variant -v pocket-copper")]
    Variant {
        #[command(flatten)]
        variant: VariantArgs,
    },
    /// Play a match, gauntlet or round-robin between checkpoints, baselines and USI
    /// engines; resumes (and extends) a tournament in the same --out directory.
    #[command(
        after_help = "Example:\n  copper arena -v pocket-copper --mode match --rounds 16 -p checkpoint,movetime=100,mate=on -p alphabeta,movetime=100 --out data/arena/try"
    )]
    Arena(Box<ArenaArgs>),
    /// SPSA tuning of named parameters of a player (piece values of alphabeta, search
    /// constants, a USI engine's options) by game pairs between its two perturbed
    /// versions, or of each against a fixed opponent; resumes in the same --out
    /// directory; writes the tuned player spec and plots each parameter's path.
    #[command(after_help = "Example:\n  copper tune --player alphabeta,depth=2 --param board.copper,450,100,1000,30,0.002 --pairs 400")]
    Tune(Box<TuneArgs>),
    /// Speak USI on standard input/output with a checkpoint or a baseline.
    #[command(after_help = "Example:\n  copper usi -v pocket-copper")]
    Usi {
        /// A model directory (plays with the MCTS; `go` gives the budget); without it and
        /// --player, the variant's shipped model (models/<variant>).
        #[arg(long, conflicts_with = "player")]
        model: Option<std::path::PathBuf>,
        /// Any arena player spec instead, e.g. alphabeta or "uniform".
        #[arg(long)]
        player: Option<String>,
        /// The variant the engine starts with (USI_Variant changes it).
        #[command(flatten)]
        variant: VariantArgs,
        /// Simulations (nodes) per move when `go` names no limit.
        #[arg(long, default_value_t = 800)]
        nodes: u64,
        /// With a model: the search's mate check. `3` (the default): a forced mate in three
        /// through checks at every node, and in one (`mate=on,mate3=all` of an arena
        /// player); `on`: in one only; `off`: none.
        #[arg(long, default_value = "3", value_parser = ["3", "on", "off"])]
        mate_check: String,
        /// With a model: the share of the alpha-beta's quiescence score in each leaf value
        /// (`qmix=` of an arena player, at `qscale=1000`); 0 plays the network's value alone.
        #[arg(long, default_value_t = 0.5)]
        qmix: f32,
        /// With a model: each search starts from the subtree of the previous move's when the
        /// game goes on from it (`reuse=on` of an arena player); `off`: every search afresh.
        #[arg(long, default_value = "on", value_parser = ["on", "off"])]
        reuse: String,
        /// With a model: the network's arithmetic. `auto` (the default): int8 where the CPU
        /// has AVX-512 VNNI (measured there: 1.8x the simulations, +31 Elo [+1, +62] at
        /// 100 ms a move against f32), f32 elsewhere; `int8` also uses AVX2's kernel.
        #[arg(long, default_value = "auto", value_parser = ["auto", "int8", "f32"])]
        precision: String,
    },
    /// Balance research: each strength tier against itself from each start of the
    /// variant's start family; Black's score with intervals, significance tests between
    /// starts, the network's view, CSV/JSON/plots and game records. Resumes and extends
    /// a study in the same --out directory (see docs/BALANCE.md).
    #[command(after_help = "Example:\n  copper balance --tier alphabeta,depth=2,name=ab-d2 --starts all --games 100 --out data/balance/try")]
    Balance(BalanceArgs),
    /// Pool balance studies played apart (each with its own --seed: another machine, or
    /// games added after a study's results were lost) from their cells.csv: the summed
    /// counts with recomputed intervals and comparisons, written as cells.csv,
    /// comparisons.csv and plots/black-score.svg; where each has its games.csv beside it
    /// (DIR/games.csv, or NAME-games.csv beside NAME-cells.csv), the game statistics and
    /// the network's value by phase are pooled into games.csv. Studies of different tiers
    /// pool into one report that compares the tiers; one cells.csv alone recomputes its
    /// study's comparisons.
    #[command(
        after_help = "Examples:\n  copper balance-pool docs/results/balance-d4-part1-cells.csv docs/results/balance-d4-part2-cells.csv --out data/balance/pooled\n  copper balance-pool docs/results/balance-d4-2400-cells.csv docs/results/balance-net600-cells.csv --name tiers --out data/balance/tiers"
    )]
    BalancePool {
        /// A study's cells.csv (one recomputes its comparisons; two or more pool).
        #[arg(required = true, num_args = 1..)]
        cells: Vec<std::path::PathBuf>,
        /// Also compare starts A and B at every tier (repeatable); every start is compared with seed anyway.
        #[arg(long)]
        compare: Vec<String>,
        /// The pooled study's name (its table's title).
        #[arg(long, default_value = "pooled")]
        name: String,
        /// Where to write the pooled files.
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// The price of the first mover's edge: from `copper arena` matches between two budgets
    /// of one player (simulations, nodes or movetime; colours paired; one start, no random
    /// plies), Black's score is fitted as logistic in log(Black's budget / White's); prints
    /// Black's score at equal budgets, the Elo of a doubling, and the budget ratio at which
    /// Black scores 50% with its Fieller interval; writes price.csv (refittable: it holds
    /// each setting's counts), price.json, price.svg.
    #[command(after_help = "Example:\n  copper balance-price data/arena/price-ab-1 data/arena/price-ab-2 data/arena/price-ab-4 --out data/balance/price-ab")]
    BalancePrice {
        /// Arena tournament directories (tournament.toml and results.jsonl), or earlier
        /// reports' price.csv (refitted from their counts).
        #[arg(required = true, num_args = 1..)]
        matches: Vec<std::path::PathBuf>,
        /// Confidence of the intervals.
        #[arg(long, default_value_t = 0.95)]
        confidence: f64,
        /// Where to write the report.
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// Rate every generation of a run against its neighbours and fixed anchors, on one
    /// Elo scale; plots Elo over generations and CPU-hours.
    #[command(
        after_help = "Example:\n  copper ladder --run data/runs/pocket-copper --anchor alphabeta,depth=2 --anchor alphabeta,depth=3 --sims 100 --every 4"
    )]
    Ladder {
        /// The run: its directory (as written by `copper train`) or a fleet's root URL
        /// (s3://bucket/prefix, file:///dir), whose models are fetched into --work-dir and
        /// whose ladder/ the results are uploaded to.
        #[arg(long)]
        run: String,
        /// Local copy of a run in a store (models, reports, the ladder tournament).
        #[arg(long, default_value = "data/fleet/ladder")]
        work_dir: std::path::PathBuf,
        /// An anchor player spec (repeatable); the first is fixed at 0 Elo. Default: the
        /// uniform-prior search at the evaluation budget and the run's evaluation anchor.
        #[arg(long = "anchor")]
        anchors: Vec<String>,
        /// Opening pairs per pairing.
        #[arg(long, default_value_t = 8)]
        rounds: u32,
        /// Simulations per move of the generations (default: the run's evaluation budget).
        #[arg(long, conflicts_with = "movetime")]
        sims: Option<u32>,
        /// Time per move of the generations in ms: the ladder at equal time, kept in
        /// `ladder-movetime-<MS>/` (give the anchors the same time in their specs).
        #[arg(long)]
        movetime: Option<u64>,
        /// Games played at once, one worker thread each.
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// Rate every K-th generation (the first and last always).
        #[arg(long, default_value_t = 1)]
        every: u32,
        /// Each generation against the anchors only, no games between neighbours: every
        /// generation rated on fixed players alone (cheapest with one anchor near the run's
        /// strength, e.g. a middle generation's checkpoint).
        #[arg(long)]
        no_neighbours: bool,
        /// No progress bar (the table and the ladder only).
        #[arg(long)]
        quiet: bool,
        /// Without --anchor: a USI engine the run's config may name as its evaluation
        /// anchor (repeatable; a program or a `usi:PATH,…` spec fixing how it starts).
        /// A run directory or store is not trusted to name programs.
        #[arg(long = "allow-engine", value_name = "PATH|SPEC")]
        allow_engine: Vec<String>,
    },
    /// Write one self-contained HTML page (boards, moves, scores, tables, plots) for a
    /// tournament directory, a balance study, a training run, or a file of games
    /// (`.jsonl` records or results, `.shard`, `sfen … moves …` lines).
    #[command(after_help = "Example:\n  copper view data/runs/pocket-copper")]
    View {
        /// The source: a directory (tournament, study or run) or a file of games.
        source: std::path::PathBuf,
        /// Where to write the page (default: `index.html` in a directory, `<file>.html`
        /// beside a file).
        #[arg(long, short = 'o')]
        out: Option<std::path::PathBuf>,
        /// The variant of `sfen … moves …` lines (other sources name theirs).
        #[arg(long, short = 'v', default_value = "pocket-copper")]
        variant: String,
        /// Self-play and evaluation games shown per generation (and opponent) of a run.
        #[arg(long, default_value_t = 4)]
        sample: usize,
    },
    /// A board in the browser: play any variant against any player (the shipped models by
    /// default), and analyse positions and games with the network, its search and the
    /// alpha-beta. Prints the URL to open (with its token).
    #[command(after_help = "Example:\n  copper play --model data/runs/pocket-copper/models/gen-0104")]
    Play {
        /// Port on 127.0.0.1 (0: any free one).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Listen on this address instead (`0.0.0.0:8080` for other machines; the URL's
        /// token still guards every request).
        #[arg(long)]
        listen: Option<std::net::SocketAddr>,
        /// Where the games are saved (one `.jsonl` record each, `.kif` and `.csa` too for
        /// standard shogi; `copper view` reads them).
        #[arg(long, default_value = "data/play")]
        out: std::path::PathBuf,
        /// A USI engine the page may choose as the opponent (repeatable): a program,
        /// started with no arguments or options, or a spec fixing how it starts
        /// (`usi:PATH,arg=ARG,option.NAME=VALUE`). No other process is ever started
        /// from a request, and a request never changes how this one starts.
        #[arg(long = "allow-engine", value_name = "PATH|SPEC")]
        allow_engine: Vec<String>,
        /// A model directory the page may play besides the shipped models (repeatable),
        /// e.g. the last generation of your run: data/runs/pocket-copper/models/gen-0104.
        #[arg(long = "model", value_name = "DIR")]
        models: Vec<std::path::PathBuf>,
        /// Open a study board of this position: an SFEN, or a game as `sfen … moves …` /
        /// `startpos moves …` (`copper view` pages print this command for a ply).
        #[arg(long, conflicts_with = "game")]
        analyse: Option<String>,
        /// Open a study board of a game from a file (`.jsonl` records, `.kif`, `.csa`).
        #[arg(long)]
        game: Option<std::path::PathBuf>,
        /// Which game of the file (from 0).
        #[arg(long, default_value_t = 0)]
        index: usize,
        /// The variant of `--analyse` (files name theirs).
        #[arg(long, short = 'v', default_value = "pocket-copper")]
        variant: String,
    },
}

/// Playing a tournament's or a study's games on `copper worker` processes.
#[derive(clap::Args, Clone)]
struct DispatchArgs {
    /// Hand the games to workers through this store (s3://bucket/prefix, file:///dir or a
    /// directory; the workers run `copper worker --store` on the same URL). The results,
    /// reports and live view are written here as in a local run.
    #[arg(long, env = "COPPER_STORE")]
    store: Option<String>,
    /// Seconds between looks at the store for the workers' results.
    #[arg(long, default_value_t = 1.0)]
    poll_seconds: f64,
    /// Give up when no result has come for this many seconds while a worker says it
    /// cannot play the job (its reason is logged as soon as it is seen).
    #[arg(long, default_value_t = 300.0)]
    stall_seconds: f64,
}

impl DispatchArgs {
    fn remote(&self) -> Result<Option<arena::runner::Remote>> {
        let Some(url) = &self.store else { return Ok(None) };
        let store = store::Store::open(url)?;
        let patience = dispatch::Patience {
            poll: FleetArgs::seconds("poll-seconds", self.poll_seconds)?,
            stall: FleetArgs::seconds("stall-seconds", self.stall_seconds)?,
        };
        Ok(Some(dispatch::remote(store, patience)))
    }
}

#[derive(clap::Args)]
struct BalanceArgs {
    /// A study file (TOML; see configs/balance.toml); the flags below override it.
    #[arg(long)]
    config: Option<std::path::PathBuf>,
    /// A strength tier: an arena player spec (repeatable; replaces the file's tiers),
    /// e.g. `alphabeta,depth=2` or `checkpoint:DIR,sims=64,name=gen30`.
    #[arg(long = "tier")]
    tiers: Vec<String>,
    /// Start-family members, comma-separated, or `all`.
    #[arg(long, value_delimiter = ',')]
    starts: Vec<String>,
    /// Games per cell (tier × start).
    #[arg(long)]
    games: Option<u32>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Games each thread keeps in flight (their network leaves are batched together).
    #[arg(long)]
    games_in_flight: Option<usize>,
    /// Game length limit in plies (a draw); 0 = the variant's.
    #[arg(long)]
    max_plies: Option<u32>,
    /// Default noise of tiers whose spec has none: search=X (Gumbel scale or PUCT
    /// temperature), cp=Y (baselines' ± centipawns), e.g. --noise search=1.0,cp=20.
    #[arg(long)]
    noise: Option<String>,
    /// Random legal plies from each start before play (changes the start).
    #[arg(long)]
    opening_plies: Option<u32>,
    /// Seed of the noise and the opening plies (default 1). A second study of the same
    /// cells with another seed plays other games, to pool with `copper balance-pool`.
    #[arg(long)]
    seed: Option<u64>,
    /// Study directory (default data/balance/<name>).
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// A training run directory: plot its networks' value of each start over generations.
    #[arg(long)]
    run: Option<std::path::PathBuf>,
    /// A model whose network judges every game over its phases (default: the first checkpoint tier's).
    #[arg(long)]
    value_model: Option<std::path::PathBuf>,
    /// Also compare starts A and B at every tier (repeatable), e.g. --compare both-in-hand,no-copper.
    #[arg(long)]
    compare: Vec<String>,
    /// Write the study's files (tables, CSVs, plots, page) from the games played so far and
    /// play nothing: a study still being played elsewhere, or a finished one re-reported.
    #[arg(long, conflicts_with = "precision")]
    report: bool,
    /// Print the games-per-cell precision tables and exit.
    #[arg(long)]
    precision: bool,
    /// No progress bar (the tables only).
    #[arg(long)]
    quiet: bool,
    #[command(flatten)]
    dispatch: DispatchArgs,
}

#[derive(clap::Args)]
struct TuneArgs {
    /// The tuned player's spec without the tuned keys, e.g. `alphabeta,depth=2`.
    #[arg(long)]
    player: String,
    /// A parameter as fishtest writes it: NAME,START,MIN,MAX,C_END,R_END (repeatable),
    /// NAME being a key of the player spec, e.g. `board.copper,450,100,1000,30,0.002`.
    #[arg(long = "param")]
    params: Vec<String>,
    /// A file of parameter rows (one a line; `#` starts a comment).
    #[arg(long)]
    params_file: Option<std::path::PathBuf>,
    /// A fixed opponent's spec; without it the two perturbed players play each other.
    #[arg(long)]
    opponent: Option<String>,
    #[command(flatten)]
    variant: VariantArgs,
    /// Game pairs in the whole run (the schedule ends there).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pairs: u64,
    /// Pairs played at one parameter vector before an update (default: --threads).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    batch: Option<u32>,
    /// Random plies from the start of each pair's opening.
    #[arg(long, default_value_t = 8)]
    random_plies: u32,
    /// Game length limit in plies (a draw); 0 = the variant's.
    #[arg(long, default_value_t = 0)]
    max_plies: u32,
    /// Games played at once, one worker thread each (default: the machine's cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
    /// Seed of the flips, the openings and the players.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run directory (tune.json, tuned.txt, path-*.svg); default data/tune/<variant>.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

impl TuneArgs {
    fn config(self) -> Result<tune::TuneConfig> {
        let mut rows: Vec<(String, String)> = self.params.iter().map(|r| ("--param".to_string(), r.clone())).collect();
        if let Some(f) = &self.params_file {
            let text = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
            for (i, line) in text.lines().enumerate() {
                let line = line.split('#').next().unwrap_or_default().trim();
                if !line.is_empty() {
                    rows.push((format!("{} line {}", f.display(), i + 1), line.to_string()));
                }
            }
        }
        let params = rows.iter().map(|(at, r)| tune::Param::parse(r).with_context(|| format!("in {at}"))).collect::<Result<Vec<_>>>()?;
        let threads = self.threads.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |t| t as usize);
        let variant = self.variant.load()?;
        Ok(tune::TuneConfig {
            variant: self.variant.variant.clone(),
            options: self.variant.options.iter().cloned().collect(),
            player: self.player,
            opponent: self.opponent,
            params,
            pairs: self.pairs,
            batch: self.batch.unwrap_or(threads as u32),
            random_plies: self.random_plies,
            max_plies: self.max_plies,
            seed: self.seed,
            threads,
            out_dir: self.out.unwrap_or_else(|| std::path::Path::new("data/tune").join(&variant.name)),
        })
    }
}

#[derive(clap::Args)]
struct ArenaArgs {
    /// A tournament file (TOML; see configs/arena/); the flags below override it.
    #[arg(long)]
    config: Option<std::path::PathBuf>,
    /// A player spec (repeatable), e.g. `checkpoint:DIR,sims=64`, `alphabeta,depth=2`,
    /// `usi:/usr/games/fairy-stockfish,nodes=1000,name=fsf`. A value holding `,` `=` `:`
    /// or spaces goes in double quotes (`""` for a quote inside):
    /// -p 'checkpoint:"runs/a,b/gen-1",sims=64' (players/src/spec.rs).
    #[arg(long = "player", short = 'p')]
    players: Vec<String>,
    /// match (2 players), gauntlet (the first against each other) or round-robin.
    #[arg(long, value_parser = ["match", "gauntlet", "round-robin"])]
    mode: Option<String>,
    /// Opening pairs per pairing (each opening played with both colours).
    #[arg(long)]
    rounds: Option<u32>,
    /// The limit of players whose spec has none: nodes=N, depth=D, movetime=MS,
    /// time=MS,byoyomi=MS or time=MS,inc=MS.
    #[arg(long)]
    limit: Option<String>,
    /// Variant (shogi, pocket-copper, hand-shogi, minishogi or a .toml file).
    #[arg(long, short = 'v')]
    variant: Option<String>,
    /// Rule option NAME=CHOICE (repeatable).
    #[arg(long = "option", short = 'o', value_parser = parse_option)]
    options: Vec<(String, String)>,
    /// Openings file: one `startpos`/SFEN per line, optionally `moves …`.
    #[arg(long)]
    openings: Option<std::path::PathBuf>,
    /// Start-family members as openings, comma-separated, or `all`.
    #[arg(long, value_delimiter = ',')]
    starts: Vec<String>,
    /// Random plies from the start as openings (when no file or starts are given).
    #[arg(long)]
    random_plies: Option<u32>,
    /// Games played at once, one worker thread each (default: the machine's cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Games each thread keeps in flight (their network leaves are batched together).
    #[arg(long)]
    games_in_flight: Option<usize>,
    /// Game length limit in plies (a draw).
    #[arg(long)]
    max_plies: Option<u32>,
    /// GSPRT for a match: ELO0,ELO1[,ALPHA,BETA] (logistic Elo; stops when decided).
    #[arg(long, value_delimiter = ',')]
    sprt: Vec<f64>,
    /// The player fixed in the rating list (default: the first).
    #[arg(long)]
    anchor: Option<String>,
    /// Resign adjudication: MOVES,CP (a side at or below -CP for MOVES moves while the other is at or above CP).
    #[arg(long, value_delimiter = ',')]
    resign: Vec<i64>,
    /// Draw adjudication: AFTER_PLY,MOVES,CP.
    #[arg(long, value_delimiter = ',')]
    draw: Vec<i64>,
    /// Seed of the openings and of every seeded player (a tournament is reproducible).
    #[arg(long)]
    seed: Option<u64>,
    /// Lateness forgiven before a loss on time, ms (default 100).
    #[arg(long)]
    time_margin: Option<u64>,
    /// Seconds an engine may stay silent past its clock before it counts as hung.
    #[arg(long)]
    move_timeout: Option<u64>,
    /// Output directory (results.jsonl, games/, summary.json, CSVs, ratings.svg).
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// No progress bar (the final table only).
    #[arg(long)]
    quiet: bool,
    #[command(flatten)]
    dispatch: DispatchArgs,
}

impl ArenaArgs {
    fn config(self) -> Result<arena::TournamentConfig> {
        use arena::tournament::{Mode, SprtConfig};
        let mut c = match &self.config {
            Some(p) => arena::TournamentConfig::load(p)?,
            None => arena::TournamentConfig::new(Vec::new()),
        };
        if !self.players.is_empty() {
            c.players = self.players;
            if self.config.is_none() && self.mode.is_none() {
                c.mode = if c.players.len() == 2 { Mode::Match } else { Mode::RoundRobin };
            }
        }
        if let Some(m) = self.mode {
            c.mode = match m.as_str() {
                "match" => Mode::Match,
                "gauntlet" => Mode::Gauntlet,
                "round-robin" | "roundrobin" => Mode::RoundRobin,
                other => anyhow::bail!("--mode {other}: expected match, gauntlet or round-robin"),
            };
        }
        if let Some(v) = self.variant {
            c.variant = v;
        }
        for (k, v) in self.options {
            c.options.insert(k, v);
        }
        if let Some(r) = self.rounds {
            c.rounds = r;
        }
        if self.limit.is_some() {
            c.limit = self.limit;
        }
        if let Some(f) = self.openings {
            c.openings.file = Some(f);
        }
        if !self.starts.is_empty() {
            c.openings.starts = self.starts;
        }
        if let Some(p) = self.random_plies {
            c.openings.random_plies = p;
        }
        if let Some(t) = self.threads {
            c.threads = t;
        }
        if let Some(g) = self.games_in_flight {
            c.games_in_flight = g;
        }
        if let Some(m) = self.max_plies {
            c.max_plies = m;
        }
        match self.sprt.as_slice() {
            [] => {}
            [e0, e1] => c.sprt = Some(SprtConfig { elo0: *e0, elo1: *e1, alpha: 0.05, beta: 0.05 }),
            [e0, e1, a, b] => c.sprt = Some(SprtConfig { elo0: *e0, elo1: *e1, alpha: *a, beta: *b }),
            _ => anyhow::bail!("--sprt takes ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA"),
        }
        if self.anchor.is_some() {
            c.anchor = self.anchor;
        }
        match self.resign.as_slice() {
            [] => {}
            [m, cp] => {
                c.adjudication.resign_moves = whole("--resign", "MOVES", *m)?;
                c.adjudication.resign_cp = centipawns("--resign", *cp)?;
            }
            _ => anyhow::bail!("--resign takes MOVES,CP"),
        }
        match self.draw.as_slice() {
            [] => {}
            [after, m, cp] => {
                c.adjudication.draw_after_ply = whole("--draw", "AFTER_PLY", *after)?;
                c.adjudication.draw_moves = whole("--draw", "MOVES", *m)?;
                c.adjudication.draw_cp = centipawns("--draw", *cp)?;
            }
            _ => anyhow::bail!("--draw takes AFTER_PLY,MOVES,CP"),
        }
        if let Some(s) = self.seed {
            c.seed = s;
        }
        if let Some(m) = self.time_margin {
            c.time_margin_ms = m;
        }
        if let Some(t) = self.move_timeout {
            c.move_timeout_ms = t.checked_mul(1000).with_context(|| format!("--move-timeout {t}: too many seconds"))?;
        }
        if let Some(o) = self.out {
            c.out_dir = o;
        }
        c.validate()?;
        Ok(c)
    }
}

/// `value`, given for `what` in `flag`, as a count (0 up to u32's maximum): an error
/// naming the flag when it does not fit, never a silent cast.
fn whole(flag: &str, what: &str, value: i64) -> Result<u32> {
    u32::try_from(value).map_err(|_| anyhow::anyhow!("{flag}: {what} = {value}: expected a whole number from 0 to {}", u32::MAX))
}

/// A centipawn threshold of `flag` (0 up to i32's maximum), as [`whole`].
fn centipawns(flag: &str, value: i64) -> Result<i32> {
    i32::try_from(value).ok().filter(|cp| *cp >= 0).ok_or_else(|| anyhow::anyhow!("{flag}: CP = {value}: expected centipawns from 0 to {}", i32::MAX))
}

fn main() {
    model::allocator::keep_freed_memory();
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
        Command::Distill {
            run,
            generations,
            network,
            steps,
            report_every,
            learning_rate,
            final_lr_fraction,
            validation_positions,
            seed,
            out,
            threads,
            quiet,
        } => {
            model::init_cpu_threads(threads);
            let cfg = pipeline::RunConfig::load(&run.join("config.toml")).with_context(|| format!("--run {}: not a run directory", run.display()))?;
            let range = |s: &str| -> Option<(u32, u32)> {
                let (a, b) = s.split_once("..")?;
                Some((a.trim().parse().ok()?, b.trim().trim_start_matches('=').parse().ok()?))
            };
            let generations = range(&generations).with_context(|| format!("--generations {generations}: expected FIRST..LAST, e.g. 57..72"))?;
            let (blocks, channels) = match &network {
                None => (cfg.network.blocks, cfg.network.channels),
                Some(n) => n
                    .split_once('x')
                    .and_then(|(b, c)| Some((b.parse().ok()?, c.parse().ok()?)))
                    .with_context(|| format!("--network {n}: expected BLOCKSxCHANNELS, e.g. 6x64"))?,
            };
            anyhow::ensure!(final_lr_fraction > 0.0 && final_lr_fraction <= 1.0, "--final-lr-fraction {final_lr_fraction}: expected a number in (0, 1]");
            let job = pipeline::distill::DistillJob {
                run,
                generations,
                blocks,
                channels,
                steps,
                report_every,
                learning_rate: learning_rate.or(cfg.teacher.learning_rate).unwrap_or(cfg.training.learning_rate),
                final_lr_fraction,
                validation_positions,
                seed,
            };
            let curve = pipeline::distill::distill(&job, &out, !quiet)?;
            let last = curve.points.last().and_then(|p| p.held_out.map(|h| (p.step, h)));
            if let Some((step, h)) = last {
                println!("{}x{} after {step} steps: held-out loss {:.4} (policy {:.4}, value {:.4})", blocks, channels, h[0], h[1], h[2]);
            }
            if let (Some(r), Some(m)) = (curve.reference, &curve.reference_model) {
                println!("{} on the held-out games: {:.4} (policy {:.4}, value {:.4})", m.display(), r[0], r[1], r[2]);
                if let Some(t) = curve.reference_train {
                    println!("{} on as many training positions: {:.4} (policy {:.4}, value {:.4})", m.display(), t[0], t[1], t[2]);
                }
            }
            println!("curve: {}, model: {}", out.join("curve.tsv").display(), out.join("model").display());
        }
        Command::BalancePrice { matches, confidence, out } => {
            anyhow::ensure!(confidence > 0.0 && confidence < 1.0, "--confidence {confidence}: expected a number in (0, 1)");
            let dirs: Vec<&std::path::Path> = matches.iter().map(|p| p.as_path()).collect();
            let r = balance::price::price_report(&dirs, &out, confidence)?;
            let pct = confidence * 100.0;
            for s in &r.settings {
                println!(
                    "Black {} {} against White {}: {:.1}/{} ({:.3})",
                    s.black_budget,
                    r.unit,
                    s.white_budget,
                    s.black_points,
                    s.games,
                    s.black_points / s.games as f64
                );
            }
            let p = &r.price;
            if let Some(l) = r.fit.lack_of_fit {
                println!(
                    "the logistic line across the {} budget ratios: chi2 {:.2} on {} df, p {:.4}{}",
                    l.df + 2,
                    l.chi2,
                    l.df,
                    l.p_value,
                    if l.heterogeneity > 1.0 {
                        format!(" (it does not fit: variances x{:.2}, intervals from Student's t on {} df)", l.heterogeneity, l.df)
                    } else {
                        String::new()
                    }
                );
            }
            println!("Black's score at equal budgets: {:.3} [{:.3}, {:.3}] ({pct:.0}%)", p.level_score.0, p.level_score.1, p.level_score.2);
            println!("a doubling of one side's budget: {:+.0} Elo [{:+.0}, {:+.0}]", p.elo_per_doubling.0, p.elo_per_doubling.1, p.elo_per_doubling.2);
            match p.ratio_interval {
                Some((lo, hi)) => println!("level when Black's budget is {:.2}x White's [{lo:.2}, {hi:.2}]", p.ratio),
                None => {
                    println!("level when Black's budget is {:.2}x White's (interval unbounded: the budgets' effect is not distinguishable from zero)", p.ratio)
                }
            }
            println!("written: {}", out.join("price.csv").display());
        }
        Command::Grow { model: from, blocks, channels, out, seed } => {
            model::grow_model(&from, &out, blocks, channels, seed)?;
            println!("{}: {} grown to {blocks} blocks x {channels} channels, the same function", out.display(), from.display());
        }
        Command::Average { out, models } => {
            model::average_models(&models, &out)?;
            println!("{}: the mean of {} models", out.display(), models.len());
        }
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
        Command::Worker { fleet, threads, max_games, jobs_only, no_jobs, allow_engine } => {
            let store = fleet.store()?;
            let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            anyhow::ensure!((1..=256).contains(&threads), "--threads must be 1..=256, not {threads}");
            model::init_cpu_threads(threads);
            let opts = pipeline::fleet::WorkerOptions {
                id: fleet.id(),
                threads,
                work_dir: fleet.work_dir.join(format!("worker-{}", fleet.id())),
                poll: FleetArgs::seconds("poll-seconds", fleet.poll_seconds)?,
                max_games,
            };
            let stop = std::sync::atomic::AtomicBool::new(false);
            let mut jobs = dispatch::JobServer::new(store.clone(), &opts.id, players::EngineAllowList::parse(&allow_engine)?)?;
            if jobs_only {
                jobs.serve(opts.poll, &stop)?;
            }
            let report = pipeline::fleet::run_worker_with(&store, &opts, &stop, &mut || if no_jobs { Ok(false) } else { jobs.serve_one() })?;
            println!(
                "worker {}: {} games (generations {:?}), {} tournament and study games; busy {:.1}% of {:.0} s, {} waits for the trainer; store: {}",
                opts.id,
                report.games,
                report.generations,
                jobs.played,
                100.0 * report.busy_share(),
                report.alive_seconds,
                report.waits_for_trainer,
                store.counters()
            );
        }
        Command::Trainer { fleet, config, generations, threads, settle_seconds, lease_seconds, allow_engine } => {
            let store = fleet.store()?;
            let mut cfg = config.as_deref().map(pipeline::RunConfig::load).transpose()?;
            if let Some(c) = cfg.as_mut() {
                if let Some(g) = generations {
                    c.generations = g;
                }
                if let Some(t) = threads {
                    c.threads = t;
                }
                c.validate()?;
            } else {
                anyhow::ensure!(generations.is_none() && threads.is_none(), "--generations and --threads override a --config");
            }
            let opts = pipeline::fleet::TrainerOptions {
                id: fleet.id(),
                work_dir: Some(fleet.work_dir.join(format!("trainer-{}", fleet.id()))),
                poll: FleetArgs::seconds("poll-seconds", fleet.poll_seconds)?,
                settle: FleetArgs::seconds("settle-seconds", settle_seconds)?,
                lease: FleetArgs::seconds("lease-seconds", lease_seconds)?,
                no_more_games: None,
                allowed_engines: players::EngineAllowList::parse(&allow_engine)?,
            };
            pipeline::fleet::run_trainer(&store, cfg.as_ref(), &opts, !fleet.quiet, &mut |dir| refresh_page(dir))?;
            println!("trainer {}: store: {}", opts.id, store.counters());
        }
        Command::Train { config, run_dir, generations, threads, device, from_model, keep_teacher, quiet } => {
            let mut cfg = pipeline::RunConfig::load(&config)?;
            if let Some(m) = from_model {
                cfg.initial_model = Some(m);
                if !keep_teacher {
                    cfg.teacher.games = 0;
                }
            }
            if let Some(d) = run_dir {
                cfg.run_dir = d;
            }
            if let Some(g) = generations {
                cfg.generations = g;
            }
            if let Some(t) = threads {
                cfg.threads = t;
            }
            if let Some(d) = device {
                cfg.training.device = d;
                cfg.selfplay.device = d.to_string();
            }
            cfg.validate()?;
            // The run's page (`copper view`), rewritten after every generation.
            pipeline::train_loop_with(&cfg, !quiet, &mut |dir| refresh_page(dir))?;
            refresh_page(&cfg.run_dir);
        }
        Command::Selfplay { config, model, games, out, quiet } => {
            let mut cfg = pipeline::RunConfig::load(&config)?;
            if let Some(n) = games {
                cfg.selfplay.games = n;
            }
            cfg.validate()?;
            pipeline::standalone_selfplay(&cfg, model.as_deref(), &out, !quiet)?;
        }
        Command::BenchSelfplay { config, model, games } => {
            let cfg = pipeline::RunConfig::load(&config)?;
            pipeline::bench_selfplay(&cfg, model.as_deref(), games)?;
        }
        Command::Tune(args) => {
            let quiet = args.quiet;
            let cfg = (*args).config()?;
            cfg.validate()?;
            let state = tune::run_tune(&cfg, !quiet)?;
            let late = state.late_mean();
            println!("{:<24} {:>10} {:>10} {:>16}", "parameter", "start", "tuned", "last-fifth mean");
            for (i, p) in state.config.params.iter().enumerate() {
                println!("{:<24} {:>10.1} {:>10.1} {:>16.1}", p.name, p.start, state.spsa.theta[i], late[i]);
            }
            println!("tuned player: {}", state.tuned_spec());
            println!("written: {} (tune.json, tuned.txt, path-*.svg)", cfg.out_dir.display());
        }
        Command::Arena(args) => {
            let quiet = args.quiet;
            let remote = args.dispatch.remote()?;
            let cfg = (*args).config()?;
            model::init_cpu_threads(cfg.threads);
            // The page embeds every game, so it is rewritten every 20 games and at the end
            // (each rewrite reads the whole results file); live.txt after every game.
            let page = |p: &arena::live::Progress<'_>| -> std::io::Result<()> {
                if p.done.is_multiple_of(20) || p.done == p.total {
                    viewer::refresh_page(p.dir, 0).map_err(std::io::Error::other)?;
                }
                Ok(())
            };
            let report = arena::tournament::run_on(&cfg, !quiet, &[&arena::live::write_live_text, &page], remote.as_ref())?;
            print!("{}", arena::report::table(&report));
            println!("results in {}", cfg.out_dir.display());
        }
        Command::Play { port, listen, out, allow_engine, models, analyse, game, index, variant } => {
            let study = match (analyse, game) {
                (Some(text), _) => Some((variant, text)),
                (None, Some(path)) => Some(play::game_from_file(&path, index)?),
                (None, None) => None,
            };
            let listen = listen.unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], port)));
            let mut config = play::PlayConfig::new(listen, out.clone());
            config.allowed_engines = players::EngineAllowList::parse(&allow_engine)?;
            for m in &models {
                anyhow::ensure!(m.join("model.json").exists(), "--model {}: no model.json there (a model directory is models/gen-NNNN of a run)", m.display());
            }
            config.models = models;
            let server = play::start(config)?;
            match &study {
                Some((variant, text)) => println!("copper play: open {}", server.url_analysing(variant, text)),
                None => println!("copper play: open {}", server.url()),
            }
            println!("games are saved under {}; Ctrl-C stops the server", out.display());
            server.wait()?;
        }
        Command::Usi { model, player, variant, nodes, mate_check, qmix, reuse, precision } => {
            let qmix = if qmix > 0.0 { format!(",qmix={qmix},qscale=1000") } else { String::new() };
            let precision = match precision.as_str() {
                "auto" if model::QuantKernel::best() == Some(model::QuantKernel::Avx512Vnni) => "int8",
                "auto" => "f32",
                p => p,
            };
            let search = format!("{qmix},reuse={reuse},precision={precision}");
            let mate_check = if mate_check == "3" { "on,mate3=all".to_string() } else { mate_check };
            let text = match (model, player) {
                // Quoted: a directory's name may hold the spec's commas, `=` or `:`.
                (Some(m), _) => {
                    let dir = m.to_str().with_context(|| format!("--model {}: the path is not UTF-8", m.display()))?;
                    format!("checkpoint:{},mate={mate_check}{search}", players::spec::quote(dir))
                }
                (None, Some(p)) => p,
                // The variant's shipped model (models/<variant>).
                (None, None) => format!("checkpoint,mate={mate_check}{search}"),
            };
            let spec = players::PlayerSpec::parse(&text)?;
            let setup = players::usi_server::EngineSetup { spec, variant: variant.variant.clone(), options: variant.options.clone(), default_nodes: nodes };
            let stdin = std::io::stdin();
            players::usi_server::serve(setup, stdin.lock(), Box::new(std::io::stdout())).map_err(anyhow::Error::msg)?;
        }
        Command::Balance(a) => {
            if a.precision {
                print!("{}", balance::stats::precision_table_markdown());
                return Ok(());
            }
            let remote = a.dispatch.remote()?;
            let overrides = balance::Overrides {
                tiers: a.tiers,
                starts: a.starts,
                games_per_cell: a.games,
                threads: a.threads,
                games_in_flight: a.games_in_flight,
                max_plies: a.max_plies,
                noise: a.noise,
                opening_plies: a.opening_plies,
                seed: a.seed,
                out_dir: a.out,
                run_dir: a.run,
                value_model: a.value_model,
                compare: a.compare,
            };
            let cfg = balance::StudyConfig::resolve(a.config.as_deref(), overrides)?;
            model::init_cpu_threads(cfg.effective_threads());
            // The study's page (`copper view`), rewritten every 50 games and at the end.
            let report = balance::run_study(
                &cfg,
                &balance::RunOptions { show_progress: !a.quiet, stop_after: None, after_games: Some((50, refresh_page)), remote, report_only: a.report },
            )?;
            print!("{}", balance::report::table(&report));
            refresh_page(&cfg.out_dir());
            println!("results in {}", cfg.out_dir().display());
        }
        Command::BalancePool { cells, compare, name, out } => {
            let (report, games) = balance::pool::pool_files(&name, &cells, &compare, &out)?;
            print!("{}", balance::report::table(&report));
            println!("pooled cells in {}", out.display());
            if !games {
                println!("game statistics not pooled: not every cells.csv has its games.csv beside it");
            }
        }
        Command::Ladder { run, work_dir, anchors, rounds, sims, movetime, threads, every, no_neighbours, quiet, allow_engine } => {
            model::init_cpu_threads(threads);
            let allowed_engines = players::EngineAllowList::parse(&allow_engine)?;
            let opts = pipeline::ladder::LadderOptions {
                anchors,
                rounds,
                simulations: sims,
                movetime_ms: movetime,
                threads,
                every,
                neighbours: !no_neighbours,
                allowed_engines,
            };
            if run.contains("://") {
                let store = store::Store::open(&run)?;
                let local = pipeline::fleet::copy_for_reading(&store, &work_dir)?;
                pipeline::ladder::run_ladder(&local, &opts, !quiet)?;
                let report = match movetime {
                    Some(ms) => format!("ladder-movetime-{ms}"),
                    None => "ladder".to_string(),
                };
                pipeline::fleet::upload_report(&store, &local, &report)?;
            } else {
                pipeline::ladder::run_ladder(std::path::Path::new(&run), &opts, !quiet)?;
            }
        }
        Command::View { source, out, variant, sample } => {
            let variant = Variant::load(&variant, &[])?;
            let html = viewer::page(&source, &viewer::ViewOptions { variant, sample })?;
            let out = out.unwrap_or_else(|| viewer::default_output(&source));
            viewer::write_page(&out, &html)?;
            println!("written: {}", out.display());
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

/// Rewrites a run's or a study's page (`index.html`); a failure is a warning, never the
/// end of the run.
fn refresh_page(dir: &std::path::Path) {
    if let Err(e) = viewer::refresh_page(dir, 4) {
        eprintln!("warning: page of {}: {e}", dir.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every flag of every subcommand says what it is in `--help`.
    #[test]
    fn every_flag_has_help_text() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id != "help" && id != "version" && arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} --{}", arg.get_long().unwrap_or(id)));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "copper", &mut missing);
        assert!(missing.is_empty(), "flags without help text:\n{}", missing.join("\n"));
    }

    /// The grouped list names every command once, and nothing else.
    #[test]
    fn the_grouped_command_list_names_every_command_once() {
        let mut listed: Vec<&str> = COMMAND_GROUPS.iter().flat_map(|(_, c)| c.iter().map(|(n, _)| *n)).collect();
        listed.sort_unstable();
        let cmd = Cli::command();
        let mut real: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).chain(["help"]).collect();
        real.sort_unstable();
        assert_eq!(listed, real);
        let help = Cli::command().render_help().to_string();
        assert!(help.contains("Train a player:") && help.contains("  train ") && help.contains("Many machines:"), "{help}");
    }

    /// Every command's help ends with an example (or examples, one a line), and each parses.
    #[test]
    fn every_command_has_an_example_that_parses() {
        for sub in Cli::command().get_subcommands() {
            let after = sub.get_after_help().map(|h| h.to_string()).unwrap_or_default();
            let examples = after
                .strip_prefix("Example:\n")
                .or_else(|| after.strip_prefix("Examples:\n"))
                .unwrap_or_else(|| panic!("copper {} has no example", sub.get_name()));
            for example in examples.lines() {
                let example = example.strip_prefix("  ").unwrap_or_else(|| panic!("copper {}: an example line is indented: {example:?}", sub.get_name()));
                let words: Vec<&str> = example.split_whitespace().collect();
                assert_eq!(words[1], sub.get_name(), "{example}");
                if let Err(e) = Cli::try_parse_from(&words) {
                    panic!("copper {}'s example does not parse: {example}\n{e}", sub.get_name());
                }
            }
        }
    }

    #[test]
    fn the_arena_mode_is_one_of_its_choices() {
        assert!(Cli::try_parse_from(["copper", "arena", "--mode", "gauntlet"]).is_ok());
        let e = Cli::try_parse_from(["copper", "arena", "--mode", "knockout"]).err().unwrap().to_string();
        assert!(e.contains("round-robin"), "{e}");
    }
}
