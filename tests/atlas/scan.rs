//! The scanner and the OCR against the real programs: clamscan and a clamd on loopback with a
//! signature database generated here for the EICAR test file (no signature download), and
//! Tesseract on a PNG rendered at test time by ImageMagick.
//!
//! `eicar`, `eicar_db`, `EICAR_SIG_NAME` and `Clamd` are shared with the other Atlas tests.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use arthur::atlas::ocr::{self, Ocr, OcrError};
use arthur::atlas::scan::{Scanner, Verdict};

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

/// A loopback TCP port that was free a moment ago (and nothing listens on now).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn clamscan(db: &Path) -> Scanner {
    Scanner::Clamscan { db: Some(db.to_path_buf()) }
}

fn error_reason(verdict: &Verdict) -> &str {
    match verdict {
        Verdict::Error { reason } => reason,
        other => panic!("expected an error verdict, got {other:?}"),
    }
}

const CLEAN_TEXT: &[u8] = b"Bonjour,\nveuillez trouver ci-joint la facture de novembre.\nCordialement\n";

/// Text around an EICAR file: only the body signature finds it.
fn embedded_eicar() -> Vec<u8> {
    let mut part = b"Le fichier suivant est un test : ".to_vec();
    part.extend(eicar());
    part.extend_from_slice(b" fin du message.\n");
    part
}

/// `len` bytes of varied (and clean) content.
fn filler(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8 ^ (i / 251) as u8).collect()
}

fn assert_mixed(verdicts: &[Verdict]) {
    assert_eq!(verdicts.len(), 5, "{verdicts:?}");
    assert_eq!(verdicts[0], Verdict::Clean, "{verdicts:?}");
    assert!(is_eicar(&verdicts[1]), "{verdicts:?}");
    assert_eq!(verdicts[2], Verdict::Clean, "{verdicts:?}");
    assert!(is_eicar(&verdicts[3]), "{verdicts:?}");
    assert_eq!(verdicts[4], Verdict::Clean, "{verdicts:?}");
}

fn mixed_parts() -> Vec<Vec<u8>> {
    vec![CLEAN_TEXT.to_vec(), eicar(), filler(5000), embedded_eicar(), Vec::new()]
}

// ---------------------------------------------------------------------------------------
// clamscan

#[tokio::test]
async fn clamscan_clean_text_part_is_clean() {
    let db = eicar_db();
    let verdicts = clamscan(db.path()).scan_parts(&[CLEAN_TEXT]).await;
    assert_eq!(verdicts, vec![Verdict::Clean]);
    assert_eq!(verdicts[0].as_str(), "clean");
}

#[tokio::test]
async fn clamscan_eicar_part_is_infected_with_its_signature() {
    let db = eicar_db();
    let verdicts = clamscan(db.path()).scan_parts(&[&eicar()]).await;
    assert_eq!(verdicts.len(), 1);
    assert!(is_eicar(&verdicts[0]), "{verdicts:?}");
    assert_eq!(verdicts[0].as_str(), "infected");
    assert!(!verdicts[0].is_clean());
}

#[tokio::test]
async fn clamscan_mixed_parts_keep_their_order() {
    let db = eicar_db();
    let parts = mixed_parts();
    let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    assert_mixed(&clamscan(db.path()).scan_parts(&parts).await);
}

#[tokio::test]
async fn clamscan_with_a_missing_database_is_an_error_not_clean() {
    let dir = tempfile::tempdir().unwrap();
    let scanner = clamscan(&dir.path().join("no-such-db"));
    let verdicts = scanner.scan_parts(&[CLEAN_TEXT, b"x"]).await;
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    for verdict in &verdicts {
        assert!(error_reason(verdict).contains("clamscan"), "{verdict:?}");
        assert_eq!(verdict.as_str(), "error");
    }
}

#[tokio::test]
async fn no_parts_no_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let missing_db = clamscan(&dir.path().join("no-such-db"));
    assert_eq!(missing_db.scan_parts(&[]).await, vec![]);
    let unreachable = Scanner::Clamd { addr: format!("127.0.0.1:{}", free_port()) };
    assert_eq!(unreachable.scan_parts(&[]).await, vec![]);
}

#[test]
fn settings_choose_the_scanner() {
    let db = Path::new("/var/lib/arthur/clamav");
    assert!(matches!(
        Scanner::from_settings(Some("127.0.0.1:3310"), Some(db)),
        Scanner::Clamd { addr } if addr == "127.0.0.1:3310"
    ));
    assert!(matches!(
        Scanner::from_settings(None, Some(db)),
        Scanner::Clamscan { db: Some(d) } if d == db
    ));
    assert!(matches!(Scanner::from_settings(None, None), Scanner::Clamscan { db: None }));
    assert_eq!(Scanner::from_settings(Some("127.0.0.1:3310"), None).describe(), "clamd 127.0.0.1:3310");
    assert_eq!(Scanner::from_settings(None, Some(db)).describe(), "clamscan (db /var/lib/arthur/clamav)");
}

// ---------------------------------------------------------------------------------------
// clamd (INSTREAM)

