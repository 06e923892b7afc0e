//! Text-to-speech (being written).
