//! Shared setup of the Atlas tests: `spawn_atlas()` (a real SQLite file, clamscan with the
//! generated EICAR database, Tesseract, offline DKIM with a key made here, a scripted model
//! server speaking the chat-completions wire format), builders of raw messages, and the real
//! components the tests run against (`clamav`, `dovecot`, `smtp`, `git`, the fake `claude`,
//! the launcher's fixture). The binary's Atlas tests (tests/atlas) include this module too.
#![allow(dead_code)]

pub mod clamav;
pub mod dovecot;
pub mod git;
pub mod launch;
pub mod smtp;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arthur_agents::llm::client::{ClientOptions, ConfiguredModels, LlmClient, ProviderEndpoint};
use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use arthur_agents::llm::ProviderKind;
use arthur_agents::memory::SqliteStore;
use arthur_agents::secret::Secret;
use arthur_agents::time::ManualClock;
use arthur_atlas::client::Founder;
use arthur_atlas::dkim::DkimVerifier;
use arthur_atlas::mail::EmailAddress;
use arthur_atlas::ocr::Ocr;
use arthur_atlas::pipeline::{Atlas, AtlasDeps};
use arthur_atlas::scan::Scanner;
use arthur_atlas::store::{AtlasStore, EmailRow, NewClient, SqliteAtlasStore};
use chrono::{DateTime, TimeZone, Utc};
use mail_auth::common::crypto::Ed25519Key;
use mail_auth::common::headers::HeaderWriter;
use mail_auth::dkim::DkimSigner;
use serde_json::Value;

pub const FOUNDER: &str = "boss@maboite.fr";
pub const MAILBOX: &str = "atlas@maboite.fr";
pub const ACCOUNT: &str = "atlas@127.0.0.1:143/INBOX";

/// The tests' clock starts here: Monday 30 November 2026, 09:00 UTC.
pub fn start_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
}

/// This crate's directory (the binary's tests include these helpers from the workspace root).
pub fn atlas_dir() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    if here.join("tests/support/mod.rs").is_file() && here.join("src/launch/mod.rs").is_file() {
        here.to_path_buf()
    } else {
        here.join("atlas")
    }
}

/// The fake claude executable (atlas/tests/fake_claude), for every test that launches one.
pub fn fake_claude() -> PathBuf {
    atlas_dir().join("tests/fake_claude")
}

pub struct AtlasApp {
    pub dir: tempfile::TempDir,
    pub _db: tempfile::TempDir,
    pub memory: SqliteStore,
    pub store: Arc<SqliteAtlasStore>,
    pub atlas: Atlas,
    pub llm: ScriptedLlm,
    pub clock: Arc<ManualClock>,
    /// Signs as maboite.fr (the founder's and Atlas' domain), boutique.fr and atelier.fr
    /// (two clients' domains), selector `atlas`.
    pub keys: DkimKeys,
}

/// Ed25519 DKIM keys made at test time, one per domain (selector `atlas`): they sign
/// messages, and their records feed the offline verifier or an `ATLAS_DKIM_KEYS` file.
#[derive(Clone)]
pub struct DkimKeys(Vec<(String, Vec<u8>)>);

pub const SIGNING_DOMAINS: [&str; 3] = ["maboite.fr", "boutique.fr", "atelier.fr"];

impl DkimKeys {
    pub fn generate() -> Self {
        DkimKeys(SIGNING_DOMAINS.iter().map(|d| (d.to_string(), Ed25519Key::generate_pkcs8().unwrap())).collect())
    }
    /// `selector._domainkey.domain` → record.
    pub fn records(&self) -> HashMap<String, String> {
        self.0
            .iter()
            .map(|(d, pkcs8)| {
                let key = Ed25519Key::from_pkcs8_der(pkcs8).unwrap();
                (format!("atlas._domainkey.{d}"), format!("v=DKIM1; k=ed25519; p={}", b64(&key.public_key())))
            })
            .collect()
    }
    /// An `ATLAS_DKIM_KEYS` file with every record.
    pub fn write_file(&self, path: &std::path::Path) {
        let text: String = self.records().iter().map(|(n, r)| format!("{n} {r}\n")).collect();
        std::fs::write(path, text).unwrap();
    }
    /// `m` with a DKIM signature of `domain` that verifies.
    pub fn sign(&self, domain: &str, m: &Msg) -> Vec<u8> {
        let raw = m.raw();
        let pkcs8 = &self.0.iter().find(|(d, _)| d == domain).expect("a test signing domain").1;
        let key = Ed25519Key::from_pkcs8_der(pkcs8).unwrap();
        let sig = DkimSigner::from_key(key)
            .domain(domain)
            .selector("atlas")
            .headers(["From", "To", "Subject", "Message-ID"])
            .sign(&raw)
            .unwrap();
        let mut out = sig.to_header().into_bytes();
        out.extend_from_slice(&raw);
        out
    }
}

