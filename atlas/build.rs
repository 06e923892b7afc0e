fn main() {
    // Atlas' migrations are embedded by `sqlx::migrate!`: a new or changed file must rebuild.
    println!("cargo:rerun-if-changed=../migrations/atlas");
}
