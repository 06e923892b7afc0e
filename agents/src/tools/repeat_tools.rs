//! The everyday basics, second round, as typed tools: a reminder that repeats (created,
//! stopped), a reminder moved to another time (or said again later), alarms that ring like
//! timers, and the souvenirs read back by number, words or the last ones. Every receipt is
//! read back from the store; every refusal says nothing was written.

use chrono::Duration;

use super::args::{arg_kind, enum_schema, tool_args, typed_schema, Due, Flag, OptName, Text};
use super::*;
use crate::memory::recurrence::{Frequence, Repetition, MAX_INTERVALLE};
use crate::memory::{AlarmCancel, AlarmSet, MoveRappel, StopSeries};

/// The most items « les derniers » reads.
pub const MAX_DERNIERS: i64 = 50;

pub(super) fn register(tools: &mut Vec<Box<dyn DynTool>>) {
    tools.push(Box::new(CreerRappelRecurrent));
    tools.push(Box::new(DeplacerRappel));
    tools.push(Box::new(ArreterRappelRecurrent));
    tools.push(Box::new(CreerReveil));
    tools.push(Box::new(ListerReveils));
    tools.push(Box::new(AnnulerReveil));
    tools.push(Box::new(ListerSouvenirs));
}

arg_kind! {
    /// How often a reminder repeats.
    Freq: Frequence, required = true,
        schema |_d| enum_schema(&["quotidienne", "jours_ouvres", "hebdomadaire", "mensuelle"]),
        read |a, f, _| {
            let raw = a.name(f)?;
            Frequence::parse(&raw).ok_or(ArgError::new(f, ArgProblem::NotAllowed))
        };
    /// Every how many days, weeks or months (1 when absent).
    Intervalle: u32, required = false, schema |d| typed_schema("integer", d), read |a, f, _| {
        match a.opt_int(f)? {
            None => Ok(1),
            Some(n) if (1..=i64::from(MAX_INTERVALLE)).contains(&n) => Ok(n as u32),
            Some(_) => Err(ArgError::new(f, ArgProblem::NotAllowed)),
        }
    };
    /// How many of the last items to read (1 to [`MAX_DERNIERS`]).
    Derniers: Option<u32>, required = false, schema |d| typed_schema("integer", d), read |a, f, _| {
        match a.opt_int(f)? {
            None => Ok(None),
            Some(n) if (1..=MAX_DERNIERS).contains(&n) => Ok(Some(n as u32)),
            Some(_) => Err(ArgError::new(f, ArgProblem::NotAllowed)),
        }
    };
    /// An optional positive number (a note, a souvenir, an alarm).
    OptId: Option<i64>, required = false, schema |d| typed_schema("integer", d), read |a, f, _| {
        match a.opt_int(f)? {
            Some(n) if n <= 0 => Err(ArgError::new(f, ArgProblem::NotPositive)),
            other => Ok(other),
        }
    };
}

tool_args! {
    pub struct CreerRappelRecurrentArgs {
        texte: Text,
        echeance: Due = "première occurrence, AAAA-MM-JJTHH:MM, heure locale : son jour et son heure font la règle",
        frequence: Freq,
        intervalle: Intervalle = "tous les N jours, semaines ou mois (1 par défaut)",
    }
    pub struct DeplacerRappelArgs { id: args::Id, echeance: Due = "AAAA-MM-JJTHH:MM, heure locale" }
    pub struct CreerReveilArgs { heure: Due = "AAAA-MM-JJTHH:MM, heure locale", nom: OptName }
    pub struct AnnulerReveilArgs { id: OptId, tous: Flag }
    /// A read limited to one number, words, or the last ones.
    pub struct LectureArgs { id: OptId, contient: OptName, derniers: Derniers }
}

/// Applies a read's limits to items sorted by number (oldest first).
pub(super) fn limit<T>(
    items: Vec<T>,
    id: Option<i64>,
    contient: Option<String>,
    derniers: Option<u32>,
    number: impl Fn(&T) -> i64,
    text: impl Fn(&T) -> &str,
) -> (Portee, Vec<T>) {
    let total = items.len();
    let mut items: Vec<T> = items
        .into_iter()
        .filter(|x| id.is_none_or(|n| number(x) == n))
        .filter(|x| contient.as_deref().is_none_or(|w| super::contains_words(text(x), w)))
        .collect();
    if let Some(n) = derniers {
        let keep = items.len().saturating_sub(n as usize);
        items.drain(..keep);
    }
    (Portee { numero: id, contient, derniers, total }, items)
}

