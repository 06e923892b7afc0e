//! The everyday basics as tools, typed like the others: kitchen timers, named lists, and
//! deleting a note or a reminder. Every receipt is read back from the store; every refusal
//! is a bounded variant that says nothing was written.

use super::args::{arg_kind, enum_schema, tool_args, typed_schema, Flag, Name, OptInt, OptName, Text};
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

/// A timer by its name, else by the duration it was set for, else the only one.
fn target(nom: Option<String>, set_for: Option<i64>) -> TimerTarget {
    match (nom, set_for) {
        (Some(n), _) => TimerTarget::Named(n),
        (None, Some(secs)) => TimerTarget::SetFor(secs),
        (None, None) => TimerTarget::Only,
    }
}

arg_kind! {
    /// A list item: a text of at most [`MAX_ITEM_CHARS`].
    Item: String, required = true, schema |d| Text::schema(d), read |a, f, tz| {
        let raw = Text::read(a, f, tz)?;
        if raw.chars().count() > MAX_ITEM_CHARS {
            return Err(ArgError::new(f, ArgProblem::TooLong { max: MAX_ITEM_CHARS }));
        }
        Ok(raw)
    };
    /// A timer's duration: 1 s to [`MAX_TIMER_SECS`].
    TimerSecs: i64, required = true, schema |d| typed_schema("integer", d),
        read |a, f, _| a.int_in(f, 1..=MAX_TIMER_SECS);
    /// What to do with a timer instead of changing its time: `pause` or `reprendre` (the
    /// synonyms a model sends are checked with the delta, in [`ModifierMinuteurArgs::edit`]).
    TimerAction: Option<String>, required = false, schema |_d| enum_schema(&["pause", "reprendre"]),
        read |a, f, _| a.opt_name(f);
}

tool_args! {
    pub struct DemarrerMinuteurArgs { duree_secondes: TimerSecs, nom: OptName }
    /// A timer by its name, or by the duration it was set for, or the only one running.
    pub struct ByNom { nom: OptName, duree_initiale_secondes: OptInt = "minuteur lancé pour cette durée" }
    pub struct ModifierMinuteurArgs {
        nom: OptName,
        duree_initiale_secondes: OptInt = "minuteur lancé pour cette durée",
        delta_secondes: OptInt = "négatif pour retirer",
        action: TimerAction,
    }
    pub struct AnnulerMinuteurArgs { nom: OptName, duree_initiale_secondes: OptInt = "minuteur lancé pour cette durée", tous: Flag }
    pub struct ListeElement { liste: Name, element: Item }
    pub struct ByListe { liste: Name }
}

impl ModifierMinuteurArgs {
    /// One change: a non-zero delta within a week, or an action, not both.
    fn edit(&self) -> Result<TimerEdit, ArgError> {
        Ok(match (self.delta_secondes, self.action.as_deref()) {
            (Some(0), _) => return Err(ArgError::new("delta_secondes", ArgProblem::NotAllowed)),
            (Some(d), None) if d.abs() <= MAX_TIMER_SECS => TimerEdit::Add(d),
            (Some(_), None) => return Err(ArgError::new("delta_secondes", ArgProblem::NotAllowed)),
            (None, Some("pause")) => TimerEdit::Pause,
            (None, Some("reprendre" | "reprise" | "relancer")) => TimerEdit::Resume,
            (None, Some(_)) | (Some(_), Some(_)) => return Err(ArgError::new("action", ArgProblem::NotAllowed)),
            (None, None) => return Err(ArgError::new("delta_secondes", ArgProblem::Missing)),
        })
    }
}

pub struct DemarrerMinuteur;

#[async_trait]
impl Tool for DemarrerMinuteur {
    const NAME: ToolName = ToolName::DemarrerMinuteur;
    const PAGE: Page = Page::Minuteurs;
    type Args = DemarrerMinuteurArgs;

    fn description(&self) -> &'static str {
        "Lance un minuteur de cuisine (plusieurs à la fois, nommés ou non)."
    }
    async fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<Outcome, StoreError> {
        let DemarrerMinuteurArgs { duree_secondes: secs, nom } = args;
        Ok(match ctx.store.start_timer(nom.as_deref(), secs, ctx.now()).await? {
            TimerStart::Started(minuteur) => Outcome::Done(Receipt::TimerStarted { minuteur }),
            TimerStart::NameTaken(minuteur) => Outcome::Refused(Refusal::TimerNameTaken { minuteur }),
        })
    }
}

pub struct ListerMinuteurs;

#[async_trait]
impl Tool for ListerMinuteurs {
    const NAME: ToolName = ToolName::ListerMinuteurs;
    const PAGE: Page = Page::Minuteurs;
    type Args = ByNom;

