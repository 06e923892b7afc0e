//! The one table of the tools: each tool's wire name, the agents that get it, whether it
//! writes, and the French sentences said about it. Every list, label and write set derives
//! from here, and every match is exhaustive, so a new tool is a compile error everywhere it
//! must be known (see ARCHITECTURE.md, « Adding a tool »).

use super::AgentKind;

/// Declares the enum and [`ToolName::ALL`] from one list, so that `ALL` cannot miss one.
macro_rules! tool_names {
    ($($variant:ident),+ $(,)?) => {
        /// A tool of the registry, by name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ToolName {
            $($variant),+
        }

        impl ToolName {
            /// Every tool, in the order the models are offered them (the Intendant's own,
            /// the Mentor's own, then the shared ones).
            pub const ALL: &'static [ToolName] = &[$(ToolName::$variant),+];
        }
    };
}

tool_names! {
    // The Intendant's own.
    ListerRappels,
    MarquerRappelFait,
    LireBriefingHebdo,
    SupprimerRappel,
    DemarrerMinuteur,
    ListerMinuteurs,
    ModifierMinuteur,
    AnnulerMinuteur,
    AjouterAListe,
    RetirerDeListe,
    LireListe,
    ViderListe,
    CreerRappelRecurrent,
    DeplacerRappel,
    ArreterRappelRecurrent,
    CreerReveil,
    ListerReveils,
    AnnulerReveil,
    // The Mentor's own.
    ListerProjets,
    LireProjet,
    CreerProjet,
    ModifierProjet,
    ActerDecision,
    MemoriserSouvenir,
    // Shared.
    CreerNote,
    ListerNotes,
    SupprimerNote,
    CreerRappel,
    LireTempsTravail,
    MemoriserPreference,
    ListerPreferences,
    DesactiverPreference,
    ChercherDansMemoire,
    ListerSouvenirs,
    DemarrerSession,
    SuspendreSession,
    ReprendreSession,
    ArreterSession,
}

/// Which agents are given a tool: routing is stochastic, so a tool both need is shared
/// rather than fought over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agents {
    Intendant,
    Mentor,
    Both,
}

/// What is said when a write the user asked for was not done (« … : aucune note n'a été
/// créée »).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotDone {
    /// One sentence.
    Said(&'static str),
    /// `before` n°id `after` when the call names a number, else `without`.
    Numbered { before: &'static str, after: &'static str, without: &'static str },
}

/// The generic sentence, for the tools that have no sentence of their own.
const NOTHING: NotDone = NotDone::Said("rien n'a été fait");

/// Everything the rest of the crate knows about one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// The name on the wire (docs/interface.md §4): never renamed.
    pub wire: &'static str,
    pub agents: Agents,
    /// It changes the store: a failure leaves the effect unknown, and the grammar corpora
    /// count a wrong one as the worst error.
    pub writes: bool,
    /// The action, as « je n'ai pas pu … » completes it.
    pub action: &'static str,
    pub not_done: NotDone,
}

