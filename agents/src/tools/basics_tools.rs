//! The everyday basics as tools, typed like the others: kitchen timers, named lists, and
//! deleting a note or a reminder. Every receipt is read back from the store; every refusal
//! is a bounded variant that says nothing was written.

use serde_json::Value;

use super::*;
use crate::memory::{ListAdd, ListClear, ListRemove, TimerCancel, TimerChange, TimerEdit, TimerStart, TimerTarget};

/// The longest timer: a week (the grammar asks before anything over a day).
pub const MAX_TIMER_SECS: i64 = 7 * 24 * 3600;
/// The longest list item (characters).
pub const MAX_ITEM_CHARS: usize = 200;

pub(super) fn register(tools: &mut Vec<Box<dyn DynTool>>) {
    tools.push(Box::new(DemarrerMinuteur));
    tools.push(Box::new(ListerMinuteurs));
    tools.push(Box::new(ModifierMinuteur));
    tools.push(Box::new(AnnulerMinuteur));
    tools.push(Box::new(AjouterAListe));
    tools.push(Box::new(RetirerDeListe));
    tools.push(Box::new(LireListe));
    tools.push(Box::new(ViderListe));
    tools.push(Box::new(SupprimerRappel));
    tools.push(Box::new(SupprimerNote));
}

fn timer_refusal(change: TimerChange) -> Refusal {
    match change {
        TimerChange::NoTimer { nom } => Refusal::NoTimer { nom },
        TimerChange::Ambiguous(minuteurs) => Refusal::TimersAmbiguous { minuteurs },
        TimerChange::AlreadyPaused(minuteur) => Refusal::TimerAlreadyPaused { minuteur },
        TimerChange::NotPaused(minuteur) => Refusal::TimerNotPaused { minuteur },
        TimerChange::WouldEnd { minuteur, remaining } => Refusal::TimerWouldEnd { minuteur, remaining },
        TimerChange::Ringing(minuteur) => Refusal::TimerRinging { minuteur },
        // Not a refusal: the caller handles it first.
        TimerChange::Applied { after, .. } => Refusal::TimerNotPaused { minuteur: after },
    }
}

fn target(nom: Option<String>) -> TimerTarget {
    nom.map(TimerTarget::Named).unwrap_or(TimerTarget::Only)
}

fn item(a: &Args) -> Result<String, ArgError> {
    let raw = a.text("element")?;
    if raw.chars().count() > MAX_ITEM_CHARS {
        return Err(ArgError::new("element", ArgProblem::TooLong { max: MAX_ITEM_CHARS }));
    }
    Ok(raw)
}

pub struct DemarrerMinuteur;

#[async_trait]
impl Tool for DemarrerMinuteur {
    const NAME: &'static str = "demarrer_minuteur";
    const PAGE: Page = Page::Minuteurs;
    type Args = (i64, Option<String>);

    fn description(&self) -> &'static str {
        "Lance un minuteur de cuisine (plusieurs à la fois, nommés ou non)."
    }
    fn parameters(&self) -> Value {
        object_schema(&[("duree_secondes", integer_prop("")), ("nom", string_prop(""))], &["duree_secondes"])
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        Ok((a.int_in("duree_secondes", 1..=MAX_TIMER_SECS)?, a.opt_name("nom")?))
    }
    async fn run(&self, ctx: &ToolContext, (secs, nom): Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.start_timer(nom.as_deref(), secs, ctx.now()).await? {
            TimerStart::Started(minuteur) => Outcome::Done(Receipt::TimerStarted { minuteur }),
            TimerStart::NameTaken(minuteur) => Outcome::Refused(Refusal::TimerNameTaken { minuteur }),
        })
    }
}

pub struct ListerMinuteurs;

#[async_trait]
impl Tool for ListerMinuteurs {
    const NAME: &'static str = "lister_minuteurs";
    const PAGE: Page = Page::Minuteurs;
    type Args = Option<String>;

    fn description(&self) -> &'static str {
        "Dit le temps qui reste sur les minuteurs (ou sur celui qui est nommé)."
    }
    fn parameters(&self) -> Value {
        object_schema(&[("nom", string_prop(""))], &[])
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        a.opt_name("nom")
    }
    async fn run(&self, ctx: &ToolContext, nom: Self::Args) -> Result<Outcome, StoreError> {
        let active = ctx.store.active_timers().await?;
        let minuteurs = match &nom {
            None => active,
            Some(n) => match crate::memory::basics::rules::pick(&active, &TimerTarget::Named(n.clone())) {
                Ok(m) => vec![m],
                Err(_) => return Ok(Outcome::Refused(Refusal::NoTimer { nom })),
            },
        };
        Ok(Outcome::Done(Receipt::Timers { nom, minuteurs, now: ctx.now() }))
    }
}

