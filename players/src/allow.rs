//! Which programs a player spec from elsewhere may start.
//!
//! A spec typed on a command line or written in a config file the command line names is
//! the operator's own; a spec read from a store (a job, a stored run config), from a run
//! directory or from a page's request is not. Only a `usi` spec starts a process, and
//! the parsed spec — never its text — says so ([`PlayerSpec::program`]), so quoting,
//! spaces or case in the text cannot hide one. [`EngineAllowList::check`] lets such a
//! spec start only an engine the command line named (`--allow-engine`), and only as the
//! command line starts it: the same arguments, working directory and USI options, so
//! that a store or a page cannot turn an allowed engine into another program
//! (`arg=-c …`) or make it write files (`option.Debug Log File=…`).

use crate::spec::{Kind, PlayerSpec, SpecError};
use std::path::{Path, PathBuf};

/// An external engine a command line allows, and how it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct AllowedEngine {
    pub command: PathBuf,
    pub args: Vec<String>,
    pub dir: Option<PathBuf>,
    /// USI options, `(NAME, VALUE)`, in the order they are sent.
    pub options: Vec<(String, String)>,
}

impl AllowedEngine {
    /// The engine as a spec's head and keys (`usi:PATH,arg=…,option.NAME=VALUE`), the
    /// form `--allow-engine` takes.
    pub fn to_spec(&self) -> String {
        let mut s = format!("usi:{}", crate::spec::quote(&self.command.display().to_string()));
        for a in &self.args {
            s += &format!(",arg={}", crate::spec::quote(a));
        }
        if let Some(d) = &self.dir {
            s += &format!(",dir={}", crate::spec::quote(&d.display().to_string()));
        }
        for (k, v) in &self.options {
            s += &format!(",option.{k}={}", crate::spec::quote(v));
        }
        s
    }
}

/// The engines one command line allows (`--allow-engine`, repeatable): the one place
/// that decides whether a spec that came from elsewhere may start a process.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineAllowList {
    engines: Vec<AllowedEngine>,
}

impl EngineAllowList {
    /// From `--allow-engine` values, each either a program (`/usr/games/fairy-stockfish`:
    /// started with no arguments or options) or a USI spec fixing how it starts
    /// (`usi:scripts/gpsusi.sh,arg=-N,arg=1,option.LimitDepth=4`; a limit or name in it
    /// is ignored: those a spec from elsewhere may choose).
    pub fn parse<S: AsRef<str>>(values: &[S]) -> Result<EngineAllowList, SpecError> {
        let mut engines = Vec::new();
        for value in values {
            let value = value.as_ref();
            let engine = match PlayerSpec::parse(value) {
                Ok(spec) => match spec.kind {
                    Kind::Usi(command) => AllowedEngine { command, args: spec.args, dir: spec.dir, options: spec.options },
                    _ => return Err(SpecError { spec: value.into(), problem: "--allow-engine takes a program or a usi:PROGRAM spec".into() }),
                },
                // Not a spec: a program's path, unless it was meant as a `usi:` spec.
                Err(e) if value.trim().is_empty() || is_usi_spec(value) => return Err(e),
                Err(_) => AllowedEngine { command: value.into(), args: Vec::new(), dir: None, options: Vec::new() },
            };
            engines.push(engine);
        }
        Ok(EngineAllowList { engines })
    }

    /// The allowed engines, in command-line order.
    pub fn engines(&self) -> &[AllowedEngine] {
        &self.engines
    }

    /// Whether `spec`, which came from somewhere the command line does not vouch for, may
    /// be played: it starts no program, or it starts an allowed one exactly as allowed.
    pub fn check(&self, spec: &PlayerSpec) -> Result<(), SpecError> {
        let Some(command) = spec.program() else { return Ok(()) };
        self.check_engine(command, &spec.args, spec.dir.as_deref(), &spec.options).map_err(|problem| SpecError { spec: spec.text.clone(), problem })
    }

    /// [`EngineAllowList::check`] for an engine given by its parts (a teacher's
    /// `usi:COMMAND` with its `engine_options`).
    pub fn check_engine(&self, command: &Path, args: &[String], dir: Option<&Path>, options: &[(String, String)]) -> Result<(), String> {
        let named: Vec<&AllowedEngine> = self.engines.iter().filter(|a| same_program(&a.command, command)).collect();
        if named.is_empty() {
            return Err(format!(
                "it starts the program {}, which this command line does not allow (--allow-engine {} allows it)",
                command.display(),
                command.display()
            ));
        }
        let wanted = AllowedEngine { command: command.to_path_buf(), args: args.to_vec(), dir: dir.map(Path::to_path_buf), options: options.to_vec() };
        if named.iter().any(|a| a.args == wanted.args && a.dir == wanted.dir && same_options(&a.options, &wanted.options)) {
            return Ok(());
        }
        Err(format!(
            "it starts {} with arguments, directory or options ({}) that the command line did not give it (allowed: {}); \
             only the command line sets how an engine starts",
            command.display(),
            wanted.to_spec(),
            named.iter().map(|a| a.to_spec()).collect::<Vec<_>>().join(" or ")
        ))
    }
}

