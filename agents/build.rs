fn main() {
    // The memory's migrations are embedded by `sqlx::migrate!`: a new or changed file must
    // rebuild. Atlas' own (`migrations/atlas`) are not the memory's concern.
    println!("cargo:rerun-if-changed=../migrations/sqlite");
    println!("cargo:rerun-if-changed=../migrations/postgres");
}
