// Regenerates include/agent_intercom.h on every build that touches the ABI, so the committed
// header cannot drift silently; CI fails when the regenerated header differs from the commit.
use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = crate_dir.parent().unwrap().to_path_buf();
    let header = root.join("include/agent_intercom.h");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=../core/src");
    println!("cargo:rerun-if-changed={}", header.display());
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("ffi/cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen failed to generate the header");
    bindings.write_to_file(&header);
}
