//! Rule `module-cycles`: no module of a crate imports from a module that
//! (transitively) imports it.
//!
//! Reads a crate from its root file (`lib.rs`, `main.rs`, a test's or an
//! example's file), following its `mod x;` declarations as rustc does: each
//! file is a module (`a/mod.rs` and `a.rs` are `a`; `#[path = ".."]` is
//! followed, relative to the declaring file's folder); an inline
//! `mod x { .. }` is module `x` of its file's module, as `mod x;` in a file of
//! its own would be. [`workspace_crates`] lists every crate of the workspace
//! (each target of each package: library, binaries, tests, examples, benches).
//!
//! A module's imports are its `use` declarations and the paths in its code
//! that start with `crate::`, `super::`, `self::` or the name of a child
//! module it declares, each resolved to the longest module that exists
//! (`crate::a::b::Item` is module `a::b` when `a/b.rs` exists, else `a`);
//! `$crate::` in a macro's body is where the macro is used, not an import.
//! Declaring a child (`mod x;`) is not an import; re-exporting from it is
//! (`pub use x::Item;`). So a child that reaches into its parent's re-exports
//! (`super::Item`) while the parent re-exports from it closes a cycle: children
//! import siblings by their own path (`super::sibling::Item`). Test code counts
//! too, as the test module it sits in. Each cycle is reported once, as the
//! modules in order.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// A module path inside the crate: `""` is the crate root, `a::b` a module.
pub type Module = String;

/// The modules of a crate and what each imports.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Graph {
    /// Module -> the modules it imports from (itself excluded).
    pub edges: BTreeMap<Module, BTreeSet<Module>>,
}

/// Reads the module graph of the library (else the binary) whose sources are in `src`.
pub fn read(src: &Path) -> Result<Graph, String> {
    let lib = src.join("lib.rs");
    read_root(
        if lib.exists() {
            lib
        } else {
            src.join("main.rs")
        }
        .as_path(),
    )
}

/// Reads the module graph of the crate whose root file is `root`.
pub fn read_root(root: &Path) -> Result<Graph, String> {
    let mut files = BTreeMap::new();
    collect(root, true, String::new(), &mut files)?;
    let modules: BTreeSet<Module> = files.keys().cloned().collect();
    let mut graph = Graph::default();
    for (module, tokens) in &files {
        let children: BTreeSet<String> = declared_children(tokens)
            .into_iter()
            .map(|(child, _)| child)
            .filter(|child| modules.contains(&join(module, child)))
            .collect();
        graph.edges.entry(module.clone()).or_default();
        let mut paths = Vec::new();
        paths_in(tokens.clone(), &children, &mut Vec::new(), &mut paths);
        for (inline, path) in paths {
            // An inline module (`mod tests { .. }`) is a module of its own, as
            // `mod tests;` in a file of its own would be.
            let node = inline.iter().fold(module.clone(), |m, name| join(&m, name));
            let imports = graph.edges.entry(node.clone()).or_default();
            if let Some(target) = resolve(module, &inline, &path, &modules)
                && target != node
                && &target != module
            {
                imports.insert(target);
            }
        }
    }
    Ok(graph)
}

/// The cycles of `graph` (strongly connected components of more than one
/// module), each as a list of modules starting at its smallest, in an order
/// that follows its edges.
pub fn cycles(graph: &Graph) -> Vec<Vec<Module>> {
    // Tarjan's algorithm, iterative over the small graphs here is not needed:
    // a recursive one is clear and a crate has a few hundred modules at most.
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !graph.edges.contains_key(w) {
                continue;
            }
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.out.push(order(graph, component));
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// One cycle through the component: from its smallest module, following edges
/// inside the component back to the start (a shortest one, by breadth-first search).
fn order(graph: &Graph, component: Vec<Module>) -> Vec<Module> {
    let members: BTreeSet<&str> = component.iter().map(String::as_str).collect();
    let start = component.iter().min().cloned().unwrap_or_default();
    let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.as_str()]);
    let mut seen = BTreeSet::from([start.as_str()]);
    while let Some(v) = queue.pop_front() {
        for w in graph.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if w == start {
                let mut path = vec![v.to_owned()];
                let mut at = v;
                while let Some(p) = previous.get(at) {
                    path.push((*p).to_owned());
                    at = p;
                }
                path.reverse();
                return path;
            }
            if members.contains(w) && seen.insert(w) {
                previous.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    component
}

/// `crate` for the root, the module path otherwise.
pub fn display(module: &str) -> &str {
    if module.is_empty() { "crate" } else { module }
}

/// A crate of the workspace: a name (`package (kind name)`) and its root file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CrateRoot {
    /// `SDK (lib)`, `cli (bin apictl)`, `SDK (test it)`, ...
    pub name: String,
    /// The root file of the crate.
    pub root: std::path::PathBuf,
}

