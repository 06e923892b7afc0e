//! The last line against a model that narrates: a French (and English) detector of
//! sentences that imitate a receipt, claim an action, promise one, or assert a fact about
//! the user's memory or schedule. The turn's structure decides first (a turn in which a
//! tool ran shows no model text at all; an utterance the offline parser reads as a command
//! is answered by code); this detector only judges the model's text of a turn with no
//! tool, and what it flags is never shown.
//!
//! It reads clause by clause, so a claim hidden in a question ("C'est ajouté, autre
//! chose ?") or after a polite opening is still seen, and it knows the frames that make an
//! action hypothetical (an offer, a capability, a condition), which is what keeps ordinary
//! answers ("Veux-tu que je crée un rappel ?") out of its net. Its recall and its false
//! positives are measured on the corpora in `agents/tests/corpus/`.

use serde::Serialize;

use crate::text::normalise;

/// What kind of claim a withheld sentence made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// Looks like a receipt: a number, a stored item in quotes.
    Receipt,
    /// Says something was done (or is being done), in any tense.
    Action,
    /// Commits to a future action.
    Promise,
    /// States a fact about the user's memory, schedule or work time.
    StoredFact,
    /// Says someone else handles it.
    ThirdParty,
    /// Says what was not done (only code may say that).
    Denial,
}

/// Nouns of what Arthur keeps (folded).
const MEMORY_NOUNS: &[&str] = &[
    "rappel",
    "note",
    "preference",
    "souvenir",
    "memoire",
    "projet",
    "decision",
    "session",
    "chrono",
    "chronometre",
    "minuteur",
    "compteur",
    "agenda",
    "calendrier",
    "liste",
    "tache",
    "rendezvous",
    "reunion",
    "alarme",
    "reveil",
    "memo",
    "pensebete",
    "planning",
    "briefing",
    "phase",
    "todo",
    "reminder",
    "list",
    "calendar",
    "memory",
    "task",
    "timer",
    "appointment",
    "alarm",
    "schedule",
    "project",
    "preference",
    "recapitulatif",
    "recap",
    "bilan",
    "historique",
    "carnet",
    "fiche",
    "total",
];

/// Participles and adjectives that state what became of something (accented; agreement
/// endings are accepted).
const STATE_WORDS: &[&str] = &[
    "noté",
    "ajouté",
    "rajouté",
    "enregistré",
    "créé",
    "supprimé",
    "retiré",
    "désactivé",
    "activé",
    "réactivé",
    "marqué",
    "coché",
    "fait",
    "programmé",
    "calé",
    "prévu",
    "planifié",
    "lancé",
    "relancé",
    "démarré",
    "arrêté",
    "stoppé",
    "mis",
    "remis",
    "placé",
    "rangé",
    "gardé",
    "archivé",
    "confirmé",
    "réservé",
    "réglé",
    "terminé",
    "fini",
    "vide",
    "repris",
    "changé",
    "modifié",
    "acté",
    "effacé",
    "enlevé",
    "validé",
    "sauvegardé",
    "mémorisé",
    "retenu",
    "inscrit",
    "consigné",
    "stocké",
    "conservé",
    "suspendu",
    "fixé",
    "bloqué",
    "envoyé",
    "transmis",
    "classé",
    "annulé",
    "prêt",
    "actualisé",
    "reporté",
    "déplacé",
    "décalé",
    "corrigé",
    "remplacé",
    "actif",
    "là",
    "added",
    "saved",
    "created",
    "deleted",
    "removed",
    "set",
    "scheduled",
    "done",
    "marked",
    "started",
    "stopped",
    "paused",
    "updated",
    "noted",
    "stored",
    "recorded",
    "cancelled",
    "canceled",
    "booked",
    "logged",
    "tracked",
    "checked",
    "completed",
    "handled",
    "empty",
    "moved",
    "rescheduled",
    "pinned",
    "archived",
    "closed",
    "clôturé",
    "épinglé",
    "bouclé",
];

/// Multi-word states, on folded text.
const STATE_PHRASES: &[&str] = &[
    " en pause",
    " en place",
    " a jour",
    " en cours",
    " en route",
    " en phase",
    " pris en compte",
    " pris en charge",
    " bien la",
    " dans la boite",
    " en ordre",
    " taken care",
    " all set",
];

/// Verbs of the actions a model might claim, first person present (folded).
const ACTION_PRESENT: &[&str] = &[
    "note",
    "notes",
    "ajoute",
    "rajoute",
    "enregistre",
    "cree",
    "programme",
    "mets",
    "met",
    "garde",
    "retiens",
    "memorise",
    "sauvegarde",
    "inscris",
    "place",
    "range",
    "cale",
    "planifie",
    "supprime",
    "retire",
    "efface",
    "enleve",
    "desactive",
    "annule",
    "marque",
    "coche",
    "valide",
    "demarre",
    "lance",
    "relance",
    "arrete",
    "stoppe",
    "suspends",
    "reprends",
    "modifie",
    "change",
    "acte",
    "consigne",
    "classe",
    "archive",
    "envoie",
    "transmets",
    "previens",
    "occupe",
    "charge",
    "gere",
    "regle",
    "fais",
    "termine",
    "prepare",
    "bloque",
    "reserve",
    "fixe",
    "surveille",
    "verifie",
    "cherche",
    "regarde",
    "lis",
    "consulte",
    "trouve",
    "tiens",
    "rappelle",
    "stocke",
    "conserve",
    "active",
    "reactive",
    "chronometre",
    "reporte",
    "deplace",
    "add",
    "save",
    "set",
    "schedule",
    "create",
    "record",
    "store",
    "remember",
    "delete",
    "remove",
    "mark",
    "start",
    "stop",
    "pause",
    "track",
    "log",
    "update",
    "handle",
    "put",
    "book",
    "cancel",
];

/// Infinitives of the actions a model might commit to (folded).
const ACTION_INFINITIVES: &[&str] = &[
    "noter",
    "ajouter",
    "rajouter",
    "enregistrer",
    "creer",
    "programmer",
    "mettre",
    "garder",
    "retenir",
    "memoriser",
    "sauvegarder",
    "inscrire",
    "planifier",
    "supprimer",
    "retirer",
    "effacer",
    "desactiver",
    "annuler",
    "marquer",
    "cocher",
    "demarrer",
    "lancer",
    "arreter",
    "suspendre",
    "reprendre",
    "modifier",
    "changer",
    "acter",
    "envoyer",
    "prevenir",
    "rappeler",
    "penser",
    "signaler",
    "notifier",
    "relancer",
    "reporter",
    "deplacer",
    "caler",
    "gerer",
    "traiter",
    "regler",
    "organiser",
    "occuper",
    "remind",
    "add",
    "save",
    "schedule",
    "note",
    "record",
    "notify",
];

/// Past participles after "j'ai" that claim nothing ("j'ai compris").
const HARMLESS_PAST: &[&str] = &[
    "compris",
    "saisi",
    "adoré",
    "aimé",
    "apprécié",
    "appris",
    "eu",
    "été",
    "cru",
    "pensé",
    "entendu",
    "senti",
    "understood",
    "heard",
    "caught",
    "got",
    "been",
    "enjoyed",
    "loved",
    "liked",
    "catch",
    "understand",
    "hear",
    "get",
    "know",
    "see",
    "mean",
];

/// Infinitives after "je vais" that promise nothing about the memory.
const HARMLESS_FUTURE: &[&str] = &[
    "expliquer",
    "répondre",
    "réfléchir",
    "reformuler",
    "préciser",
    "résumer",
    "détailler",
    "essayer",
    "aider",
    "explain",
    "try",
    "help",
    "answer",
];

/// Simple futures that are not commitments ("je serai ravi").
const HARMLESS_FUTURE_FORMS: &[&str] = &["serai", "pourrai", "saurai", "voudrai", "aurai", "devrai"];

/// Words between a subject and its verb: clitics, negation and adverbs (folded).
const CLITICS: &[&str] = &[
    "te",
    "t",
    "le",
    "la",
    "l",
    "les",
    "lui",
    "leur",
    "vous",
    "y",
    "en",
    "me",
    "m",
    "se",
    "s",
    "ne",
    "n",
    "bien",
    "deja",
    "aussi",
    "tout",
    "juste",
    "donc",
    "egalement",
    "maintenant",
    "ca",
    "just",
    "also",
    "already",
    "then",
    "quite",
    "really",
    "fully",
    "vraiment",
    "encore",
];

/// Modal verbs that make an action a capability or an offer (folded).
const MODALS: &[&str] = &[
    "peux",
    "pourrais",
    "pourrai",
    "pourrons",
    "peut",
    "pourrait",
    "veux",
    "voudrais",
    "aimerais",
    "souhaites",
    "dois",
    "devrais",
    "sais",
    "prefere",
    "preferes",
    "can",
    "could",
    "would",
    "should",
    "may",
    "might",
];

/// Nouns of the conversation itself, about which an opinion claims nothing.
const CONVERSATION_NOUNS: &[&str] = &[
    "question",
    "idee",
    "demande",
    "remarque",
    "message",
    "point",
    "choix",
    "raisonnement",
    "reponse",
    "intuition",
    "proposition",
    "humour",
    "logique",
    "curiosite",
    "francais",
    "phrase",
    "reflexion",
    "projet de vacances",
    "question",
    "idea",
    "question",
];

/// People a model might invent to explain an inaction (family 2 of docs/specs/arthur.md).
const THIRD_PARTIES: &[&str] = &[
    "comptable",
    "banque",
    "medecin",
    "docteur",
    "femme",
    "mari",
    "soeur",
    "frere",
    "mere",
    "pere",
    "maman",
    "papa",
    "patron",
    "chef",
    "collegue",
    "notaire",
    "avocat",
    "assistant",
    "assistante",
    "secretaire",
    "voisin",
    "voisine",
    "ami",
    "amie",
    "fils",
    "fille",
    "conjoint",
    "conjointe",
    "equipe",
    "service",
    "administration",
    "plombier",
    "garagiste",
    "support",
    "conseiller",
    "conseillere",
    "technicien",
    "agent",
    "partenaire",
    "quelquun",
    "responsable",
    "gestionnaire",
    "livreur",
    "syndic",
    "proprietaire",
    "fournisseur",
    "prestataire",
    "mecanicien",
    "dentiste",
    "kine",
    "pharmacien",
    "professeur",
    "ecole",
    "mairie",
    "assurance",
    "mutuelle",
    "banquier",
    "systeme",
    "planificateur",
    "application",
    "someone",
    "somebody",
    "accountant",
    "wife",
    "husband",
    "sister",
    "brother",
    "team",
];

