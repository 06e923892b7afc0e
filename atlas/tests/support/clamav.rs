//! ClamAV for the tests: the EICAR test file, a signature database generated here for it
//! (no signature download), a real clamd on loopback, and a PNG renderer for the OCR.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use arthur_atlas::scan::{Scanner, Verdict};

/// Name of the generated EICAR signatures. ClamAV reports it with suffixes (".Embedded",
/// ".UNOFFICIAL"): compare with `starts_with`, or use `is_eicar`.
pub const EICAR_SIG_NAME: &str = "Arthur.Test.EICAR";

/// MD5 of the 68-byte EICAR test file.
const EICAR_MD5: &str = "44d88612fea8a8f36de82e1278abb02f";

/// The EICAR test file (68 bytes). It is kept reversed, so neither this source nor the test
/// binary contains it and gets flagged by a scanner on the developer's machine.
pub fn eicar() -> Vec<u8> {
    const REVERSED: &str = "*H+H$!ELIF-TSET-SURIVITNA-DRADNATS-RACIE$}7)CC7)^P(45XZP\\4[PA@%P!O5X";
    REVERSED.bytes().rev().collect()
}

/// Whether a verdict is the detection of the generated EICAR signatures.
pub fn is_eicar(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::Infected { signature } if signature.starts_with(EICAR_SIG_NAME))
}

/// A ClamAV database directory that detects EICAR: `arthur-test.hdb` (whole-file MD5, made by
/// `sigtool --md5`) and `arthur-test.ndb` (the EICAR bytes anywhere in a file, so EICAR inside
/// a bigger part or an archive is found too). For `clamscan -d` and clamd's DatabaseDirectory.
pub fn eicar_db() -> tempfile::TempDir {
    let db = tempfile::Builder::new().prefix("arthur-eicar-db-").tempdir().unwrap();
    let sample_dir = tempfile::tempdir().unwrap();
    let sample = sample_dir.path().join("sample");
    std::fs::write(&sample, eicar()).unwrap();
    let out =
        Command::new("sigtool").arg("--md5").arg(&sample).output().expect("sigtool (package clamav) must be installed");
    assert!(out.status.success(), "sigtool --md5 failed: {}", String::from_utf8_lossy(&out.stderr));
    // "md5:size:file name"
    let line = String::from_utf8(out.stdout).unwrap();
    let mut fields = line.trim().splitn(3, ':');
    let (md5, size) = (fields.next().unwrap(), fields.next().unwrap());
    assert_eq!((md5, size), (EICAR_MD5, "68"), "the EICAR sample is not EICAR: {line}");
    std::fs::write(db.path().join("arthur-test.hdb"), format!("{md5}:{size}:{EICAR_SIG_NAME}\n")).unwrap();
    let hex: String = eicar().iter().map(|b| format!("{b:02x}")).collect();
    std::fs::write(db.path().join("arthur-test.ndb"), format!("{EICAR_SIG_NAME}.Embedded:0:*:{hex}\n")).unwrap();
    db
}

/// A real clamd in the foreground, on a free loopback TCP port and a Unix socket in its own
/// temporary directory, with the EICAR database. Killed on drop.
pub struct Clamd {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
    db: tempfile::TempDir,
}

impl Clamd {
    /// Starts clamd and waits until it answers PING (a second or so with the tiny database).
    pub fn start() -> Clamd {
        Clamd::start_with("")
    }

    /// Same, with more clamd.conf lines (e.g. "StreamMaxLength 1M").
    pub fn start_with(extra_config: &str) -> Clamd {
        let mut last = String::new();
        // The free port is found by binding and closing it; someone may take it meanwhile.
        for _ in 0..3 {
            match Clamd::try_start(extra_config) {
                Ok(clamd) => return clamd,
                Err(e) => last = e,
            }
        }
        panic!("clamd did not start: {last}");
    }

    fn try_start(extra_config: &str) -> Result<Clamd, String> {
        let dir = tempfile::Builder::new().prefix("arthur-clamd-").tempdir().unwrap();
        let db = eicar_db();
        let port = free_port();
        let d = dir.path();
        let config = d.join("clamd.conf");
        // No `User`: clamd keeps the identity it was started with (root in CI), which owns
        // the temporary directories.
        std::fs::write(
            &config,
            format!(
                "Foreground yes\n\
                 DatabaseDirectory {db}\n\
                 TCPSocket {port}\n\
                 TCPAddr 127.0.0.1\n\
                 LocalSocket {socket}\n\
                 LogFile {log}\n\
                 PidFile {pid}\n\
                 TemporaryDirectory {d}\n\
                 {extra_config}\n",
                db = db.path().display(),
                socket = d.join("clamd.sock").display(),
                log = d.join("clamd.log").display(),
                pid = d.join("clamd.pid").display(),
                d = d.display(),
            ),
        )
        .unwrap();
        let out = std::fs::File::create(d.join("clamd.out")).unwrap();
        let child = Command::new("clamd")
            .arg("--config-file")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .map_err(|e| format!("cannot start clamd (package clamav-daemon): {e}"))?;
        let mut clamd = Clamd { child, port, dir, db };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = clamd.child.try_wait().unwrap() {
                return Err(format!("clamd exited ({status}):\n{}", clamd.logs()));
            }
            if clamd.ping() {
                return Ok(clamd);
            }
            if Instant::now() > deadline {
                return Err(format!("clamd did not answer PING within 30 s:\n{}", clamd.logs()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// "127.0.0.1:port", for `Scanner::Clamd`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// clamd's Unix socket.
    pub fn socket_path(&self) -> PathBuf {
        self.dir.path().join("clamd.sock")
    }

    /// A scanner talking to this clamd over TCP.
    pub fn scanner(&self) -> Scanner {
        Scanner::Clamd { addr: self.addr() }
    }

    /// Whether clamd answers `zPING` with PONG on its TCP port.
    pub fn ping(&self) -> bool {
        let addr: SocketAddr = self.addr().parse().unwrap();
        let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
            return false;
        };
        stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        if stream.write_all(b"zPING\0").is_err() {
            return false;
        }
        let mut reply = Vec::new();
        let _ = stream.read_to_end(&mut reply);
        reply.strip_suffix(b"\0").unwrap_or(&reply) == b"PONG"
    }

    /// clamd's log file and its standard output, for failure messages.
    pub fn logs(&self) -> String {
        let read = |name: &str| std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
        format!("{}{}", read("clamd.log"), read("clamd.out"))
    }
}

impl Drop for Clamd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub use crate::harness::free_port;

/// A PNG of `text` in black DejaVu Sans on white, rendered by ImageMagick.
pub fn render_png(text: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("text.png");
    let status = Command::new("convert")
        .args(["-background", "white", "-fill", "black"])
        .args(["-font", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"])
        .args(["-pointsize", "32"])
        .arg(format!("label:{text}"))
        .args(["-bordercolor", "white", "-border", "20"])
        .arg(&png)
        .status()
        .expect("ImageMagick's convert (package imagemagick) must be installed");
    assert!(status.success(), "convert failed: {status}");
    std::fs::read(&png).unwrap()
}
