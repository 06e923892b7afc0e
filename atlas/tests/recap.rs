//! The recap e-mail against a real SMTP server on loopback (Python's aiosmtpd): who receives
//! it (the founder, never the client), what the subject and body say for each status, the
//! proofs attached byte for byte, header injection through the request subject, SMTP AUTH,
//! and the error of an unreachable server (without the password), against
//! `support::smtp::SmtpServer`.

use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, Instant};

use arthur_atlas::machine::{
    DeployFact, End, EscalateWhy, FailReason, MergeFact, NotMergedWhy, QaFact, RouteQa, Setback,
};
use arthur_atlas::recap::{self, CitedCommit, CommitFound, Figure, Recap, RunStatus};
use arthur_atlas::smtp::{self, SmtpAccount, SmtpError};
use arthur_atlas::{Complexity, Intent};
use mail_parser::MimeHeaders;

use crate::support::smtp::*;

const FROM: &str = "Atlas <atlas@maboite.fr>";
const FOUNDER: &str = "boss@maboite.fr";
const CLIENT: &str = "client@boutique-cliente.fr";

/// A recap whose facts give `status` (the status is computed from the facts, never set).
fn recap(status: RunStatus) -> Recap {
    let mut r = Recap {
        email_id: 42,
        subject_of_request: format!("Corriger le bouton du panier ({CLIENT})"),
        client: Some(format!("Boutique Cliente <{CLIENT}>")),
        classified: (Intent::Run, Complexity::Plan),
        lane: (Intent::Run, Complexity::Plan),
        end: End::Delivered,
        merge: MergeFact::Merged { base: "main".into(), sha: "9876543210abcdef".into(), commits: 2 },
        deploy: DeployFact::Done { tenant: "boutique".into() },
        qa: QaFact::Passed {
            routes: vec![RouteQa {
                declared: "/panier".into(),
                route: "/boutique/panier".into(),
                code: Some(0),
                output: String::new(),
            }],
            iterations: 1,
        },
        note: String::new(),
        summary_md: format!(
            "Le bouton du panier a été corrigé.\nLe client ({CLIENT}) pourra vérifier en préproduction."
        ),
        commits: vec![
            ("0123456789abcdef0123456789abcdef01234567".into(), "fix(panier): bouton visible sur mobile".into()),
            ("fedcba9876543210fedcba9876543210fedcba98".into(), "test(panier): capture du bouton".into()),
        ],
        cost_usd: Figure::Known(0.4249),
        turns: Figure::Known(12),
        duration_s: Figure::Known(185),
        proofs: vec![],
        claims: vec![],
        contract_written: true,
        denied: vec![],
        retry_at: None,
    };
    match status {
        RunStatus::Succeeded => {}
        RunStatus::Failed => {
            r.end = End::Failed(FailReason::DeployFailed);
            r.deploy = DeployFact::Failed { why: "code 1 : préproduction injoignable".into() };
            r.qa = QaFact::NotReached;
            r.merge = MergeFact::NotAttempted { branch: Some("atlas/email-42".into()) };
        }
        RunStatus::TimedOut => {
            r.end = End::TimedOut { retry: (1, 2) };
            r.deploy = DeployFact::NotReached;
            r.qa = QaFact::NotReached;
            r.merge = MergeFact::NotAttempted { branch: Some("atlas/email-42".into()) };
            r.cost_usd = Figure::Unknown;
            r.turns = Figure::Unknown;
            r.duration_s = Figure::Unknown;
        }
        RunStatus::Escalated => {
            r.end = End::Escalated(EscalateWhy::QaBudget { iterations: 8, iso_only: true });
            r.qa = QaFact::Failed {
                routes: vec![RouteQa {
                    declared: "/panier".into(),
                    route: "/boutique/panier".into(),
                    code: Some(3),
                    output: String::new(),
                }],
                iterations: 8,
            };
            r.merge = MergeFact::NotAttempted { branch: Some("atlas/email-42".into()) };
        }
        RunStatus::NoCode => {
            r.lane = (Intent::Question, Complexity::Leger);
            r.deploy = DeployFact::NotNeeded;
            r.qa = QaFact::NotNeeded;
            r.merge = MergeFact::NothingToMerge;
            r.commits.clear();
        }
        RunStatus::NotMerged => {
            r.merge = MergeFact::NotMerged { branch: "atlas/email-42".into(), why: NotMergedWhy::DirtyTrunk };
        }
        RunStatus::Unverified => r.qa = QaFact::NotConfigured,
        RunStatus::NoChange => {
            r.end = End::Failed(FailReason::NoChange);
            r.deploy = DeployFact::NotNeeded;
            r.qa = QaFact::NotNeeded;
            r.merge = MergeFact::NothingToMerge;
            r.commits.clear();
        }
        RunStatus::Parked => {
            r.end = End::Parked { why: Setback::ApiUnavailable { status: Some(529) }, retry: (1, 5) };
            r.retry_at = Some((chrono::Utc::now() + chrono::Duration::minutes(5), chrono::Duration::minutes(5)));
            r.deploy = DeployFact::NotReached;
            r.qa = QaFact::NotReached;
            r.merge = MergeFact::NotAttempted { branch: None };
            r.commits.clear();
        }
    }
    assert_eq!(recap::status(&r), status, "the facts give {status:?}");
    r
}