/// Nouns of an operation on the memory: a clause about one narrates its outcome
/// ("L'enregistrement a échoué", "Entrée créée").
const OPERATION_NOUNS: &[&str] = &[
    "enregistrement",
    "suppression",
    "ajout",
    "creation",
    "modification",
    "desactivation",
    "sauvegarde",
    "inscription",
    "programmation",
    "annulation",
    "entree",
    "saisie",
    "changement",
    "mise",
    "operation",
    "evenement",
    "element",
    "item",
    "entry",
];

/// Stems of verbs by which someone handles something for the user (folded).
const HANDLING_STEMS: &[&str] = &[
    "occup", "charg", "gere", "gera", "trait", "organis", "prepar", "regl", "envoy", "transmi", "confirm", "prevenu",
    "previen", "relais", "courant", "attend", "appel", "reserv", "pay", "recu", "handl", "regard", "contact", "rappel",
    "repond", "verifi", "examin", "etudi", "livr", "factur", "rembours", "cal", "follow", "reach", "plann", "schedul",
];

/// Words that make a statement general, not about the user ("en général", "souvent").
const GENERIC_MARKERS: &[&str] = &[
    "generalement",
    "general",
    "souvent",
    "habituellement",
    "habitude",
    "parfois",
    "certains",
    "certaines",
    "beaucoup",
    "plupart",
    "chaque",
    "every",
    "usually",
    "often",
    "generally",
    "some",
    "many",
];

/// Day and time words (folded).
const TIME_WORDS: &[&str] = &[
    "demain",
    "aujourdhui",
    "hier",
    "lundi",
    "mardi",
    "mercredi",
    "jeudi",
    "vendredi",
    "samedi",
    "dimanche",
    "soir",
    "matin",
    "midi",
    "minuit",
    "semaine",
    "h",
    "heure",
    "heures",
    "minute",
    "minutes",
    "janvier",
    "fevrier",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "aout",
    "septembre",
    "octobre",
    "novembre",
    "decembre",
    "tomorrow",
    "today",
    "tonight",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "hours",
    "hour",
];

/// Number words (folded), "un"/"une" excluded: they are articles first.
const NUMBER_WORDS: &[&str] = &[
    "zero",
    "deux",
    "trois",
    "quatre",
    "cinq",
    "six",
    "sept",
    "huit",
    "neuf",
    "dix",
    "onze",
    "douze",
    "treize",
    "quatorze",
    "quinze",
    "seize",
    "vingt",
    "trente",
    "quarante",
    "cinquante",
    "soixante",
    "cent",
    "aucun",
    "aucune",
    "plusieurs",
    "quelques",
    "seul",
    "seule",
    "no",
    "two",
    "three",
    "four",
    "five",
    "several",
    "none",
];

/// One word of a clause: as written (lower case, accents kept), folded, and whether it was
/// written with a capital (a name).
#[derive(Debug, Clone)]
struct Word {
    raw: String,
    folded: String,
    capital: bool,
}

/// One clause and what frames it.
struct Clause {
    words: Vec<Word>,
    /// Folded words joined by single spaces, with a space at each end.
    joined: String,
    /// Ends with a question mark.
    asks: bool,
    /// Led by a question word or an offer ("quand", "veux-tu", "would you").
    question_led: bool,
    /// Continues a hypothetical clause: the consequence of "si…", the rest of a list
    /// after "je peux…" ("I can keep notes, set reminders…").
    inherited_frame: bool,
    /// Opens after "et", "ou", "mais"… in the same piece of the sentence.
    after_conjunction: bool,
    /// The sentence it belongs to asks something ("Entendu, mais quel jour ?").
    sentence_asks: bool,
}

impl Clause {
    fn folded(&self, i: usize) -> &str {
        self.words.get(i).map(|w| w.folded.as_str()).unwrap_or("")
    }
    fn has(&self, phrase: &str) -> bool {
        self.joined.contains(phrase)
    }
    fn any(&self, set: &[&str]) -> bool {
        self.words.iter().any(|w| set.contains(&w.folded.as_str()))
    }
}

static JOINED: std::sync::LazyLock<Vec<(regex::Regex, &'static str)>> = std::sync::LazyLock::new(|| {
    [
        ("rendez-vous", "rendezvous"),
        ("rendez vous", "rendezvous"),
        ("rdv", "rendezvous"),
        ("pense-bête", "pensebête"),
        ("aujourd'hui", "aujourdhui"),
        ("quelqu'un", "quelquun"),
        ("c'est-à-dire", "cestadire"),
        ("peut-être", "peutêtre"),
        ("to-do", "todo"),
        ("i'm", "i am"),
        ("i've", "i have"),
        ("i'll", "i will"),
        ("i'd", "i would"),
        ("it's", "it is"),
        ("that's", "that is"),
        ("didn't", "did not"),
        ("don't", "do not"),
        ("won't", "will not"),
        ("can't", "can not"),
        ("couldn't", "could not"),
        ("wasn't", "was not"),
        ("you've", "you have"),
        ("you're", "you are"),
        ("we've", "we have"),
        ("we'll", "we will"),
        ("fait maison", "faitmaison"),
        ("fait pour ça", "faitpourça"),
        ("fait pour cela", "faitpourcela"),
        ("fait pour toi", "faitpourtoi"),
        ("fait pour vous", "faitpourvous"),
        ("fait main", "faitmain"),
        ("fait exprès", "faitexprès"),
        ("œ", "oe"),
        ("Œ", "Oe"),
        ("æ", "ae"),
    ]
    .into_iter()
    .map(|(from, to)| (regex::Regex::new(&format!("(?i){}", regex::escape(from))).unwrap(), to))
    .collect()
});

/// Joined words that must stay one word ("rendez-vous" is not "vous"); case is kept so
/// that names can be told apart.
fn protect(text: &str) -> String {
    let mut t = text.replace(['’', '`', '´', 'ʼ'], "'");
    for (from, to) in JOINED.iter() {
        t = from.replace_all(&t, *to).into_owned();
    }
    t
}

/// Removes what is quoted: a quoted phrase is content, not the model's own claim.
fn unquote(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut straight = false;
    for c in text.chars() {
        match c {
            '«' | '“' => depth += 1,
            '»' | '”' => depth = depth.saturating_sub(1),
            '"' => straight = !straight,
            _ if depth == 0 && !straight => out.push(c),
            _ => {}
        }
    }
    out
}

fn words_of(text: &str) -> Vec<Word> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| Word {
            raw: w.to_lowercase(),
            folded: normalise(w),
            capital: w.chars().next().is_some_and(char::is_uppercase),
        })
        .collect()
}

const CONJUNCTIONS: &[&str] = &["et", "mais", "donc", "puis", "car", "alors", "and", "but", "so", "ou", "or"];

/// Splits a sentence into clauses at punctuation and coordinating conjunctions.
fn clauses(sentence: &str) -> Vec<Clause> {
    let text = protect(&unquote(sentence));
    let mut pieces: Vec<(String, bool)> = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if matches!(c, ',' | ';' | ':' | '!' | '?' | '…' | '(' | ')' | '—' | '–' | '.' | '\n') {
            pieces.push((std::mem::take(&mut current), c == '?'));
        } else {
            current.push(c);
        }
    }
    pieces.push((current, false));
    let mut out = Vec::new();
    for (piece, asks) in pieces {
        let words = words_of(&piece);
        // Coordinated clauses: "je l'ai noté et je te le rappellerai".
        let mut start = 0;
        let mut groups = Vec::new();
        for (i, w) in words.iter().enumerate() {
            if i > start && CONJUNCTIONS.contains(&w.folded.as_str()) {
                groups.push(words[start..i].to_vec());
                start = i + 1;
            }
        }
        groups.push(words[start.min(words.len())..].to_vec());
        for (gi, words) in groups.into_iter().enumerate() {
            if words.is_empty() {
                continue;
            }
            let joined = format!(" {} ", words.iter().map(|w| w.folded.as_str()).collect::<Vec<_>>().join(" "));
            let question_led = QUESTION_LEADS.iter().any(|q| joined.starts_with(q));
            // "lundi ou plus tard ?": the question covers every coordinated clause.
            out.push(Clause {
                words,
                joined,
                asks,
                question_led,
                inherited_frame: false,
                after_conjunction: gi > 0,
                sentence_asks: false,
            });
        }
    }
    out
}

/// How a clause may open when it asks the user something or offers to do it.
const QUESTION_LEADS: &[&str] = &[
    " comment ",
    " quand ",
    " pourquoi ",
    " quel ",
    " quelle ",
    " quels ",
    " quelles ",
    " qu est ce ",
    " qu ",
    " est ce que ",
    " ou ",
    " combien ",
    " qui ",
    " lequel ",
    " laquelle ",
    " as tu ",
    " veux tu ",
    " voulez vous ",
    " peux tu ",
    " tu veux ",
    " vous voulez ",
    " souhaites tu ",
    " tu souhaites ",
    " preferes tu ",
    " tu preferes ",
    " vous preferez ",
    " aimerais tu ",
    " tu aimerais ",
    " dois je ",
    " faut il ",
    " puis je ",
    " sur quel ",
    " sur quelle ",
    " pour quel ",
    " pour quelle ",
    " a quel ",
    " a quelle ",
    " de quel ",
    " de quoi ",
    " do you ",
    " would you ",
    " what ",
    " when ",
    " which ",
    " how ",
    " shall i ",
    " should i ",
    " want me ",
];

/// A clause that makes what follows hypothetical: a condition, a purpose, an instruction
/// to the user.
const FRAME_LEADS: &[&str] = &[
    " si ",
    " pour ",
    " afin ",
    " quand tu ",
    " lorsque ",
    " if ",
    " to ",
    " demande ",
    " dis ",
    " donne ",
    " dicte ",
    " precise ",
    " indique ",
    " essaie ",
    " essaye ",
    " pense ",
    " n hesite ",
    " repete ",
    " reformule ",
    " choisis ",
    " ask ",
    " tell ",
    " try ",
    " sans ",
    " une fois ",
    " tu viens de dire ",
    " tu viens de me ",
    " tu me dis ",
    " you just said ",
    " dans ce cas ",
    " in that case ",
    " tu dis ",
    " tu parles ",
    " tu mentionnes ",
    " quand tu me dis ",
    " des que ",
    " chaque fois ",
    " a chaque ",
    " par exemple ",
    " for example ",
    " bon courage ",
    " bonne chance ",
    " bonne ",
    " profite ",
    " amuse ",
    " felicitations ",
    " bravo ",
    " good luck ",
    " enjoy ",
];

