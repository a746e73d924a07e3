//! A headless Chromium driven over the DevTools protocol: the few commands the browser
//! tests need (open a page, evaluate an expression, click at a point, take a
//! screenshot), as JSON over the protocol's WebSocket (`tungstenite`).

use base64::Engine;
use serde_json::{json, Value};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

pub const CHROMIUM: &str = "/usr/bin/chromium";

pub struct Chromium {
    child: Child,
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Chromium {
    /// Starts the browser with one blank page of `width` × `height` and connects to it.
    pub fn start(width: u32, height: u32) -> Chromium {
        assert!(Path::new(CHROMIUM).exists(), "{CHROMIUM} is missing: run scripts/install-test-deps.sh");
        let profile = tempfile::tempdir().unwrap();
        let child = Command::new(CHROMIUM)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions", "--remote-debugging-port=0", "--hide-scrollbars"])
            .arg(format!("--window-size={width},{height}"))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {CHROMIUM}: {e}"));
        // The browser writes its port into the profile once it listens.
        let port_file: PathBuf = profile.path().join("DevToolsActivePort");
        let started = Instant::now();
        let port = loop {
            if let Some(port) = std::fs::read_to_string(&port_file).ok().and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<u16>().ok())) {
                break port;
            }
            assert!(started.elapsed() < Duration::from_secs(60), "chromium did not open its DevTools port");
            std::thread::sleep(Duration::from_millis(50));
        };
        let page_ws = loop {
            let list = ureq::get(&format!("http://127.0.0.1:{port}/json/list")).call().unwrap().into_string().unwrap();
            let list: Value = serde_json::from_str(&list).unwrap();
            if let Some(ws) = list.as_array().unwrap().iter().find(|t| t["type"] == "page").and_then(|t| t["webSocketDebuggerUrl"].as_str()) {
                break ws.to_string();
            }
            assert!(started.elapsed() < Duration::from_secs(60), "chromium opened no page");
            std::thread::sleep(Duration::from_millis(50));
        };
        let (socket, _) = tungstenite::connect(page_ws.as_str()).unwrap();
        let mut c = Chromium { child, socket, next_id: 1, _profile: profile };
        c.call("Emulation.setDeviceMetricsOverride", json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }));
        c
    }

    /// Sends one command and returns its result (events in between are skipped).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.socket.send(Message::text(json!({ "id": id, "method": method, "params": params }).to_string())).unwrap();
        loop {
            let msg = self.socket.read().unwrap();
            let Message::Text(text) = msg else { continue };
            let v: Value = serde_json::from_str(text.as_str()).unwrap();
            if v["id"] == id {
                if let Some(e) = v.get("error") {
                    panic!("{method}: {e}");
                }
                return v["result"].clone();
            }
        }
    }

    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
    }

    /// The value of a JavaScript expression (JSON-serialisable), thrown errors as panics.
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call("Runtime.evaluate", json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }));
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expr}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// A left click at (x, y) in CSS pixels, as the mouse makes it: move, press, release.
    pub fn click_at(&mut self, x: f64, y: f64) {
        self.call("Input.dispatchMouseEvent", json!({ "type": "mouseMoved", "x": x, "y": y }));
        self.call("Input.dispatchMouseEvent", json!({ "type": "mousePressed", "x": x, "y": y, "button": "left", "clickCount": 1 }));
        self.call("Input.dispatchMouseEvent", json!({ "type": "mouseReleased", "x": x, "y": y, "button": "left", "clickCount": 1 }));
    }

    pub fn screenshot_png(&mut self) -> Vec<u8> {
        let r = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        base64::engine::general_purpose::STANDARD.decode(r["data"].as_str().unwrap()).unwrap()
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