/// What the status line adds for each status (from the facts).
fn detail_of(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Failed => "le déploiement a échoué",
        RunStatus::TimedOut => "nouvel essai 1 sur 2 dans une heure",
        RunStatus::Escalated => "écart à la maquette encore présent après 8 itérations",
        RunStatus::Parked => "l'API de Claude était surchargée (529) ; nouvel essai 1 sur 5 vers",
        _ => "",
    }
}

/// What sending a recap did.
#[derive(Debug)]
struct Report {
    recipient: String,
    server_reply: String,
    attached: Vec<std::path::PathBuf>,
    skipped_proofs: Vec<std::path::PathBuf>,
}

/// The recap composed (`recap::letter`), then delivered (`smtp::send`), as the launcher does.
async fn send_recap(account: &SmtpAccount, from: &str, founder: &str, r: &Recap) -> Result<Report, SmtpError> {
    let composed = recap::letter(r);
    let sent = smtp::send(account, from, founder, &composed.letter).await?;
    Ok(Report {
        recipient: sent.recipient,
        server_reply: sent.server_reply,
        attached: composed.attached,
        skipped_proofs: composed.skipped,
    })
}

fn account(url: &str) -> SmtpAccount {
    SmtpAccount::parse(url).expect("a valid ATLAS_SMTP_URL")
}

#[tokio::test]
async fn the_recap_reaches_the_founder_only() {
    let server = SmtpServer::start();
    let report = send_recap(&account(&server.url()), FROM, FOUNDER, &recap(RunStatus::Succeeded)).await.unwrap();
    assert_eq!(report.recipient, FOUNDER);
    assert!(report.server_reply.starts_with("250"), "{report:?}");

    let messages = server.messages();
    assert_eq!(messages.len(), 1);
    let mail = &messages[0];
    assert_eq!(mail.rcpt_tos, vec![FOUNDER.to_string()], "envelope recipients");
    assert_eq!(mail.mail_from, "atlas@maboite.fr");
    assert_eq!(mail.login.as_deref(), Some(USER), "the credentials of the URL were used");

    let parsed = mail.parsed();
    let to: Vec<&str> = parsed.to().expect("a To header").iter().filter_map(|a| a.address()).collect();
    assert_eq!(to, vec![FOUNDER]);
    assert!(parsed.cc().is_none() && parsed.bcc().is_none());
    let headers = mail.raw_headers().to_lowercase();
    assert!(!headers.contains("\ncc:") && !headers.contains("\nbcc:"), "{headers}");
    assert!(!mail.rcpt_tos.iter().any(|r| r.contains("boutique-cliente")));

    assert_eq!(parsed.subject(), Some(format!("[Atlas] terminé — Corriger le bouton du panier ({CLIENT})").as_str()));
    let text = mail.text();
    assert!(text.contains("Statut : terminé — le run a abouti et son travail est sur le tronc."), "{text}");
    assert!(text.contains("Fusion : intégré au tronc main en 9876543 (2 commits)."), "{text}");
    assert!(text.contains("Déploiement : fait en préproduction (cible boutique)."), "{text}");
    assert!(text.contains("QA : passée, itération 1 (1 route : /boutique/panier ok)."), "{text}");
    assert!(text.contains("0123456 — fix(panier): bouton visible sur mobile"), "{text}");
    assert!(text.contains("fedcba9 — test(panier): capture du bouton"), "{text}");
    assert!(text.contains("Coût : 0,42 $ · Tours : 12 · Durée : 3 min 05 s"), "{text}");
    assert!(text.contains("> Le bouton du panier a été corrigé."), "{text}");
    assert!(text.contains("e-mail n° 42"), "{text}");
    assert!(parsed.attachments().next().is_none());
}

