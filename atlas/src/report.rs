//! The classifier's calibration report (spec §8), markdown on stdout: volume and confidence
//! per intent, uncertainty rate, failures, a success proxy, and the phase-3 gate — counted
//! on run + plan, the functional heir of the removed `chantier` intent, so that it can open.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::store::ReportData;
use super::{audit, Complexity, Intent};

/// Phase 3 opens above this success rate…
pub const GATE_SUCCESS: f64 = 0.90;
/// …on at least this many internal run + plan items.
pub const GATE_MIN_ITEMS: usize = 30;

/// The numbers of the report, computed once (the markdown and the tests read the same ones).
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub total: usize,
    /// intent, volume, mean confidence, standard deviation (population).
    pub per_intent: Vec<(Intent, usize, f64, f64)>,
    pub uncertain: i64,
    pub classify_failed: i64,
    pub blocked: i64,
    /// intent, items not cancelled, items.
    pub success: Vec<(Intent, usize, usize)>,
    /// Internal run + plan items: not cancelled, total.
    pub gate_items: (usize, usize),
    pub gate_open: bool,
}

pub fn compute(data: &ReportData) -> Calibration {
    let total = data.classified.len();
    let per_intent = Intent::ALL
        .into_iter()
        .map(|intent| {
            let c: Vec<f64> = data.classified.iter().filter(|r| r.0 == intent).map(|r| r.2).collect();
            let n = c.len();
            let mean = if n == 0 { 0.0 } else { c.iter().sum::<f64>() / n as f64 };
            let var = if n == 0 { 0.0 } else { c.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64 };
            (intent, n, mean, var.sqrt())
        })
        .collect();
    let count = |e: &str| data.audit_counts.get(e).copied().unwrap_or(0);
    let success = [Intent::Run, Intent::Question, Intent::Negociation, Intent::Conseil]
        .into_iter()
        .map(|intent| {
            let items: Vec<_> = data.items.iter().filter(|i| i.0 == intent).collect();
            (intent, items.iter().filter(|i| i.2 != "annule").count(), items.len())
        })
        .collect();
    let gate: Vec<_> =
        data.items.iter().filter(|i| i.0 == Intent::Run && i.1 == Some(Complexity::Plan) && i.3).collect();
    let ok = gate.iter().filter(|i| i.2 != "annule").count();
    let gate_open = gate.len() >= GATE_MIN_ITEMS && (ok as f64) / (gate.len() as f64) > GATE_SUCCESS;
    Calibration {
        total,
        per_intent,
        uncertain: count(audit::CLASSIFICATION_UNCERTAIN),
        classify_failed: count(audit::CLASSIFY_FAILED),
        blocked: count(audit::CLASSIFY_BLOCKED_UNSAFE_ATTACHMENTS),
        success,
        gate_items: (ok, gate.len()),
        gate_open,
    }
}

fn pct(num: f64, den: f64) -> String {
    if den == 0.0 {
        "—".into()
    } else {
        format!("{:.1} %", 100.0 * num / den).replace('.', ",")
    }
}

fn num(x: f64) -> String {
    format!("{x:.2}").replace('.', ",")
}

pub fn markdown(c: &Calibration, days: u32, now: DateTime<Utc>) -> String {
    let mut out = String::new();
    let since = now - chrono::Duration::days(days as i64);
    let _ = writeln!(out, "# Calibration du classifieur Atlas — {days} derniers jours");
    let _ = writeln!(out, "\nFenêtre : du {} au {} (UTC).", since.format("%Y-%m-%d"), now.format("%Y-%m-%d"));
    let _ = writeln!(out, "\n## Volume par intention\n");
    let _ = writeln!(out, "| Intention | Volume | Confiance moyenne | Écart-type |");
    let _ = writeln!(out, "|---|---:|---:|---:|");
    for (intent, n, mean, sd) in &c.per_intent {
        let (m, s) = if *n == 0 { ("—".into(), "—".into()) } else { (num(*mean), num(*sd)) };
        let _ = writeln!(out, "| {intent} | {n} | {m} | {s} |");
    }
    let _ = writeln!(out, "| **total** | {} | | |", c.total);
    let _ = writeln!(out, "\n## Incertitude et échecs\n");
    let _ = writeln!(
        out,
        "- Incertaines (confiance < 0,7) : {} sur {} ({})",
        c.uncertain,
        c.total,
        pct(c.uncertain as f64, c.total as f64)
    );
    let _ = writeln!(out, "- Échecs de classification (classify_failed) : {}", c.classify_failed);
    let _ = writeln!(out, "- Bloquées par l'antivirus (classify_blocked_unsafe_attachments) : {}", c.blocked);
    let _ = writeln!(out, "- Échecs au total : {}", c.classify_failed + c.blocked);
    let _ = writeln!(out, "\n## Taux de succès (proxy : éléments non annulés / éléments créés)\n");
    let _ = writeln!(out, "| Intention | Non annulés | Créés | Taux |");
    let _ = writeln!(out, "|---|---:|---:|---:|");
    for (intent, ok, n) in &c.success {
        let _ = writeln!(out, "| {intent} | {ok} | {n} | {} |", pct(*ok as f64, *n as f64));
    }
    let (ok, n) = c.gate_items;
    let _ = writeln!(out, "\n## Seuil d'ouverture de la phase 3\n");
    let _ = writeln!(
        out,
        "Critère : plus de 90 % de succès sur au moins {GATE_MIN_ITEMS} éléments internes run + plan \
         (l'équivalent de l'ancien « chantier »)."
    );
    let _ = writeln!(out, "\nRun + plan internes : {ok} non annulés sur {n} ({}).", pct(ok as f64, n as f64));
    let verdict = if c.gate_open {
        "**Seuil franchi** : la phase 3 peut s'ouvrir.".to_string()
    } else if n < GATE_MIN_ITEMS {
        format!("**Seuil non franchi** : {n} éléments sur les {GATE_MIN_ITEMS} nécessaires ; Atlas reste cantonné à l'interne.")
    } else {
        "**Seuil non franchi** : taux de succès insuffisant ; Atlas reste cantonné à l'interne.".to_string()
    };
    let _ = writeln!(out, "\n{verdict}");
    out
}
