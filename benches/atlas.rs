//! `cargo bench --bench atlas`: the intake's throughput over IMAP on loopback (a real Dovecot;
//! fetch + parse + DKIM + store + state row + \Seen, messages per second) on a few thousand
//! realistic messages, then the scan and the classification, whose overhead outside the
//! model call is measured by timing the model separately (a scripted server answers at once).
//! `ATLAS_BENCH_MESSAGES` sets the count (default 2000).

#[allow(dead_code)]
#[path = "../tests/atlas/dovecot.rs"]
mod dovecot;
#[allow(unused_imports)]
#[path = "../tests/atlas/scan.rs"]
mod scan;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arthur::atlas::client::Founder;
use arthur::atlas::dkim::DkimVerifier;
use arthur::atlas::imap::ImapAccount;
use arthur::atlas::mail::EmailAddress;
use arthur::atlas::ocr::Ocr;
use arthur::atlas::pipeline::{Atlas, AtlasDeps};
use arthur::atlas::scan::Scanner;
use arthur::atlas::store::SqliteAtlasStore;
use arthur_agents::llm::client::{ClientOptions, ConfiguredModels, LlmClient, ProviderEndpoint};
use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use arthur_agents::llm::{ChatModel, ChatRequest, ChatResponse, LlmError, ProviderKind, StreamEvent};
use arthur_agents::memory::SqliteStore;
use arthur_agents::secret::Secret;
use arthur_agents::time::SystemClock;

/// Times every model call, so the rest of the classification can be measured alone.
struct Timed {
    inner: LlmClient,
    nanos: AtomicU64,
}

#[async_trait::async_trait]
impl ChatModel for Timed {
    async fn chat(
        &self,
        request: &ChatRequest,
        stream: Option<&(dyn Fn(StreamEvent) + Send + Sync)>,
    ) -> Result<ChatResponse, LlmError> {
        let t = Instant::now();
        let r = self.inner.chat(request, stream).await;
        self.nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        r
    }
}

/// A realistic mix: short notes, forwards with a quoted thread, long newsletters, and one
/// message in ten with a small attachment.
fn message(i: usize) -> Vec<u8> {
    let from = ["jean@client.fr", "boss@maboite.fr", "news@lettre.example", "ops@boutique.fr"][i % 4];
    let body = match i % 4 {
        0 => "Bonjour,\nle bouton « Commander » ne répond plus depuis ce matin.\nMerci de regarder.\nJean".to_string(),
        1 => format!(
            "Tu peux t'en occuper ?\n\n---------- Forwarded message ---------\nDe : Marie <marie@boutique.fr>\nDate : lundi\nObjet : refonte\n\n{}",
            "Nous voudrions refondre la page catalogue, avec filtres et tri.\n".repeat(20)
        ),
        2 => "Les nouveautés du mois : promotions, articles, conseils. ".repeat(200),
        _ => "Le site renvoie une erreur 500 sur /paiement.\n> ancien message cité\n> encore\n".repeat(5),
    };
    let mut m = format!(
        "From: {from}\r\nTo: atlas@maboite.fr\r\nSubject: Message {i}\r\nMessage-ID: <bench{i}@bench.example>\r\nDate: Mon, 30 Nov 2026 10:00:00 +0100\r\nMIME-Version: 1.0\r\n"
    );
    if i % 10 == 9 {
        m.push_str("Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n");
        m.push_str(&body.replace('\n', "\r\n"));
        m.push_str("\r\n--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"devis.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n");
        m.push_str(
            &"JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBSL0ZpbHRlci9GbGF0ZURlY29kZT4+\r\n".repeat(40),
        );
        m.push_str("--b--\r\n");
    } else {
        m.push_str("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n");
        m.push_str(&body.replace('\n', "\r\n"));
        m.push_str("\r\n");
    }
    m.into_bytes()
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("ATLAS_BENCH_MESSAGES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let imap = dovecot::Dovecot::start().await;
    let t = Instant::now();
    let mut bytes = 0;
    for i in 0..n {
        let raw = message(i);
        bytes += raw.len();
        imap.append(&raw).await;
    }
    println!("appended {n} messages ({:.1} MiB) in {:.1} s", bytes as f64 / 1048576.0, t.elapsed().as_secs_f64());

    let dir = tempfile::tempdir().unwrap();
    let memory = SqliteStore::open_path(&dir.path().join("arthur.db")).await.unwrap();
    let store = Arc::new(SqliteAtlasStore::new(memory.pool().clone()));
    let llm = ScriptedLlm::start().await;
    llm.set_fallback(Some(Reply::text(
        r#"{"intent": "question", "complexity": "leger", "confidence": 0.9, "justification": "bench"}"#,
    )));
    let timed = Arc::new(Timed {
        inner: LlmClient::new(
            vec![ProviderEndpoint::new(ProviderKind::Mistral, llm.base_url(), Secret::new("k"))],
            ConfiguredModels { router: Some("mistral-small-latest".into()), chat: None },
            ClientOptions::default(),
        )
        .unwrap(),
        nanos: AtomicU64::new(0),
    });
    let clamd = scan::Clamd::start();
    let atlas = Atlas::new(AtlasDeps {
        store,
        scanner: Scanner::Clamd { addr: clamd.addr() },
        ocr: Ocr::default(),
        dkim: DkimVerifier::offline(HashMap::new()).unwrap(),
        llm: Some(timed.clone()),
        founder: Some(Founder(EmailAddress::parse("boss@maboite.fr").unwrap())),
        mailbox: Some(EmailAddress::parse("atlas@maboite.fr").unwrap()),
        clock: Arc::new(SystemClock),
    });
    let account = ImapAccount::parse(&imap.url()).unwrap();

    let t = Instant::now();
    let report = atlas.intake_once(&account).await.unwrap();
    let intake = t.elapsed();
    assert_eq!(report.inserted, n);
    println!(
        "intake over IMAP: {n} messages in {:.2} s = {:.0} messages/s ({:.2} ms each: fetch, parse, DKIM, store, state row, \\Seen)",
        intake.as_secs_f64(),
        n as f64 / intake.as_secs_f64(),
        intake.as_secs_f64() * 1000.0 / n as f64
    );
    let t = Instant::now();
    let again = atlas.intake_once(&account).await.unwrap();
    println!("re-poll with nothing new: {:.1} ms ({} unseen)", t.elapsed().as_secs_f64() * 1000.0, again.unseen);

    let t = Instant::now();
    let mut scanned = 0;
    while scanned < n {
        let (clean, blocked) = atlas.scan_pending().await.unwrap();
        if clean + blocked == 0 {
            break;
        }
        scanned += clean + blocked;
    }
    let scan = t.elapsed();
    println!(
        "scan (clamd INSTREAM, every part): {scanned} in {:.1} s = {:.1} ms per message",
        scan.as_secs_f64(),
        scan.as_secs_f64() * 1000.0 / scanned.max(1) as f64
    );

    let t = Instant::now();
    let mut classified = 0;
    loop {
        let (ok, failed) = atlas.classify_pending().await.unwrap();
        if ok + failed == 0 {
            break;
        }
        classified += ok;
    }
    let total = t.elapsed();
    let model = Duration::from_nanos(timed.nanos.load(Ordering::Relaxed));
    let outside = total.saturating_sub(model);
    println!(
        "classification: {classified} in {:.2} s; model calls (loopback scripted server) {:.2} s; outside the model {:.3} ms per message",
        total.as_secs_f64(),
        model.as_secs_f64(),
        outside.as_secs_f64() * 1000.0 / classified.max(1) as f64
    );
}