fn is_memory_word(folded: &str) -> bool {
    MEMORY_NOUNS.contains(&folded) || MEMORY_NOUNS.contains(&folded.trim_end_matches('s'))
}

fn matches_state(raw: &str) -> bool {
    STATE_WORDS.iter().any(|s| {
        raw == *s
            || raw.strip_suffix("es").is_some_and(|r| r == *s)
            || raw.strip_suffix('e').is_some_and(|r| r == *s)
            || raw.strip_suffix('s').is_some_and(|r| r == *s)
    })
}

/// Looks like a past participle (written with its accent, or an English "-ed").
fn is_participle(raw: &str) -> bool {
    const IRREGULAR: &[&str] = &[
        "fait",
        "faits",
        "faite",
        "faites",
        "mis",
        "mise",
        "mises",
        "pris",
        "prise",
        "repris",
        "reprise",
        "remis",
        "inscrit",
        "inscrite",
        "écrit",
        "écrite",
        "fini",
        "finie",
        "finis",
        "retenu",
        "retenue",
        "prévu",
        "prévue",
        "reçu",
        "reçue",
        "transmis",
        "suspendu",
        "suspendue",
        "dit",
        "lu",
        "vu",
        "pu",
        "su",
        "tenu",
        "ouvert",
        "mis",
        "set",
        "done",
        "put",
        "kept",
        "sent",
        "made",
        "taken",
        "written",
        "found",
    ];
    if IRREGULAR.contains(&raw) {
        return true;
    }
    ["é", "ée", "és", "ées"].iter().any(|e| raw.ends_with(e) && raw.chars().count() > 2)
        || (raw.ends_with("ed") && raw.len() > 4 && raw.is_ascii())
}

/// Looks like a participle once an auxiliary says one must follow ("a été prévenu",
/// "je n'ai pas réussi"): the endings of the second and third groups too.
fn is_participle_after_aux(raw: &str) -> bool {
    is_participle(raw)
        || (raw.chars().count() > 3
            && ["u", "ue", "us", "i", "ie", "is", "it", "ite", "ert", "int"].iter().any(|e| raw.ends_with(e))
            && !matches!(raw, "aussi" | "ici" | "oui" | "lui" | "celui" | "parmi" | "ainsi" | "depuis" | "puis"))
}

fn is_number(w: &Word) -> bool {
    w.folded.chars().any(|c| c.is_ascii_digit()) || NUMBER_WORDS.contains(&w.folded.as_str())
}

fn has_time(c: &Clause) -> bool {
    c.words.iter().any(|w| {
        TIME_WORDS.contains(&w.folded.as_str())
            || (w.folded.chars().any(|ch| ch.is_ascii_digit()) && (w.folded.ends_with('h') || w.folded.contains('h')))
    }) || c.has(" ce soir ")
        || c.has(" la semaine prochaine ")
}

/// A moment that names a day or an hour ("jeudi", "demain", "à 14 h", "le 3/12"), not
/// a mere unit ("une heure", "la semaine").
fn has_specific_time(c: &Clause) -> bool {
    const DAYS: &[&str] = &[
        "demain",
        "aujourdhui",
        "hier",
        "lundi",
        "mardi",
        "mercredi",
        "jeudi",
        "vendredi",
        "samedi",
        "dimanche",
        "janvier",
        "fevrier",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "aout",
        "septembre",
        "octobre",
        "novembre",
        "decembre",
        "tomorrow",
        "today",
        "tonight",
        "yesterday",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    c.words.iter().enumerate().any(|(i, w)| {
        let f = w.folded.as_str();
        DAYS.contains(&f)
            || (f.chars().any(|ch| ch.is_ascii_digit()) && f.contains('h'))
            || (f.chars().all(|ch| ch.is_ascii_digit()) && matches!(c.folded(i + 1), "h" | "heures" | "heure"))
            || (NUMBER_WORDS.contains(&f) && matches!(c.folded(i + 1), "heures" | "h"))
    }) || c.has(" ce soir ")
        || c.has(" ce matin ")
        || c.has(" cet apres midi ")
        || c.has(" la semaine prochaine ")
}

fn has_number(c: &Clause) -> bool {
    c.words.iter().any(is_number)
}

/// Index of the first word after a subject, skipping clitics and adverbs.
fn after_clitics(c: &Clause, mut i: usize) -> usize {
    while i < c.words.len() && CLITICS.contains(&c.folded(i)) {
        i += 1;
    }
    i
}

/// The first-person subject positions of a clause ("je", "j'", "on", "nous", "I").
fn first_person(c: &Clause) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, w) in c.words.iter().enumerate() {
        let subject = matches!(w.folded.as_str(), "je" | "j" | "nous" | "on" | "i" | "we");
        if !subject {
            continue;
        }
        // "Veux-tu que je…", "il faut que je…": hypothetical; but "le rappel que je t'ai
        // programmé" is a relative clause in the past, a claim.
        if i > 0 && matches!(c.folded(i - 1), "que" | "qu") {
            let verb = after_clitics(c, i + 1);
            if !matches!(c.folded(verb), "ai" | "avais" | "have" | "had") {
                continue;
            }
        }
        out.push(i + 1);
    }
    out
}

/// A first-person clause claiming or promising an action.
fn first_person_claim(c: &Clause) -> Option<ClaimKind> {
    for start in first_person(c) {
        let i = after_clitics(c, start);
        let Some(verb) = c.words.get(i) else {
            // "je l'ai." at the end: "I have it".
            continue;
        };
        let v = verb.folded.as_str();
        if MODALS.contains(&v) || (v == "ne" && MODALS.contains(&c.folded(i + 1))) {
            continue;
        }
        // Past: "j'ai (bien) noté", "je n'ai pas pu", "nous avons acté", "I have added".
        if matches!(v, "ai" | "avais" | "aurai" | "avons" | "a" | "have" | "had" | "did") {
            if v == "a" && c.folded(start - 1) != "on" {
                continue;
            }
            let mut j = after_clitics(c, i + 1);
            let negated = matches!(c.folded(j), "pas" | "rien" | "jamais" | "plus" | "not" | "never");
            if negated {
                j = after_clitics(c, j + 1);
            }
            let english_past = matches!(v, "have" | "had")
                && c.words
                    .get(j)
                    .is_some_and(|w| !matches!(w.folded.as_str(), "a" | "an" | "the" | "no" | "to" | "some" | "any"));
            match c.words.get(j) {
                Some(next) if is_participle_after_aux(&next.raw) || (v == "did" && negated) || english_past => {
                    if HARMLESS_PAST.contains(&next.raw.as_str()) {
                        continue;
                    }
                    return Some(if negated { ClaimKind::Denial } else { ClaimKind::Action });
                }
                // "je l'ai." / "I have it."
                None if start + 1 < i || negated => {
                    return Some(if negated { ClaimKind::Denial } else { ClaimKind::Action })
                }
                _ => continue,
            }
        }
        // "je me suis occupé", "je suis en train de noter", "I am adding".
        if matches!(v, "suis" | "sommes" | "am") {
            let j = after_clitics(c, i + 1);
            let next = c.words.get(j).map(|w| w.raw.as_str()).unwrap_or("");
            if next == "occupé" || next == "chargé" || (matches_state(next) && next != "là") {
                return Some(ClaimKind::Action);
            }
            if c.has(" en train de ") {
                return Some(ClaimKind::Action);
            }
            if next.ends_with("ing") && next.len() > 5 && !matches!(next, "going" | "thinking" | "feeling") {
                return Some(ClaimKind::Action);
            }
            continue;
        }
        // Near future: "je vais te le rappeler", "on va noter", "I will remind you".
        if matches!(v, "vais" | "va" | "allons" | "will" | "vas") {
            let j = after_clitics(c, i + 1);
            let Some(inf) = c.words.get(j) else { continue };
            if inf.folded == "bien" || HARMLESS_FUTURE.contains(&inf.raw.as_str()) {
                continue;
            }
            if v == "will" && matches!(inf.folded.as_str(), "be" | "not") {
                continue;
            }
            return Some(ClaimKind::Promise);
        }
        // A conditional that commits: "je me permettrais de te le rappeler demain".
        if (v.ends_with("rais") || v.ends_with("rait")) && !MODALS.contains(&v) && c.folded(i + 1) == "de" {
            return Some(ClaimKind::Promise);
        }
        // Simple future: "je te préviendrai", "je ferai", "nous noterons".
        if (v.ends_with("rai") || v.ends_with("rons")) && v.len() > 4 && !HARMLESS_FUTURE_FORMS.contains(&v) {
            return Some(ClaimKind::Promise);
        }
        // Present: "je note", "je m'en occupe", "je te crée ça" — but "Je le note ?" offers,
        // "je ne retiens que ce que tu demandes" states a rule, and "on annule depuis la
        // rubrique…" is the generic "on".
        let offer = c.asks;
        let rule = c.folded(start) == "ne" || c.words[start..].iter().any(|w| w.folded == "que") && c.has(" ne ");
        let generic_on = c.folded(start - 1) == "on";
        if ACTION_PRESENT.contains(&v) && !offer && !rule && !generic_on {
            return Some(if v == "tiens" || v == "previens" { ClaimKind::Promise } else { ClaimKind::Action });
        }
        if matches!(v, "viens" | "vient" | "venons") && matches!(c.folded(i + 1), "d" | "de") {
            return Some(ClaimKind::Action);
        }
        // Any other verb leading to an action: "je me ferais un plaisir de te le rappeler",
        // "je compte l'ajouter", "je m'engage à te prévenir".
        for k in i + 1..c.words.len() {
            let w = c.folded(k);
            // "je ne garde que ce que tu me demandes d'enregistrer": what follows a
            // relative pronoun is the user's request, not the model's commitment.
            if w == "sans"
                || MODALS.contains(&w)
                || matches!(w, "que" | "qu" | "qui" | "ce" | "what" | "which" | "only")
            {
                break;
            }
            if ACTION_INFINITIVES.contains(&w) {
                return Some(ClaimKind::Promise);
            }
        }
    }
    None
}

