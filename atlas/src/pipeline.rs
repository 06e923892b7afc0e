//! The intake pipeline, step by step: ingest (DKIM verdict, raw message + state row),
//! scan, classify (OCR, client resolution, short-circuits, model call, guards,
//! materialisation). Each step picks rows by state and moves them with a guarded
//! transition, so a crash or a second worker at any point only repeats a no-op. A step that
//! fails backs off and parks only after a day of failures, telling the founder once.

use std::sync::Arc;
use std::time::Duration;

use arthur_agents::llm::{ChatModel, ChatRequest, Message, ModelRole};
use arthur_agents::time::Clock;
use serde_json::json;

use super::classify::{self, GuardContext, PromptInput};
use super::client::{self, Founder};
use super::dkim::DkimVerifier;
use super::imap::{ImapAccount, ImapError, Mailbox};
use super::mail::{message_key, EmailAddress, Mail};
use super::ocr::{self, Ocr};
use super::scan::{Scanner, Verdict};
use super::store::{
    AtlasStore, AtlasStoreError, ClassificationRecord, EmailRow, Inserted, NewMessage, ScanRecord, StepFailure,
};
use super::{audit, Complexity, EmailState, Intent};

/// A scan or a classification failing for this long parks the message (`scan_failed`,
/// `classify_failed`), and the founder is told once; before, each failure backs off 1, 2,
/// 4 … 60 minutes (`store::backoff`), so a short outage (ClamAV or the model provider down
/// a few minutes) loses nothing and parks nothing.
pub const PARK_AFTER: chrono::Duration = chrono::Duration::hours(24);
/// Messages fetched per IMAP round trip.
pub const FETCH_BATCH: usize = 50;
/// Rows read at a time by the scan and classify passes (each pass visits every pending row once).
pub const PASS_LIMIT: i64 = 200;
/// Images OCR'd per message.
pub const MAX_OCR_IMAGES: usize = 10;
/// The classifier's call (spec §5.2: timeout 30 s).
pub const CLASSIFY_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum AtlasError {
    #[error(transparent)]
    Imap(#[from] ImapError),
    #[error(transparent)]
    Store(#[from] AtlasStoreError),
}

/// Everything the pipeline works with.
/// The intents the launcher starts Claude Code for (its candidates' whitelist).
pub const LAUNCHED_INTENTS: [Intent; 4] = [Intent::Run, Intent::Question, Intent::Negociation, Intent::Conseil];

pub struct AtlasDeps {
    pub store: Arc<dyn AtlasStore>,
    pub scanner: Scanner,
    pub ocr: Ocr,
    pub dkim: DkimVerifier,
    /// The classifier's model (the fallback chain, with `ATLAS_CLASSIFIER_MODEL` first);
    /// None → every classification fails, retryably, until a provider is configured.
    pub llm: Option<Arc<dyn ChatModel>>,
    pub founder: Option<Founder>,
    pub mailbox: Option<EmailAddress>,
    /// `ATLAS_TRUST_UNSIGNED_FOUNDER=1`: a forward from the founder's address counts as theirs
    /// without DKIM (the real-sender guard).
    pub trust_unsigned_founder: bool,
    pub clock: Arc<dyn Clock>,
    /// Tells the founder when a message parks (None: nobody is told; the audit remains).
    pub notifier: Option<super::notify::Notifier>,
}

/// What one poll did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PollReport {
    pub unseen: usize,
    pub inserted: usize,
    pub duplicates: usize,
    pub marked_seen: usize,
    pub scanned: usize,
    pub blocked: usize,
    pub classified: usize,
    pub classify_failed: usize,
}

/// How one classification attempt ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ClassifyOutcome {
    Classified {
        intent: Intent,
        complexity: Complexity,
        materialised: Option<(&'static str, i64)>,
    },
    /// Already done by someone else (the row was no longer `scanned`).
    Skipped,
    Failed {
        reason: String,
        state: EmailState,
    },
}

pub struct Atlas {
    pub deps: AtlasDeps,
}

impl Atlas {
    pub fn new(deps: AtlasDeps) -> Self {
        Self { deps }
    }

    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.deps.clock.now()
    }

    /// Stores one raw message (DKIM verdict computed here) and its `received` state row.
    pub async fn ingest(&self, account: &str, uid: Option<u32>, raw: Vec<u8>) -> Result<Inserted, AtlasStoreError> {
        let mail = Mail::parse(&raw);
        let dkim = self.deps.dkim.verify(&raw, mail.from.as_ref()).await;
        let msg = NewMessage {
            account: account.to_string(),
            message_key: message_key(mail.message_id.as_ref(), &raw),
            message_id: mail.message_id.as_ref().map(|m| m.as_str().to_string()),
            imap_uid: uid,
            from_email: mail.from.as_ref().map(|f| f.as_str().to_string()),
            subject: mail.subject.chars().take(500).collect(),
            raw,
            dkim_pass: dkim.pass,
            dkim_detail: dkim.detail,
        };
        let inserted = self.deps.store.insert_message(&msg, self.now()).await?;
        if let Inserted::Duplicate(id) = inserted {
            self.deps
                .store
                .audit(
                    Some(id),
                    audit::POLL_DUPLICATE,
                    json!({"uid": uid, "key_kind": key_kind(&msg.message_key)}),
                    self.now(),
                )
                .await?;
        }
        Ok(inserted)
    }

    /// One tick of the poller: the intake, then scan and classify everything pending (this
    /// tick's messages and any left by an earlier one).
    pub async fn poll_once(&self, account: &ImapAccount) -> Result<PollReport, AtlasError> {
        let mut report = self.intake_once(account).await?;
        let (scanned, blocked) = self.scan_pending().await?;
        report.scanned = scanned;
        report.blocked = blocked;
        let (classified, failed) = self.classify_pending().await?;
        report.classified = classified;
        report.classify_failed = failed;
        Ok(report)
    }

    /// The intake alone: UNSEEN → store each message → \Seen after the commit.
    pub async fn intake_once(&self, account: &ImapAccount) -> Result<PollReport, AtlasError> {
        let mut report = PollReport::default();
        let label = account.label();
        let mut mailbox = match Mailbox::connect(account).await {
            Ok(m) => m,
            Err(e) => {
                self.deps.store.audit(None, audit::POLL_FAILED, json!({"error": e.to_string()}), self.now()).await?;
                return Err(e.into());
            }
        };
        let unseen = mailbox.unseen().await?;
        report.unseen = unseen.len();
        for batch in unseen.chunks(FETCH_BATCH) {
            let fetched = mailbox.fetch(batch).await?;
            let mut stored = Vec::with_capacity(fetched.len());
            for (uid, raw) in fetched {
                match self.ingest(&label, Some(uid), raw).await? {
                    Inserted::New(_) => report.inserted += 1,
                    Inserted::Duplicate(_) => report.duplicates += 1,
                }
                stored.push(uid);
            }
            // Only what is committed is marked: a crash before this line re-announces the
            // batch, and the unique key turns it into duplicates.
            mailbox.mark_seen(&stored).await?;
            report.marked_seen += stored.len();
            tracing::info!(stored = report.marked_seen, unseen = report.unseen, "Atlas intake in progress");
        }
        mailbox.logout().await;
        Ok(report)
    }

    /// Scans every `received` message: (clean, blocked) counts.
    pub async fn scan_pending(&self) -> Result<(usize, usize), AtlasStoreError> {
        let (mut clean, mut blocked, mut cursor) = (0, 0, 0);
        loop {
            let rows = self.deps.store.due_in(&[EmailState::Received], cursor, PASS_LIMIT, self.now()).await?;
            let Some(last) = rows.last().map(|r| r.id) else { break };
            for row in rows {
                match self.scan_one(&row).await? {
                    EmailState::Scanned => clean += 1,
                    EmailState::Blocked => blocked += 1,
                    _ => {}
                }
            }
            cursor = last;
        }
        Ok((clean, blocked))
    }

    pub async fn scan_one(&self, row: &EmailRow) -> Result<EmailState, AtlasStoreError> {
        let Some(raw) = self.deps.store.raw(row.id).await? else { return Ok(row.status) };
        let mail = Mail::parse(&raw);
        let parts: Vec<&[u8]> = mail.parts.iter().map(|p| p.bytes.as_slice()).collect();
        let verdicts = self.deps.scanner.scan_parts(&parts).await;
        let infected: Vec<String> = verdicts
            .iter()
            .filter_map(|v| match v {
                Verdict::Infected { signature } => Some(signature.clone()),
                _ => None,
            })
            .collect();
        let errors: Vec<String> = verdicts
            .iter()
            .filter_map(|v| match v {
                Verdict::Error { reason } => Some(reason.clone()),
                _ => None,
            })
            .collect();
        let detail = json!({
            "scanner": self.deps.scanner.describe(), "parts": parts.len(),
            "attachments": mail.attachment_count(), "infected": infected, "errors": errors,
        });
        if infected.is_empty() && !errors.is_empty() {
            // The scanner failed, the message is not unsafe: never `blocked` for that.
            let failure = StepFailure {
                from: EmailState::Received,
                event: audit::SCAN_FAILED,
                detail,
                park_after: PARK_AFTER,
                terminal: EmailState::ScanFailed,
            };
            let state = self.deps.store.record_failure(row.id, &failure, self.now()).await?;
            if state == EmailState::ScanFailed {
                self.tell_parked(row.id, state, &errors.join(" ; ")).await?;
            }
            return Ok(state);
        }
        let verdict = if infected.is_empty() { "clean" } else { "infected" };
        let record = ScanRecord { verdict, scanned_parts: parts.len(), attachments: mail.attachment_count(), detail };
        self.deps.store.record_scan(row.id, &record, self.now()).await?;
        Ok(if verdict == "clean" { EmailState::Scanned } else { EmailState::Blocked })
    }

    /// Classifies every `scanned` message: (classified, failed) counts.
    pub async fn classify_pending(&self) -> Result<(usize, usize), AtlasStoreError> {
        let (mut ok, mut failed, mut cursor) = (0, 0, 0);
        loop {
            let rows = self.deps.store.due_in(&[EmailState::Scanned], cursor, PASS_LIMIT, self.now()).await?;
            let Some(last) = rows.last().map(|r| r.id) else { break };
            for row in rows {
                match self.classify_one(&row).await? {
                    ClassifyOutcome::Classified { .. } => ok += 1,
                    ClassifyOutcome::Failed { .. } => failed += 1,
                    ClassifyOutcome::Skipped => {}
                }
            }
            tracing::info!(classified = ok, failed, "Atlas classification in progress");
            cursor = last;
        }
        Ok((ok, failed))
    }

    pub async fn classify_one(&self, row: &EmailRow) -> Result<ClassifyOutcome, AtlasStoreError> {
        let store = self.deps.store.as_ref();
        // Doctrine: nothing is read from a message whose scan was not clean.
        if row.status != EmailState::Scanned || row.scan_verdict.as_deref() != Some("clean") {
            return Ok(ClassifyOutcome::Skipped);
        }
        let Some(raw) = store.raw(row.id).await? else { return Ok(ClassifyOutcome::Skipped) };
        let mail = Mail::parse(&raw);
        let envelope = mail.from.clone();
        let founder = self.deps.founder.as_ref();
        let from_founder = matches!((&envelope, founder), (Some(e), Some(f)) if f.is(e));
        let resolution = client::resolve(store, envelope.as_ref(), &mail, founder).await?;
        let mut audits: Vec<(&'static str, serde_json::Value)> = Vec::new();
        if resolution.fails_closed() {
            audits.push((
                audit::CLIENT_UNRESOLVED_FORWARD,
                json!({"forwarded_from_found": resolution.forwarded_from.is_some()}),
            ));
        }
        let chantier_client = resolution.client.as_ref().map(|c| c.id);

        // Pre-model short-circuits, DKIM-conditioned (fail closed).
        if let Some(sc) =
            classify::short_circuit_candidate(&mail.subject, envelope.as_ref(), founder, self.deps.mailbox.as_ref())
        {
            if row.dkim_pass {
                audits.push((sc.audit(), json!({"dkim": "pass"})));
                let rec = ClassificationRecord {
                    intent: Intent::Noise,
                    complexity: Complexity::Leger,
                    confidence: 1.0,
                    model: "guard".into(),
                    justification: sc.justification().into(),
                    client_id: resolution.client.as_ref().map(|c| c.id),
                    client_source: resolution.source.as_str(),
                    is_forward: resolution.is_forward,
                    chantier_id: None,
                    audits,
                };
                return self.store_classification(row.id, &rec).await;
            }
            audits.push(("short_circuit_refused_no_dkim", json!({"would_be": sc.audit()})));
        }

        let ocr_text = self.ocr_attachments(row.id, &mail).await?;
        let Some(llm) = &self.deps.llm else {
            return self
                .fail(row.id, "no language model configured (set MISTRAL_API_KEY or another provider)", &audits)
                .await;
        };
        let verified = classify::verified_client(&resolution, from_founder);
        let user = classify::build_user_prompt(&PromptInput {
            mail: &mail,
            envelope: envelope.as_ref(),
            verified_client: verified,
            ocr_text: ocr_text.as_deref(),
        });
        drop(ocr_text);
        let request = ChatRequest {
            role: ModelRole::Router,
            messages: vec![Message::system(classify::PROMPT), Message::user(user)],
            tools: vec![],
            json_mode: true,
            tool_choice: Default::default(),
            temperature: Some(0.0),
            max_tokens: Some(300),
        };
        let response = match tokio::time::timeout(CLASSIFY_TIMEOUT, llm.chat(&request, None)).await {
            Err(_) => return self.fail(row.id, "model call timed out after 30 s", &audits).await,
            Ok(Err(e)) => return self.fail(row.id, &format!("model call failed: {e}"), &audits).await,
            Ok(Ok(r)) => r,
        };
        let verdict = match classify::parse_verdict(&response.content) {
            Ok(v) => v,
            Err(e) => return self.fail(row.id, &format!("invalid classifier answer: {e}"), &audits).await,
        };
        let envelope_client = match resolution.source {
            client::ClientSource::Envelope => resolution.client.as_ref(),
            _ => None,
        };
        let founder_verified = from_founder && (row.dkim_pass || self.deps.trust_unsigned_founder);
        // The negociation guard believes the envelope sender the receiving server recorded,
        // not the From header alone.
        let return_path_client = match &mail.return_path {
            Some(rp) => store.client_for(rp).await?,
            None => None,
        };
        let guarded = classify::apply_guards(
            &verdict,
            &GuardContext {
                from_founder,
                attachments: mail.attachment_count(),
                envelope_client,
                real_sender_client: classify::real_sender_client(
                    &resolution,
                    founder_verified,
                    return_path_client.as_ref(),
                ),
            },
        );
        audits.extend(guarded.audits.iter().cloned());
        let chantiers = store.open_chantiers(chantier_client).await?;
        let rec = ClassificationRecord {
            intent: guarded.intent,
            complexity: guarded.complexity,
            confidence: guarded.confidence,
            model: format!("{}/{}", response.provider.as_str(), response.model),
            justification: verdict.justification.clone(),
            client_id: resolution.client.as_ref().map(|c| c.id),
            client_source: resolution.source.as_str(),
            is_forward: resolution.is_forward,
            chantier_id: classify::match_chantier(guarded.intent, &chantiers, &mail),
            audits,
        };
        let outcome = self.store_classification(row.id, &rec).await?;
        if let ClassifyOutcome::Classified { intent, .. } = &outcome {
            if LAUNCHED_INTENTS.contains(intent) {
                self.hold_if_unverified(row.id).await?;
            }
        }
        Ok(outcome)
    }

    /// A launchable message whose author may not start Claude Code on their own waits for
    /// the founder from now on, and the founder is asked at once (the launcher checks again
    /// under its lease, so an approval or a setting changed meanwhile is still honoured).
    /// Without an SMTP account there is no e-mail to send now: the launcher holds it at its
    /// cycle, as before.
    async fn hold_if_unverified(&self, id: i64) -> Result<(), AtlasStoreError> {
        if self.deps.notifier.as_ref().is_none_or(|n| n.smtp.is_none()) {
            return Ok(());
        }
        let store = self.deps.store.as_ref();
        let Some(row) = store.email(id).await? else { return Ok(()) };
        let founder = self.deps.founder.as_ref();
        if let Err(reason) =
            crate::launch::author_authority(store, &row, founder, self.deps.trust_unsigned_founder).await?
        {
            crate::launch::hold_for_approval(store, self.deps.notifier.as_ref(), &row, reason, self.now()).await?;
        }
        Ok(())
    }

    async fn store_classification(
        &self,
        id: i64,
        rec: &ClassificationRecord,
    ) -> Result<ClassifyOutcome, AtlasStoreError> {
        Ok(match self.deps.store.record_classification(id, rec, self.now()).await? {
            None => ClassifyOutcome::Skipped,
            Some(materialised) => {
                ClassifyOutcome::Classified { intent: rec.intent, complexity: rec.complexity, materialised }
            }
        })
    }

    async fn fail(
        &self,
        id: i64,
        reason: &str,
        audits: &[(&'static str, serde_json::Value)],
    ) -> Result<ClassifyOutcome, AtlasStoreError> {
        tracing::warn!(email = id, "Atlas classification failed: {reason}");
        for (event, detail) in audits {
            self.deps.store.audit(Some(id), event, detail.clone(), self.now()).await?;
        }
        let failure = StepFailure {
            from: EmailState::Scanned,
            event: audit::CLASSIFY_FAILED,
            detail: json!({"reason": reason}),
            park_after: PARK_AFTER,
            terminal: EmailState::ClassifyFailed,
        };
        let state = self.deps.store.record_failure(id, &failure, self.now()).await?;
        if state == EmailState::ClassifyFailed {
            self.tell_parked(id, state, reason).await?;
        }
        Ok(ClassifyOutcome::Failed { reason: reason.to_string(), state })
    }

    /// One e-mail to the founder for a message that parked after a day of errors.
    async fn tell_parked(&self, id: i64, state: EmailState, why: &str) -> Result<(), AtlasStoreError> {
        let Some(notifier) = &self.deps.notifier else { return Ok(()) };
        if let Some(row) = self.deps.store.email(id).await? {
            notifier.notify_once(parked_notice(&row, state, why)).await?;
        }
        Ok(())
    }

    /// Text of the clean image attachments, in memory only; the audit has counts, never text.
    async fn ocr_attachments(&self, id: i64, mail: &Mail) -> Result<Option<String>, AtlasStoreError> {
        let images: Vec<&[u8]> =
            mail.attachments().map(|p| p.bytes.as_slice()).filter(|b| ocr::is_image(b)).take(MAX_OCR_IMAGES).collect();
        if images.is_empty() {
            return Ok(None);
        }
        let mut text = String::new();
        let mut failures = 0;
        for image in &images {
            match self.deps.ocr.image_text(image).await {
                Ok(t) if !t.is_empty() => {
                    if !text.is_empty() {
                        text.push_str("\n---\n");
                    }
                    text.push_str(&t);
                }
                Ok(_) => {}
                Err(e) => {
                    failures += 1;
                    tracing::warn!(email = id, "OCR of an attachment failed: {e}");
                }
            }
        }
        let chars = text.chars().count();
        self.deps
            .store
            .audit(
                Some(id),
                audit::OCR_EXTRACTED,
                json!({"chars": chars, "images": images.len(), "failed": failures}),
                self.now(),
            )
            .await?;
        Ok((!text.is_empty()).then_some(text))
    }
}

/// The e-mail saying a message parked: what it is, what kept failing, for how long, and the
/// command that puts it back. Composed by code.
pub fn parked_notice(row: &EmailRow, state: EmailState, why: &str) -> super::store::NewNotice {
    let one_line = |t: &str| {
        t.split(|c: char| c.is_control() || c.is_whitespace()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
    };
    let step = if state == EmailState::ScanFailed { "l'analyse antivirus" } else { "la classification" };
    let subject = one_line(&row.subject);
    let subject = if subject.is_empty() { "(sans objet)".to_string() } else { subject };
    let (why, _) = super::mail::truncate_chars(why, 400);
    let hours = row.failing_since.map(|since| (row.updated_at - since).num_hours());
    let body = format!(
        "Bonjour,\n\n\
         L'e-mail n° {id} (« {subject} », de {from}) est mis de côté : {step} échoue depuis {duration}, \
         {attempts}.\n\
         Dernière erreur : {why}\n\n\
         Rien n'est perdu : le message est conservé tel quel. Quand le problème est réglé :\n\
         arthur atlas retry {id}\n\
         (ou le bouton « Relancer » de la page /atlas)\n\n— Atlas\n",
        id = row.id,
        from = one_line(row.from_email.as_deref().unwrap_or("(expéditeur inconnu)")),
        duration = match hours {
            Some(h) if h >= 1 => format!("{h} h"),
            _ => "moins d'une heure".to_string(),
        },
        attempts = arthur_agents::fr::count(row.attempts, "tentative", "tentatives"),
        why = one_line(why),
    );
    super::store::NewNotice {
        email_id: Some(row.id),
        kind: "parked".into(),
        dedupe_key: format!(
            "parked:{}:{}:{}",
            row.id,
            state.as_str(),
            row.failing_since.map(|t| t.timestamp()).unwrap_or(0)
        ),
        subject: format!("[Atlas] mis de côté — {subject}"),
        body,
    }
}

fn key_kind(key: &str) -> &'static str {
    if key.starts_with("sha256:") {
        "sha256"
    } else {
        "message-id"
    }
}