pub struct CreerRappelRecurrent;

#[async_trait]
impl Tool for CreerRappelRecurrent {
    const NAME: ToolName = ToolName::CreerRappelRecurrent;
    const PAGE: Page = Page::Rappels;
    type Args = CreerRappelRecurrentArgs;

    fn description(&self) -> &'static str {
        "Crée un rappel qui revient (chaque jour, du lundi au vendredi, chaque semaine le même jour, chaque mois le même quantième ; tous les N avec intervalle), à partir de sa première occurrence."
    }
    async fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<Outcome, StoreError> {
        let CreerRappelRecurrentArgs { texte, echeance: (due, _), frequence, intervalle } = args;
        let now = ctx.now();
        if due.0 < now - Duration::seconds(PAST_DUE_GRACE_SECS) {
            return Ok(Outcome::Refused(Refusal::DueDateInPast { echeance: due.0 }));
        }
        if frequence == Frequence::JoursOuvres && intervalle > 1 {
            return Ok(Outcome::Refused(Refusal::InvalidArguments(ArgError::new(
                "intervalle",
                ArgProblem::NotAllowed,
            ))));
        }
        let local = due.0.with_timezone(&ctx.tz).naive_local();
        let repetition = Repetition::new(frequence, intervalle, local, ctx.tz);
        // « du lundi au vendredi » said on a Saturday: the first occurrence is Monday's.
        let first = if frequence == Frequence::JoursOuvres
            && matches!(chrono::Datelike::weekday(&local.date()), chrono::Weekday::Sat | chrono::Weekday::Sun)
        {
            repetition.next_after(due.0).unwrap_or(due.0)
        } else {
            due.0
        };
        let rappel = ctx.store.create_recurring_rappel(&texte, first, &repetition, now).await?;
        Ok(Outcome::Done(Receipt::RecurringReminderCreated { rappel }))
    }
}

pub struct DeplacerRappel;

#[async_trait]
impl Tool for DeplacerRappel {
    const NAME: ToolName = ToolName::DeplacerRappel;
    const PAGE: Page = Page::Rappels;
    type Args = DeplacerRappelArgs;

    fn description(&self) -> &'static str {
        "Déplace un rappel à une autre date et heure, ou le redit plus tard (un rappel répété : cette occurrence seulement)."
    }
    async fn run(
        &self,
        ctx: &ToolContext,
        DeplacerRappelArgs { id, echeance: (due, _) }: Self::Args,
    ) -> Result<Outcome, StoreError> {
        let now = ctx.now();
        if due.0 < now - Duration::seconds(PAST_DUE_GRACE_SECS) {
            return Ok(Outcome::Refused(Refusal::DueDateInPast { echeance: due.0 }));
        }
        if let Some(r) = ctx.store.get_rappel(id).await? {
            if !r.fait && r.echeance == due.0 {
                return Ok(Outcome::Refused(Refusal::ReminderSameTime { rappel: r }));
            }
        }
        Ok(match ctx.store.move_rappel(id, due.0).await? {
            MoveRappel::Moved { before, after } => Outcome::Done(Receipt::ReminderMoved { before, after }),
            MoveRappel::NotFound => Outcome::Refused(Refusal::ReminderUnknown { id }),
            MoveRappel::AlreadyDone(rappel) => Outcome::Refused(Refusal::ReminderAlreadyDone { rappel }),
        })
    }
}

pub struct ArreterRappelRecurrent;

#[async_trait]
impl Tool for ArreterRappelRecurrent {
    const NAME: ToolName = ToolName::ArreterRappelRecurrent;
    const PAGE: Page = Page::Rappels;
    type Args = ById;

