//! The text of image attachments, so that a scanned invoice can be classified like a written
//! one. Tesseract reads the image on stdin and writes the text on stdout: nothing touches the
//! disk, and the text stays in memory — it is never logged or stored (counts only).
//! Only call this on parts with a clean verdict (see `scan`).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

/// One image, start to finish.
const OCR_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
pub struct Ocr {
    /// The tesseract executable ("tesseract", looked up on PATH).
    pub bin: PathBuf,
    /// Tesseract languages (`-l`), "fra+eng".
    pub langs: String,
}

impl Default for Ocr {
    fn default() -> Self {
        Ocr { bin: PathBuf::from("tesseract"), langs: "fra+eng".to_string() }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OcrError {
    #[error("cannot start {}: {source}", bin.display())]
    Spawn {
        bin: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Tesseract ran and failed; `stderr` is an excerpt of its diagnostics (never the text).
    #[error("tesseract failed ({status}): {stderr}")]
    Failed { status: String, stderr: String },
    #[error("tesseract did not finish within {} s", .0.as_secs())]
    Timeout(Duration),
    /// The bytes are not an image `is_image` recognises; tesseract was not started (it takes
    /// unrecognised input on stdin for a list of file names to open).
    #[error("not an image tesseract can read (PNG, JPEG, GIF, TIFF, BMP, WebP, PNM)")]
    NotAnImage,
}

impl Ocr {
    /// Text of one image (tesseract reading stdin, writing stdout, `-l fra+eng`), trimmed.
    /// Timeout 60 s. Bytes that are not an image (`is_image`) are refused before tesseract
    /// starts: given anything else on stdin, tesseract reads it as a list of files to open.
    pub async fn image_text(&self, image: &[u8]) -> Result<String, OcrError> {
        if !is_image(image) {
            return Err(OcrError::NotAnImage);
        }
        let mut child = tokio::process::Command::new(&self.bin)
            .arg("-")
            .arg("-")
            .arg("-l")
            .arg(&self.langs)
            // One thread per image: OpenMP's thread pool only slows small images down.
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| OcrError::Spawn { bin: self.bin.clone(), source })?;
        let mut stdin = child.stdin.take();
        let feed = async move {
            if let Some(stdin) = stdin.as_mut() {
                // A write error (tesseract gave up on the image early) shows in its exit status.
                let _ = stdin.write_all(image).await;
                let _ = stdin.shutdown().await;
            }
            drop(stdin);
        };
        let run = async {
            let ((), output) = tokio::join!(feed, child.wait_with_output());
            output
        };
        let output = match tokio::time::timeout(OCR_TIMEOUT, run).await {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => return Err(OcrError::Failed { status: "no exit status".into(), stderr: e.to_string() }),
            // Dropping the future killed tesseract (kill_on_drop).
            Err(_) => return Err(OcrError::Timeout(OCR_TIMEOUT)),
        };
        if !output.status.success() {
            return Err(OcrError::Failed { status: output.status.to_string(), stderr: stderr_excerpt(&output.stderr) });
        }
        let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
        tracing::debug!(bytes = image.len(), chars = text.chars().count(), "image read by OCR");
        Ok(text)
    }
}

/// The last 300 characters of tesseract's diagnostics, on one line.
fn stderr_excerpt(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars = one_line.chars().count();
    if chars > 300 {
        format!("…{}", one_line.chars().skip(chars - 300).collect::<String>())
    } else {
        one_line
    }
}

/// Whether these bytes are an image tesseract can read, by magic number (PNG, JPEG, GIF,
/// TIFF, BMP, WebP, PNM) — never by the (attacker-controlled) name or Content-Type alone.
pub fn is_image(bytes: &[u8]) -> bool {
    let b = bytes;
    b.starts_with(b"\x89PNG\r\n\x1a\n")
        || b.starts_with(b"\xff\xd8\xff")
        || b.starts_with(b"GIF87a")
        || b.starts_with(b"GIF89a")
        || b.starts_with(b"II*\0")
        || b.starts_with(b"MM\0*")
        || is_bmp(b)
        || (b.len() >= 12 && &b[0..4] == b"RIFF" && &b[8..12] == b"WEBP")
        || is_pnm(b)
}

/// "BM", then a DIB header whose size (at offset 14) is one of the known BMP versions: two
/// letters alone would take any text starting with "BM" for an image.
fn is_bmp(b: &[u8]) -> bool {
    if b.len() < 18 || !b.starts_with(b"BM") {
        return false;
    }
    let dib = u32::from_le_bytes([b[14], b[15], b[16], b[17]]);
    matches!(dib, 12 | 16 | 40 | 52 | 56 | 64 | 108 | 124)
}

/// Netpbm: "P1"…"P6" then whitespace (PBM, PGM, PPM, plain or raw).
fn is_pnm(b: &[u8]) -> bool {
    b.len() >= 3 && b[0] == b'P' && (b'1'..=b'6').contains(&b[1]) && b[2].is_ascii_whitespace()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers() {
        assert!(is_image(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
        assert!(is_image(b"\xff\xd8\xff\xe0\0\x10JFIF"));
        assert!(is_image(b"GIF89a\x01\0"));
        assert!(is_image(b"II*\0\x08\0\0\0"));
        assert!(is_image(b"RIFF\x24\0\0\0WEBPVP8 "));
        assert!(is_image(b"P6\n2 2\n255\n"));
        let mut bmp = b"BM\0\0\0\0\0\0\0\0\x36\0\0\0".to_vec();
        bmp.extend_from_slice(&40u32.to_le_bytes());
        assert!(is_image(&bmp));
        assert!(!is_image(b"BMW voitures d'occasion, liste de prix"));
        assert!(!is_image(b"%PDF-1.7\n"));
        assert!(!is_image(b"PNG"));
        assert!(!is_image(b""));
        assert!(!is_image(b"Paris"));
    }
}
