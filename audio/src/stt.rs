//! Speech-to-text (being written).