/// Every crate of the workspace, from `cargo metadata --no-deps`: each target of
/// each member package (library, binaries, tests, examples, benches).
pub fn workspace_crates(metadata: &serde_json::Value) -> Vec<CrateRoot> {
    let mut out = Vec::new();
    let members: BTreeSet<&str> = metadata["workspace_members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_str)
        .collect();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        if !package["id"]
            .as_str()
            .is_some_and(|id| members.contains(id))
        {
            continue;
        }
        let package_name = package["name"].as_str().unwrap_or("?");
        for target in package["targets"].as_array().into_iter().flatten() {
            let kind = target["kind"][0].as_str().unwrap_or("?");
            let target_name = target["name"].as_str().unwrap_or("?");
            let Some(src) = target["src_path"].as_str() else {
                continue;
            };
            let name = if kind == "lib" {
                format!("{package_name} (lib)")
            } else {
                format!("{package_name} ({kind} {target_name})")
            };
            out.push(CrateRoot {
                name,
                root: src.into(),
            });
        }
    }
    out.sort();
    out
}

/// Reads `file` as module `module` and, following its `mod x;` declarations,
/// every module below it. `owns_folder`: the file is a crate root or a `mod.rs`,
/// whose children sit beside it (else in the folder named like the file).
fn collect(
    file: &Path,
    owns_folder: bool,
    module: Module,
    out: &mut BTreeMap<Module, TokenStream>,
) -> Result<(), String> {
    let text = fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let tokens: TokenStream = text
        .parse()
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let here = file.parent().unwrap_or(Path::new("."));
    let folder = if owns_folder {
        here.to_path_buf()
    } else {
        here.join(file.file_stem().unwrap_or_default())
    };
    let children = declared_children(&tokens);
    out.insert(module.clone(), tokens);
    for (child, path) in children {
        let (child_file, owns) = match path {
            Some(p) => (here.join(p), true),
            None => {
                let flat = folder.join(format!("{child}.rs"));
                if flat.exists() {
                    (flat, false)
                } else {
                    (folder.join(&child).join("mod.rs"), true)
                }
            }
        };
        if !child_file.exists() {
            // A module rustc would not find either (or one behind a `cfg` for
            // another platform); nothing to read.
            continue;
        }
        collect(&child_file, owns, join(&module, &child), out)?;
    }
    Ok(())
}

fn join(module: &str, child: &str) -> Module {
    if module.is_empty() {
        child.to_owned()
    } else {
        format!("{module}::{child}")
    }
}

fn is(tree: Option<&TokenTree>, word: &str) -> bool {
    match tree {
        Some(TokenTree::Ident(i)) => i == word,
        Some(TokenTree::Punct(p)) => word.len() == 1 && word.starts_with(p.as_char()),
        _ => false,
    }
}

fn ident(tree: Option<&TokenTree>) -> Option<String> {
    match tree {
        Some(TokenTree::Ident(i)) => Some(i.to_string()),
        _ => None,
    }
}

/// `::` at `trees[i]`.
fn path_sep(trees: &[TokenTree], i: usize) -> bool {
    is(trees.get(i), ":") && is(trees.get(i + 1), ":")
}

/// The file's `mod name;` declarations (not inline `mod name { .. }`), each
/// with its `#[path = "p"]` attribute if it has one.
fn declared_children(tokens: &TokenStream) -> Vec<(String, Option<String>)> {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let mut out = Vec::new();
    let mut path = None;
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => {
                let attr: Vec<TokenTree> = g.stream().into_iter().collect();
                if is(attr.first(), "path") && is(attr.get(1), "=") {
                    path = attr
                        .get(2)
                        .map(|l| l.to_string().trim_matches('"').to_owned());
                }
            }
            TokenTree::Ident(m) if m == "mod" && is(trees.get(i + 2), ";") => {
                if let Some(name) = ident(trees.get(i + 1)) {
                    out.push((name, path.take()));
                }
            }
            TokenTree::Punct(p) if p.as_char() == ';' => path = None,
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => path = None,
            _ => {}
        }
    }
    out
}