pub fn b64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// base64 in 76-column lines, as MIME wants it.
pub fn b64_lines(bytes: &[u8]) -> String {
    let s = b64(bytes);
    s.as_bytes().chunks(76).map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>().join("\r\n")
}

pub async fn spawn_atlas() -> AtlasApp {
    spawn_atlas_with(None).await
}

/// With `scanner` None: clamscan with the generated EICAR database.
pub async fn spawn_atlas_with(scanner: Option<Scanner>) -> AtlasApp {
    let dir = tempfile::tempdir().unwrap();
    let memory = SqliteStore::open_path(&dir.path().join("arthur.db")).await.unwrap();
    let store = Arc::new(SqliteAtlasStore::open(memory.pool().clone()).await.unwrap());
    let db = clamav::eicar_db();
    let scanner = scanner.unwrap_or(Scanner::Clamscan { db: Some(db.path().to_path_buf()) });
    let llm = ScriptedLlm::start().await;
    let client = LlmClient::new(
        vec![ProviderEndpoint::new(ProviderKind::Mistral, llm.base_url(), Secret::new("test-key"))],
        ConfiguredModels { router: Some("mistral-small-latest".into()), chat: None },
        ClientOptions { retries_per_provider: 0, ..ClientOptions::default() },
    )
    .unwrap();
    let keys = DkimKeys::generate();
    let dkim = DkimVerifier::offline(keys.records()).unwrap();
    let clock = Arc::new(ManualClock::new(start_time()));
    let atlas = Atlas::new(AtlasDeps {
        store: store.clone(),
        scanner,
        ocr: Ocr::default(),
        dkim,
        llm: Some(Arc::new(client)),
        founder: Some(Founder(EmailAddress::parse(FOUNDER).unwrap())),
        mailbox: Some(EmailAddress::parse(MAILBOX).unwrap()),
        trust_unsigned_founder: false,
        clock: clock.clone(),
        notifier: None,
    });
    AtlasApp { dir, _db: db, memory, store, atlas, llm, clock, keys }
}

