//! The command line as a user and outside tools see it: first start, `export --json`
//! (docs/interface.md §3.2), briefings, tool exit codes, the terminal chat, and clear errors.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

struct Cli {
    dir: tempfile::TempDir,
}

impl Cli {
    fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap() }
    }

    fn data_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("nested").join("data")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = crate::common::arthur_command();
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("ARTHUR_DATA_DIR", self.data_dir())
            .args(args);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }
}

#[test]
fn first_start_creates_the_data_dir_and_the_database() {
    let cli = Cli::new();
    assert!(!cli.data_dir().exists());
    cli.ok(&["tool", "lister_rappels"]);
    assert!(cli.data_dir().join("arthur.db").is_file());
}

#[test]
fn export_json_has_the_interface_shape() {
    let cli = Cli::new();
    cli.ok(&["tool", "creer_projet", r#"{"nom": "Atlas", "description": "mails", "phase": "cadrage"}"#]);
    cli.ok(&["tool", "creer_note", r#"{"texte": "penser au DKIM", "projet": "Atlas"}"#]);
    cli.ok(&["tool", "creer_rappel", r#"{"texte": "banque", "echeance": "2099-01-02T09:00"}"#]);
    cli.ok(&["tool", "memoriser_preference", r#"{"texte": "réponses courtes"}"#]);
    cli.ok(&["tool", "memoriser_souvenir", r#"{"texte": "le dentiste est Martin"}"#]);
    cli.ok(&["tool", "acter_decision", r#"{"projet": "Atlas", "texte": "Rust"}"#]);
    cli.ok(&["tool", "demarrer_session", r#"{"projet": "Atlas"}"#]);
    cli.ok(&["tool", "arreter_session"]);
    cli.ok(&["tool", "demarrer_minuteur", r#"{"duree_secondes": 600, "nom": "pâtes"}"#]);
    cli.ok(&["tool", "ajouter_a_liste", r#"{"liste": "courses", "element": "lait"}"#]);

    // Without --json, the same content to read: every kind with its count, every item.
    let text = cli.ok(&["export"]);
    assert!(serde_json::from_str::<Value>(&text).is_err(), "text, not JSON: {text}");
    for expected in
        ["Notes (1)", "texte : penser au DKIM", "Rappels (1)", "Listes (1)", "Minuteurs (1)", "Décisions (1)"]
    {
        assert!(text.contains(expected), "{expected} missing from:\n{text}");
    }

    let v: Value = serde_json::from_str(&cli.ok(&["export", "--json"])).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "decisions",
            "listes",
            "minuteurs",
            "notes",
            "preferences",
            "projets",
            "rappels",
            "reveils",
            "sessions",
            "souvenirs"
        ]
    );
    let has = |list: &str, fields: &[&str]| {
        let item = &v[list][0];
        for f in fields {
            assert!(item.get(*f).is_some(), "{list} lacks {f}: {item}");
        }
    };
    has("notes", &["id", "texte", "projet", "created_at"]);
    has("rappels", &["id", "texte", "echeance", "fait", "created_at"]);
    has("preferences", &["id", "texte", "active", "created_at"]);
    has("souvenirs", &["id", "texte", "created_at"]);
    has("projets", &["id", "nom", "description", "phase", "statut", "created_at", "updated_at"]);
    has("decisions", &["id", "projet", "texte", "created_at"]);
    has("sessions", &["id", "projet", "debut", "fin"]);
    has("minuteurs", &["id", "nom", "duree_secondes", "etat", "echeance"]);
    has("listes", &["id", "nom", "elements"]);
    assert_eq!(
        (v["minuteurs"][0]["nom"].as_str(), v["minuteurs"][0]["etat"].as_str()),
        (Some("pâtes"), Some("en_cours"))
    );
    assert_eq!(v["listes"][0]["elements"][0]["texte"], "lait");
    assert_eq!(v["notes"][0]["texte"], "penser au DKIM");
    assert_eq!(v["notes"][0]["projet"], "Atlas");
    assert_eq!(v["rappels"][0]["fait"], false);
    assert_eq!(v["preferences"][0]["active"], true);
    assert_eq!(v["decisions"][0]["projet"], "Atlas");
    assert_eq!(v["projets"][0]["statut"], "actif");
}

#[test]
fn tool_exit_codes_and_json_outcomes() {
    let cli = Cli::new();
    let out = cli.run(&["tool", "marquer_rappel_fait", r#"{"id": 7}"#, "--json"]);
    assert_eq!(out.status.code(), Some(3), "refused");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outcome"], "refused");
    assert_eq!(v["detail"]["detail"]["reason"], "reminder_unknown");
    assert!(v["report"].as_str().unwrap().contains("Rien n'a été écrit"));

    let out = cli.run(&["tool", "creer_projet", "--agent", "intendant", r#"{"nom": "X"}"#]);
    assert_eq!(out.status.code(), Some(3), "not in the Intendant's list");
    let out = cli.run(&["tool", "creer_note", "{pas du json"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).contains("pas un objet JSON"));
    let out = cli.run(&["tool", "lire_briefing_hebdo"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn briefings_of_the_day_and_the_week() {
    let cli = Cli::new();
    cli.ok(&["tool", "creer_note", r#"{"texte": "note du jour"}"#]);
    let day = cli.ok(&["briefing", "--jour"]);
    assert!(day.starts_with("Briefing du ") && day.contains("note du jour"), "{day}");
    let week = cli.ok(&["briefing", "--semaine"]);
    assert!(week.starts_with("Briefing de la semaine") && week.contains("note du jour"), "{week}");
    assert_eq!(cli.run(&["briefing"]).status.code(), Some(2), "one of --jour / --semaine is required");
}

#[test]
fn terminal_chat_runs_tools_offline_and_asks_before_an_unsure_write() {
    let cli = Cli::new();
    let mut child = cli.command(&["chat"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            "/creer_note {\"texte\": \"acheter du pain\"}\nraconte-moi une blague\nrappelle-moi d'appeler maman\noui\n/quitter\n"
                .as_bytes(),
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Note n°1 enregistrée : « acheter du pain »"), "{text}");
    assert!(text.contains(arthur_agents::turn::local::NOT_UNDERSTOOD_OFFLINE), "never guessed: {text}");
    // Written with digits, as the receipt is (the binary runs on today's date).
    assert!(
        text.contains("Tu veux que je crée le rappel « appeler maman » pour le ") && text.contains(" à 9 h 00 ?"),
        "{text}"
    );
    assert!(text.contains("Rappel n°1 enregistré : « appeler maman »"), "created after « oui »: {text}");
    let export: Value = serde_json::from_str(&cli.ok(&["export", "--json"])).unwrap();
    assert_eq!(export["notes"].as_array().unwrap().len(), 1);
    assert_eq!(export["rappels"].as_array().unwrap().len(), 1);
}

#[test]
fn bad_configuration_is_a_clear_error() {
    let cli = Cli::new();
    let out = cli.command(&["export", "--json"]).env("ARTHUR_TIMEZONE", "Mars/Olympus").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("configuration") && err.contains("Mars/Olympus"), "{err}");

    let cfg = cli.dir.path().join("arthur.toml");
    std::fs::write(&cfg, "timezone = \"Europe/Paris\"\nmistral_key = \"oops\"\n").unwrap();
    let out = cli.command(&["export", "--json"]).env("ARTHUR_CONFIG", &cfg).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("mistral_key"));

    let out =
        cli.command(&["export", "--json"]).env("ARTHUR_CONFIG", cli.dir.path().join("missing.toml")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));

    let out =
        cli.command(&["export", "--json"]).env("ARTHUR_DATABASE_URL", "postgres://localhost/arthur").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("PostgreSQL"));
}

#[test]
fn a_config_file_sets_the_time_zone() {
    let cli = Cli::new();
    let cfg = cli.dir.path().join("arthur.toml");
    std::fs::write(&cfg, "timezone = \"America/Montreal\"\n").unwrap();
    let out = cli
        .command(&["tool", "creer_rappel", r#"{"texte": "x", "echeance": "2099-07-01T09:00"}"#, "--json"])
        .env("ARTHUR_CONFIG", &cfg)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // 09:00 in Montréal in July is 13:00 UTC.
    assert_eq!(v["detail"]["detail"]["rappel"]["echeance"], "2099-07-01T13:00:00Z");
}

#[tokio::test]
async fn ask_json_prints_exactly_the_interface_object() {
    use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
    let cli = Cli::new();
    let llm = ScriptedLlm::start().await;
    llm.push(Reply::text(r#"{"agent": "intendant", "domain": "QUOTIDIEN", "action": "ecriture"}"#));
    llm.push(Reply::tool_calls(
        "",
        &[("creer_rappel", r#"{"texte": "appeler la banque", "echeance": "2099-12-01T09:00"}"#)],
    ));
    // The model path (the grammar would only ask: no hour was said).
    let mut cmd = tokio::process::Command::from(cli.command(&["ask", "--json", "rappelle-moi d'appeler la banque"]));
    cmd.env("MISTRAL_API_KEY", "test-key").env("MISTRAL_BASE_URL", llm.base_url()).env("ARTHUR_LOCAL_FIRST", "0");
    let out = cmd.output().await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["agent", "conversation", "domain", "incident", "llm_calls", "spoken", "tools", "written"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains(v["conversation"].as_str().unwrap()));
    assert_eq!(v["agent"], "intendant");
    assert_eq!(v["domain"], "QUOTIDIEN");
    assert_eq!(v["incident"], Value::Null);
    assert_eq!(v["tools"], serde_json::json!([{"name": "creer_rappel", "outcome": "done"}]));
    assert_eq!(v["llm_calls"], 1, "router call excluded; the receipt ends the turn");
    assert!(v["written"].as_str().unwrap().contains("Rappel n°1 enregistré : « appeler la banque »"));
    assert!(v["spoken"].as_str().unwrap().contains("Rappel numéro un enregistré"));
    // The API key was sent as a bearer token and never printed.
    assert_eq!(llm.requests()[0].header("authorization"), Some("Bearer test-key"));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("test-key"));

    // A refusal comes back as the incident.
    llm.push(Reply::text(r#"{"agent": "intendant", "domain": "QUOTIDIEN"}"#));
    llm.push(Reply::tool_calls("", &[("marquer_rappel_fait", r#"{"id": 9}"#)]));
    let mut cmd = tokio::process::Command::from(cli.command(&["ask", "--json", "le rappel 9 est fait"]));
    cmd.env("MISTRAL_API_KEY", "test-key").env("MISTRAL_BASE_URL", llm.base_url()).env("ARTHUR_LOCAL_FIRST", "0");
    let out = cmd.output().await.unwrap();
    // A refusal exits 3, like `arthur tool`.
    assert_eq!(out.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["incident"], serde_json::json!({"kind": "refus", "tool": "marquer_rappel_fait"}));
    assert_eq!(v["tools"][0]["outcome"], "refused");
}

/// « oui » after Arthur's question answers it: `ask` continues the conversation that asked
/// (recent, a question pending); `--new` starts fresh; `--json` carries the conversation.
#[test]
fn ask_continues_the_conversation_that_asked() {
    let cli = Cli::new();
    let ask = |args: &[&str]| -> Value {
        let out = cli.run(&[&["ask", "--json"], args].concat());
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // No hour said: the grammar asks before writing.
    let asked = ask(&["rappelle-moi d'appeler Luc demain"]);
    assert!(asked["written"].as_str().unwrap().ends_with('?'), "{asked}");
    assert!(asked["tools"].as_array().unwrap().is_empty());
    // `--new`: the bare « oui » belongs to no conversation, nothing is written.
    let fresh = ask(&["--new", "oui"]);
    assert_ne!(fresh["conversation"], asked["conversation"]);
    assert!(fresh["tools"].as_array().unwrap().is_empty(), "{fresh}");
    // Asked again, then answered: the same conversation, and the reminder is written.
    let asked = ask(&["rappelle-moi d'appeler Luc demain"]);
    let yes = ask(&["oui"]);
    assert_eq!(yes["conversation"], asked["conversation"]);
    assert_eq!(yes["tools"], serde_json::json!([{"name": "creer_rappel", "outcome": "done"}]), "{yes}");
    // The answer was no question: the next message starts a new conversation.
    let next = ask(&["quelle heure est-il ?"]);
    assert_ne!(next["conversation"], yes["conversation"]);
}

/// `arthur doctor` on a machine with no sound card (like CI's): it tries what it reports.
/// The microphone is not "ok" (it was opened and gave nothing), a data directory that cannot
/// be written is said so with the reason, every "--" line says what to do, a secret file
/// readable by others is flagged, and stderr stays clean.
#[test]
fn doctor_tells_the_truth_on_a_machine_without_a_sound_card() {
    use std::os::unix::fs::PermissionsExt;
    let cli = Cli::new();
    let quiet = |c: &mut Command| {
        c.env("XDG_RUNTIME_DIR", cli.dir.path())
            .env("PULSE_SERVER", format!("unix:{}", cli.dir.path().join("no-such-socket").display()));
    };
    let mut c = cli.command(&["doctor"]);
    quiet(&mut c);
    let out = c.output().unwrap();
    let report = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{report}{stderr}");
    assert!(stderr.trim().is_empty(), "stderr: {stderr}");
    let mic = report.lines().find(|l| l.contains("micro :")).expect("a microphone line");
    assert!(mic.starts_with("  [--] micro : aucun ne répond ("), "{mic}");
    assert!(report.contains("[ok] données : ") && report.contains("(écriture possible)"), "{report}");
    // Every "--" line says why and what to do.
    for line in report.lines().filter(|l| l.contains("[--]")) {
        let todo = ["lance ", "Branche ", "Vérifie ", "Corrige ", "mets ", "choisis", "Donne-toi", "models/fetch"];
        assert!(todo.iter().any(|t| line.contains(t)), "no advice: {line}");
        assert!(!line.contains("vous") && !line.contains("lancez"), "one register: {line}");
    }

    // A data directory that cannot be created: said, with why, and the exit says it too.
    let blocker = cli.dir.path().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let mut c = cli.command(&["doctor"]);
    quiet(&mut c);
    c.env("ARTHUR_DATA_DIR", blocker.join("data"));
    let out = c.output().unwrap();
    let report = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("[--] données : ") && report.contains("impossible d'y écrire (ce n'est pas un dossier)"),
        "{report}"
    );
    assert!(report.contains("[--] base : inaccessible (le dossier de données ne peut pas être créé)"), "{report}");

    // A configuration readable by others is flagged; once 0600, it is not.
    let config = cli.dir.path().join("arthur.toml");
    std::fs::write(&config, "[memory]\n").unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let doctor = |cli: &Cli| {
        let mut c = cli.command(&["doctor"]);
        quiet(&mut c);
        c.env("ARTHUR_CONFIG", &config);
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    let report = doctor(&cli);
    assert!(report.contains(&format!("[--] secrets : {} est lisible par d'autres", config.display())), "{report}");
    assert!(report.contains(&format!("chmod 600 {}", config.display())), "{report}");
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(!doctor(&cli).contains("secrets :"));
}

/// The set-up for running installs what building and running need, and none of the test
/// stack; the test set-up installs both.
#[test]
fn the_serve_setup_installs_only_what_running_needs() {
    let root = env!("CARGO_MANIFEST_DIR");
    let run = Command::new(format!("{root}/scripts/setup")).args(["--run", "--dry-run"]).output().unwrap();
    assert!(run.status.success());
    let run = String::from_utf8(run.stdout).unwrap();
    let packages = |out: &str| -> Vec<String> {
        let line = out.lines().find(|l| l.starts_with("packages")).unwrap().to_string();
        line.split(": ").nth(1).unwrap().split_whitespace().map(str::to_string).collect()
    };
    let run = packages(&run);
    for test_only in ["chromium", "dovecot-imapd", "clamav", "postgresql", "tmux", "imagemagick", "pulseaudio"] {
        assert!(!run.iter().any(|p| p == test_only), "scripts/serve would install {test_only}");
    }
    for needed in ["cmake", "libclang-dev", "libasound2-dev", "espeak-ng-data"] {
        assert!(run.iter().any(|p| p == needed), "{needed} is needed to build or run");
    }
    let test = Command::new(format!("{root}/scripts/setup")).arg("--dry-run").output().unwrap();
    let test = packages(&String::from_utf8(test.stdout).unwrap());
    assert!(run.iter().all(|p| test.contains(p)), "the test set-up includes the run one");
    assert!(test.iter().any(|p| p == "chromium"));
    let serve =
        Command::new(format!("{root}/scripts/serve")).arg("--dry-run").env("HOME", "/home/someone").output().unwrap();
    let serve = String::from_utf8(serve.stdout).unwrap();
    assert!(serve.contains("binary: /home/someone/.local/bin/arthur"), "{serve}");
}

/// The second round through `arthur ask` and the export, as a new user meets it: an empty
/// message says what to do (before anything is opened), a weekly reminder and an alarm are
/// stored and exported, the souvenirs are read back offline, the tools and --help are French.
#[test]
fn repeats_alarms_and_reads_through_ask_and_export() {
    let cli = Cli::new();
    let out = cli.run(&["ask", ""]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Erreur : le message est vide") && err.contains("arthur ask \"quelle heure est-il ?\""),
        "{err}"
    );
    assert!(!cli.data_dir().join("arthur.db").exists(), "nothing was opened");

    let r = cli.ok(&["ask", "rappelle-moi tous les lundis à 19 h de sortir les poubelles"]);
    assert!(r.starts_with("Rappel répété n°1 enregistré : « sortir les poubelles », tous les lundis à 19 h 00"), "{r}");
    let a = cli.ok(&["ask", "--new", "réveille-moi à 7 h"]);
    assert!(a.starts_with("Réveil n°1 réglé pour le ") && a.contains("à 7 h 00."), "{a}");
    cli.ok(&["ask", "--new", "retiens que le code du portail est 4512"]);
    let s = cli.ok(&["ask", "--new", "quels sont mes souvenirs ?"]);
    assert!(s.contains("n°1 « le code du portail est 4512 »"), "{s}");

    let v: Value = serde_json::from_str(&cli.ok(&["export", "--json"])).unwrap();
    assert_eq!(v["rappels"][0]["repetition"]["frequence"], "hebdomadaire");
    assert_eq!(v["reveils"][0]["genre"], "reveil");
    assert!(v["minuteurs"].as_array().unwrap().is_empty(), "an alarm is not a timer");
    assert!(cli.ok(&["export"]).contains("Réveils (1)"));

    let tools: Value = serde_json::from_str(&cli.ok(&["tools", "--json"])).unwrap();
    let names: Vec<&str> = tools.as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    for t in [
        "creer_rappel_recurrent",
        "deplacer_rappel",
        "arreter_rappel_recurrent",
        "creer_reveil",
        "lister_reveils",
        "annuler_reveil",
        "lister_souvenirs",
    ] {
        assert!(names.contains(&t), "{t} missing from arthur tools --json");
    }
    assert_eq!(names.len(), 38);
    let help = cli.ok(&["--help"]);
    assert!(
        help.contains("Utilisation :") && help.contains("Commandes") && help.contains("Affiche cette aide"),
        "{help}"
    );
}