/// Sayings that claim or promise in themselves, on folded text.
const PHRASES: &[(&str, ClaimKind)] = &[
    (" c est note ", ClaimKind::Action),
    (" c est fait ", ClaimKind::Action),
    (" comme tu ", ClaimKind::StoredFact),
    (" vu que tu ", ClaimKind::StoredFact),
    (" puisque tu ", ClaimKind::StoredFact),
    (" etant donne que tu ", ClaimKind::StoredFact),
    (" since you ", ClaimKind::StoredFact),
    (" as you prefer ", ClaimKind::StoredFact),
    (" d apres ce que tu ", ClaimKind::StoredFact),
    (" selon ce que tu ", ClaimKind::StoredFact),
    (" tu m as confie ", ClaimKind::StoredFact),
    (" tu m avais confie ", ClaimKind::StoredFact),
    (" comme tu me l as ", ClaimKind::StoredFact),
    (" from what you told ", ClaimKind::StoredFact),
    (" last time you ", ClaimKind::StoredFact),
    (" you said ", ClaimKind::StoredFact),
    (" you mentioned ", ClaimKind::StoredFact),
    (" you usually ", ClaimKind::StoredFact),
    (" you always ", ClaimKind::StoredFact),
    (" you often ", ClaimKind::StoredFact),
    (" you never ", ClaimKind::StoredFact),
    (" comme d habitude ", ClaimKind::StoredFact),
    (" d habitude tu ", ClaimKind::StoredFact),
    (" tu as toujours ", ClaimKind::StoredFact),
    (" tu as souvent ", ClaimKind::StoredFact),
    (" tu n as jamais ", ClaimKind::StoredFact),
    (" c est moi qui ", ClaimKind::Promise),
    (" laisse moi m en ", ClaimKind::Promise),
    (" laisse moi faire ", ClaimKind::Promise),
    (" laisse moi gerer ", ClaimKind::Promise),
    (" laisse moi le ", ClaimKind::Promise),
    (" leave it to me ", ClaimKind::Promise),
    (" je reviens vers toi ", ClaimKind::Promise),
    (" je reviens vers vous ", ClaimKind::Promise),
    (" je te recontacte ", ClaimKind::Promise),
    (" je te tiens ", ClaimKind::Promise),
    (" get back to you ", ClaimKind::Promise),
    (" follow up ", ClaimKind::Promise),
    (" dans l oubli ", ClaimKind::Promise),
    (" lettre morte ", ClaimKind::Promise),
    (" entre de bonnes mains ", ClaimKind::Promise),
    (" le relais ", ClaimKind::ThirdParty),
    (" dans la boite ", ClaimKind::Action),
    (" est au courant ", ClaimKind::ThirdParty),
    (" sont au courant ", ClaimKind::ThirdParty),
    (" je me souviens ", ClaimKind::StoredFact),
    (" si je ne me trompe ", ClaimKind::StoredFact),
    (" si je me rappelle ", ClaimKind::StoredFact),
    (" de memoire ", ClaimKind::StoredFact),
    (" if i remember ", ClaimKind::StoredFact),
    (" i could not ", ClaimKind::Denial),
    (" i was unable ", ClaimKind::Denial),
    (" failed to ", ClaimKind::Denial),
    (" a echoue ", ClaimKind::Denial),
    (" a plante ", ClaimKind::Denial),
    (" a bugue ", ClaimKind::Denial),
    (" a rate ", ClaimKind::Denial),
    (" a foire ", ClaimKind::Denial),
    (" crashed ", ClaimKind::Denial),
    (" went wrong ", ClaimKind::Denial),
    (" ont echoue ", ClaimKind::Denial),
    (" pas fonctionne ", ClaimKind::Denial),
    (" pas marche ", ClaimKind::Denial),
    (" pas abouti ", ClaimKind::Denial),
    (" pas bouge ", ClaimKind::Denial),
    (" en l etat ", ClaimKind::Denial),
    (" impossible d ", ClaimKind::Denial),
    (" impossible de ", ClaimKind::Denial),
    (" c etait fait ", ClaimKind::Action),
    (" c est bon ", ClaimKind::Action),
    (" c est ok ", ClaimKind::Action),
    (" c est parti ", ClaimKind::Promise),
    (" c est promis ", ClaimKind::Promise),
    (" c est entendu ", ClaimKind::Promise),
    (" ca marche ", ClaimKind::Promise),
    (" ca roule ", ClaimKind::Promise),
    (" compte sur moi ", ClaimKind::Promise),
    (" sans faute ", ClaimKind::Promise),
    (" bien recu ", ClaimKind::Action),
    (" bien note ", ClaimKind::Action),
    (" c est dans ", ClaimKind::Action),
    (" ca y est ", ClaimKind::Action),
    (" voila qui est ", ClaimKind::Action),
    (" rien n a ete ", ClaimKind::Denial),
    (" rien n est ", ClaimKind::Denial),
    (" n a pas ete ", ClaimKind::Denial),
    (" n ont pas ete ", ClaimKind::Denial),
    (" aucune modification ", ClaimKind::Denial),
    (" aucun changement ", ClaimKind::Denial),
    (" s en occupe ", ClaimKind::ThirdParty),
    (" s en charge ", ClaimKind::ThirdParty),
    (" s en est occupe ", ClaimKind::ThirdParty),
    (" s est occupe ", ClaimKind::ThirdParty),
    (" s occupe de ", ClaimKind::ThirdParty),
    (" se charge de ", ClaimKind::ThirdParty),
    (" pris en charge ", ClaimKind::ThirdParty),
    (" tu as rendezvous ", ClaimKind::StoredFact),
    (" te reste ", ClaimKind::StoredFact),
    (" vous reste ", ClaimKind::StoredFact),
    (" rien de prevu ", ClaimKind::StoredFact),
    (" tu m avais dit ", ClaimKind::StoredFact),
    (" tu m as dit ", ClaimKind::StoredFact),
    (" tu avais dit ", ClaimKind::StoredFact),
    (" tu m avais demande ", ClaimKind::StoredFact),
    (" tu avais decide ", ClaimKind::StoredFact),
    (" you told me ", ClaimKind::StoredFact),
    (" all set ", ClaimKind::Action),
    (" got it ", ClaimKind::Action),
    (" will do ", ClaimKind::Promise),
    (" on it ", ClaimKind::Promise),
    (" taken care ", ClaimKind::Action),
    (" already ", ClaimKind::ThirdParty),
    (" nothing was ", ClaimKind::Denial),
    (" you have no ", ClaimKind::StoredFact),
    (" there are no ", ClaimKind::StoredFact),
];

/// Words that may surround a bare acknowledgement ("Ok, c'est bien noté !").
const FILLERS: &[&str] = &[
    "ok",
    "okay",
    "parfait",
    "voila",
    "bien",
    "c",
    "est",
    "tout",
    "alors",
    "tres",
    "super",
    "et",
    "hop",
    "d",
    "accord",
    "top",
    "nickel",
    "genial",
    "impeccable",
    "oui",
    "ah",
    "oh",
    "allez",
    "bon",
    "merci",
    "sure",
    "he",
    "hop",
    "great",
    "perfect",
    "right",
    "yes",
    "and",
    "it",
    "is",
    "pas",
    "de",
    "souci",
    "probleme",
    "y",
    "le",
    "la",
    "les",
    "l",
    "deja",
    "maintenant",
    "desormais",
    "c",
    "ete",
    "a",
];

/// Acknowledgements that imply the request was carried out (folded).
const ACKS: &[&str] = &["entendu", "compris", "recu", "voila", "fait", "done", "noted", "promis", "roger"];

