//! (being written: see ARCHITECTURE.md, audio crate)