    fn description(&self) -> &'static str {
        "Dit le temps qui reste sur les minuteurs (ou sur celui qui est nommé)."
    }
    async fn run(
        &self,
        ctx: &ToolContext,
        ByNom { nom, duree_initiale_secondes }: Self::Args,
    ) -> Result<Outcome, StoreError> {
        let active = ctx.store.active_timers().await?;
        let minuteurs = match (&nom, duree_initiale_secondes) {
            (None, None) => active,
            // Those set for that long; none, all of them (a reading never refuses).
            (None, Some(secs)) => {
                let set_for: Vec<_> = active.iter().filter(|m| m.duree_secondes == secs).cloned().collect();
                if set_for.is_empty() {
                    active
                } else {
                    set_for
                }
            }
            (Some(n), _) => match crate::memory::basics::rules::pick(&active, &TimerTarget::Named(n.clone())) {
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
    const NAME: ToolName = ToolName::ModifierMinuteur;
    const PAGE: Page = Page::Minuteurs;
    type Args = ModifierMinuteurArgs;

    fn description(&self) -> &'static str {
        "Ajoute ou retire du temps à un minuteur (delta_secondes, négatif pour retirer), ou le met en pause / le relance (action)."
    }
    async fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<Outcome, StoreError> {
        let edit = match args.edit() {
            Ok(edit) => edit,
            Err(e) => return Ok(Outcome::Refused(Refusal::InvalidArguments(e))),
        };
        let (nom, set_for) = (args.nom, args.duree_initiale_secondes);
        let now = ctx.now();
        Ok(match ctx.store.change_timer(&target(nom, set_for), edit, now).await? {
            TimerChange::Applied { before, after } => Outcome::Done(Receipt::TimerChanged { before, after, now }),
            refused => Outcome::Refused(timer_refusal(refused)),
        })
    }
}

pub struct AnnulerMinuteur;

#[async_trait]
impl Tool for AnnulerMinuteur {
    const NAME: ToolName = ToolName::AnnulerMinuteur;
    const PAGE: Page = Page::Minuteurs;
    type Args = AnnulerMinuteurArgs;

    fn description(&self) -> &'static str {
        "Annule un minuteur (nommé, ou le seul en cours), ou tous avec tous=true."
    }
    async fn run(
        &self,
        ctx: &ToolContext,
        AnnulerMinuteurArgs { nom, duree_initiale_secondes, tous }: Self::Args,
    ) -> Result<Outcome, StoreError> {
        let t = target(nom, duree_initiale_secondes);
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
    const NAME: ToolName = ToolName::AjouterAListe;
    const PAGE: Page = Page::Listes;
    type Args = ListeElement;

    fn description(&self) -> &'static str {
        "Ajoute un élément à une liste nommée (courses, tâches, ou une nouvelle). Les listes ne sont pas des notes."
    }
    async fn run(&self, ctx: &ToolContext, ListeElement { liste, element }: Self::Args) -> Result<Outcome, StoreError> {
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
    const NAME: ToolName = ToolName::RetirerDeListe;
    const PAGE: Page = Page::Listes;
    type Args = ListeElement;

    fn description(&self) -> &'static str {
        "Retire un élément d'une liste nommée."
    }
    async fn run(&self, ctx: &ToolContext, ListeElement { liste, element }: Self::Args) -> Result<Outcome, StoreError> {
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
    const NAME: ToolName = ToolName::LireListe;
    const PAGE: Page = Page::Listes;
    type Args = ByListe;

    fn description(&self) -> &'static str {
        "Lit une liste nommée."
    }
    async fn run(&self, ctx: &ToolContext, ByListe { liste: nom }: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.list(&nom).await? {
            Some(liste) => Outcome::Done(Receipt::List { liste }),
            // The usual lists exist before anything was added: empty, not unknown.
            None if crate::memory::BUILTIN_LISTS
                .iter()
                .any(|b| crate::memory::basics::name_key(b) == crate::memory::basics::name_key(&nom)) =>
            {
                let canonical = crate::memory::BUILTIN_LISTS
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
    const NAME: ToolName = ToolName::ViderListe;
    const PAGE: Page = Page::Listes;
    type Args = ByListe;

    fn description(&self) -> &'static str {
        "Vide une liste nommée (à confirmer avec la personne avant)."
    }
    async fn run(&self, ctx: &ToolContext, ByListe { liste: nom }: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.clear_list(&nom).await? {
            ListClear::Cleared { liste } => Outcome::Done(Receipt::ListCleared { liste }),
            ListClear::NoList { nom } => Outcome::Refused(Refusal::ListUnknown { nom }),
        })
    }
}

pub struct SupprimerRappel;

#[async_trait]
impl Tool for SupprimerRappel {
    const NAME: ToolName = ToolName::SupprimerRappel;
    const PAGE: Page = Page::Rappels;
    type Args = ById;

    fn description(&self) -> &'static str {
        "Supprime un rappel par son numéro (pour un rappel enregistré par erreur)."
    }
    async fn run(&self, ctx: &ToolContext, ById { id }: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.delete_rappel(id).await? {
            Some(rappel) => Outcome::Done(Receipt::ReminderDeleted { rappel }),
            None => Outcome::Refused(Refusal::ReminderUnknown { id }),
        })
    }
}

pub struct SupprimerNote;

#[async_trait]
impl Tool for SupprimerNote {
    const NAME: ToolName = ToolName::SupprimerNote;
    const PAGE: Page = Page::Notes;
    type Args = ById;

    fn description(&self) -> &'static str {
        "Supprime une note par son numéro."
    }
    async fn run(&self, ctx: &ToolContext, ById { id }: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.delete_note(id).await? {
            Some(note) => Outcome::Done(Receipt::NoteDeleted { note }),
            None => Outcome::Refused(Refusal::NoteUnknown { id }),
        })
    }
}