#[tokio::test]
async fn each_status_has_its_french_word_and_a_failed_run_is_never_a_success() {
    let server = SmtpServer::start();
    let smtp = account(&server.url());
    for status in RunStatus::ALL {
        send_recap(&smtp, FROM, FOUNDER, &recap(status)).await.unwrap();
    }
    let messages = server.messages();
    assert_eq!(messages.len(), RunStatus::ALL.len());
    let words = [
        "terminé",
        "échec",
        "délai dépassé",
        "escalade",
        "analyse livrée",
        "non fusionné",
        "à vérifier",
        "aucun changement",
        "reporté",
    ];
    for (status, mail) in RunStatus::ALL.into_iter().zip(&messages) {
        assert_eq!(mail.rcpt_tos, vec![FOUNDER.to_string()]);
        let parsed = mail.parsed();
        let subject = parsed.subject().expect("a subject").to_string();
        assert!(subject.starts_with(&format!("[Atlas] {} — ", status.word())), "{status:?}: {subject}");
        for word in words.iter().filter(|w| **w != status.word()) {
            assert!(!subject.contains(word), "{status:?}: {subject}");
        }
        let text = mail.text();
        assert!(text.contains(&format!("Statut : {} — ", status.word())), "{status:?}: {text}");
        if status.delivered() {
            continue;
        }
        let lower = format!("{subject}\n{text}").to_lowercase();
        for claim in ["succès", "success", "réussi", "terminé", "a abouti", "analyse livrée"] {
            assert!(!lower.contains(claim), "{status:?} claims {claim:?}:\n{subject}\n{text}");
        }
        assert!(text.contains("non confirmé"), "{status:?}: the agent's summary is not endorsed:\n{text}");
        assert!(text.contains(detail_of(status)), "{status:?}: {text}");
    }
    assert_eq!(words, RunStatus::ALL.map(RunStatus::word));
}

/// Issue 28: what the agent claims is checked against the facts, and said as facts.
#[test]
fn unbacked_claims_a_missing_contract_and_denied_tools_are_stated() {
    let mut r = recap(RunStatus::Succeeded);
    r.claims = vec![
        CitedCommit { cited: "deadbeefcafe".into(), found: CommitFound::Nowhere },
        CitedCommit { cited: "1234567".into(), found: CommitFound::BeforeRun },
    ];
    let text = recap::body(&r, &[], &[]);
    assert!(text.contains("Vérification : l'agent cite le commit deadbee…, introuvable sur la branche."), "{text}");
    assert!(text.contains("l'agent cite le commit 1234567, antérieur à ce run"), "{text}");
    assert!(!text.contains("Résumé de l'agent :"), "its summary is labelled as its own words: {text}");
    assert!(text.contains("Ce que l'agent dit avoir fait (ses propres mots"), "{text}");

    let mut r = recap(RunStatus::Succeeded);
    r.contract_written = false;
    let text = recap::body(&r, &[], &[]);
    assert!(text.contains("Contrat : l'agent ne l'a pas écrit ; le résumé ci-dessous est tiré de son transcript."));
    assert!(!text.contains("Résumé de l'agent :"), "{text}");

    let mut r = recap(RunStatus::NoChange);
    r.end = End::Failed(FailReason::ToolsDenied);
    r.denied = vec!["Bash : echo hi > HELLO.md".into()];
    let text = recap::body(&r, &[], &[]);
    assert!(text.starts_with("Bonjour"), "{text}");
    assert!(
        text.contains("Appels d'outil refusés par le mode de permission (1) :\n- Bash : echo hi > HELLO.md"),
        "{text}"
    );
    assert!(text.contains("ATLAS_PERMISSION_MODE"), "{text}");

    // A run request without a commit is « aucun changement », never « analyse livrée ».
    let text = recap::body(&recap(RunStatus::NoChange), &[], &[]);
    assert!(text.contains("Statut : aucun changement — aucun commit n'a été fait"), "{text}");
    assert!(!text.contains("analyse livrée"), "{text}");
}

