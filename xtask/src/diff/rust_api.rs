//! What a spec change does to the generated Rust API, in a few lines: the
//! public types of the `types` module (structs and their fields, enums and
//! their variants, type aliases, derives) and the `Client` methods (their
//! builder's parameters and what `send()` returns), compared between the code
//! generated from the base spec and from the working tree.
//!
//! Both sides are generated in memory with [`crate::codegen::render`] and
//! parsed with `syn`; nothing is written.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use anyhow::{Context, Result};
use quote::ToTokens;
use syn::{Fields, Item, ReturnType};

/// A public item of the generated crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiItem {
    /// A struct in `types`: its fields (`0`, `1` for tuple structs) and derives.
    Struct {
        /// `(name, type)` in declaration order.
        fields: Vec<(String, String)>,
        /// Derived traits (last path segment).
        derives: BTreeSet<String>,
        /// Whether a field is private (a newtype such as `Id(String)`): its
        /// fields cannot be named or destructured by users.
        private: bool,
    },
    /// An enum in `types`: its variants (with their payload) and derives.
    Enum {
        /// `(name, payload)`; the payload is empty for unit variants.
        variants: Vec<(String, String)>,
        /// Derived traits (last path segment).
        derives: BTreeSet<String>,
    },
    /// A type alias in `types`.
    Alias(String),
    /// A `Client` method (one per operation): its builder's parameters and
    /// the result of `send()`.
    Method {
        /// `(name, type)`; optional ones are `Option<…>`.
        params: Vec<(String, String)>,
        /// The return type of `send()`.
        returns: String,
    },
}

impl ApiItem {
    /// `struct`, `enum`, `type` or `method`.
    pub fn kind(&self) -> &'static str {
        match self {
            ApiItem::Struct { .. } => "struct",
            ApiItem::Enum { .. } => "enum",
            ApiItem::Alias(_) => "type",
            ApiItem::Method { .. } => "method",
        }
    }
}

/// The public API of one generated file: item path → item.
pub type Api = BTreeMap<String, ApiItem>;

/// Whether an item was added, removed or changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ApiChangeKind {
    /// Only in the new code.
    Added,
    /// Only in the base code.
    Removed,
    /// In both, different.
    Changed,
}

impl ApiChangeKind {
    /// `added`, `removed` or `changed`.
    pub fn id(self) -> &'static str {
        match self {
            ApiChangeKind::Added => "added",
            ApiChangeKind::Removed => "removed",
            ApiChangeKind::Changed => "changed",
        }
    }

    /// `+`, `-` or `~`.
    pub fn sign(self) -> char {
        match self {
            ApiChangeKind::Added => '+',
            ApiChangeKind::Removed => '-',
            ApiChangeKind::Changed => '~',
        }
    }
}

/// One changed item of the generated API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiChange {
    /// Item path: `types::Conversion`, `Client::conversion_get`.
    pub item: String,
    /// `struct`, `enum`, `type` or `method`.
    pub kind: &'static str,
    /// Added, removed or changed.
    pub change: ApiChangeKind,
    /// What changed inside the item (for a changed item), or a short
    /// description of it (for an added one).
    pub details: Vec<String>,
    /// Whether code written against the base crate can stop compiling:
    /// the item is removed, or changed in a way a user sees (a public field
    /// or enum variant added, removed or retyped, a derive removed, a
    /// method parameter removed or retyped, another `send()` result).
    /// Additions (a new item, a new optional builder parameter, a new
    /// derive) do not break.
    pub breaks: bool,
}

impl fmt::Display for ApiChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} `{}`",
            self.change.sign(),
            self.change.id(),
            self.kind,
            self.item
        )?;
        if !self.details.is_empty() {
            write!(f, ": {}", self.details.join("; "))?;
        }
        Ok(())
    }
}

