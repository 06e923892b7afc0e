//! What the user reads in place of internal names: a tool is an action said in French, an
//! argument is what it holds, a router fallback is its reason. The internal names stay in
//! logs, the trace and `--json`.

/// The action a tool call stands for, as « je n'ai pas pu … » completes it.
pub fn action(tool: &str) -> &'static str {
    match tool {
        "creer_note" => "créer la note",
        "lister_notes" => "lire tes notes",
        "creer_rappel" => "créer le rappel",
        "lister_rappels" => "lire tes rappels",
        "marquer_rappel_fait" => "marquer le rappel comme fait",
        "lire_briefing_hebdo" => "lire le briefing",
        "lire_temps_travail" => "lire ton temps de travail",
        "memoriser_preference" => "retenir la préférence",
        "lister_preferences" => "lire tes préférences",
        "desactiver_preference" => "désactiver la préférence",
        "chercher_dans_memoire" => "chercher dans ta mémoire",
        "demarrer_session" => "démarrer la session de travail",
        "suspendre_session" => "mettre la session en pause",
        "reprendre_session" => "reprendre la session",
        "arreter_session" => "arrêter la session",
        "lister_projets" => "lire tes projets",
        "lire_projet" => "lire le projet",
        "creer_projet" => "créer le projet",
        "modifier_projet" => "modifier le projet",
        "acter_decision" => "noter la décision",
        "memoriser_souvenir" => "retenir le souvenir",
        "demarrer_minuteur" => "lancer le minuteur",
        "lister_minuteurs" => "lire tes minuteurs",
        "modifier_minuteur" => "modifier le minuteur",
        "annuler_minuteur" => "arrêter le minuteur",
        "ajouter_a_liste" => "ajouter à la liste",
        "retirer_de_liste" => "retirer de la liste",
        "lire_liste" => "lire la liste",
        "vider_liste" => "vider la liste",
        "supprimer_rappel" => "supprimer le rappel",
        "supprimer_note" => "supprimer la note",
        "creer_rappel_recurrent" => "créer le rappel répété",
        "deplacer_rappel" => "déplacer le rappel",
        "arreter_rappel_recurrent" => "arrêter le rappel répété",
        "creer_reveil" => "régler le réveil",
        "lister_reveils" => "lire tes réveils",
        "annuler_reveil" => "annuler le réveil",
        "lister_souvenirs" => "lire tes souvenirs",
        _ => "faire cette action",
    }
}

/// What an argument holds, with its article: « le texte », « l'échéance ».
pub fn field(name: &str) -> &'static str {
    match name {
        "texte" => "le texte",
        "echeance" => "l'échéance",
        "id" => "le numéro",
        "projet" => "le projet",
        "nom" => "le nom",
        "description" => "la description",
        "phase" => "la phase",
        "statut" => "le statut",
        "debut" => "la date de début",
        "fin" => "la date de fin",
        "requete" => "ce qu'il faut chercher",
        "periode" => "la période",
        "inclure_faits" => "le choix d'inclure les rappels faits",
        "contient" => "les mots cherchés",
        "duree_secondes" => "la durée",
        "duree_initiale_secondes" => "la durée du minuteur visé",
        "ajout_secondes" => "le temps à ajouter",
        "delta_secondes" => "le temps à ajouter ou à retirer",
        "action" => "le changement demandé",
        "liste" => "la liste",
        "tous" => "le choix de tous les arrêter",
        "element" => "l'élément",
        "frequence" => "la fréquence",
        "intervalle" => "l'intervalle",
        "heure" => "l'heure du réveil",
        "derniers" => "le nombre des derniers",
        _ => "une donnée de la demande",
    }
}

/// A router fallback's reason, for the journal.
pub fn fallback(reason: &str) -> &'static str {
    match reason {
        "model_unavailable" => "aucun modèle ne répond",
        "not_json" => "réponse du routeur illisible",
        "bad_agent" => "agent inconnu dans la réponse du routeur",
        "bad_domain" => "domaine inconnu dans la réponse du routeur",
        "confirmation" => "réponse à une question",
        "bare_command" => "commande brève, demandée d'abord",
        "local" => "compris sans modèle",
        _ => "autre",
    }
}

/// A tool outcome's kind, for the journal.
pub fn outcome(kind: &str) -> &'static str {
    match kind {
        "done" => "fait",
        "refused" => "refusé",
        "failed" => "panne",
        "briefing" => "briefing",
        _ => "inconnu",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_and_argument_has_a_french_label() {
        let tools = crate::tools::ToolBox::new();
        let mut seen = 0;
        for tool in tools.all() {
            let d = tool.definition();
            seen += 1;
            assert_ne!(action(d.name), "faire cette action", "{}", d.name);
            for arg in d.parameters["properties"].as_object().into_iter().flat_map(|p| p.keys()) {
                assert_ne!(field(arg), "une donnée de la demande", "{}.{arg}", d.name);
            }
        }
        assert_eq!(seen, 38);
    }
}