#[tokio::test]
async fn proofs_are_attached_and_a_missing_one_is_skipped() {
    let server = SmtpServer::start();
    let dir = tempfile::tempdir().unwrap();
    let png: Vec<u8> = b"\x89PNG\r\n\x1a\n".iter().copied().chain((0..=255u8).cycle().take(5000)).collect();
    let pdf: Vec<u8> = b"%PDF-1.4\n% planche\n\xe2\xe3\xcf\xd3\n%%EOF\n".to_vec();
    let capture = dir.path().join("capture-panier.png");
    let planche = dir.path().join("planche.pdf");
    let missing = dir.path().join("absente.png");
    std::fs::write(&capture, &png).unwrap();
    std::fs::write(&planche, &pdf).unwrap();

    let mut r = recap(RunStatus::Succeeded);
    r.proofs = vec![capture.clone(), missing.clone(), planche.clone()];
    let report = send_recap(&account(&server.url()), FROM, FOUNDER, &r).await.unwrap();
    assert_eq!(report.attached, vec![capture.clone(), planche.clone()]);
    assert_eq!(report.skipped_proofs, vec![missing.clone()]);

    let messages = server.messages();
    assert_eq!(messages.len(), 1);
    let parsed = messages[0].parsed();
    let attachments: Vec<(String, Vec<u8>)> = parsed
        .attachments()
        .map(|a| (a.attachment_name().unwrap_or_default().to_string(), a.contents().to_vec()))
        .collect();
    assert_eq!(attachments.len(), 2, "{attachments:?}");
    assert_eq!(attachments[0].0, "capture-panier.png");
    assert_eq!(attachments[0].1, png);
    assert_eq!(attachments[1].0, "planche.pdf");
    assert_eq!(attachments[1].1, pdf);
    let content_types: Vec<String> = parsed
        .attachments()
        .filter_map(|a| a.content_type().map(|c| format!("{}/{}", c.ctype(), c.subtype().unwrap_or_default())))
        .collect();
    assert_eq!(content_types, vec!["image/png", "application/pdf"]);

    let text = messages[0].text();
    assert!(text.contains("Preuves jointes (2) : capture-panier.png, planche.pdf"), "{text}");
    assert!(text.contains("absente.png"), "the skipped proof is named:\n{text}");

    // The letter alone says the same.
    let letter = recap::letter(&r);
    assert_eq!((letter.skipped, letter.letter.attachments.len()), (vec![missing], 2));
}

#[tokio::test]
async fn a_subject_with_cr_lf_cannot_inject_a_header() {
    let server = SmtpServer::start();
    let mut r = recap(RunStatus::Failed);
    r.subject_of_request = format!("Corriger le panier\r\nBcc: {CLIENT}\r\nX-Injected: yes\n\nCorps injecté");
    r.commits = vec![("abcdef0123".into(), "fix\r\nCc: evil@x.fr".into())];
    send_recap(&account(&server.url()), FROM, FOUNDER, &r).await.unwrap();

    let messages = server.messages();
    assert_eq!(messages.len(), 1);
    let mail = &messages[0];
    assert_eq!(mail.rcpt_tos, vec![FOUNDER.to_string()]);
    let parsed = mail.parsed();
    assert!(parsed.bcc().is_none() && parsed.cc().is_none());
    assert!(parsed.header_raw("X-Injected").is_none());
    let subject = parsed.subject().unwrap();
    assert!(subject.starts_with("[Atlas] échec — Corriger le panier Bcc: "), "{subject}");
    assert!(!subject.contains('\n') && !subject.contains('\r'), "{subject:?}");
    for line in mail.raw_headers().lines() {
        let lower = line.to_lowercase();
        assert!(
            !lower.starts_with("bcc:") && !lower.starts_with("cc:") && !lower.starts_with("x-injected:"),
            "injected header line {line:?}"
        );
    }
    assert!(mail.text().contains("abcdef0 — fix Cc: evil@x.fr"), "{}", mail.text());
}

#[tokio::test]
async fn smtp_auth_is_used_and_a_refusal_never_shows_the_password() {
    let server = SmtpServer::start_requiring_auth();
    let r = recap(RunStatus::NoCode);

    send_recap(&account(&server.url()), FROM, FOUNDER, &r).await.unwrap();
    let messages = server.messages();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].login.as_deref(), Some(USER));

    let wrong = "Wr0ng-Passw0rd-123";
    let err = send_recap(&account(&server.url_with_password(wrong)), FROM, FOUNDER, &r).await.unwrap_err();
    assert!(matches!(err, SmtpError::Send { .. }), "{err:?}");
    let shown = format!("{err} {err:?}");
    assert!(shown.contains(&format!("127.0.0.1:{}", server.port())), "{shown}");
    assert!(shown.contains("535"), "the server's refusal is named: {shown}");
    assert!(!shown.contains(wrong) && !shown.contains(PASSWORD), "{shown}");

    let err = send_recap(&account(&server.url_anonymous()), FROM, FOUNDER, &r).await.unwrap_err();
    assert!(err.to_string().contains("530"), "{err}");
    assert_eq!(server.messages().len(), 1, "nothing else was accepted");
}