/// A type as compact text: `Option<String>`, `Vec<types::Conversion>`.
pub fn type_text(tokens: impl ToTokens) -> String {
    let raw = tokens.to_token_stream().to_string();
    let mut s = raw
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" ::", "::")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace("& ", "&")
        .replace("' ", "'");
    for prefix in [
        "::std::option::",
        "::std::string::",
        "::std::vec::",
        "::std::collections::",
        "::std::num::",
        "::std::boxed::",
        "std::option::",
        "std::string::",
        "std::vec::",
        "::chrono::offset::",
        "::chrono::",
    ] {
        s = s.replace(prefix, "");
    }
    // Remaining absolute paths read better without the leading `::`; a
    // trailing comma in generics is noise.
    s = s
        .replace("<::", "<")
        .replace(", ::", ", ")
        .replace("(::", "(")
        .replace(",>", ">");
    match s.strip_prefix("::") {
        Some(rest) => rest.to_owned(),
        None => s,
    }
}

fn derives(attrs: &[syn::Attribute]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = attr.parse_nested_meta(|meta| {
            if let Some(last) = meta.path.segments.last() {
                out.insert(last.ident.to_string());
            }
            Ok(())
        });
    }
    out
}

fn fields_of(fields: &Fields) -> Vec<(String, String)> {
    match fields {
        Fields::Named(named) => named
            .named
            .iter()
            .map(|f| {
                let name = f
                    .ident
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                (name, type_text(&f.ty))
            })
            .collect(),
        Fields::Unnamed(unnamed) => unnamed
            .unnamed
            .iter()
            .enumerate()
            .map(|(i, f)| (i.to_string(), type_text(&f.ty)))
            .collect(),
        Fields::Unit => Vec::new(),
    }
}

fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

/// The inner type `T` of `Result<T, String>` (a builder field).
fn result_ok_type(ty: &syn::Type) -> String {
    if let syn::Type::Path(p) = ty
        && let Some(last) = p.path.segments.last()
        && last.ident == "Result"
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(inner)) = args.args.first()
    {
        return type_text(inner);
    }
    type_text(ty)
}

