//! Atlas' migrations (`migrations/atlas`), each written once for both backends as a template
//! (`arthur_agents::memory::migrations` says how one is read). They share the database, and
//! its `_sqlx_migrations` table, with the memory's: each migrator ignores the versions it
//! does not hold, and a version number is never used by both (tested).

use std::sync::LazyLock;

use arthur_agents::memory::migrations::{migrator, Dialect, Template};
use sqlx::migrate::Migrator;

/// Atlas' migrations, in order.
pub const ATLAS: [Template; 5] = [
    ("0004_atlas.sql", include_str!("../../../migrations/atlas/0004_atlas.sql")),
    ("0005_atlas_launch.sql", include_str!("../../../migrations/atlas/0005_atlas_launch.sql")),
    ("0006_atlas_agents.sql", include_str!("../../../migrations/atlas/0006_atlas_agents.sql")),
    ("0007_atlas_authority.sql", include_str!("../../../migrations/atlas/0007_atlas_authority.sql")),
    ("0008_atlas_retries.sql", include_str!("../../../migrations/atlas/0008_atlas_retries.sql")),
];

/// Atlas' migrator on SQLite (`sqlite::MIGRATOR`).
pub static SQLITE: LazyLock<Migrator> = LazyLock::new(|| migrator(&ATLAS, Dialect::Sqlite));
/// Atlas' migrator on PostgreSQL (`postgres::MIGRATOR`).
pub static POSTGRES: LazyLock<Migrator> = LazyLock::new(|| migrator(&ATLAS, Dialect::Postgres));

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of `migrations/atlas` is listed (a new file must be added to [`ATLAS`]).
    #[test]
    fn every_atlas_migration_file_is_listed() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations/atlas");
        assert_eq!(arthur_agents::memory::migrations::files_in(&folder).unwrap(), ATLAS.map(|(f, _)| f.to_string()));
    }
}
