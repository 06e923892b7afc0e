//! The storage suite: each test written once and run against both backends, a SQLite file
//! in a temporary directory and a fresh PostgreSQL database in one private cluster shared by
//! this test binary (`harness`), plus the PostgreSQL-only coordination tests.

#[path = "../postgres/harness.rs"]
mod harness;

mod atlas;