/// Does this clause, alone, claim or promise?
fn clause_claim(c: &Clause) -> Option<ClaimKind> {
    let j = &c.joined;
    let first = c.folded(0);
    let framed = FRAME_LEADS.iter().any(|f| j.starts_with(f)) || c.inherited_frame;
    let asked = c.question_led;

    // A bare acknowledgement: "Noté !", "Hop, ajouté !", "Entendu.", "Done!".
    let meaningful: Vec<&Word> = c.words.iter().filter(|w| !FILLERS.contains(&w.folded.as_str())).collect();
    // "Entendu, mais quel jour ?": understanding, then a question — no claim yet.
    let understood_then_asked = c.sentence_asks
        && !meaningful.is_empty()
        && meaningful.iter().all(|w| matches!(w.folded.as_str(), "entendu" | "compris" | "recu"));
    if !meaningful.is_empty()
        && meaningful.len() <= 2
        && meaningful.iter().all(|w| matches_state(&w.raw) || ACKS.contains(&w.folded.as_str()))
        && !understood_then_asked
    {
        return Some(ClaimKind::Action);
    }
    if c.words.iter().all(|w| FILLERS.contains(&w.folded.as_str())) && c.words.iter().any(|w| w.folded == "voila") {
        return Some(ClaimKind::Action);
    }
    // A clause that opens on a state: "Réservé pour 20 h.", "Ajouté à ta liste".
    if matches_state(&c.words[0].raw) && c.words[0].raw != "là" && c.words[0].folded != "set" {
        return Some(ClaimKind::Action);
    }
    // A receipt's headline: a noun, then what became of it ("Entrée créée", "Tâche
    // terminée", "Nouvelle note ajoutée").
    const SUBJECTS: &[&str] = &[
        "je", "j", "tu", "t", "il", "elle", "on", "nous", "vous", "ils", "elles", "c", "ce", "ca", "cela", "i", "you",
    ];
    const DETERMINERS: &[&str] = &["un", "une", "des", "le", "la", "les", "l", "du", "de", "a", "an", "the"];
    let headline_noun = c.words.iter().take(2).any(|w| {
        MEMORY_NOUNS.contains(&w.folded.as_str())
            || MEMORY_NOUNS.contains(&w.folded.trim_end_matches('s'))
            || OPERATION_NOUNS.contains(&w.folded.as_str())
    });
    if !SUBJECTS.contains(&first) && !asked && !framed && (!DETERMINERS.contains(&first) || headline_noun) {
        for k in 1..c.words.len().min(3) {
            let w = &c.words[k];
            if matches_state(&w.raw) && w.raw != "là" && is_participle(&w.raw) && !SUBJECTS.contains(&c.folded(k - 1))
            {
                return Some(ClaimKind::Action);
            }
        }
    }
    // A participle as a title: "Épinglé : relancer le fournisseur", "Session de travail
    // clôturée : 1 h 32".
    const FEELINGS: &[&str] = &[
        "désolé",
        "navré",
        "ravi",
        "enchanté",
        "étonné",
        "surpris",
        "fatigué",
        "pressé",
        "inquiet",
        "occupé",
        "content",
        "touché",
        "soulagé",
        "sorry",
    ];
    let memory_head = c.words.first().is_some_and(|w| is_memory_word(&w.folded));
    if !asked && !framed {
        let titled = |raw: &str| {
            (matches_state(raw) || raw.ends_with('é') || raw.ends_with("ée") || raw.ends_with("és"))
                && is_participle(raw)
                && !FEELINGS.contains(&raw)
                && !matches!(raw, "fait" | "dit" | "set" | "put")
        };
        if titled(&c.words[0].raw) && c.words.len() <= 2 {
            return Some(ClaimKind::Action);
        }
        if memory_head && c.words.iter().take(5).skip(1).any(|w| titled(&w.raw)) {
            return Some(ClaimKind::Action);
        }
    }
    // An operation and its outcome: "L'enregistrement a échoué", "La suppression n'a pas
    // fonctionné".
    if c.words.iter().take(3).any(|w| OPERATION_NOUNS.contains(&w.folded.as_str()))
        && c.any(&[
            "a", "est", "n", "ont", "sont", "has", "is", "was", "contient", "inclut", "comprend", "garde", "contains",
        ])
        && !asked
        && !framed
    {
        return Some(ClaimKind::Action);
    }

    for (phrase, kind) in PHRASES {
        if j.contains(phrase) {
            // Idioms: "c'est fait maison", "c'est fait pour toi".
            if *phrase == " c est fait "
                && [" fait maison ", " fait pour ", " fait main ", " fait expres ", " fait de "]
                    .iter()
                    .any(|x| j.contains(x))
            {
                continue;
            }
            // "si c'est bon pour toi", "je ne sais pas si c'est fait": hypothetical.
            if framed && matches!(kind, ClaimKind::Action) && first == "si" {
                continue;
            }
            // "Ton collègue pourrait s'en charger, non ?": a suggestion, not a fact.
            if matches!(kind, ClaimKind::ThirdParty) && c.any(MODALS) {
                continue;
            }
            return Some(*kind);
        }
    }

    // Receipt imitation: "n°7", "numéro 4 …", "#12" (an offer may name a number).
    let receipt_number = c
        .words
        .windows(2)
        .any(|w| matches!(w[0].folded.as_str(), "n" | "numero" | "no" | "number") && is_number(&w[1]))
        || c.words.iter().any(|w| w.raw.starts_with('°'));
    if receipt_number && !asked && !framed {
        return Some(ClaimKind::Receipt);
    }

    if let Some(kind) = first_person_claim(c) {
        if !framed || first == "pour" {
            return Some(kind);
        }
    }

    // "c'est / tout est / ça a été / it is … <state>".
    for (i, w) in c.words.iter().enumerate() {
        let copula = matches!(w.folded.as_str(), "est" | "sont" | "etait" | "sera" | "seront" | "is" | "are" | "was");
        let passive = w.folded == "ete" || w.folded == "been";
        if !(copula || passive) {
            continue;
        }
        let mut subject = if i > 0 { c.folded(i - 1) } else { "" };
        // "ça s'est bien enregistré": the pronominal passive.
        let pronominal = matches!(subject, "s" | "se") && copula;
        if pronominal && i > 1 {
            subject = c.folded(i - 2);
        }
        let k = after_clitics(c, i + 1);
        let next = c.words.get(k).map(|w| w.raw.as_str()).unwrap_or("");
        let next = if next == "ete" || next == "été" || next == "been" {
            c.words.get(after_clitics(c, k + 1)).map(|w| w.raw.as_str()).unwrap_or("")
        } else {
            next
        };
        let pronoun = matches!(
            subject,
            "c" | "ca" | "cela" | "tout" | "il" | "elle" | "ils" | "elles" | "it" | "everything" | "that"
        );
        let head = &c.words[..i];
        let about_memory = head.iter().any(|w| {
            is_memory_word(&w.folded)
                || OPERATION_NOUNS.contains(&w.folded.as_str())
                || THIRD_PARTIES.contains(&w.folded.as_str())
                || matches!(
                    w.folded.as_str(),
                    "c" | "ca"
                        | "cela"
                        | "tout"
                        | "il"
                        | "elle"
                        | "ils"
                        | "elles"
                        | "it"
                        | "that"
                        | "everything"
                        | "this"
                        | "ton"
                        | "ta"
                        | "tes"
                        | "votre"
                        | "vos"
                        | "your"
                )
        });
        if passive && !asked && is_participle_after_aux(next) && (matches_state(next) || about_memory) {
            // "a été créé", "ont été envoyés", "has been saved", "il a été procédé à".
            return Some(ClaimKind::Action);
        }
        let pronoun = pronoun || (pronominal && about_memory);
        // "elle sera dans le dossier dès ce soir": where it will be, a promise.
        if pronoun
            && matches!(w.folded.as_str(), "sera" | "seront" | "will")
            && !asked
            && (next == "dans" || next == "là" || has_specific_time(c) || matches_state(next))
        {
            return Some(ClaimKind::Promise);
        }
        if pronominal && pronoun && is_participle_after_aux(next) && !asked {
            return Some(ClaimKind::Action);
        }
        if pronoun && (matches_state(next) || STATE_PHRASES.iter().any(|p| j.contains(p))) {
            return Some(ClaimKind::Action);
        }
    }
    // "déjà" + a participle: "le dossier est déjà réglé", "ta banque a déjà reçu".
    for (i, w) in c.words.iter().enumerate() {
        if w.folded == "deja" {
            if let Some(next) = c.words.get(after_clitics(c, i + 1)) {
                if is_participle(&next.raw) || matches_state(&next.raw) {
                    return Some(ClaimKind::ThirdParty);
                }
            }
        }
    }
    // Someone else handles it: "ton médecin a confirmé", "c'est ta sœur qui gère", "Paul a
    // confirmé qu'il s'occupait des billets", "le syndic a transmis ta demande".
    if !asked && !c.asks && !framed && !modal_clause(c) && !c.any(GENERIC_MARKERS) {
        let named = c.words.iter().enumerate().any(|(i, w)| {
            let det = if i > 0 { c.folded(i - 1) } else { "" };
            (THIRD_PARTIES.contains(&w.folded.as_str()) && (!matches!(det, "un" | "une" | "des") || c.has(" te ")))
                || (i > 0 && w.capital && w.folded != "i")
        });
        let pending = has_time(c)
            || [" en ce moment ", " actuellement ", " deja ", " bientot ", " sous ", " right now ", " currently "]
                .iter()
                .any(|m| c.has(m));
        let future = c.any(&["va", "vont", "will", "going"]);
        let handles = c.words.iter().any(|w| {
            let infinitive = ["er", "ir", "re"].iter().any(|e| w.folded.ends_with(e));
            (!infinitive || future)
                && (HANDLING_STEMS.iter().any(|st| w.folded.starts_with(st))
                    || ACTION_INFINITIVES.contains(&w.folded.as_str()))
        });
        let past_action = c.words.windows(2).any(|w| {
            matches!(w[0].folded.as_str(), "a" | "ont" | "has" | "have") && is_participle_after_aux(&w[1].raw)
        });
        let about_user = c.words.iter().any(|w| {
            matches!(w.folded.as_str(), "ta" | "ton" | "tes" | "te" | "t" | "toi" | "your" | "you" | "votre" | "vos")
        });
        if named && ((handles && (about_user || pending || past_action || future)) || (past_action && about_user)) {
            return Some(ClaimKind::ThirdParty);
        }
        // "Le restaurant a confirmé ta réservation pour quatre personnes à 20 h".
        if past_action && about_user && (has_specific_time(c) || has_number(c)) {
            return Some(ClaimKind::ThirdParty);
        }
    }

    if framed || asked || modal_clause(c) {
        // Asking the user, offering, saying what can be done: no stored fact is asserted.
        return second_person_in_question(c);
    }
    memory_state(c).or_else(|| second_person_fact_in(c, c.asks))
}

/// A subject followed by a modal: "je peux…", "tu pourrais…", "on peut…" — a capability
/// or an offer, not a statement of what is stored.
fn modal_clause(c: &Clause) -> bool {
    c.words.iter().enumerate().any(|(i, w)| {
        matches!(w.folded.as_str(), "je" | "j" | "tu" | "on" | "vous" | "nous" | "i" | "you" | "we")
            && MODALS.contains(&c.folded(after_clitics(c, i + 1)))
    })
}

/// A question that still asserts ("Tu as rendez-vous jeudi ?", "Ta réunion est à 15 h ?").
fn second_person_in_question(c: &Clause) -> Option<ClaimKind> {
    if c.question_led {
        return None;
    }
    if c.asks {
        return second_person_fact_in(c, true);
    }
    None
}

/// A memory noun with what became of it, whose it is, or how many there are.
fn memory_state(c: &Clause) -> Option<ClaimKind> {
    if c.any(GENERIC_MARKERS) {
        return None;
    }
    const POSSESSIVES: &[&str] = &["ton", "ta", "tes", "votre", "vos", "your"];
    const OWN: &[&str] = &["ma", "mon", "mes", "my"];
    const ADJECTIVES: &[&str] = &[
        "prochain",
        "prochaine",
        "dernier",
        "derniere",
        "premier",
        "premiere",
        "nouveau",
        "nouvelle",
        "seul",
        "seule",
        "unique",
        "next",
        "last",
        "first",
        "new",
        "grand",
        "grande",
        "petit",
        "petite",
    ];
    let j = &c.joined;
    for (i, w) in c.words.iter().enumerate() {
        let noun = w.folded.trim_end_matches('s');
        if !MEMORY_NOUNS.contains(&noun) && !MEMORY_NOUNS.contains(&w.folded.as_str()) {
            continue;
        }
        // The determiner, past one adjective ("ton premier rendez-vous").
        let mut d = i;
        if d > 0 && ADJECTIVES.contains(&c.folded(d - 1)) {
            d -= 1;
        }
        let det = if d > 0 { c.folded(d - 1) } else { "" };
        let before = if d > 1 { c.folded(d - 2) } else { "" };
        let possessive = POSSESSIVES.contains(&det);
        // "la dernière décision", "le prochain rappel": one stored item.
        let ordinal = d < i && matches!(det, "le" | "la" | "l" | "the");
        let definite = matches!(det, "le" | "la" | "les" | "l" | "ce" | "cette" | "ces" | "the" | "du" | "des")
            || d == 0
            || possessive;
        let ordinal_word = |w: &str| w.ends_with("ieme") && w.len() > 5;
        let every = c.has(" toutes les ") || c.has(" tous les ") || c.has(" every ");
        let counted = (d > 0 && is_number(&c.words[d - 1]) && !every)
            || matches!(det, "pas" | "plus")
            || (d < i && ordinal_word(c.folded(i - 1)))
            || (d > 0 && ordinal_word(det));
        let verb_here = c.any(&["est", "sont", "etait", "sera", "a", "ont", "is", "are", "was", "reste", "restent"]);
        let stated = c.words.iter().any(|w| matches_state(&w.raw))
            || (STATE_PHRASES.iter().any(|p| j.contains(p)) && (verb_here || i > 0));
        // The noun is the subject of what follows: "ta note … est bien là".
        let copula_after = c.words[i + 1..].iter().any(|w| {
            matches!(
                w.folded.as_str(),
                "est"
                    | "sont"
                    | "etait"
                    | "sera"
                    | "contient"
                    | "parle"
                    | "dit"
                    | "indique"
                    | "mentionne"
                    | "figure"
                    | "tombe"
                    | "commence"
                    | "is"
                    | "are"
                    | "says"
                    | "passe"
            )
        });
        // "le chrono tourne", "la session continue".
        let running = c.words[i + 1..].iter().take(3).any(|w| {
            matches!(w.folded.as_str(), "tourne" | "court" | "avance" | "continue" | "defile" | "roule" | "is running")
        });
        // Where it is kept: "dans ma mémoire", "sur ta liste", "d'après tes notes".
        let located = (matches!(before, "dans" | "sur" | "in" | "on" | "into" | "to" | "apres" | "selon" | "from")
            && (possessive || OWN.contains(&det)))
            || c.has(" according to ");
        if (definite && stated)
            || counted
            || located
            || (definite && running)
            || (ordinal && copula_after)
            // "ta remarque a rejoint le tiroir aux souvenirs": something happened to it.
            || c.words.windows(2).any(|w| matches!(w[0].folded.as_str(), "a" | "ont") && is_participle_after_aux(&w[1].raw) && w[1].folded != "ete")
            // "ton briefing inclura la météo": what it will hold.
            || ((possessive || has_specific_time(c)) && c.words[i + 1..].iter().any(|w| {
                (w.folded.ends_with("ra") || w.folded.ends_with("ront")) && w.folded.len() > 5
            }))
            || (possessive && (copula_after || has_time(c) || has_number(c)))
            || (definite && has_time(c) && copula_after)
            || c.has(" il y a ") && has_number(c)
        {
            return Some(if stated { ClaimKind::Action } else { ClaimKind::StoredFact });
        }
    }
    // "déjà dans…", "déjà en place".
    if c.has(" deja dans ") || c.has(" deja en ") || c.has(" deja sur ") {
        return Some(ClaimKind::Action);
    }
    None
}

