//! The deployment files are code too: `deploy/k8s/*.yaml` and `deploy/Containerfile` run
//! `copper` with flags and variables that nothing else would check until a pod crashed.
//! This test reads every manifest with a YAML parser and fails, naming the file, the
//! workload and the flag or variable, when
//! - a container runs a `copper` subcommand or `--flag` that `copper <sub> --help` does not
//!   list, or that `copper` itself refuses to parse;
//! - a `COPPER_*` variable it sets (in `env`, or as a key of a ConfigMap or Secret it takes
//!   with `envFrom`) is not one its subcommand reads (`[env: COPPER_…=]` in the help);
//! - an `AWS_*` variable is not one the store's module doc (store/src/lib.rs) names;
//! - the credentials come from anywhere but a Secret, the trainer is not one StatefulSet
//!   replica, there is no worker workload with more than one replica, the trainer's
//!   `--config` is not a mounted ConfigMap key holding a valid run configuration, or
//!   kustomization.yaml misses a manifest (or lists the example Secret).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use yaml_rust2::{Yaml, YamlLoader};

/// Variables a `copper` container may set besides `COPPER_*` and `AWS_*` (read by the
/// logging setup and the Rust runtime).
const OTHER_VARIABLES: &[&str] = &["RUST_LOG", "RUST_BACKTRACE"];
/// The credentials, which must come from a Secret.
const CREDENTIALS: &[&str] = &["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `copper <args> --help`: its output, or why it failed.
fn help(args: &[String]) -> Result<String, String> {
    let output = Command::new(env!("CARGO_BIN_EXE_copper")).args(args).arg("--help").output().expect("copper runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    if output.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}

/// The `AWS_*` variables the store's module doc names (in backquotes).
fn documented_aws_variables() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(root().join("store/src/lib.rs")).unwrap();
    let doc: String = lib.lines().filter_map(|l| l.trim_start().strip_prefix("//!")).collect::<Vec<_>>().join("\n");
    let names: BTreeSet<String> = doc
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.starts_with("AWS_") && s.len() > 4 && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'))
        .map(str::to_string)
        .collect();
    assert!(!names.is_empty(), "store/src/lib.rs's module doc names no `AWS_…` variable");
    names
}

struct Doc {
    file: String,
    yaml: Yaml,
}

impl Doc {
    fn kind(&self) -> &str {
        self.yaml["kind"].as_str().unwrap_or("")
    }
    fn name(&self) -> &str {
        self.yaml["metadata"]["name"].as_str().unwrap_or("")
    }
    fn what(&self) -> String {
        format!("{}: {}/{}", self.file, self.kind(), self.name())
    }
}

fn yaml_files() -> Vec<PathBuf> {
    let dir = root().join("deploy/k8s");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no manifests in deploy/k8s");
    files
}

fn docs() -> Vec<Doc> {
    let mut docs = Vec::new();
    for path in yaml_files() {
        let file = path.strip_prefix(root()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{file}: not YAML: {e}"));
        for yaml in parsed.into_iter().filter(|y| !y.is_null()) {
            assert!(yaml["kind"].as_str().is_some(), "{file}: a document without `kind`");
            docs.push(Doc { file: file.clone(), yaml });
        }
    }
    docs
}

fn strings(y: &Yaml) -> Vec<String> {
    y.as_vec()
        .map(|v| {
            v.iter()
                .map(|s| match s {
                    Yaml::String(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Real(r) => r.clone(),
                    other => panic!("a non-string command/args item: {other:?}"),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The data keys of a ConfigMap or Secret (`data` and `stringData`).
fn data_keys(doc: &Doc) -> BTreeMap<String, String> {
    let mut keys = BTreeMap::new();
    for field in ["data", "stringData"] {
        if let Some(hash) = doc.yaml[field].as_hash() {
            for (k, v) in hash {
                let key = k.as_str().unwrap_or_else(|| panic!("{}: a non-string key in `{field}`", doc.what())).to_string();
                keys.insert(key, v.as_str().unwrap_or("").to_string());
            }
        }
    }
    keys
}

/// Where a container's variable comes from.
#[derive(Debug, PartialEq)]
enum Source {
    Literal(String),
    ConfigMap(String),
    Secret(String),
    Field,
}

struct Container {
    /// "file: Kind/name container NAME", for messages.
    what: String,
    workload_kind: String,
    replicas: i64,
    /// The words after `copper`.
    args: Vec<String>,
    env: Vec<(String, Source)>,
    mounts: Vec<(String, String)>,
    volumes: Yaml,
}

impl Container {
    fn subcommand(&self) -> Option<&str> {
        self.args.first().map(String::as_str).filter(|a| !a.starts_with('-'))
    }
    /// The value of `--flag` (as `--flag=value` or `--flag value`).
    fn flag(&self, flag: &str) -> Option<String> {
        let mut words = self.args.iter();
        while let Some(w) = words.next() {
            if let Some(v) = w.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                return Some(v.to_string());
            }
            if w == flag {
                return words.next().cloned();
            }
        }
        None
    }
}

/// Every container of every workload, with its `copper` arguments and its variables.
fn containers(docs: &[Doc]) -> Vec<Container> {
    let by_kind = |kind: &str| -> BTreeMap<String, BTreeMap<String, String>> {
        docs.iter().filter(|d| d.kind() == kind).map(|d| (d.name().to_string(), data_keys(d))).collect()
    };
    let config_maps = by_kind("ConfigMap");
    let secrets = by_kind("Secret");
    let mut out = Vec::new();
    for doc in docs {
        let (pod, replicas) = match doc.kind() {
            "Deployment" | "StatefulSet" | "ReplicaSet" => (&doc.yaml["spec"]["template"]["spec"], doc.yaml["spec"]["replicas"].as_i64().unwrap_or(1)),
            "Job" => (&doc.yaml["spec"]["template"]["spec"], doc.yaml["spec"]["parallelism"].as_i64().unwrap_or(1)),
            "CronJob" => {
                (&doc.yaml["spec"]["jobTemplate"]["spec"]["template"]["spec"], doc.yaml["spec"]["jobTemplate"]["spec"]["parallelism"].as_i64().unwrap_or(1))
            }
            "Pod" => (&doc.yaml["spec"], 1),
            "DaemonSet" => panic!("{}: a DaemonSet has no replica count this test can check", doc.what()),
            _ => continue,
        };
        let list = pod["containers"].as_vec().unwrap_or_else(|| panic!("{}: no containers", doc.what()));
        let init = pod["initContainers"].as_vec().cloned().unwrap_or_default();
        for c in list.iter().chain(init.iter()) {
            let name = c["name"].as_str().unwrap_or("?");
            let what = format!("{} container `{name}`", doc.what());
            let image = c["image"].as_str().unwrap_or_else(|| panic!("{what}: no image"));
            let image_name = image.rsplit('/').next().unwrap().split([':', '@']).next().unwrap();
            assert_eq!(image_name, "copper", "{what}: image `{image}` is not the copper image (deploy/Containerfile)");
            let command = strings(&c["command"]);
            let mut args = Vec::new();
            if let Some((program, rest)) = command.split_first() {
                assert_eq!(Path::new(program).file_name().unwrap(), "copper", "{what}: command `{program}` is not copper");
                args.extend(rest.iter().cloned());
            }
            args.extend(strings(&c["args"]));
            for a in &args {
                assert!(!a.contains("$("), "{what}: `{a}` expands a variable; this test cannot check it");
            }

            let mut env = Vec::new();
            for from in c["envFrom"].as_vec().cloned().unwrap_or_default() {
                assert!(from["prefix"].is_badvalue(), "{what}: envFrom with a prefix; this test does not handle it");
                if let Some(cm) = from["configMapRef"]["name"].as_str() {
                    let keys = config_maps.get(cm).unwrap_or_else(|| panic!("{what}: envFrom ConfigMap `{cm}`, which no file in deploy/k8s defines"));
                    env.extend(keys.keys().map(|k| (k.clone(), Source::ConfigMap(cm.to_string()))));
                } else if let Some(s) = from["secretRef"]["name"].as_str() {
                    let keys = secrets.get(s).unwrap_or_else(|| panic!("{what}: envFrom Secret `{s}`, which no file in deploy/k8s (its example) defines"));
                    env.extend(keys.keys().map(|k| (k.clone(), Source::Secret(s.to_string()))));
                } else {
                    panic!("{what}: an envFrom entry that is neither configMapRef nor secretRef");
                }
            }
            for e in c["env"].as_vec().cloned().unwrap_or_default() {
                let var = e["name"].as_str().unwrap_or_else(|| panic!("{what}: an env entry without a name")).to_string();
                let source = if let Some(v) = e["value"].as_str() {
                    Source::Literal(v.to_string())
                } else if let Some(s) = e["valueFrom"]["secretKeyRef"]["name"].as_str() {
                    Source::Secret(s.to_string())
                } else if let Some(cm) = e["valueFrom"]["configMapKeyRef"]["name"].as_str() {
                    Source::ConfigMap(cm.to_string())
                } else if let Some(r) = e["valueFrom"]["resourceFieldRef"].as_hash() {
                    let target = r.get(&Yaml::String("containerName".into())).and_then(Yaml::as_str).unwrap_or(name);
                    assert_eq!(target, name, "{what}: {var} reads the resources of another container");
                    Source::Field
                } else if !e["valueFrom"]["fieldRef"].is_badvalue() {
                    Source::Field
                } else {
                    panic!("{what}: {var} has no value this test understands (value must be a string)");
                };
                env.push((var, source));
            }
            let mounts = c["volumeMounts"]
                .as_vec()
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|m| (m["name"].as_str().unwrap_or("").to_string(), m["mountPath"].as_str().unwrap_or("").to_string()))
                .collect();
            out.push(Container { what, workload_kind: doc.kind().to_string(), replicas, args, env, mounts, volumes: pod["volumes"].clone() });
        }
    }
    assert!(!out.is_empty(), "deploy/k8s has no workload that runs copper");
    out
}

/// Checks `copper <args>` against the CLI; returns the subcommand's help.
fn check_invocation(what: &str, args: &[String]) -> String {
    let sub: Vec<String> = args.first().filter(|a| !a.starts_with('-')).cloned().into_iter().collect();
    let help_text = help(&sub).unwrap_or_else(|e| panic!("{what}: `copper {}` is not a subcommand of copper:\n{e}", sub.join(" ")));
    let words: BTreeSet<&str> = help_text.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']').collect();
    for arg in args.iter().filter(|a| a.starts_with("--")) {
        let flag = arg.split('=').next().unwrap();
        assert!(words.contains(flag), "{what}: `copper {}` has no flag `{flag}` (see `copper {} --help`)", sub.join(" "), sub.join(" "));
    }
    if let Err(e) = help(args) {
        panic!("{what}: copper refuses `copper {}`:\n{e}", args.join(" "));
    }
    help_text
}

fn check_variable(what: &str, var: &str, help_text: &str, aws: &BTreeSet<String>) {
    if var.starts_with("COPPER_") {
        assert!(
            help_text.contains(&format!("[env: {var}=")),
            "{what}: sets {var}, which this copper subcommand does not read (no `[env: {var}=]` in its --help)"
        );
    } else if var.starts_with("AWS_") {
        assert!(aws.contains(var), "{what}: sets {var}, which the store does not document (store/src/lib.rs names {aws:?})");
    } else {
        assert!(OTHER_VARIABLES.contains(&var), "{what}: sets {var}; copper reads COPPER_* and AWS_* variables (and {OTHER_VARIABLES:?})");
    }
}

#[test]
fn every_flag_and_variable_of_the_manifests_exists_in_the_cli() {
    let aws = documented_aws_variables();
    let docs = docs();
    for c in containers(&docs) {
        let help_text = check_invocation(&c.what, &c.args);
        for (var, source) in &c.env {
            check_variable(&c.what, var, &help_text, &aws);
            if CREDENTIALS.contains(&var.as_str()) {
                assert!(matches!(source, Source::Secret(_)), "{}: {var} comes from {source:?}; credentials must come from a Secret (secretRef)", c.what);
            }
            if let (Source::Literal(dir), "COPPER_WORK_DIR") = (source, var.as_str()) {
                assert!(c.mounts.iter().any(|(_, m)| Path::new(dir).starts_with(m)), "{}: COPPER_WORK_DIR={dir} is on no mounted volume", c.what);
            }
        }
        for credential in CREDENTIALS {
            assert!(c.env.iter().any(|(v, s)| v == credential && matches!(s, Source::Secret(_))), "{}: {credential} does not come from a Secret", c.what);
        }
        assert!(c.flag("--store").is_some() || c.env.iter().any(|(v, _)| v == "COPPER_STORE"), "{}: neither --store nor COPPER_STORE", c.what);
    }
}

#[test]
fn no_credentials_outside_secrets() {
    for doc in docs().iter().filter(|d| d.kind() != "Secret") {
        let text = std::fs::read_to_string(root().join(&doc.file)).unwrap();
        for credential in CREDENTIALS {
            let literal = format!("{credential}:");
            assert!(!text.lines().any(|l| l.trim_start().starts_with(&literal)), "{}: {credential} as a literal; it belongs in the Secret", doc.file);
        }
    }
}

#[test]
fn many_workers_and_one_trainer() {
    let docs = docs();
    let containers = containers(&docs);
    let workers: Vec<&Container> = containers.iter().filter(|c| c.subcommand() == Some("worker")).collect();
    assert!(
        workers.iter().any(|c| matches!(c.workload_kind.as_str(), "Deployment" | "Job") && c.replicas > 1),
        "no worker Deployment or Job with more than one replica: {:?}",
        workers.iter().map(|c| (&c.what, c.replicas)).collect::<Vec<_>>()
    );
    let trainers: Vec<&Container> = containers.iter().filter(|c| c.subcommand() == Some("trainer")).collect();
    assert_eq!(trainers.len(), 1, "exactly one trainer workload: {:?}", trainers.iter().map(|c| &c.what).collect::<Vec<_>>());
    let trainer = trainers[0];
    assert_eq!(trainer.replicas, 1, "{}: a run has one trainer", trainer.what);
    assert_eq!(trainer.workload_kind, "StatefulSet", "{}: the trainer needs a stable host name (its default --id): a StatefulSet", trainer.what);
}

#[test]
fn the_trainers_config_is_a_mounted_config_map_key_with_a_valid_run_config() {
    let docs = docs();
    for c in containers(&docs).iter().filter(|c| c.subcommand() == Some("trainer")) {
        let Some(path) = c.flag("--config") else { continue };
        let path = Path::new(&path);
        let (volume, mount) =
            c.mounts.iter().find(|(_, m)| path.starts_with(m)).unwrap_or_else(|| panic!("{}: --config {} is on no mounted volume", c.what, path.display()));
        let key = path.strip_prefix(mount).unwrap().to_str().unwrap();
        let spec = c
            .volumes
            .as_vec()
            .and_then(|v| v.iter().find(|v| v["name"].as_str() == Some(volume)))
            .unwrap_or_else(|| panic!("{}: volume `{volume}` is not defined", c.what));
        let cm = spec["configMap"]["name"].as_str().unwrap_or_else(|| panic!("{}: volume `{volume}` (the --config) is not a ConfigMap", c.what));
        let doc =
            docs.iter().find(|d| d.kind() == "ConfigMap" && d.name() == cm).unwrap_or_else(|| panic!("{}: ConfigMap `{cm}` is not in deploy/k8s", c.what));
        let text = data_keys(doc).remove(key).unwrap_or_else(|| panic!("{}: has no key `{key}` (the trainer's --config)", doc.what()));
        if let Err(e) = pipeline::RunConfig::from_toml_str(&text) {
            panic!("{}: `{key}` is not a valid run configuration: {e:#}", doc.what());
        }
    }
}

#[test]
fn kustomization_lists_every_manifest_but_the_example_secret() {
    let dir = root().join("deploy/k8s");
    let text = std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap();
    let k = &YamlLoader::load_from_str(&text).unwrap()[0];
    let listed: BTreeSet<String> = strings(&k["resources"]).into_iter().collect();
    for r in &listed {
        assert!(dir.join(r).exists(), "deploy/k8s/kustomization.yaml lists `{r}`, which does not exist");
        assert!(!r.contains("example"), "deploy/k8s/kustomization.yaml lists `{r}`: applying it would overwrite the real Secret");
    }
    for path in yaml_files() {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name != "kustomization.yaml" && !name.contains(".example.") {
            assert!(listed.contains(&name), "deploy/k8s/{name} is not in kustomization.yaml's resources");
        }
    }
}

/// The Containerfile's instructions, continuation lines joined.
fn containerfile() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("deploy/Containerfile")).unwrap();
    let mut out = Vec::new();
    let mut line = String::new();
    for raw in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        match raw.strip_suffix('\\') {
            Some(part) => line += part,
            None => {
                line += raw;
                if let Some((op, rest)) = line.trim().split_once(char::is_whitespace) {
                    out.push((op.to_ascii_uppercase(), rest.trim().to_string()));
                }
                line.clear();
            }
        }
    }
    out
}

fn exec_form(what: &str, value: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(value).unwrap_or_else(|e| panic!("deploy/Containerfile: {what} {value} is not the exec (JSON) form: {e}"));
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

#[test]
fn the_containerfiles_entrypoint_and_variables_exist_in_the_cli() {
    let aws = documented_aws_variables();
    let instructions = containerfile();
    let entrypoint = instructions.iter().rev().find(|(op, _)| op == "ENTRYPOINT").expect("deploy/Containerfile: no ENTRYPOINT");
    let entrypoint = exec_form("ENTRYPOINT", &entrypoint.1);
    assert_eq!(entrypoint.first().map(String::as_str), Some("copper"), "deploy/Containerfile: the manifests rely on ENTRYPOINT [\"copper\"]");
    let mut args = entrypoint[1..].to_vec();
    if let Some((_, cmd)) = instructions.iter().rev().find(|(op, _)| op == "CMD") {
        args.extend(exec_form("CMD", cmd).into_iter().filter(|a| a != "--help"));
    }
    check_invocation("deploy/Containerfile ENTRYPOINT/CMD", &args);
    // ENV holds for every subcommand the image runs: each COPPER_* variable must be one that
    // some subcommand reads.
    let subcommand_help = ["worker", "trainer"].map(|s| help(&[s.to_string()]).unwrap()).join("\n");
    for (_, env) in instructions.iter().filter(|(op, _)| op == "ENV") {
        for assignment in env.split_whitespace() {
            let var = assignment.split('=').next().unwrap();
            check_variable("deploy/Containerfile ENV", var, &subcommand_help, &aws);
        }
    }
}
