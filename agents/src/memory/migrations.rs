//! Migrations written once for SQLite and PostgreSQL. Each file of `migrations/memory` (and
//! Atlas' `migrations/atlas`) is a template that gives both dialects' text: the types spelled
//! as tokens, and the few lines that really differ marked with their dialect. The text a
//! template gives is, byte for byte, the file each backend applied before the templates (the
//! databases in use record its SHA-384 and refuse a migration whose text changed: tested in
//! `atlas/tests/migrations.rs`).
//!
//! A template is the SQL with:
//!
//! - `{id}`, `{int}`, `{real}`, `{blob}`, `{time}`: the column types (`migrations/postgres/
//!   README.md` says why each is what it is);
//! - lines starting `@postgres ` or `@sqlite `: kept, without the mark, in that dialect only.

use std::borrow::Cow;
use std::sync::LazyLock;

use sqlx::migrate::{Migration, MigrationType, Migrator};

/// The SQL dialect a template is written out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// The mark of this dialect's own lines.
    fn mark(self) -> &'static str {
        match self {
            Dialect::Sqlite => "@sqlite",
            Dialect::Postgres => "@postgres",
        }
    }

    /// What each type token is in this dialect.
    fn types(self) -> [(&'static str, &'static str); 5] {
        match self {
            Dialect::Sqlite => [
                ("{id}", "INTEGER PRIMARY KEY"),
                ("{int}", "INTEGER"),
                ("{real}", "REAL"),
                ("{blob}", "BLOB"),
                ("{time}", "TEXT"),
            ],
            Dialect::Postgres => [
                ("{id}", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"),
                ("{int}", "BIGINT"),
                ("{real}", "DOUBLE PRECISION"),
                ("{blob}", "BYTEA"),
                ("{time}", "TEXT COLLATE \"C\""),
            ],
        }
    }
}

const DIALECTS: [Dialect; 2] = [Dialect::Sqlite, Dialect::Postgres];

/// A migration file: its name (`<version>_<description>.sql`, as sqlx reads a folder) and
/// its template.
pub type Template = (&'static str, &'static str);

/// The text `template` gives in `dialect`.
pub fn render(template: &str, dialect: Dialect) -> String {
    let mut sql = String::with_capacity(template.len());
    'lines: for line in template.split_inclusive('\n') {
        for d in DIALECTS {
            if let Some(own) = line.strip_prefix(d.mark()) {
                if d == dialect {
                    sql.push_str(own.strip_prefix(' ').unwrap_or(own));
                }
                continue 'lines;
            }
        }
        sql.push_str(line);
    }
    for (token, ty) in dialect.types() {
        sql = sql.replace(token, ty);
    }
    sql
}

/// The migration `file` gives in `dialect`, as `sqlx::migrate!` would have read the file
/// holding that text: version and description from the name, checksum from the text.
pub fn migration((file, template): Template, dialect: Dialect) -> Migration {
    let (version, rest) = file.split_once('_').expect("a migration file is named <version>_<description>.sql");
    let version = version.parse().expect("a migration's version is a number");
    let description = rest.trim_end_matches(".sql").replace('_', " ");
    let sql = render(template, dialect);
    let no_tx = sql.starts_with("-- no-transaction");
    Migration::new(version, Cow::Owned(description), MigrationType::Simple, Cow::Owned(sql), no_tx)
}

/// The migrator of `templates` in `dialect`. Several migrators share one database (the
/// memory's and Atlas'), and its `_sqlx_migrations` table: each ignores the versions it does
/// not hold (`ignore_missing`), and a version number is never used by two (tested).
pub fn migrator(templates: &[Template], dialect: Dialect) -> Migrator {
    let mut migrations: Vec<Migration> = templates.iter().map(|t| migration(*t, dialect)).collect();
    migrations.sort_by_key(|m| m.version);
    Migrator { migrations: Cow::Owned(migrations), ignore_missing: true, ..Migrator::DEFAULT }
}