#[tokio::test]
async fn clamd_clean_part_is_clean() {
    let clamd = Clamd::start();
    assert_eq!(clamd.scanner().scan_parts(&[CLEAN_TEXT]).await, vec![Verdict::Clean]);
}

#[tokio::test]
async fn clamd_eicar_part_is_infected_with_its_signature() {
    let clamd = Clamd::start();
    let verdicts = clamd.scanner().scan_parts(&[&eicar()]).await;
    assert_eq!(verdicts.len(), 1);
    assert!(is_eicar(&verdicts[0]), "{verdicts:?}");
}

#[tokio::test]
async fn clamd_mixed_parts_keep_their_order_over_tcp_and_unix_socket() {
    let clamd = Clamd::start();
    let parts = mixed_parts();
    let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    assert_mixed(&clamd.scanner().scan_parts(&parts).await);

    let path = clamd.socket_path().display().to_string();
    for addr in [path.clone(), format!("unix:{path}")] {
        let scanner = Scanner::Clamd { addr };
        assert_mixed(&scanner.scan_parts(&parts).await);
    }
}

#[tokio::test]
async fn clamd_parts_larger_than_one_chunk() {
    let clamd = Clamd::start();
    let clean = filler(300_000);
    // EICAR across the 64 KiB mark, where a chunk boundary falls, and EICAR at the very end.
    let mut straddling = filler(300_000);
    straddling.splice(65_536 - 30..65_536 - 30 + 68, eicar());
    let mut at_the_end = filler(300_000);
    at_the_end.extend(eicar());
    let verdicts = clamd.scanner().scan_parts(&[&clean, &straddling, &at_the_end]).await;
    assert_eq!(verdicts[0], Verdict::Clean, "{verdicts:?}");
    assert!(is_eicar(&verdicts[1]), "{verdicts:?}");
    assert!(is_eicar(&verdicts[2]), "{verdicts:?}");
}

#[tokio::test]
async fn clamd_part_over_its_stream_limit_is_an_error_not_clean() {
    let clamd = Clamd::start_with("StreamMaxLength 1M");
    let too_big = filler(3 * 1024 * 1024);
    let verdicts = clamd.scanner().scan_parts(&[&too_big, CLEAN_TEXT]).await;
    let reason = error_reason(&verdicts[0]);
    assert!(reason.contains("StreamMaxLength"), "{reason}");
    // The next part gets its own connection and its own verdict.
    assert_eq!(verdicts[1], Verdict::Clean);
}

#[tokio::test]
async fn clamd_unreachable_is_an_error_not_clean() {
    let dir = tempfile::tempdir().unwrap();
    let nowhere = [
        format!("127.0.0.1:{}", free_port()),
        dir.path().join("no-clamd.sock").display().to_string(),
        "not an address".to_string(),
    ];
    for addr in nowhere {
        let verdicts = Scanner::Clamd { addr: addr.clone() }.scan_parts(&[CLEAN_TEXT, b""]).await;
        assert_eq!(verdicts.len(), 2, "{verdicts:?}");
        for verdict in &verdicts {
            let reason = error_reason(verdict);
            assert!(reason.contains("cannot connect to clamd"), "{addr}: {reason}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// OCR

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

#[tokio::test]
async fn ocr_reads_a_french_sentence_from_a_png() {
    let png = render_png("Facture numéro 4521 à régler avant vendredi");
    assert!(ocr::is_image(&png));
    let text = Ocr::default().image_text(&png).await.unwrap();
    for word in ["Facture", "4521", "vendredi"] {
        assert!(text.contains(word), "{word:?} not in {text:?}");
    }
}

#[tokio::test]
async fn ocr_refuses_what_is_not_an_image() {
    // Tesseract would take this for a list of files to open.
    let err = Ocr::default().image_text(b"/etc/hostname\n").await.unwrap_err();
    assert!(matches!(err, OcrError::NotAnImage), "{err:?}");
}

#[tokio::test]
async fn ocr_of_a_broken_image_is_an_error() {
    let mut broken = b"\x89PNG\r\n\x1a\n".to_vec();
    broken.extend(filler(200));
    let err = Ocr::default().image_text(&broken).await.unwrap_err();
    assert!(matches!(err, OcrError::Failed { .. }), "{err:?}");
}

#[tokio::test]
async fn ocr_without_tesseract_is_a_spawn_error() {
    let ocr = Ocr { bin: PathBuf::from("/nonexistent/tesseract"), ..Ocr::default() };
    let png = render_png("Bonjour");
    let err = ocr.image_text(&png).await.unwrap_err();
    assert!(matches!(err, OcrError::Spawn { .. }), "{err:?}");
}

#[test]
fn is_image_by_magic_number_never_by_name() {
    assert_eq!(Ocr::default().langs, "fra+eng");
    assert!(ocr::is_image(&render_png("A")));
    assert!(ocr::is_image(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01"));
    assert!(!ocr::is_image(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"));
    // A text file named like an image is still text.
    let dir = tempfile::tempdir().unwrap();
    let named_png = dir.path().join("facture.png");
    std::fs::write(&named_png, b"Ceci n'est pas une image.\n").unwrap();
    assert!(!ocr::is_image(&std::fs::read(&named_png).unwrap()));
}