/// Extract the public API of a generated file.
pub fn extract(code: &str) -> Result<Api> {
    let file = syn::parse_file(code).context("parsing the generated code")?;
    let mut api = Api::new();
    // Client methods → builder struct names.
    let mut methods: Vec<(String, String)> = Vec::new();
    let mut builders: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut sends: BTreeMap<String, String> = BTreeMap::new();
    for item in &file.items {
        match item {
            Item::Mod(m) if m.ident == "types" => {
                for inner in m.content.iter().flat_map(|(_, items)| items) {
                    types_item(&mut api, inner);
                }
            }
            Item::Mod(m) if m.ident == "builder" => {
                for inner in m.content.iter().flat_map(|(_, items)| items) {
                    match inner {
                        Item::Struct(s) => {
                            let params = match &s.fields {
                                Fields::Named(named) => named
                                    .named
                                    .iter()
                                    .filter_map(|f| {
                                        let name = f.ident.as_ref()?.to_string();
                                        // A body is kept as its builder type;
                                        // the setter takes the type itself.
                                        let ty = result_ok_type(&f.ty)
                                            .replace("types::builder::", "types::");
                                        (name != "client").then_some((name, ty))
                                    })
                                    .collect(),
                                _ => Vec::new(),
                            };
                            builders.insert(s.ident.to_string(), params);
                        }
                        Item::Impl(imp) => {
                            let syn::Type::Path(p) = imp.self_ty.as_ref() else {
                                continue;
                            };
                            let Some(name) = p.path.segments.last().map(|s| s.ident.to_string())
                            else {
                                continue;
                            };
                            for f in &imp.items {
                                if let syn::ImplItem::Fn(f) = f
                                    && f.sig.ident == "send"
                                    && let ReturnType::Type(_, ty) = &f.sig.output
                                {
                                    sends.insert(name.clone(), type_text(ty));
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            Item::Impl(imp) => methods.extend(client_builder_methods(imp)),
            _ => {}
        }
    }
    for (method, builder) in methods {
        api.insert(
            format!("Client::{method}"),
            ApiItem::Method {
                params: builders.get(&builder).cloned().unwrap_or_default(),
                returns: sends.get(&builder).cloned().unwrap_or_default(),
            },
        );
    }
    Ok(api)
}

fn types_item(api: &mut Api, item: &Item) {
    match item {
        Item::Struct(s) if is_pub(&s.vis) => {
            api.insert(
                format!("types::{}", s.ident),
                ApiItem::Struct {
                    fields: fields_of(&s.fields),
                    derives: derives(&s.attrs),
                    private: s.fields.iter().any(|f| !is_pub(&f.vis)),
                },
            );
        }
        Item::Enum(e) if is_pub(&e.vis) => {
            let variants = e
                .variants
                .iter()
                .map(|v| {
                    let payload = match &v.fields {
                        Fields::Unit => String::new(),
                        Fields::Unnamed(_) => {
                            let types: Vec<String> =
                                fields_of(&v.fields).into_iter().map(|(_, t)| t).collect();
                            format!("({})", types.join(", "))
                        }
                        Fields::Named(_) => {
                            let fields: Vec<String> = fields_of(&v.fields)
                                .into_iter()
                                .map(|(n, t)| format!("{n}: {t}"))
                                .collect();
                            format!(" {{ {} }}", fields.join(", "))
                        }
                    };
                    (v.ident.to_string(), payload)
                })
                .collect();
            api.insert(
                format!("types::{}", e.ident),
                ApiItem::Enum {
                    variants,
                    derives: derives(&e.attrs),
                },
            );
        }
        Item::Type(t) if is_pub(&t.vis) => {
            api.insert(
                format!("types::{}", t.ident),
                ApiItem::Alias(type_text(&t.ty)),
            );
        }
        _ => {}
    }
}

/// Compare two lists of `(name, type)`: `field `x: T` added`, `… removed`,
/// `… type changed from A to B`.
fn compare_members(noun: &str, old: &[(String, String)], new: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    let show = |name: &str, ty: &str| {
        if ty.is_empty() {
            format!("{noun} `{name}`")
        } else if ty.starts_with('(') || ty.starts_with(' ') {
            format!("{noun} `{name}{ty}`")
        } else {
            format!("{noun} `{name}: {ty}`")
        }
    };
    for (name, ty) in old {
        if !new.iter().any(|(n, _)| n == name) {
            out.push(format!("{} removed", show(name, ty)));
        }
    }
    // Members whose type changed the same way share one line.
    let mut changed: Vec<((&str, &str), Vec<&str>)> = Vec::new();
    for (name, ty) in new {
        match old.iter().find(|(n, _)| n == name) {
            None => out.push(format!("{} added", show(name, ty))),
            Some((_, old_ty)) if old_ty != ty => {
                let key = (old_ty.as_str(), ty.as_str());
                match changed.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, names)) => names.push(name),
                    None => changed.push((key, vec![name])),
                }
            }
            Some(_) => {}
        }
    }
    for ((from, to), names) in changed {
        let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        let noun = if names.len() == 1 {
            noun.to_owned()
        } else {
            format!("{noun}s")
        };
        out.push(format!(
            "{noun} {} changed from `{from}` to `{to}`",
            names.join(", ")
        ));
    }
    out
}

fn compare_derives(old: &BTreeSet<String>, new: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for d in old.difference(new) {
        out.push(format!("derive `{d}` removed"));
    }
    for d in new.difference(old) {
        out.push(format!("derive `{d}` added"));
    }
    out
}

/// A one-line description of an added item.
fn describe(item: &ApiItem) -> Vec<String> {
    match item {
        ApiItem::Struct { fields, .. } => {
            if fields.len() == 1 && fields[0].0 == "0" {
                vec![format!("newtype of `{}`", fields[0].1)]
            } else {
                vec![format!("{} field(s)", fields.len())]
            }
        }
        ApiItem::Enum { variants, .. } => {
            let names: Vec<&str> = variants.iter().map(|(n, _)| n.as_str()).collect();
            vec![format!("variants {}", names.join(", "))]
        }
        ApiItem::Alias(ty) => vec![format!("= `{ty}`")],
        ApiItem::Method { params, returns } => {
            let names: Vec<String> = params.iter().map(|(n, t)| format!("{n}: {t}")).collect();
            let mut v = Vec::new();
            if !names.is_empty() {
                v.push(format!("parameters `{}`", names.join(", ")));
            }
            v.push(format!("send() -> `{returns}`"));
            v
        }
    }
}

/// `Option<T>` → `T` (a builder setter takes `T` whether or not the
/// parameter is optional).
fn unoptioned(ty: &str) -> &str {
    ty.strip_prefix("Option<")
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(ty)
}

/// Whether code using `old` can stop compiling against `new` (both
/// present, different). This is the judgement the compile test in
/// `xtask/tests/it/diff_ground_truth.rs` checks against rustc: the program
/// it compiles destructures every struct with public fields (no `..`),
/// matches every enum exhaustively, calls `Deref` on newtypes, asserts
/// every derive, and calls every method with every old parameter and binds
/// its `send()` result to the old type.
fn changed_breaks(old: &ApiItem, new: &ApiItem) -> bool {
    match (old, new) {
        (
            ApiItem::Struct {
                fields: of,
                derives: od,
                private: op,
            },
            ApiItem::Struct {
                fields: nf,
                derives: nd,
                private: np,
            },
        ) => !od.is_subset(nd) || op != np || of != nf,
        (
            ApiItem::Enum {
                variants: ov,
                derives: od,
            },
            ApiItem::Enum {
                variants: nv,
                derives: nd,
            },
        ) => !od.is_subset(nd) || ov != nv,
        (ApiItem::Alias(a), ApiItem::Alias(b)) => a != b,
        (
            ApiItem::Method {
                params: op,
                returns: or,
            },
            ApiItem::Method {
                params: np,
                returns: nr,
            },
        ) => {
            or != nr
                || op.iter().any(|(name, ty)| {
                    np.iter()
                        .find(|(n, _)| n == name)
                        .is_none_or(|(_, t)| unoptioned(t) != unoptioned(ty))
                })
        }
        _ => true,
    }
}

/// What changed between two APIs, in item order (`Client::…` then `types::…`).
pub fn compare(old: &Api, new: &Api) -> Vec<ApiChange> {
    let mut out = Vec::new();
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for name in names {
        let change = match (old.get(name), new.get(name)) {
            (Some(o), None) => Some((o.kind(), ApiChangeKind::Removed, Vec::new(), true)),
            (None, Some(n)) => Some((n.kind(), ApiChangeKind::Added, describe(n), false)),
            (Some(o), Some(n)) if o != n => {
                let breaks = changed_breaks(o, n);
                let details = match (o, n) {
                    (
                        ApiItem::Struct {
                            fields: of,
                            derives: od,
                            ..
                        },
                        ApiItem::Struct {
                            fields: nf,
                            derives: nd,
                            ..
                        },
                    ) => {
                        let mut d = compare_members("field", of, nf);
                        d.extend(compare_derives(od, nd));
                        d
                    }
                    (
                        ApiItem::Enum {
                            variants: ov,
                            derives: od,
                        },
                        ApiItem::Enum {
                            variants: nv,
                            derives: nd,
                        },
                    ) => {
                        let mut d = compare_members("variant", ov, nv);
                        d.extend(compare_derives(od, nd));
                        d
                    }
                    (ApiItem::Alias(a), ApiItem::Alias(b)) => {
                        vec![format!("changed from `{a}` to `{b}`")]
                    }
                    (
                        ApiItem::Method {
                            params: op,
                            returns: or,
                        },
                        ApiItem::Method {
                            params: np,
                            returns: nr,
                        },
                    ) => {
                        let mut d = compare_members("parameter", op, np);
                        if or != nr {
                            d.push(format!("send() now returns `{nr}` (was `{or}`)"));
                        }
                        d
                    }
                    (o, n) => vec![format!("changed from {} to {}", o.kind(), n.kind())],
                };
                Some((n.kind(), ApiChangeKind::Changed, details, breaks))
            }
            _ => None,
        };
        if let Some((kind, change, details, breaks)) = change {
            out.push(ApiChange {
                item: name.clone(),
                kind,
                change,
                details,
                breaks,
            });
        }
    }
    out
}

/// The public methods of the generated `impl Client` that return a request builder
/// (`builder::Name`), as (method, builder) pairs; empty for any other impl block.
pub(crate) fn client_builder_methods(imp: &syn::ItemImpl) -> Vec<(String, String)> {
    let is_client = imp.trait_.is_none()
        && matches!(imp.self_ty.as_ref(), syn::Type::Path(p) if p.path.is_ident("Client"));
    if !is_client {
        return Vec::new();
    }
    let mut methods = Vec::new();
    for f in &imp.items {
        let syn::ImplItem::Fn(f) = f else { continue };
        if !is_pub(&f.vis) {
            continue;
        }
        let ReturnType::Type(_, ty) = &f.sig.output else {
            continue;
        };
        let syn::Type::Path(p) = ty.as_ref() else {
            continue;
        };
        let segments: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        if let [first, builder] = segments.as_slice()
            && first == "builder"
        {
            methods.push((f.sig.ident.to_string(), builder.clone()));
        }
    }
    methods
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = r#"
pub mod types {
    #[derive(Clone, Debug, Default)]
    pub struct Thing { pub name: ::std::option::Option<::std::string::String>, pub size: i64 }
    pub struct Id(::std::string::String);
    #[derive(Clone, Copy)]
    pub enum Color { Red, Green }
    pub mod builder { pub struct Thing { name: Result<String, String> } }
}
pub struct Client;
impl Client {
    pub fn new() -> Self { Client }
    pub fn get_thing(&self) -> builder::GetThing<'_> { panic!() }
    pub fn old_op(&self) -> builder::OldOp<'_> { panic!() }
}
pub mod builder {
    pub struct GetThing<'a> { client: &'a super::Client, id: Result<types::Id, String> }
    impl<'a> GetThing<'a> {
        pub async fn send(self) -> Result<ResponseValue<types::Thing>, Error<()>> { panic!() }
    }
    pub struct OldOp<'a> { client: &'a super::Client }
    impl<'a> OldOp<'a> {
        pub async fn send(self) -> Result<ResponseValue<()>, Error<()>> { panic!() }
    }
}
"#;

    #[test]
    fn extracts_types_and_methods() {
        let api = extract(OLD).unwrap();
        let names: Vec<&str> = api.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            vec![
                "Client::get_thing",
                "Client::old_op",
                "types::Color",
                "types::Id",
                "types::Thing"
            ]
        );
        assert_eq!(
            api["Client::get_thing"],
            ApiItem::Method {
                params: vec![("id".into(), "types::Id".into())],
                returns: "Result<ResponseValue<types::Thing>, Error<()>>".into(),
            }
        );
        let ApiItem::Struct {
            fields, derives, ..
        } = &api["types::Thing"]
        else {
            panic!()
        };
        assert_eq!(fields[0], ("name".into(), "Option<String>".into()));
        assert!(derives.contains("Default"));
    }

    #[test]
    fn lists_changes_in_a_few_lines() {
        let new = OLD
            .replace("pub size: i64", "pub size: i64, pub tag: Option<String>")
            .replace(
                "#[derive(Clone, Debug, Default)]",
                "#[derive(Clone, Debug)]",
            )
            .replace("Red, Green", "Red, Green, Blue")
            .replace(
                "    pub fn old_op(&self) -> builder::OldOp<'_> { panic!() }\n",
                "",
            )
            .replace(
                "id: Result<types::Id, String>",
                "id: Result<Option<types::Id>, String>",
            );
        let changes = compare(&extract(OLD).unwrap(), &extract(&new).unwrap());
        let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            vec![
                "~ changed method `Client::get_thing`: parameter `id` changed from `types::Id` to `Option<types::Id>`",
                "- removed method `Client::old_op`",
                "~ changed enum `types::Color`: variant `Blue` added",
                "~ changed struct `types::Thing`: field `tag: Option<String>` added; derive `Default` removed",
            ]
        );
    }
}