/// The names of the migration files in `folder`, sorted: what a list of [`Template`]s must
/// name (a file not listed would never be applied; the tests compare them).
pub fn files_in(folder: &std::path::Path) -> std::io::Result<Vec<String>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".sql") {
            files.push(name);
        }
    }
    files.sort();
    Ok(files)
}

/// The memory's migrations (`migrations/memory`), in order.
pub const MEMORY: [Template; 9] = [
    ("0001_memory.sql", include_str!("../../../migrations/memory/0001_memory.sql")),
    ("0002_pending_actions.sql", include_str!("../../../migrations/memory/0002_pending_actions.sql")),
    ("0003_reminder_announcements.sql", include_str!("../../../migrations/memory/0003_reminder_announcements.sql")),
    (
        "0009_conversation_label_source.sql",
        include_str!("../../../migrations/memory/0009_conversation_label_source.sql"),
    ),
    ("0010_souvenir_tokens.sql", include_str!("../../../migrations/memory/0010_souvenir_tokens.sql")),
    ("0011_turn_stages.sql", include_str!("../../../migrations/memory/0011_turn_stages.sql")),
    ("0012_timers_and_lists.sql", include_str!("../../../migrations/memory/0012_timers_and_lists.sql")),
    ("0013_reminder_delivery.sql", include_str!("../../../migrations/memory/0013_reminder_delivery.sql")),
    ("0014_repeats_moves_alarms.sql", include_str!("../../../migrations/memory/0014_repeats_moves_alarms.sql")),
];

/// The memory's migrator on SQLite (`sqlite::MIGRATOR`).
pub static SQLITE: LazyLock<Migrator> = LazyLock::new(|| migrator(&MEMORY, Dialect::Sqlite));
/// The memory's migrator on PostgreSQL (`postgres::MIGRATOR`).
pub static POSTGRES: LazyLock<Migrator> = LazyLock::new(|| migrator(&MEMORY, Dialect::Postgres));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_gives_each_dialect_its_types_and_its_own_lines_only() {
        let template = "CREATE TABLE t (\n    id {id},\n    n {int} NOT NULL,\n    x {real},\n    b {blob},\n    at {time} NOT NULL,\n@postgres     j TEXT CHECK (j::jsonb IS NOT NULL)\n@sqlite     j TEXT CHECK (json_valid(j))\n);\n@postgres\n-- '{}' stays\n";
        assert_eq!(
            render(template, Dialect::Sqlite),
            "CREATE TABLE t (\n    id INTEGER PRIMARY KEY,\n    n INTEGER NOT NULL,\n    x REAL,\n    b BLOB,\n    at TEXT NOT NULL,\n    j TEXT CHECK (json_valid(j))\n);\n-- '{}' stays\n"
        );
        assert_eq!(
            render(template, Dialect::Postgres),
            "CREATE TABLE t (\n    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n    n BIGINT NOT NULL,\n    x DOUBLE PRECISION,\n    b BYTEA,\n    at TEXT COLLATE \"C\" NOT NULL,\n    j TEXT CHECK (j::jsonb IS NOT NULL)\n);\n\n-- '{}' stays\n"
        );
    }

    #[test]
    fn a_migration_is_named_and_summed_as_sqlx_reads_a_file() {
        let m = migration(("0011_turn_stages.sql", "@sqlite SELECT 1;\n"), Dialect::Sqlite);
        assert_eq!((m.version, &*m.description, &*m.sql, m.no_tx), (11, "turn stages", "SELECT 1;\n", false));
        assert_eq!(m.migration_type, MigrationType::Simple);
        // `printf 'SELECT 1;\n' | sha384sum`: the checksum is of the text given, not the template.
        let hex: String = m.checksum.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "24454095d8d7876ca8e842f34296ca645c83e0f7b50f048c99db4b2ff4da659267afc4ef3e994f3d74e18c741165d931"
        );
    }

    /// Every file of `migrations/memory` is listed (a new file must be added to [`MEMORY`]).
    #[test]
    fn every_memory_migration_file_is_listed() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations/memory");
        assert_eq!(files_in(&folder).unwrap(), MEMORY.map(|(f, _)| f.to_string()));
    }
}
