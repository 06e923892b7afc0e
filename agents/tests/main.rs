//! The agents crate's integration tests, one binary: the memory store on SQLite (and, in
//! the system tier, feature `system-tests`, on a private PostgreSQL cluster), the claim
//! detector on its corpora, spoken = written fact for fact, the LLM client against the
//! scripted server.

#[path = "../../tests/postgres/harness.rs"]
mod harness;

mod claims_corpus;
mod grammar_corpus;
mod ha_corpus;
#[cfg(feature = "scripted")]
mod llm;
mod memory_store;
mod report_facts;