/// Every path in `tokens` that starts with `crate`, `super`, `self` or a
/// declared child module, with `use` groups (`use super::{a::X, b}`) expanded,
/// as segments (a child's name gets `self` in front), each with the inline
/// modules (`mod tests { .. }`) it sits in. Comments and string literals (doc
/// examples use paths too) are not code.
fn paths_in(
    tokens: TokenStream,
    children: &BTreeSet<String>,
    inline: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Vec<String>)>,
) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        if let TokenTree::Group(g) = &trees[i] {
            paths_in(g.stream(), children, inline, out);
        }
        let Some(word) = ident(trees.get(i)) else {
            i += 1;
            continue;
        };
        if word == "mod"
            && let (Some(name), Some(TokenTree::Group(body))) =
                (ident(trees.get(i + 1)), trees.get(i + 2))
        {
            // `mod name { .. }`: an inline module.
            inline.push(name);
            paths_in(body.stream(), children, inline, out);
            inline.pop();
            i += 3;
            continue;
        }
        // `$crate::` in a macro's body names this crate where the macro is used,
        // not an import of the module that defines the macro; `a::child` is not
        // a path that starts at `child`.
        let follows = i > 0 && (is(trees.get(i - 1), "$") || is(trees.get(i - 1), ":"));
        let is_head = matches!(word.as_str(), "crate" | "super" | "self")
            || (inline.is_empty() && children.contains(&word));
        if follows || !is_head || !path_sep(&trees, i + 1) {
            i += 1;
            continue;
        }
        let (paths, end) = parse_path(&trees, i);
        for mut path in paths {
            if !matches!(path[0].as_str(), "crate" | "super" | "self") {
                path.insert(0, "self".to_owned());
            }
            out.push((inline.clone(), path));
        }
        i = end;
    }
}

/// Parses a path at `trees[at]` (with `{..}` groups); returns the paths and the end.
fn parse_path(trees: &[TokenTree], at: usize) -> (Vec<Vec<String>>, usize) {
    let mut i = at;
    let mut segments = Vec::new();
    while let Some(segment) = ident(trees.get(i)) {
        segments.push(segment);
        i += 1;
        if !path_sep(trees, i) {
            break;
        }
        i += 2;
        if let Some(TokenTree::Group(group)) = trees.get(i) {
            // A group: each member (up to a `,`) is a path relative to `segments`.
            let members: Vec<TokenTree> = group.stream().into_iter().collect();
            let mut out = Vec::new();
            for member in members.split(|t| is(Some(t), ",")) {
                for m in parse_path(member, 0).0 {
                    let mut full = segments.clone();
                    full.extend(m.into_iter().filter(|s| s != "self"));
                    out.push(full);
                }
            }
            return (out, i + 1);
        }
    }
    (vec![segments], i)
}

