//! The ESM entry points of the npm package: for each CommonJS module a public subpath maps, an
//! `.mjs` that re-exports exactly the names its `module.exports` holds, so both module systems
//! expose the same names and share one instance.
//!
//! The names are read from the source, not by running it: every public module ends with one
//! `module.exports = { ... }` literal whose entries are `name`, `name: value` or `...binding`
//! where `binding` is `const binding = require('./relative.js')` in the same file (followed
//! recursively). Anything else is an error, so a module written another way fails the generator
//! instead of silently losing names; `tests/node/esm.test.mjs` also compares both systems' names
//! at run time.

use std::path::{Path, PathBuf};

/// The CommonJS modules that get an ESM twin (relative to `bindings-node/`).
pub const MODULES: [&str; 12] = [
    "index.js",
    "protocol-v4/index.js",
    "canonical/index.js",
    "policy/index.js",
    "vectors/index.js",
    "team-manifest/index.js",
    "boss/index.js",
    "boss/policy.js",
    "boss/vectors.js",
    "lib/broker.js",
    "lib/scratchpad.js",
    "transport/index.js",
];

fn strip_line_comments(text: &str) -> String {
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") { "" } else { line }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text between the braces of `module.exports = { ... }`.
fn exports_literal(text: &str, file: &Path) -> Result<String, String> {
    let start = text
        .find("module.exports = {")
        .ok_or_else(|| format!("{}: no `module.exports = {{`", file.display()))?
        + "module.exports = {".len();
    let mut depth = 1usize;
    for (offset, c) in text[start..].char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(text[start..start + offset].to_string());
                }
            }
            _ => {}
        }
    }
    Err(format!(
        "{}: unbalanced module.exports literal",
        file.display()
    ))
}

/// Splits a literal's body at its top-level commas.
fn entries(body: &str) -> Vec<String> {
    let (mut out, mut current, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in body.chars() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.into_iter()
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// The file a `const binding = require('./x.js')` of `text` names, relative to `file`.
fn required(text: &str, binding: &str, file: &Path) -> Result<PathBuf, String> {
    let needle = format!("const {binding} = require('");
    let at = text.find(&needle).ok_or_else(|| {
        format!(
            "{}: ...{binding} is not a `const {binding} = require('...')`",
            file.display()
        )
    })? + needle.len();
    let end = text[at..]
        .find('\'')
        .ok_or_else(|| format!("{}: unterminated require", file.display()))?;
    let target = &text[at..at + end];
    if !target.starts_with("./") && !target.starts_with("../") {
        return Err(format!(
            "{}: ...{binding} spreads a package, not a file",
            file.display()
        ));
    }
    Ok(file.parent().unwrap_or(Path::new(".")).join(target))
}

/// The export names of a CommonJS module, in `module.exports` order, spreads expanded.
pub fn export_names(file: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let text = strip_line_comments(&text);
    let mut names: Vec<String> = Vec::new();
    for entry in entries(&exports_literal(&text, file)?) {
        let found = if let Some(binding) = entry.strip_prefix("...") {
            export_names(&required(&text, binding.trim(), file)?)?
        } else {
            let key = entry.split(':').next().unwrap_or_default().trim();
            if !is_identifier(key) {
                return Err(format!(
                    "{}: cannot read the export {entry:?}",
                    file.display()
                ));
            }
            vec![key.to_string()]
        };
        for name in found {
            // Later entries override earlier ones, as in the object literal; keep one.
            names.retain(|n| *n != name);
            names.push(name);
        }
    }
    Ok(names)
}

/// Every ESM entry point: (path relative to the repository, content).
pub fn outputs(root: &Path) -> Vec<(String, String)> {
    MODULES
        .iter()
        .map(|module| {
            let file = root.join("bindings-node").join(module);
            let names = export_names(&file).unwrap_or_else(|e| panic!("{e}"));
            let base = Path::new(module)
                .file_name()
                .expect("a file")
                .to_string_lossy()
                .into_owned();
            let mut text = format!(
                "// GENERATED by `cargo xtask gen` from {base}. Do not edit.\n\
                 import cjs from './{base}'\n\n"
            );
            for name in &names {
                text += &format!("export const {name} = cjs.{name}\n");
            }
            text += "export default cjs\n";
            let path = format!("bindings-node/{}", module.replace(".js", ".mjs"));
            (path, text)
        })
        .collect()
}
