//! French as Arthur hears it: text folded into words (what speech recognition and typing
//! both produce), numbers said in words or digits, dates, times, durations and ranges of
//! days, and the command grammar — French sentence templates kept as data
//! (`templates/fr.toml`) with typed slots, matched against the whole utterance.
//!
//! This crate is a leaf: it knows nothing of tools, stores or models. It says which intent
//! a sentence expresses and with which slot values; the agents decide what that means.

pub mod candidates;
pub mod duration;
pub mod fold;
pub mod grammar;
pub mod moment;
pub mod number;
pub mod recurrence;
pub mod repair;
pub mod topic;
pub mod words;

pub use grammar::{Grammar, Lexicon, Match, SlotValue};
pub use moment::{DayRef, Direction, Moment, MomentIssue, RangeRef};
pub use recurrence::Recurrence;
pub use words::Words;