pub struct ModifierMinuteur;

#[async_trait]
impl Tool for ModifierMinuteur {
    const NAME: &'static str = "modifier_minuteur";
    const PAGE: Page = Page::Minuteurs;
    type Args = (Option<String>, TimerEdit);

    fn description(&self) -> &'static str {
        "Ajoute ou retire du temps à un minuteur (delta_secondes, négatif pour retirer), ou le met en pause / le relance (action)."
    }
    fn parameters(&self) -> Value {
        object_schema(
            &[
                ("nom", string_prop("")),
                ("delta_secondes", integer_prop("négatif pour retirer")),
                ("action", serde_json::json!({"type": "string", "enum": ["pause", "reprendre"]})),
            ],
            &[],
        )
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        let nom = a.opt_name("nom")?;
        let delta = a.opt_int("delta_secondes")?;
        let action = a.opt_name("action")?;
        let edit = match (delta, action.as_deref()) {
            (Some(0), _) => return Err(ArgError::new("delta_secondes", ArgProblem::NotAllowed)),
            (Some(d), None) if d.abs() <= MAX_TIMER_SECS => TimerEdit::Add(d),
            (Some(_), None) => return Err(ArgError::new("delta_secondes", ArgProblem::NotAllowed)),
            (None, Some("pause")) => TimerEdit::Pause,
            (None, Some("reprendre" | "reprise" | "relancer")) => TimerEdit::Resume,
            (None, Some(_)) | (Some(_), Some(_)) => return Err(ArgError::new("action", ArgProblem::NotAllowed)),
            (None, None) => return Err(ArgError::new("delta_secondes", ArgProblem::Missing)),
        };
        Ok((nom, edit))
    }
    async fn run(&self, ctx: &ToolContext, (nom, edit): Self::Args) -> Result<Outcome, StoreError> {
        let now = ctx.now();
        Ok(match ctx.store.change_timer(&target(nom), edit, now).await? {
            TimerChange::Applied { before, after } => Outcome::Done(Receipt::TimerChanged { before, after, now }),
            refused => Outcome::Refused(timer_refusal(refused)),
        })
    }
}

pub struct AnnulerMinuteur;

#[async_trait]
impl Tool for AnnulerMinuteur {
    const NAME: &'static str = "annuler_minuteur";
    const PAGE: Page = Page::Minuteurs;
    type Args = (Option<String>, bool);

    fn description(&self) -> &'static str {
        "Annule un minuteur (nommé, ou le seul en cours), ou tous avec tous=true."
    }
    fn parameters(&self) -> Value {
        object_schema(&[("nom", string_prop("")), ("tous", serde_json::json!({"type": "boolean"}))], &[])
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        Ok((a.opt_name("nom")?, a.opt_bool("tous")?.unwrap_or(false)))
    }
    async fn run(&self, ctx: &ToolContext, (nom, tous): Self::Args) -> Result<Outcome, StoreError> {
        let t = target(nom);
        let which = if tous { None } else { Some(&t) };
        Ok(match ctx.store.cancel_timers(which, ctx.now()).await? {
            TimerCancel::Cancelled(minuteurs) => Outcome::Done(Receipt::TimersCancelled { minuteurs }),
            TimerCancel::NoTimer { nom } => Outcome::Refused(Refusal::NoTimer { nom }),
            TimerCancel::Ambiguous(minuteurs) => Outcome::Refused(Refusal::TimersAmbiguous { minuteurs }),
        })
    }
}

pub struct AjouterAListe;

#[async_trait]
impl Tool for AjouterAListe {
    const NAME: &'static str = "ajouter_a_liste";
    const PAGE: Page = Page::Listes;
    type Args = (String, String);

    fn description(&self) -> &'static str {
        "Ajoute un élément à une liste nommée (courses, tâches, ou une nouvelle). Les listes ne sont pas des notes."
    }
    fn parameters(&self) -> Value {
        object_schema(&[("liste", string_prop("")), ("element", string_prop(""))], &["liste", "element"])
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        Ok((a.name("liste")?, item(a)?))
    }
    async fn run(&self, ctx: &ToolContext, (liste, element): Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.add_list_item(&liste, &element, ctx.now()).await? {
            ListAdd::Added { liste, element, new_list } => {
                Outcome::Done(Receipt::ListItemAdded { liste, element, new_list })
            }
            ListAdd::AlreadyThere { liste, element } => {
                Outcome::Refused(Refusal::ListItemAlreadyThere { liste: liste.nom, element: element.texte })
            }
        })
    }
}

pub struct RetirerDeListe;

