//! First start on a fresh machine: without a configuration file anywhere, `arthur serve`
//! writes the commented example (`packaging/arthur.example.toml`) where Arthur looks for
//! it, so the user has one place to start from. The data dir and the database are created
//! by `App::open` as on every start.

use std::path::PathBuf;

use anyhow::Context;

/// The example configuration, every line commented out.
pub const EXAMPLE_CONFIG: &str = include_str!("../packaging/arthur.example.toml");

/// Writes the example configuration when no file is configured or present; returns its
/// path when it was written.
pub fn prepare() -> anyhow::Result<Option<PathBuf>> {
    if std::env::var_os("ARTHUR_CONFIG").is_some() {
        return Ok(None);
    }
    let Some(path) = crate::config::default_config_file() else { return Ok(None) };
    if path.exists() {
        return Ok(None);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // create_new: never overwrite a file that appeared meanwhile. 0600: it invites an
    // `api_key`, which no other account may read.
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
        Ok(mut f) => {
            std::io::Write::write_all(&mut f, EXAMPLE_CONFIG.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            Ok(Some(path))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
        Err(e) => Err(e).with_context(|| format!("writing {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_is_a_valid_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("arthur.toml");
        std::fs::write(&path, super::EXAMPLE_CONFIG).unwrap();
        let (config, data) = (path.to_str().unwrap().to_string(), dir.path().to_str().unwrap().to_string());
        let env = move |k: &str| match k {
            "ARTHUR_CONFIG" => Some(config.clone()),
            "ARTHUR_DATA_DIR" => Some(data.clone()),
            _ => None,
        };
        let settings = crate::config::Settings::load_from(&env).expect("the example loads");
        assert_eq!(settings.config_file.as_deref(), Some(path.as_path()));
        // Uncommenting a line gives a working key (no typo in the example).
        let uncommented =
            super::EXAMPLE_CONFIG.replace("# timezone = ", "timezone = ").replace("# barge_in = ", "barge_in = ");
        std::fs::write(&path, uncommented).unwrap();
        crate::config::Settings::load_from(&env).expect("uncommented keys are known");
    }
}