/// Whether `value` is written as a `usi:` spec (`usi`, spaces or quotes, then a colon).
fn is_usi_spec(value: &str) -> bool {
    value.split_once(':').is_some_and(|(kind, _)| kind.trim().trim_matches('"') == "usi")
}

/// The same program: the same text, or the same file once links are resolved.
fn same_program(a: &Path, b: &Path) -> bool {
    a == b || a.canonicalize().ok().is_some_and(|x| b.canonicalize().ok() == Some(x))
}

/// The same options, in any order (an engine takes them one `setoption` at a time).
fn same_options(a: &[(String, String)], b: &[(String, String)]) -> bool {
    let sorted = |o: &[(String, String)]| {
        let mut o = o.to_vec();
        o.sort();
        o
    };
    sorted(a) == sorted(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(values: &[&str]) -> EngineAllowList {
        EngineAllowList::parse(values).unwrap()
    }

    fn check(list: &EngineAllowList, spec: &str) -> Result<(), String> {
        list.check(&PlayerSpec::parse(spec).unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn specs_that_start_no_program_pass_any_list() {
        let none = EngineAllowList::default();
        for spec in ["alphabeta,depth=2", "checkpoint:x,sims=4", "random", "greedy", "uniform,sims=2"] {
            assert!(check(&none, spec).is_ok(), "{spec}");
        }
    }

    /// However the text spells the kind (spaces, quotes), the parsed spec names the
    /// program, and an empty list refuses it.
    #[test]
    fn every_spelling_of_a_usi_spec_is_refused_without_an_allowance() {
        let none = EngineAllowList::default();
        for spec in ["usi:/bin/sh", "usi :/bin/sh", " usi : /bin/sh ,nodes=1", "\"usi\":/bin/sh", "usi:\"/bin/sh\"", "usi:\"/bin/ sh\""] {
            let e = check(&none, spec).unwrap_err();
            assert!(e.contains("does not allow") && e.contains("--allow-engine"), "{spec}: {e}");
        }
    }

    #[test]
    fn an_allowed_program_takes_no_arguments_directory_or_options_from_the_spec() {
        let list = allow(&["/usr/games/fairy-stockfish"]);
        assert!(check(&list, "usi:/usr/games/fairy-stockfish,nodes=1000,name=fsf").is_ok());
        for extra in ["arg=-c", "dir=/tmp", "option.Debug Log File=/tmp/x", "\"option.Threads\"=4"] {
            let spec = format!("usi:/usr/games/fairy-stockfish,nodes=1000,{extra}");
            let e = check(&list, &spec).unwrap_err();
            assert!(e.contains("only the command line sets how an engine starts"), "{spec}: {e}");
        }
    }

    #[test]
    fn an_allowance_given_as_a_spec_fixes_how_the_engine_starts() {
        let list = allow(&["usi:scripts/gpsusi.sh,arg=-N,arg=1,option.LimitDepth=4,byoyomi=1000,time=0,name=ignored"]);
        assert_eq!(list.engines()[0].args, vec!["-N".to_string(), "1".to_string()]);
        assert!(check(&list, "usi:scripts/gpsusi.sh,option.LimitDepth=4,arg=-N,arg=1,time=0,byoyomi=3000,name=g").is_ok());
        assert!(check(&list, "usi:scripts/gpsusi.sh,arg=-N,arg=1").is_err(), "an option dropped");
        assert!(check(&list, "usi:scripts/gpsusi.sh,arg=-N,arg=2,option.LimitDepth=4").is_err(), "another argument");
        assert!(check(&list, "usi:scripts/gpsusi.sh,arg=-N,arg=1,option.LimitDepth=40").is_err(), "another value");
        assert!(check(&list, "usi:scripts/gpsusi.sh,arg=1,arg=-N,option.LimitDepth=4").is_err(), "arguments keep their order");
        // Two allowances of one program: either way of starting it.
        let two = allow(&["usi:/e,option.A=1", "usi:/e,option.B=2"]);
        assert!(check(&two, "usi:/e,option.B=2").is_ok() && check(&two, "usi:/e,option.A=1").is_ok());
        assert!(check(&two, "usi:/e,option.A=1,option.B=2").is_err());
    }

    #[test]
    fn the_same_file_under_another_name_is_the_same_program() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("engine");
        std::fs::write(&real, "").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let list = EngineAllowList::parse(&[real.display().to_string()]).unwrap();
        assert!(check(&list, &format!("usi:{}", link.display())).is_ok());
        assert!(check(&list, &format!("usi:{}/../{}/engine", dir.path().display(), dir.path().file_name().unwrap().to_string_lossy())).is_ok());
        assert!(check(&list, &format!("usi:{}/other", dir.path().display())).is_err());
    }

    #[test]
    fn an_allowance_that_is_another_kind_of_player_is_refused() {
        let e = EngineAllowList::parse(&["alphabeta,depth=2"]).unwrap_err().to_string();
        assert!(e.contains("takes a program"), "{e}");
        assert!(EngineAllowList::parse(&[""]).is_err());
        // A `usi:` spec with a mistake is an error, not a program named "usi:…".
        let e = EngineAllowList::parse(&["usi:/usr/games/fairy-stockfish,optoin.Threads=1"]).unwrap_err().to_string();
        assert!(e.contains("unknown key 'optoin.Threads'"), "{e}");
    }
}
