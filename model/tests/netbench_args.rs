//! `netbench` refuses bad arguments with a message naming them and exit code 2, never a
//! panic (a panic's exit code is 101 and its message names a source line).
use std::process::Command;

fn netbench(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_netbench")).args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn bad_arguments_are_named_not_panicked_on() {
    for (args, says) in [
        (&["--frobnicate", "1"][..], "unknown argument \"--frobnicate\""),
        (&["--threads", "two"][..], "--threads \"two\": not a number"),
        (&["--batches", "1,x"][..], "--batches \"x\": not a number"),
        (&["--sizes", "4by48"][..], "--sizes \"4by48\": expected BLOCKSxCHANNELS"),
        (&["--dtype", "f8"][..], "--dtype \"f8\": expected f32, f16 or bf16"),
        (&["--device", "abacus"][..], "--device \"abacus\""),
        (&["--seconds"][..], "--seconds needs a value"),
        (&["--sizes", "4x0", "--engines", "burn", "--batches", "1", "--seconds", "0.01"][..], "--sizes 4x0: invalid network config: channels must be positive"),
        (&["--model", "/nonexistent/model", "--engines", "burn", "--batches", "1"][..], "--model /nonexistent/model"),
    ] {
        let (code, stderr) = netbench(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