    fn description(&self) -> &'static str {
        "Arrête un rappel répété : il ne reviendra plus (ses occurrences passées restent comptées)."
    }
    async fn run(&self, ctx: &ToolContext, ById { id }: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.stop_rappel_series(id, ctx.now()).await? {
            StopSeries::Stopped(rappel) => Outcome::Done(Receipt::ReminderSeriesStopped { rappel }),
            StopSeries::NotFound => Outcome::Refused(Refusal::ReminderUnknown { id }),
            StopSeries::NotRecurring(rappel) => Outcome::Refused(Refusal::ReminderNotRecurring { rappel }),
            StopSeries::AlreadyStopped(rappel) => Outcome::Refused(Refusal::ReminderSeriesAlreadyStopped { rappel }),
        })
    }
}

pub struct CreerReveil;

#[async_trait]
impl Tool for CreerReveil {
    const NAME: ToolName = ToolName::CreerReveil;
    const PAGE: Page = Page::Minuteurs;
    type Args = CreerReveilArgs;

    fn description(&self) -> &'static str {
        "Règle un réveil à une heure donnée : il sonne comme un minuteur jusqu'à « c'est bon » (« encore cinq minutes » le repousse)."
    }
    async fn run(
        &self,
        ctx: &ToolContext,
        CreerReveilArgs { heure: (due, _), nom }: Self::Args,
    ) -> Result<Outcome, StoreError> {
        let now = ctx.now();
        if due.0 <= now {
            return Ok(Outcome::Refused(Refusal::DueDateInPast { echeance: due.0 }));
        }
        Ok(match ctx.store.set_alarm(nom.as_deref(), due.0, now).await? {
            AlarmSet::Set(reveil) => Outcome::Done(Receipt::AlarmSet { reveil }),
            AlarmSet::SameTime(reveil) => Outcome::Refused(Refusal::AlarmSameTime { reveil }),
        })
    }
}

pub struct ListerReveils;

#[async_trait]
impl Tool for ListerReveils {
    const NAME: ToolName = ToolName::ListerReveils;
    const PAGE: Page = Page::Minuteurs;
    type Args = ();

    fn description(&self) -> &'static str {
        "Liste les réveils réglés (et celui qui sonne)."
    }
    async fn run(&self, ctx: &ToolContext, (): Self::Args) -> Result<Outcome, StoreError> {
        Ok(Outcome::Done(Receipt::Alarms { reveils: ctx.store.active_alarms().await?, now: ctx.now() }))
    }
}

pub struct AnnulerReveil;

#[async_trait]
impl Tool for AnnulerReveil {
    const NAME: ToolName = ToolName::AnnulerReveil;
    const PAGE: Page = Page::Minuteurs;
    type Args = AnnulerReveilArgs;

    fn description(&self) -> &'static str {
        "Annule un réveil (par son numéro, ou le seul réglé), ou tous avec tous=true."
    }
    async fn run(&self, ctx: &ToolContext, AnnulerReveilArgs { id, tous }: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.cancel_alarms(id, tous, ctx.now()).await? {
            AlarmCancel::Cancelled(reveils) => Outcome::Done(Receipt::AlarmsCancelled { reveils }),
            AlarmCancel::NoAlarm { id } => Outcome::Refused(Refusal::NoAlarm { id }),
            AlarmCancel::Ambiguous(reveils) => Outcome::Refused(Refusal::AlarmsAmbiguous { reveils }),
        })
    }
}

pub struct ListerSouvenirs;

#[async_trait]
impl Tool for ListerSouvenirs {
    const NAME: ToolName = ToolName::ListerSouvenirs;
    const PAGE: Page = Page::Souvenirs;
    type Args = LectureArgs;

    fn description(&self) -> &'static str {
        "Lit les souvenirs : tous, un par son numéro (id), ceux qui contiennent des mots, ou les derniers."
    }
    async fn run(
        &self,
        ctx: &ToolContext,
        LectureArgs { id, contient, derniers }: Self::Args,
    ) -> Result<Outcome, StoreError> {
        let all = ctx.store.list_souvenirs().await?;
        let (portee, souvenirs) = limit(all, id, contient, derniers, |s| s.id, |s| s.texte.as_str());
        if let (Some(id), true) = (id, souvenirs.is_empty()) {
            return Ok(Outcome::Refused(Refusal::SouvenirUnknown { id }));
        }
        Ok(Outcome::Done(Receipt::Souvenirs { portee, souvenirs }))
    }
}
