//! Atlas, the background e-mail pipeline: a dedicated mailbox is polled, each message is
//! stored once, scanned, classified by a guarded model call and materialised; the launcher
//! (next issue) acts on what was classified.

pub mod ocr;
pub mod scan;