/// A fact about the user the model cannot know without a tool: "tu as travaillé 5 h",
/// "tu n'as aucun rappel", "ton code wifi est 8832", "tu es inscrit pour jeudi".
/// `asking`: the clause is a question; only what it asserts as possessed or as a state
/// counts ("Tu as rendez-vous jeudi ?"), not what it asks about ("tu penses à lundi ?").
fn second_person_fact_in(c: &Clause, asking: bool) -> Option<ClaimKind> {
    let subj = c.words.iter().position(|w| matches!(w.folded.as_str(), "tu" | "t" | "vous" | "you"));
    if let Some(s) = subj {
        let i = after_clitics(c, s + 1);
        let verb = c.folded(i);
        if MODALS.contains(&verb) || matches!(verb, "vas" | "allez") {
            return None;
        }
        // "tu trouveras ce point dans ton briefing", "tu recevras un rappel à 8 h".
        let memory_here = c.words.iter().any(|w| is_memory_word(&w.folded));
        if !asking
            && (verb.ends_with("ras") || verb.ends_with("rez"))
            && verb.len() >= 5
            && (memory_here || has_specific_time(c))
        {
            return Some(ClaimKind::Promise);
        }
        if matches!(verb, "as" | "avais" | "avez" | "have" | "had" | "auras") {
            let j = after_clitics(c, i + 1);
            let next = c.words.get(j).map(|w| w.raw.as_str()).unwrap_or("");
            let negated = matches!(c.folded(j), "pas" | "rien" | "plus" | "aucun" | "aucune" | "no" | "not")
                || c.folded(s + 1) == "n";
            const CLAIMED: &[&str] = &[
                "travaillé",
                "bossé",
                "cumulé",
                "prévu",
                "noté",
                "enregistré",
                "demandé",
                "mentionné",
                "dit",
                "parlé",
                "programmé",
                "planifié",
                "réservé",
                "fixé",
                "commencé",
                "démarré",
                "arrêté",
                "fini",
                "terminé",
                "décidé",
                "choisi",
                "rendez",
                "worked",
                "scheduled",
                "planned",
                "told",
                "asked",
            ];
            let is_memory = |k: usize| {
                let f = c.folded(k);
                MEMORY_NOUNS.contains(&f) || MEMORY_NOUNS.contains(&f.trim_end_matches('s'))
            };
            // What "tu as" holds: "tu as (un|deux|des) rappel(s)"; "tu as le droit de…" is not it.
            let object =
                if matches!(c.folded(j), "un" | "une" | "des" | "du" | "de" | "d" | "a" | "an" | "ton" | "ta" | "tes")
                    || is_number(c.words.get(j).unwrap_or(&c.words[0]))
                {
                    j + 1
                } else {
                    j
                };
            let memory_object = is_memory(object) || is_memory(object + 1);
            // The thing it was done to: "tu avais oublié ton rendez-vous".
            let done_to = (j + 1..(j + 4).min(c.words.len())).any(is_memory);
            if asking {
                // "Tu as des projets pour le week-end ?" asks; "Tu as travaillé 5 h
                // aujourd'hui ?" still asserts a measured fact.
                let measured = has_number(c) || has_specific_time(c);
                return ((negated || CLAIMED.contains(&next)) && measured).then_some(ClaimKind::StoredFact);
            }
            if negated || CLAIMED.contains(&next) || has_number(c) {
                return Some(ClaimKind::StoredFact);
            }
            if is_participle_after_aux(next) {
                // "tu avais oublié ton rendez-vous"; "t'as fait du super boulot" is praise.
                return done_to.then_some(ClaimKind::StoredFact);
            }
            // "tu as une réunion demain", "tu as un rappel".
            if has_time(c) || memory_object {
                return Some(ClaimKind::StoredFact);
            }
            return None;
        }
        // "tu vas toujours courir le dimanche", "tu bois souvent du thé": a habit stated.
        if !asking && c.any(&["toujours", "souvent", "jamais", "habituellement", "always", "usually", "often", "never"])
        {
            return Some(ClaimKind::StoredFact);
        }
        // "tu préfères le vouvoiement": a preference stated as known.
        if matches!(verb, "preferes" | "preferais" | "prefers" | "prefer") && !c.asks {
            return Some(ClaimKind::StoredFact);
        }
        if asking {
            return None;
        }
        // "tu es inscrit pour jeudi", "tu travailles sur Atlas depuis 9 h".
        if has_specific_time(c) && !matches!(verb, "peux" | "pourrais" | "devrais") && !c.any(GENERIC_MARKERS) {
            return Some(ClaimKind::StoredFact);
        }
        if matches!(verb, "travailles" | "bosses" | "es") && c.any(&["depuis", "en", "sur"]) && has_number(c) {
            return Some(ClaimKind::StoredFact);
        }
    }
    // "ton code wifi est 8832", "your password is 1234".
    for (i, w) in c.words.iter().enumerate() {
        if !matches!(w.folded.as_str(), "ton" | "ta" | "tes" | "votre" | "vos" | "your") {
            continue;
        }
        let noun = c.folded(i + 1);
        if CONVERSATION_NOUNS.contains(&noun) {
            continue;
        }
        // Whatever the verb: "ton total de la semaine dépasse les 35 heures", "ton
        // anniversaire tombe le 14 juin".
        let rest = &c.words[(i + 2).min(c.words.len())..];
        let copula = rest.iter().any(|w| matches!(w.folded.as_str(), "est" | "sont" | "is" | "are" | "etait"));
        if asking && !copula {
            continue;
        }
        if c.any(GENERIC_MARKERS) {
            continue;
        }
        // The noun must be the subject of something said about it.
        const VERBS: &[&str] = &[
            "est", "sont", "etait", "sera", "tombe", "commence", "depasse", "arrive", "passe", "dure", "expire",
            "finit", "reste", "part", "decolle", "atterrit", "ouvre", "ferme", "sonne", "is", "are", "falls", "starts",
            "ends", "leaves", "departs", "arrives",
        ];
        let said = rest.iter().any(|w| VERBS.contains(&w.folded.as_str()));
        if said && (rest.iter().any(is_number) || has_specific_time(c)) {
            return Some(ClaimKind::StoredFact);
        }
    }
    // "c'est 4417" after a possessive noun in another clause is caught at sentence level.
    None
}

