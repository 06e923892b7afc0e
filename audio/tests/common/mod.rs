//! What the audio tests share: where `models/fetch` installed the models. The crate itself
//! never looks (the binary's configuration hands it paths); its tests do, the same way.

#![allow(dead_code)]

use std::path::PathBuf;

use arthur_audio::piper::{PiperOptions, ONNXRUNTIME_FILE};

/// `$XDG_DATA_HOME/arthur/models`, else `~/.local/share/arthur/models`.
pub fn model_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share")))
        .expect("neither XDG_DATA_HOME nor HOME is set")
        .join("arthur")
        .join("models")
}

/// Piper on the ONNX Runtime `models/fetch` installed (or `ORT_DYLIB_PATH`).
pub fn piper_options() -> PiperOptions {
    let onnxruntime =
        std::env::var_os("ORT_DYLIB_PATH").map(PathBuf::from).unwrap_or_else(|| model_dir().join(ONNXRUNTIME_FILE));
    PiperOptions { onnxruntime: Some(onnxruntime), ..PiperOptions::default() }
}