#[async_trait]
impl Tool for RetirerDeListe {
    const NAME: &'static str = "retirer_de_liste";
    const PAGE: Page = Page::Listes;
    type Args = (String, String);

    fn description(&self) -> &'static str {
        "Retire un élément d'une liste nommée."
    }
    fn parameters(&self) -> Value {
        object_schema(&[("liste", string_prop("")), ("element", string_prop(""))], &["liste", "element"])
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        Ok((a.name("liste")?, item(a)?))
    }
    async fn run(&self, ctx: &ToolContext, (liste, element): Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.remove_list_item(&liste, &element).await? {
            ListRemove::Removed { liste, element } => Outcome::Done(Receipt::ListItemRemoved { liste, element }),
            ListRemove::NoList { nom } => Outcome::Refused(Refusal::ListUnknown { nom }),
            ListRemove::NotThere { liste } => Outcome::Refused(Refusal::ListItemNotThere { liste: liste.nom, element }),
            ListRemove::Ambiguous { liste, elements } => Outcome::Refused(Refusal::ListItemsAmbiguous {
                liste: liste.nom,
                elements: elements.into_iter().map(|e| e.texte).collect(),
            }),
        })
    }
}

pub struct LireListe;

#[async_trait]
impl Tool for LireListe {
    const NAME: &'static str = "lire_liste";
    const PAGE: Page = Page::Listes;
    type Args = String;

    fn description(&self) -> &'static str {
        "Lit une liste nommée."
    }
    fn parameters(&self) -> Value {
        object_schema(&[("liste", string_prop(""))], &["liste"])
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        a.name("liste")
    }
    async fn run(&self, ctx: &ToolContext, nom: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.list(&nom).await? {
            Some(liste) => Outcome::Done(Receipt::List { liste }),
            // The usual lists exist before anything was added: empty, not unknown.
            None if crate::understand::BUILTIN_LISTS
                .iter()
                .any(|b| crate::memory::basics::name_key(b) == crate::memory::basics::name_key(&nom)) =>
            {
                let canonical = crate::understand::BUILTIN_LISTS
                    .iter()
                    .find(|b| crate::memory::basics::name_key(b) == crate::memory::basics::name_key(&nom))
                    .map(|b| b.to_string())
                    .unwrap_or(nom);
                Outcome::Done(Receipt::List {
                    liste: crate::memory::Liste { id: 0, nom: canonical, created_at: ctx.now(), elements: Vec::new() },
                })
            }
            None => Outcome::Refused(Refusal::ListUnknown { nom }),
        })
    }
}

pub struct ViderListe;

#[async_trait]
impl Tool for ViderListe {
    const NAME: &'static str = "vider_liste";
    const PAGE: Page = Page::Listes;
    type Args = String;

    fn description(&self) -> &'static str {
        "Vide une liste nommée (à confirmer avec la personne avant)."
    }
    fn parameters(&self) -> Value {
        object_schema(&[("liste", string_prop(""))], &["liste"])
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        a.name("liste")
    }
    async fn run(&self, ctx: &ToolContext, nom: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.clear_list(&nom).await? {
            ListClear::Cleared { liste } => Outcome::Done(Receipt::ListCleared { liste }),
            ListClear::NoList { nom } => Outcome::Refused(Refusal::ListUnknown { nom }),
        })
    }
}

pub struct SupprimerRappel;

#[async_trait]
impl Tool for SupprimerRappel {
    const NAME: &'static str = "supprimer_rappel";
    const PAGE: Page = Page::Rappels;
    type Args = i64;

    fn description(&self) -> &'static str {
        "Supprime un rappel par son numéro (pour un rappel enregistré par erreur)."
    }
    fn parameters(&self) -> Value {
        object_schema(&[("id", integer_prop(""))], &["id"])
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        a.id("id")
    }
    async fn run(&self, ctx: &ToolContext, id: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.delete_rappel(id).await? {
            Some(rappel) => Outcome::Done(Receipt::ReminderDeleted { rappel }),
            None => Outcome::Refused(Refusal::ReminderUnknown { id }),
        })
    }
}

pub struct SupprimerNote;

#[async_trait]
impl Tool for SupprimerNote {
    const NAME: &'static str = "supprimer_note";
    const PAGE: Page = Page::Notes;
    type Args = i64;

    fn description(&self) -> &'static str {
        "Supprime une note par son numéro."
    }
    fn parameters(&self) -> Value {
        object_schema(&[("id", integer_prop(""))], &["id"])
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        a.id("id")
    }
    async fn run(&self, ctx: &ToolContext, id: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.delete_note(id).await? {
            Some(note) => Outcome::Done(Receipt::NoteDeleted { note }),
            None => Outcome::Refused(Refusal::NoteUnknown { id }),
        })
    }
}
