//! The scanner and the OCR against the real programs: clamscan and a clamd on loopback with a
//! signature database generated here for the EICAR test file (no signature download), and
//! Tesseract on a PNG rendered at test time by ImageMagick (`support::clamav`).

use std::path::{Path, PathBuf};

use arthur_atlas::ocr::{self, Ocr, OcrError};
use arthur_atlas::scan::{Scanner, Verdict};

use crate::support::clamav::*;

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