/// The classifier's answer as the model would send it.
pub fn verdict(intent: &str, complexity: &str, confidence: f64) -> Reply {
    Reply::text(format!(
        r#"{{"intent": "{intent}", "complexity": "{complexity}", "confidence": {confidence}, "justification": "scripted"}}"#
    ))
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A raw message builder.
#[derive(Clone)]
pub struct Msg {
    pub from: String,
    pub subject: String,
    pub body: String,
    pub message_id: Option<String>,
    pub attachments: Vec<(Option<String>, String, Vec<u8>)>,
    pub extra_headers: Vec<String>,
}

pub fn msg(from: &str, subject: &str, body: &str) -> Msg {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    Msg {
        from: from.into(),
        subject: subject.into(),
        body: body.into(),
        message_id: Some(format!("<m{n}.{}@test.example>", std::process::id())),
        attachments: vec![],
        extra_headers: vec![],
    }
}

impl Msg {
    pub fn no_message_id(mut self) -> Self {
        self.message_id = None;
        self
    }
    /// One more header line (e.g. `Return-Path: <a@b.fr>`, as the receiving server records it).
    pub fn header(mut self, line: &str) -> Self {
        self.extra_headers.push(line.into());
        self
    }
    pub fn message_id(mut self, id: &str) -> Self {
        self.message_id = Some(id.into());
        self
    }
    /// `name`: a plain file name, or a raw Content-Disposition parameter when it contains `*=`.
    pub fn attach(mut self, name: Option<&str>, content_type: &str, bytes: &[u8]) -> Self {
        self.attachments.push((name.map(str::to_string), content_type.into(), bytes.to_vec()));
        self
    }
    pub fn raw(&self) -> Vec<u8> {
        let mut h = format!(
            "From: {}\r\nTo: {MAILBOX}\r\nSubject: {}\r\nDate: Mon, 30 Nov 2026 10:00:00 +0100\r\n",
            self.from, self.subject
        );
        if let Some(id) = &self.message_id {
            h.push_str(&format!("Message-ID: {id}\r\n"));
        }
        for e in &self.extra_headers {
            h.push_str(e);
            h.push_str("\r\n");
        }
        h.push_str("MIME-Version: 1.0\r\n");
        if self.attachments.is_empty() {
            h.push_str("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n");
            h.push_str(&self.body.replace('\n', "\r\n"));
            h.push_str("\r\n");
            return h.into_bytes();
        }
        h.push_str("Content-Type: multipart/mixed; boundary=\"=_b\"\r\n\r\n");
        h.push_str("--=_b\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n");
        h.push_str(&self.body.replace('\n', "\r\n"));
        h.push_str("\r\n");
        for (name, ctype, bytes) in &self.attachments {
            h.push_str(&format!("--=_b\r\nContent-Type: {ctype}\r\nContent-Transfer-Encoding: base64\r\n"));
            match name {
                Some(n) if n.contains("*=") => h.push_str(&format!("Content-Disposition: attachment; {n}\r\n")),
                Some(n) => h.push_str(&format!("Content-Disposition: attachment; filename=\"{n}\"\r\n")),
                None => {}
            }
            h.push_str("\r\n");
            h.push_str(&b64_lines(bytes));
            h.push_str("\r\n");
        }
        h.push_str("--=_b--\r\n");
        h.into_bytes()
    }
}

impl AtlasApp {
    /// The message signed with the maboite.fr key (a DKIM signature that passes).
    pub fn signed(&self, m: &Msg) -> Vec<u8> {
        self.keys.sign("maboite.fr", m)
    }

    /// Ingest, scan and classify one message; its state row afterwards.
    pub async fn process(&self, raw: Vec<u8>) -> EmailRow {
        let id = match self.atlas.ingest(ACCOUNT, None, raw).await.unwrap() {
            arthur_atlas::store::Inserted::New(id) | arthur_atlas::store::Inserted::Duplicate(id) => id,
        };
        self.atlas.scan_pending().await.unwrap();
        self.atlas.classify_pending().await.unwrap();
        self.store.email(id).await.unwrap().unwrap()
    }

    pub async fn events(&self, id: i64) -> Vec<String> {
        self.store.audits(id).await.unwrap().into_iter().map(|a| a.event).collect()
    }

    pub async fn add_client(&self, name: &str, emails: &[&str], domains: &[&str], mrr: Option<f64>) -> i64 {
        self.add_client_with(name, emails, domains, mrr, false).await
    }

    /// `auto_launch`: the client's DKIM-signed e-mails may start Claude Code on their own.
    pub async fn add_client_with(
        &self,
        name: &str,
        emails: &[&str],
        domains: &[&str],
        mrr: Option<f64>,
        auto_launch: bool,
    ) -> i64 {
        self.store
            .add_client(
                &NewClient {
                    name: name.into(),
                    emails: emails.iter().map(|e| EmailAddress::parse(e).unwrap()).collect(),
                    domains: domains.iter().map(|d| d.to_string()).collect(),
                    mrr,
                    status: None,
                    priority: Some("haute".into()),
                    auto_launch,
                    ..Default::default()
                },
                start_time(),
            )
            .await
            .unwrap()
    }

    /// The user message of the last classifier request.
    pub fn last_prompt(&self) -> String {
        let reqs = self.llm.chat_requests();
        let last = reqs.last().expect("no model request");
        user_text(&last.body)
    }

    /// Counts of rows in the four materialisation tables.
    pub async fn materialised_counts(&self) -> [i64; 4] {
        let mut out = [0; 4];
        for (i, t) in ["atlas_runs", "atlas_questions", "atlas_negociations", "atlas_conseils"].iter().enumerate() {
            out[i] =
                sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {t}")).fetch_one(self.memory.pool()).await.unwrap();
        }
        out
    }
}

pub fn user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A notifier e-mailing the founder through `smtp` (the test's SMTP server).
pub fn notifier(app: &AtlasApp, smtp: &smtp::SmtpServer) -> arthur_atlas::notify::Notifier {
    arthur_atlas::notify::Notifier {
        store: app.store.clone(),
        clock: app.clock.clone(),
        smtp: Some(arthur_atlas::smtp::SmtpAccount::parse(&smtp.url()).unwrap()),
        founder: Some(FOUNDER.into()),
        mailbox: Some(MAILBOX.into()),
    }
}
