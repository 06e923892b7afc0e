//! Links libsonic into the crate: espeak-rs-sys builds espeak-ng with sonic (speed-up)
//! support when it finds the system's sonic, but does not link it itself.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let dirs = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"];
    match dirs.iter().find(|d| std::path::Path::new(d).join("libsonic.a").is_file()) {
        Some(dir) => {
            println!("cargo:rustc-link-search=native={dir}");
            println!("cargo:rustc-link-lib=static=sonic");
        }
        None => panic!("libsonic.a not found: install the Debian package libsonic-dev (scripts/setup does)"),
    }
}