#[tokio::test]
async fn an_unreachable_server_is_a_clear_error_without_the_password() {
    // A port that was free a moment ago, and nothing listens on it now.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let password = "Unreachable-S3cret-xyz";
    let smtp = account(&format!("smtp://{USER}:{password}@127.0.0.1:{port}"));
    let started = Instant::now();
    let err = send_recap(&smtp, FROM, FOUNDER, &recap(RunStatus::Failed)).await.unwrap_err();
    assert!(started.elapsed() < smtp::SMTP_TIMEOUT, "refused at once, not timed out");
    let SmtpError::Send { server, reason } = &err else { panic!("{err:?}") };
    assert_eq!(server, &format!("smtp://{USER}@127.0.0.1:{port}"));
    assert!(!reason.is_empty());
    let shown = format!("{err} | {err:?} | {smtp} | {smtp:?}");
    assert!(shown.contains(&format!("cannot send the e-mail through the SMTP server smtp://{USER}@127.0.0.1:{port}")));
    assert!(!shown.contains(password), "{shown}");
}

#[tokio::test]
async fn invalid_addresses_and_urls_are_refused_before_anything_is_sent() {
    let server = SmtpServer::start();
    let smtp = account(&server.url());
    let r = recap(RunStatus::Succeeded);

    let err = send_recap(&smtp, FROM, "pas une adresse", &r).await.unwrap_err();
    assert!(matches!(err, SmtpError::Address { which: "founder", .. }), "{err:?}");
    let err = send_recap(&smtp, "atlas@@maboite", FOUNDER, &r).await.unwrap_err();
    assert!(matches!(err, SmtpError::Address { which: "sender", .. }), "{err:?}");
    assert!(server.messages().is_empty());

    for bad in [
        "http://atlas:Secret-url-pw@127.0.0.1:25",
        "smtp://atlas:Secret-url-pw@mail.example.fr:25",
        "smtp://atlas@127.0.0.1:25",
        "not a url Secret-url-pw",
    ] {
        let err = SmtpAccount::parse(bad).unwrap_err();
        assert!(matches!(err, SmtpError::Url(_)), "{bad}: {err:?}");
        assert!(!err.to_string().contains("Secret-url-pw"), "{err}");
    }
    let tls = SmtpAccount::parse("smtps://atlas:Secret-url-pw@mail.example.fr").unwrap();
    assert_eq!(tls.label(), "smtps://atlas@mail.example.fr:465");
    assert!(!format!("{tls} {tls:?}").contains("Secret-url-pw"));
}

#[test]
fn the_helper_server_records_the_envelope() {
    // The helper itself, with a hand-written SMTP session: RCPT TO is recorded even for a
    // recipient absent from the headers (what a Bcc would look like).
    let server = SmtpServer::start();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut read_reply = || {
        let mut all = String::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            all.push_str(&line);
            if line.len() < 4 || line.as_bytes()[3] != b'-' {
                return all;
            }
        }
    };
    assert!(read_reply().starts_with("220"));
    for (command, code) in [
        ("EHLO test", "250"),
        ("MAIL FROM:<a@x.fr>", "250"),
        ("RCPT TO:<b@x.fr>", "250"),
        ("RCPT TO:<hidden@x.fr>", "250"),
        ("DATA", "354"),
        ("Subject: hi\r\nTo: b@x.fr\r\n\r\nbody\r\n.", "250"),
        ("QUIT", "221"),
    ] {
        write!(stream, "{command}\r\n").unwrap();
        let reply = read_reply();
        assert!(reply.starts_with(code), "{command}: {reply}");
    }
    let messages = server.wait_for_messages(1, Duration::from_secs(5));
    assert_eq!(messages[0].mail_from, "a@x.fr");
    assert_eq!(messages[0].rcpt_tos, vec!["b@x.fr", "hidden@x.fr"]);
    assert_eq!(messages[0].login, None);
    assert_eq!(messages[0].parsed().subject(), Some("hi"));
}