impl ToolName {
    /// The table: one row per tool.
    pub const fn spec(self) -> Spec {
        use Agents::{Both, Intendant, Mentor};
        use NotDone::{Numbered, Said};
        use ToolName as T;
        const fn s(wire: &'static str, agents: Agents, writes: bool, action: &'static str, not_done: NotDone) -> Spec {
            Spec { wire, agents, writes, action, not_done }
        }
        match self {
            T::ListerRappels => s("lister_rappels", Intendant, false, "lire tes rappels", NOTHING),
            T::MarquerRappelFait => s(
                "marquer_rappel_fait",
                Intendant,
                true,
                "marquer le rappel comme fait",
                Numbered {
                    before: "le rappel n°",
                    after: " n'a pas été marqué comme fait",
                    without: "aucun rappel n'a été marqué comme fait",
                },
            ),
            T::LireBriefingHebdo => s("lire_briefing_hebdo", Intendant, false, "lire le briefing", NOTHING),
            T::SupprimerRappel => s("supprimer_rappel", Intendant, true, "supprimer le rappel", NOTHING),
            T::DemarrerMinuteur => s("demarrer_minuteur", Intendant, true, "lancer le minuteur", NOTHING),
            T::ListerMinuteurs => s("lister_minuteurs", Intendant, false, "lire tes minuteurs", NOTHING),
            T::ModifierMinuteur => s("modifier_minuteur", Intendant, true, "modifier le minuteur", NOTHING),
            T::AnnulerMinuteur => s("annuler_minuteur", Intendant, true, "arrêter le minuteur", NOTHING),
            T::AjouterAListe => s("ajouter_a_liste", Intendant, true, "ajouter à la liste", NOTHING),
            T::RetirerDeListe => s("retirer_de_liste", Intendant, true, "retirer de la liste", NOTHING),
            T::LireListe => s("lire_liste", Intendant, false, "lire la liste", NOTHING),
            T::ViderListe => s("vider_liste", Intendant, true, "vider la liste", NOTHING),
            T::CreerRappelRecurrent => s(
                "creer_rappel_recurrent",
                Intendant,
                true,
                "créer le rappel répété",
                Said("aucun rappel répété n'a été créé"),
            ),
            T::DeplacerRappel => s(
                "deplacer_rappel",
                Intendant,
                true,
                "déplacer le rappel",
                Numbered {
                    before: "le rappel n°",
                    after: " n'a pas été déplacé",
                    without: "aucun rappel n'a été déplacé",
                },
            ),
            T::ArreterRappelRecurrent => s(
                "arreter_rappel_recurrent",
                Intendant,
                true,
                "arrêter le rappel répété",
                Numbered {
                    before: "le rappel répété n°",
                    after: " n'a pas été arrêté",
                    without: "aucun rappel répété n'a été arrêté",
                },
            ),
            T::CreerReveil => {
                s("creer_reveil", Intendant, true, "régler le réveil", Said("aucun réveil n'a été réglé"))
            }
            T::ListerReveils => s("lister_reveils", Intendant, false, "lire tes réveils", NOTHING),
            T::AnnulerReveil => {
                s("annuler_reveil", Intendant, true, "annuler le réveil", Said("aucun réveil n'a été annulé"))
            }
            T::ListerProjets => s("lister_projets", Mentor, false, "lire tes projets", NOTHING),
            T::LireProjet => s("lire_projet", Mentor, false, "lire le projet", NOTHING),
            T::CreerProjet => s("creer_projet", Mentor, true, "créer le projet", Said("aucun projet n'a été créé")),
            T::ModifierProjet => {
                s("modifier_projet", Mentor, true, "modifier le projet", Said("le projet n'a pas été modifié"))
            }
            T::ActerDecision => {
                s("acter_decision", Mentor, true, "noter la décision", Said("aucune décision n'a été actée"))
            }
            T::MemoriserSouvenir => {
                s("memoriser_souvenir", Mentor, true, "retenir le souvenir", Said("aucun souvenir n'a été mémorisé"))
            }
            T::CreerNote => s("creer_note", Both, true, "créer la note", Said("aucune note n'a été créée")),
            T::ListerNotes => s("lister_notes", Both, false, "lire tes notes", NOTHING),
            T::SupprimerNote => s("supprimer_note", Both, true, "supprimer la note", NOTHING),
            T::CreerRappel => s("creer_rappel", Both, true, "créer le rappel", Said("aucun rappel n'a été créé")),
            T::LireTempsTravail => s("lire_temps_travail", Both, false, "lire ton temps de travail", NOTHING),
            T::MemoriserPreference => s(
                "memoriser_preference",
                Both,
                true,
                "retenir la préférence",
                Said("aucune préférence n'a été enregistrée"),
            ),
            T::ListerPreferences => s("lister_preferences", Both, false, "lire tes préférences", NOTHING),
            T::DesactiverPreference => s(
                "desactiver_preference",
                Both,
                true,
                "désactiver la préférence",
                Numbered {
                    before: "la préférence n°",
                    after: " n'a pas été désactivée",
                    without: "aucune préférence n'a été désactivée",
                },
            ),
            T::ChercherDansMemoire => s("chercher_dans_memoire", Both, false, "chercher dans ta mémoire", NOTHING),
            T::ListerSouvenirs => s("lister_souvenirs", Both, false, "lire tes souvenirs", NOTHING),
            T::DemarrerSession => s(
                "demarrer_session",
                Both,
                true,
                "démarrer la session de travail",
                Said("aucune session n'a été démarrée"),
            ),
            T::SuspendreSession => s(
                "suspendre_session",
                Both,
                true,
                "mettre la session en pause",
                Said("la session n'a pas été mise en pause"),
            ),
            T::ReprendreSession => {
                s("reprendre_session", Both, true, "reprendre la session", Said("la session n'a pas été reprise"))
            }
            T::ArreterSession => {
                s("arreter_session", Both, true, "arrêter la session", Said("la session n'a pas été arrêtée"))
            }
        }
    }

    /// The name on the wire.
    pub const fn wire(self) -> &'static str {
        self.spec().wire
    }

    /// The tool a wire name stands for; `None` for a name no tool has (a model's invention,
    /// an old trace).
    pub fn from_wire(name: &str) -> Option<ToolName> {
        Self::ALL.iter().copied().find(|t| t.wire() == name)
    }

    pub const fn writes(self) -> bool {
        self.spec().writes
    }

    /// The action, as « je n'ai pas pu … » completes it.
    pub const fn action(self) -> &'static str {
        self.spec().action
    }

    /// `agent` is given this tool.
    pub fn given_to(self, agent: AgentKind) -> bool {
        matches!(
            (self.spec().agents, agent),
            (Agents::Both, _) | (Agents::Intendant, AgentKind::Intendant) | (Agents::Mentor, AgentKind::Mentor)
        )
    }

    /// What was not done, for a write the user asked for, with the number the call names.
    pub fn not_done(self, id: Option<i64>) -> String {
        match self.spec().not_done {
            NotDone::Said(s) => s.to_string(),
            NotDone::Numbered { before, after, without } => match id {
                Some(id) => format!("{before}{id}{after}"),
                None => without.to_string(),
            },
        }
    }
}

impl std::fmt::Display for ToolName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.wire())
    }
}

/// The wire names of the tools that change the store.
pub fn write_names() -> impl Iterator<Item = &'static str> {
    ToolName::ALL.iter().filter(|t| t.writes()).map(|t| t.wire())
}

/// The wire name `name` is a tool that changes the store.
pub fn writes(name: &str) -> bool {
    ToolName::from_wire(name).is_some_and(ToolName::writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_are_unique_and_round_trip() {
        for t in ToolName::ALL {
            assert_eq!(ToolName::from_wire(t.wire()), Some(*t));
        }
        let mut names: Vec<&str> = ToolName::ALL.iter().map(|t| t.wire()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ToolName::ALL.len());
    }

    #[test]
    fn every_grammar_intent_is_a_tool_or_answered_by_code() {
        // The grammar (templates/fr.toml) names its commands by the tools' wire names; « cherche »
        // is the one command made of two tools (the notes and the memory).
        for intent in arthur_french::Grammar::french().intents() {
            let known = intent.starts_with('@') || intent == "chercher" || ToolName::from_wire(intent).is_some();
            assert!(known, "{intent}");
        }
    }
}