/// The module a path (from a file of `module`, inside its inline modules
/// `inline`) lands in: the longest prefix that is a module of the crate.
fn resolve(
    module: &str,
    inline: &[String],
    path: &[String],
    modules: &BTreeSet<Module>,
) -> Option<Module> {
    let mut base: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").collect()
    };
    base.extend(inline.iter().map(String::as_str));
    let mut rest = path.iter().map(String::as_str).peekable();
    match rest.next()? {
        "crate" => base.clear(),
        "self" => {}
        "super" => {
            base.pop()?;
            while rest.peek() == Some(&"super") {
                rest.next();
                base.pop()?;
            }
        }
        _ => return None,
    }
    base.extend(rest);
    (0..=base.len())
        .rev()
        .map(|n| base[..n].join("::"))
        .find(|candidate| modules.contains(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let full = dir.path().join(path);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_child_that_imports_its_parents_reexport_closes_a_cycle() {
        let dir = tree(&[
            ("lib.rs", "mod a;\n"),
            (
                "a/mod.rs",
                "mod b;\nmod c;\npub use b::Thing;\npub use c::Other;\n",
            ),
            ("a/b.rs", "pub struct Thing;\n"),
            // `super::Thing` is `a`'s re-export, and `a` re-exports from c: c -> a -> c.
            ("a/c.rs", "pub struct Other;\nuse super::Thing;\n"),
        ]);
        let graph = read(dir.path()).unwrap();
        assert_eq!(
            cycles(&graph),
            vec![vec!["a".to_owned(), "a::c".to_owned()]]
        );
    }

    #[test]
    fn siblings_by_their_own_path_are_acyclic() {
        let dir = tree(&[
            ("lib.rs", "mod a;\n// use crate::a::c; in a comment\n"),
            (
                "a/mod.rs",
                "mod b;\nmod c;\n#[cfg(test)]\nmod tests;\npub use b::Thing;\n",
            ),
            (
                "a/b.rs",
                "pub struct Thing;\nconst DOC: &str = \"crate::a::c\";\n",
            ),
            (
                "a/c.rs",
                "use super::b::{self, Thing as T};\nfn f() -> crate::a::b::Thing { b::Thing }\n\
                 #[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
            ),
            ("a/tests.rs", "use super::*;\n"),
        ]);
        let graph = read(dir.path()).unwrap();
        assert_eq!(cycles(&graph), Vec::<Vec<Module>>::new());
        assert!(graph.edges["a::c"].contains("a::b"));
        assert!(!graph.edges["a::b"].contains("a::c"), "{graph:?}");
        // The inline test module's `super` is `a::c` itself; a tests file's is `a`.
        assert!(!graph.edges["a::c"].contains("a"), "{graph:?}");
        assert!(graph.edges["a::tests"].contains("a"));
        assert!(graph.edges["a"].contains("a::b"));
    }

    fn sdk_cycles() -> Vec<Vec<Module>> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/sa360-video-sdk/src");
        cycles(&read(&src).expect("the SDK's sources"))
    }

    #[test]
    fn the_sdk_has_no_cycle_outside_search_ads() {
        let outside: Vec<_> = sdk_cycles()
            .into_iter()
            .filter(|c| !c.iter().all(|m| m.starts_with("search_ads")))
            .collect();
        assert!(outside.is_empty(), "import cycles: {outside:?}");
    }

    #[test]
    fn the_sdk_has_no_cycle_at_all() {
        assert_eq!(sdk_cycles(), Vec::<Vec<Module>>::new());
    }

    #[test]
    fn dollar_crate_in_a_macro_is_not_an_import() {
        let dir = tree(&[
            ("lib.rs", "mod m;\npub use m::Thing;\n"),
            (
                "m.rs",
                "pub struct Thing;\n#[macro_export]\nmacro_rules! make { () => { $crate::Thing } }\n",
            ),
        ]);
        assert_eq!(
            cycles(&read(dir.path()).unwrap()),
            Vec::<Vec<Module>>::new()
        );
    }

    #[test]
    fn path_attributes_and_binary_roots_are_followed() {
        let dir = tree(&[
            ("src/lib.rs", "pub struct Unused;\n"),
            (
                "src/main.rs",
                "#[path = \"../common/mod.rs\"]\npub(crate) mod common;\nmod a;\n",
            ),
            ("common/mod.rs", "pub fn f() { crate::a::g(); }\n"),
            ("src/a.rs", "pub fn g() { crate::common::f(); }\n"),
        ]);
        let graph = read_root(&dir.path().join("src/main.rs")).unwrap();
        assert_eq!(
            cycles(&graph),
            vec![vec!["a".to_owned(), "common".to_owned()]]
        );
        // The library is its own crate, without main.rs's modules.
        assert_eq!(read(&dir.path().join("src")).unwrap().edges.len(), 1);
    }

    #[test]
    fn every_crate_of_the_workspace_is_listed_and_acyclic() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = std::process::Command::new(env!("CARGO"))
            .args([
                "metadata",
                "--no-deps",
                "--format-version",
                "1",
                "--manifest-path",
            ])
            .arg(root.join("Cargo.toml"))
            .output()
            .unwrap();
        assert!(out.status.success());
        let crates = workspace_crates(&serde_json::from_slice(&out.stdout).unwrap());
        let names: Vec<&str> = crates.iter().map(|c| c.name.as_str()).collect();
        for expected in [
            "sa360-video-sdk (lib)",
            "sa360-video-fakes (lib)",
            "sa360-video-fakes (test it)",
            "xtask (lib)",
            "sa360-video-cli (bin apictl)",
            "workspace-tests (test it)",
        ] {
            assert!(names.contains(&expected), "{expected} not in {names:?}");
        }
        let found: Vec<(String, Vec<Module>)> = crates
            .iter()
            .flat_map(|c| {
                let graph = read_root(&c.root).unwrap();
                cycles(&graph).into_iter().map(|cy| (c.name.clone(), cy))
            })
            .collect();
        assert_eq!(found, Vec::<(String, Vec<Module>)>::new());
    }

    #[test]
    fn a_longer_cycle_is_named_in_order() {
        let dir = tree(&[
            ("lib.rs", "mod x;\nmod y;\nmod z;\n"),
            ("x.rs", "use crate::y::Y;\n"),
            ("y.rs", "pub struct Y; use crate::z::{Z};\n"),
            ("z.rs", "pub struct Z; fn f() { crate::x::g(); }\n"),
        ]);
        let graph = read(dir.path()).unwrap();
        assert_eq!(
            cycles(&graph),
            vec![vec!["x".to_owned(), "y".to_owned(), "z".to_owned()]]
        );
    }
}