/// Does this sentence claim anything? Returns the first kind of claim found.
pub fn claim(sentence: &str) -> Option<ClaimKind> {
    // A check mark is a receipt's signature.
    if sentence.chars().any(|c| matches!(c, '✔' | '✅' | '☑' | '✓' | '📌' | '📅' | '🗓' | '⏰' | '📝' | '🔔' | '⏱'))
    {
        return Some(ClaimKind::Receipt);
    }
    let mut clauses = clauses(sentence);
    let sentence_asks = clauses.iter().any(|c| c.asks);
    for c in clauses.iter_mut() {
        c.sentence_asks = sentence_asks;
    }
    for k in 1..clauses.len() {
        let prev = &clauses[k - 1];
        let condition = [
            " si ",
            " if ",
            " quand ",
            " lorsque ",
            " when ",
            " chaque fois ",
            " a chaque ",
            " dans ce cas ",
            " in that case ",
        ]
        .iter()
        .any(|lead| prev.joined.starts_with(lead));
        let hypothetical = condition || modal_clause(prev) || prev.inherited_frame;
        let head = clauses[k].folded(0).to_string();
        let continues = clauses[k].after_conjunction
            || ["er", "ir", "re", "oir"].iter().any(|e| head.ends_with(e))
            || ACTION_PRESENT.contains(&head.as_str()) && clauses[k].words[0].raw.is_ascii()
            || matches!(head.as_str(), "des" | "les" | "un" | "une" | "ou" | "et");
        if hypothetical && (condition || continues) {
            clauses[k].inherited_frame = true;
        }
    }
    if let Some(kind) = clauses.iter().find_map(clause_claim) {
        return Some(kind);
    }
    // "Chaque année, le 12 mai, tu auras ton petit mot": a promise made to the user, its
    // date in another clause.
    let dated = clauses.iter().any(has_specific_time);
    let promised = clauses.iter().any(|c| {
        !c.asks
            && c.words.iter().enumerate().any(|(i, w)| {
                matches!(w.folded.as_str(), "tu" | "t") && {
                    let v = c.folded(after_clitics(c, i + 1));
                    (v.ends_with("ras") || v.ends_with("rez")) && v.len() >= 5
                }
            })
    });
    if dated && promised {
        return Some(ClaimKind::Promise);
    }
    // A statement about the user closed by a tag question: "Tu aimes commencer par tes
    // mails, c'est ça ?", "Ton anniversaire tombe le 14 juin, non ?".
    const TAGS: &[&str] = &[
        " c est ca ",
        " c est bien ca ",
        " non ",
        " n est ce pas ",
        " hein ",
        " pas vrai ",
        " je me trompe ",
        " right ",
        " correct ",
        " isn t it ",
        " don t you ",
    ];
    // What a tag question may not confirm: a habit, a taste, a date, a number, what the
    // memory holds ("Tu hésites entre deux options, c'est ça ?" only reflects).
    const HABITS: &[&str] = &[
        "aimes",
        "preferes",
        "adores",
        "detestes",
        "habites",
        "appelles",
        "travailles",
        "bosses",
        "manges",
        "prends",
        "bois",
        "vas",
        "habitude",
        "es",
        "etais",
        "as",
        "avais",
        "like",
        "prefer",
        "love",
        "live",
    ];
    for (k, tag) in clauses.iter().enumerate() {
        let tagged = tag.asks && TAGS.iter().any(|t| tag.joined == *t);
        if tagged
            && clauses[..k].iter().any(|c| {
                let about_user = c.words.iter().any(|w| {
                    matches!(
                        w.folded.as_str(),
                        "tu" | "t" | "ton" | "ta" | "tes" | "vous" | "votre" | "vos" | "you" | "your"
                    )
                });
                let specific = c.any(HABITS)
                    || has_specific_time(c)
                    || has_number(c)
                    || c.words.iter().any(|w| is_memory_word(&w.folded));
                !c.question_led && about_user && specific
            })
        {
            return Some(ClaimKind::StoredFact);
        }
    }
    // A value in quotes after something of the user's: "Le mot de passe de ta box est
    // « soleil2023 »." (the quoted value is not read, but its presence is the claim).
    let quoted = sentence.contains('«') || sentence.contains('“') || sentence.matches('"').count() >= 2;
    let all = protect(&unquote(sentence));
    let words = words_of(&all);
    let possessive = |w: &[Word]| matches!(w[0].folded.as_str(), "ton" | "ta" | "tes" | "votre" | "vos" | "your");
    let possessive_noun =
        words.windows(2).any(|w| possessive(w) && !CONVERSATION_NOUNS.contains(&w[1].folded.as_str()));
    let is_memory =
        |w: &Word| MEMORY_NOUNS.contains(&w.folded.as_str()) || MEMORY_NOUNS.contains(&w.folded.trim_end_matches('s'));
    let possessive_memory = words.windows(3).any(|w| possessive(w) && (is_memory(&w[1]) || is_memory(&w[2])))
        || words.windows(2).any(|w| possessive(w) && is_memory(&w[1]));
    let folded = format!(" {} ", words.iter().map(|w| w.folded.as_str()).collect::<Vec<_>>().join(" "));
    let digits = words.iter().any(|w| w.folded.chars().any(|c| c.is_ascii_digit()));
    // The possessive comes first, then "c'est …" tells its value.
    let before_cest = folded.find(" c est ").map(|at| &folded[..at]);
    // "Ta préférence actuelle, c'est le tutoiement": a short noun phrase, then its value.
    let possessive_first = before_cest.is_some_and(|head| {
        let head_words: Vec<&str> = head.split_whitespace().collect();
        head_words.len() <= 6
            && head_words.iter().any(|w| matches!(*w, "ton" | "ta" | "tes" | "votre" | "vos" | "your"))
    });
    if possessive_first && (possessive_memory || (possessive_noun && digits)) {
        return Some(ClaimKind::StoredFact);
    }
    let copula = [" est ", " sont ", " c est ", " is ", " are "].iter().any(|c| folded.contains(c));
    if quoted && possessive_noun && copula && !clauses.iter().any(|c| c.question_led) {
        return Some(ClaimKind::StoredFact);
    }
    // "Ton code wifi, c'est…", "Ton créneau de sport, c'est le mardi": the user's thing,
    // then its value.
    let owned_thing = before_cest.is_some_and(|head| {
        let head_words: Vec<&str> = head.split_whitespace().collect();
        head_words.len() <= 8
            && head_words.iter().any(|w| matches!(*w, "ton" | "ta" | "tes" | "votre" | "vos"))
            && head_words.iter().any(|w| SCHEDULE_NOUNS.contains(w) || is_memory_word(w))
    });
    if owned_thing && !clauses.iter().any(|c| c.asks || c.question_led) {
        return Some(ClaimKind::StoredFact);
    }
    // "Alors, pour demain : réveil à six heures, puis…", "Au programme : dentiste à 10 h
    // 30": a day's plan announced, then listed.
    if let Some((head, tail)) = sentence.split_once(':') {
        const ANNOUNCES: &[&str] = &[
            " pour demain ",
            " pour aujourdhui ",
            " pour ce soir ",
            " pour cette semaine ",
            " au programme ",
            " programme ",
            " ta journee ",
            " ta semaine ",
            " demain ",
            " aujourdhui ",
            " ce matin ",
            " ce soir ",
            " for today ",
            " for tomorrow ",
            " today ",
            " tomorrow ",
            " tonight ",
            " on the agenda ",
            " this week ",
            " your day ",
            " your week ",
        ];
        let head =
            format!(" {} ", words_of(&protect(head)).iter().map(|w| w.folded.as_str()).collect::<Vec<_>>().join(" "));
        let tail_clauses = self::clauses(tail);
        let announced = head.split_whitespace().count() <= 5 && ANNOUNCES.iter().any(|a| head.ends_with(a));
        let listed = tail_clauses.iter().any(|c| has_specific_time(c) || has_number(c));
        if announced && listed && !sentence.contains('?') {
            return Some(ClaimKind::StoredFact);
        }
    }
    // "Le code du portail est 4 7 2 9": a secret value told.
    const SECRETS: &[&str] =
        &["code", "digicode", "pin", "password", "identifiant", "numero", "number", "iban", "login"];
    let secret = words.iter().any(|w| SECRETS.contains(&w.folded.as_str()));
    let spelled_digits = words.iter().filter(|w| w.folded.chars().all(|c| c.is_ascii_digit())).count() >= 2
        || words.windows(2).any(|w| w.iter().all(|w| NUMBER_WORDS.contains(&w.folded.as_str())));
    let users = possessive_noun || folded.contains(" toi ") || folded.contains(" your ");
    if secret && (spelled_digits || digits && users) && copula && !clauses.iter().any(|c| c.asks || c.question_led) {
        return Some(ClaimKind::StoredFact);
    }
    // A figure or a named day anywhere in the sentence ("…, starting Saturday morning").
    const DAYS: &[&str] = &[
        "lundi",
        "mardi",
        "mercredi",
        "jeudi",
        "vendredi",
        "samedi",
        "dimanche",
        "weekend",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    let sentence_counted = clauses.iter().any(counted) || words.iter().any(|w| DAYS.contains(&w.folded.as_str()));
    let sentence_specific = sentence_counted || clauses.iter().any(has_specific_time);
    clauses.iter().find_map(|c| about_the_user(c, sentence_specific, sentence_counted))
}

/// Verbs after "tu"/"you" that talk about the conversation or pay a compliment, not about
/// the user's life ("tu as raison", "you're welcome", "tu sais, …").
const EVALUATIVE: &[&str] = &[
    "es", "etes", "are", "re", "sais", "vois", "know", "see", "mean", "imagine", "sembles", "seem", "sound", "sounds",
    "look", "looks", "connais",
];

/// What follows "tu as" / "you have" in a compliment or a figure of speech.
const EVALUATIVE_OBJECTS: &[&str] = &[
    "raison",
    "tort",
    "l air",
    "bien fait",
    "fait du",
    "le droit",
    "besoin",
    "right",
    "a point",
    "earned",
    "done well",
];

/// Verbs of taste and habit: "tu préfères le thé", "you don't drink coffee".
const TASTE_VERBS: &[&str] = &[
    "preferes",
    "aimes",
    "adores",
    "detestes",
    "bois",
    "manges",
    "prefer",
    "like",
    "love",
    "hate",
    "drink",
    "eat",
    "decided",
    "decide",
    "decides",
    "logged",
    "set",
    "worked",
    "travailles",
    "travaille",
    "prends",
    "take",
    "takes",
    "choisi",
    "opte",
    "chose",
    "chosen",
    "picked",
];

/// What a day is made of, beside the memory's own nouns.
const SCHEDULE_NOUNS: &[&str] = &[
    "rendezvous",
    "rdv",
    "reunion",
    "meeting",
    "appointment",
    "call",
    "appel",
    "programme",
    "plan",
    "planning",
    "agenda",
    "schedule",
    "calendar",
    "calendrier",
    "deadline",
    "echeance",
    "priorite",
    "priority",
    "code",
    "numero",
    "number",
    "password",
    "anniversaire",
    "birthday",
    "cours",
    "piscine",
    "sport",
    "gym",
    "dejeuner",
    "lunch",
    "diner",
    "dinner",
    "dentiste",
    "dentist",
    "medecin",
    "doctor",
    "semaine",
    "week",
    "journee",
    "day",
    "standup",
    "point",
    "trucs",
    "things",
    "review",
    "demo",
    "class",
    "lesson",
    "flight",
    "vol",
    "train",
    "rent",
    "loyer",
    "bill",
    "facture",
    "garde",
];

/// Words a stated fact may open with before the user's thing ("Ensuite ton…", "I think
/// your…", "Demain, ta…").
const LEAD_OK: &[&str] = &[
    "bon",
    "alors",
    "ensuite",
    "puis",
    "d",
    "abord",
    "enfin",
    "demain",
    "aujourdhui",
    "ce",
    "matin",
    "soir",
    "cette",
    "semaine",
    "today",
    "tomorrow",
    "tonight",
    "this",
    "morning",
    "week",
    "i",
    "think",
    "believe",
    "guess",
    "il",
    "me",
    "semble",
    "je",
    "crois",
    "pense",
    "so",
    "well",
    "ok",
    "and",
    "then",
    "first",
    "next",
    "au",
    "fait",
    "by",
    "the",
    "way",
    "et",
    "oh",
    "also",
    "aussi",
    "sinon",
];

/// Words after which "tu"/"you" opens a subordinate or is an object, not the subject of
/// a statement ("si tu as besoin", "ce que tu choisis", "help you plan").
const SUBORDINATE_OR_OBJECT: &[&str] = &[
    "si", "quand", "que", "qu", "lorsque", "ou", "dont", "comme", "des", "if", "when", "whenever", "what", "that",
    "whatever", "which", "where", "while", "until", "once", "before", "after", "as", "help", "meet", "thank", "thanks",
    "remind", "tell", "ask", "give", "show", "let", "for", "with", "to", "about", "see", "hear", "let", "see", "get",
    "make", "want", "like", "love", "than", "because", "since", "so",
];

/// The last line against a model that tells the user their own life: in a conversation
/// turn nothing was read, so a statement about the user's day, things, tastes or figures —
/// "tu as le point avec Marc", "you see the bank at nine", "ton code, c'est…", "your next
/// meeting is…", "il te reste…" — can only come from the model's memory of earlier turns
/// or from nowhere, and only code may state stored facts. Kept out: suggestions (modals),
/// imperatives ("prends ton temps"), subordinates ("si tu as besoin"), questions that
/// carry no figure, hypotheticals, compliments, and the conversation itself ("ta
/// question").
/// A figure in the clause: a number, or an English hour said in words ("at nine"), which
/// the shared number words leave out.
fn counted(c: &Clause) -> bool {
    const HOURS: &[&str] = &[
        "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "noon", "midnight", "twenty", "thirty", "forty",
        "fifty",
    ];
    has_number(c) || c.words.iter().any(|w| HOURS.contains(&w.folded.as_str()))
}

fn about_the_user(c: &Clause, sentence_specific: bool, sentence_counted: bool) -> Option<ClaimKind> {
    // "Pour ajouter un rappel, dis…" frames advice; "pour aujourd'hui, t'as…" dates a fact.
    const DATED: &[&str] = &[" pour aujourdhui ", " pour demain ", " pour ce soir ", " pour cette semaine "];
    let framed = FRAME_LEADS.iter().any(|f| c.joined.starts_with(f)) && !DATED.iter().any(|d| c.joined.starts_with(d));
    if c.inherited_frame || c.words.is_empty() || framed {
        return None;
    }
    let counted = counted(c);
    let specific = has_specific_time(c) || counted;
    let named = c.words.iter().skip(1).any(|w| w.capital && !matches!(w.folded.as_str(), "arthur" | "i"));
    let thing = c.words.iter().any(|w| is_memory_word(&w.folded) || SCHEDULE_NOUNS.contains(&w.folded.as_str()));
    let possessive = |w: &str| matches!(w, "ton" | "ta" | "tes" | "votre" | "vos" | "your" | "yours");
    let possessive_at = c.words.iter().position(|w| possessive(&w.folded));
    let asking = c.asks || c.sentence_asks;
    // "Tu préfères le thé le matin." (no question mark) states a taste.
    if !asking && (c.joined.starts_with(" tu preferes ") || c.joined.starts_with(" you prefer ")) {
        return Some(ClaimKind::StoredFact);
    }
    if asking || c.question_led {
        // "Tu veux que je décale ton rendez-vous de dix heures ?": the figure is the claim
        // ("ta sœur arrive samedi ?" only echoes a day).
        return (possessive_at.is_some() && counted).then_some(ClaimKind::StoredFact);
    }
    if c.has(" te reste ") || c.has(" te rester ") || c.has(" t en reste ") || c.has(" you have left ") {
        return Some(ClaimKind::StoredFact);
    }
    // "Voici ton programme", "Here is your plan": the user's thing presented.
    const PRESENTING: &[&str] =
        &[" voici ", " voila ", " here is ", " here s ", " here are ", " au programme ", " on the agenda "];
    if PRESENTING.iter().any(|p| c.joined.starts_with(p)) && possessive_at.is_some_and(|at| at <= 3) {
        return Some(ClaimKind::StoredFact);
    }
    if let Some(at) = possessive_at {
        // "Ton code wifi, c'est …", "Your haircut got moved to Saturday": the user's thing
        // is the subject of the statement.
        let leads = c.words[..at].iter().all(|w| LEAD_OK.contains(&w.folded.as_str()));
        let owned = c.folded(at + 1);
        // A verb of state: a bare list ("tes notes, tes décisions") states nothing.
        const STATES: &[&str] =
            &["est", "sont", "etait", "is", "are", "was", "were", "got", "has", "commence", "starts", "tombe", "falls"];
        let stated = c.words[at..].iter().any(|w| STATES.contains(&w.folded.as_str()));
        // "Ton médecin pourra mieux te conseiller": advice about someone, not a fact.
        let advice = c.words.iter().any(|w| {
            MODALS.contains(&w.folded.as_str()) || matches!(w.folded.as_str(), "pourra" | "pourront" | "saura")
        });
        if leads
            && !advice
            && !CONVERSATION_NOUNS.contains(&owned)
            && (specific || named || c.has(" c est ") || thing && stated || stated && sentence_specific)
        {
            return Some(ClaimKind::StoredFact);
        }
    }
    // "Tu dois rendre le rapport avant vendredi", "tu dois quarante euros à Julien": an
    // obligation or a debt on record ("tu dois boire de l'eau" is advice).
    let owes = c.words.windows(2).any(|w| {
        matches!(w[0].folded.as_str(), "tu" | "vous" | "you")
            && matches!(w[1].folded.as_str(), "dois" | "devez" | "owe")
    });
    if owes && (named || has_specific_time(c)) {
        return Some(ClaimKind::StoredFact);
    }
    if modal_clause(c) && !c.words.iter().any(|w| matches!(w.folded.as_str(), "preferes" | "prefer")) {
        return None;
    }
    // "D'abord tu as le point avec Marc", "In the morning you see the bank at nine", "You
    // decided to…": the user as the subject of a statement about their life.
    let mut subject = None;
    for (i, w) in c.words.iter().enumerate() {
        let prev = if i == 0 { "" } else { c.folded(i - 1) };
        let next = c.folded(i + 1);
        let is_subject = match w.folded.as_str() {
            "tu" => true,
            // "t'as", "t'es": "t'" is the subject only before avoir and être.
            "t" => matches!(next, "as" | "es" | "avais" | "etais" | "auras" | "seras"),
            "you" | "vous" => true,
            _ => false,
        };
        // "pour savoir combien de temps tu passes": a subordinate a few words back.
        let subordinate = c.words[i.saturating_sub(3)..i]
            .iter()
            .any(|w| matches!(w.folded.as_str(), "combien" | "savoir" | "whenever" | "whatever"));
        // "Je vous souhaite…", "I'll call you": an object after a subject.
        let object = matches!(prev, "je" | "j" | "il" | "elle" | "on" | "nous" | "ils" | "elles" | "i" | "we" | "they");
        if is_subject && !SUBORDINATE_OR_OBJECT.contains(&prev) && !subordinate && !object {
            subject = Some(i);
            break;
        }
    }
    let subject = subject?;
    let verb_at = after_clitics(c, subject + 1);
    let verb = c.folded(verb_at);
    // "Tu vas adorer ce film" looks ahead; "tu vas courir le dimanche à sept heures" tells.
    if verb.is_empty() || matches!(verb, "vas" | "allez" | "va") && !specific {
        return None;
    }
    // "Tu préfères le thé" states a taste; "tu préfères que je…" asks.
    let prefers = matches!(verb, "preferes" | "prefer") && !matches!(c.folded(verb_at + 1), "que" | "qu" | "to" | "i");
    if (MODALS.contains(&verb)
        || matches!(verb, "want" | "wants" | "wish" | "need" | "pouvez" | "voulez" | "pourriez" | "devriez" | "savez"))
        && !prefers
    {
        return None;
    }
    // "Tu es de garde ce week-end, du samedi 8 h…", "tu vois ta conseillère. C'est à
    // quinze heures.": the figure elsewhere in the sentence makes it a fact.
    let figured = counted || sentence_counted && matches!(verb, "es" | "etes" | "re" | "are" | "vois" | "see");
    if EVALUATIVE.contains(&verb) && !figured {
        return None;
    }
    let rest = c.words[verb_at + 1..].iter().map(|w| w.folded.as_str()).collect::<Vec<_>>().join(" ");
    if matches!(verb, "as" | "have" | "ve")
        && EVALUATIVE_OBJECTS.iter().any(|o| rest == *o || rest.starts_with(&format!("{o} ")))
    {
        return None;
    }
    let taste = c.words[verb_at..].iter().take(3).any(|w| TASTE_VERBS.contains(&w.folded.as_str()));
    let owned_object = c
        .words
        .get(verb_at + 1)
        .is_some_and(|w| matches!(w.folded.as_str(), "ton" | "ta" | "tes" | "votre" | "vos" | "your"));
    (specific || named || thing || taste || prefers || owned_object && sentence_counted)
        .then_some(ClaimKind::StoredFact)
}

/// Does this one sentence claim (or deny) that an action was performed, promise one, or
/// assert a stored fact?
pub fn is_action_claim(sentence: &str) -> bool {
    claim(sentence).is_some()
}

/// Splits text into sentences, keeping their punctuation.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        current.push(c);
        // "9.30" or "n°7." — a dot between digits does not end a sentence.
        let inner_dot = c == '.' && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
        if matches!(c, '.' | '!' | '?' | '…' | '\n') && !inner_dot {
            if !current.trim().is_empty() {
                out.push(current.trim().to_string());
            }
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

/// The model text without its claims, and the sentences removed.
pub fn strip_claims(text: &str) -> (String, Vec<String>) {
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    for s in sentences(text) {
        if is_action_claim(&s) {
            removed.push(s);
        } else {
            kept.push(s);
        }
    }
    (kept.join(" "), removed)
}

/// Is this sentence a question the model asks (and nothing else)?
pub fn is_question(sentence: &str) -> bool {
    sentence.trim_end().ends_with('?')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_hidden_in_questions_and_after_openings_are_caught() {
        for s in [
            "C'est ajouté, autre chose ?",
            "Avec plaisir ! Je l'ai glissé dans ta liste.",
            "Je l'ai mis pour mardi, ça te va ?",
            "Bonne question ! Au fait, le rappel de 18 h a bien été créé.",
        ] {
            assert!(is_action_claim(s), "not caught: {s}");
        }
    }

    #[test]
    fn offers_and_capabilities_pass() {
        for s in [
            "Veux-tu que je crée un rappel pour jeudi ?",
            "Si tu veux, je peux noter ça.",
            "Tu peux me demander de lister tes rappels.",
            "Je peux créer des rappels, des notes et suivre ton temps de travail.",
        ] {
            assert!(!is_action_claim(s), "false positive: {s} ({:?})", claim(s));
        }
    }

    #[test]
    fn stripping_keeps_the_rest() {
        let (kept, removed) = strip_claims("C'est noté ! Tu as aussi un rendez-vous jeudi. Il fait beau.");
        assert_eq!(kept, "Il fait beau.");
        assert_eq!(removed.len(), 2);
    }

    #[test]
    fn sentences_do_not_split_inside_numbers() {
        assert_eq!(sentences("Rappel à 9.30 demain. Bonne journée !"), ["Rappel à 9.30 demain.", "Bonne journée !"]);
    }
}
