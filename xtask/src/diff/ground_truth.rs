//! A program that uses every public item of a generated client, for the
//! compile test that checks the rust-api verdict against rustc
//! (`xtask/tests/it/diff_ground_truth.rs`): compiled against the crate
//! generated from the new spec, it compiles exactly when nothing in the
//! generated Rust API breaks ([`super::rust_api::ApiChange::breaks`]).
//!
//! For the code generated from the base spec it writes, into a module that
//! sees the crate as `super::api`:
//!
//! * every struct with public fields destructured without `..`, each field
//!   bound to its old type (a field added, removed or retyped breaks);
//! * every newtype (private field) dereferenced to its old inner type;
//! * every enum matched exhaustively, each payload bound to its old type;
//! * every type alias converted to its old target;
//! * every derive asserted with a trait bound (`Clone`, `Debug`, `Default`,
//!   `PartialEq`, `Eq`, `Hash`, `PartialOrd`, `Ord`, `Copy`, `Serialize`,
//!   `Deserialize`);
//! * every `Client` method called, every builder parameter set with a value
//!   of its old type, and `send()`'s result bound to its old type.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use quote::ToTokens;
use syn::{Fields, Item, ReturnType};

/// Traits a derive can be checked for, and the bound that checks it.
const DERIVES: &[(&str, &str)] = &[
    ("Clone", "::std::clone::Clone"),
    ("Copy", "::std::marker::Copy"),
    ("Debug", "::std::fmt::Debug"),
    ("Default", "::std::default::Default"),
    ("PartialEq", "::std::cmp::PartialEq"),
    ("Eq", "::std::cmp::Eq"),
    ("Hash", "::std::hash::Hash"),
    ("PartialOrd", "::std::cmp::PartialOrd"),
    ("Ord", "::std::cmp::Ord"),
    ("Serialize", "::serde::Serialize"),
    ("Deserialize", "for<'de> ::serde::Deserialize<'de>"),
];

fn tokens(t: impl ToTokens) -> String {
    t.to_token_stream().to_string()
}

fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

fn derive_bounds(attrs: &[syn::Attribute]) -> Vec<&'static str> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = attr.parse_nested_meta(|meta| {
            if let Some(last) = meta.path.segments.last()
                && let Some((_, bound)) = DERIVES.iter().find(|(d, _)| last.ident == d)
            {
                out.push(*bound);
            }
            Ok(())
        });
    }
    out
}

/// The inner type of `Result<T, String>` (a builder field).
fn result_ok(ty: &syn::Type) -> String {
    if let syn::Type::Path(p) = ty
        && let Some(last) = p.path.segments.last()
        && last.ident == "Result"
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(inner)) = args.args.first()
    {
        // An optional parameter's setter takes the inner type.
        if let syn::Type::Path(ip) = inner
            && let Some(seg) = ip.path.segments.last()
            && seg.ident == "Option"
            && let syn::PathArguments::AngleBracketed(a) = &seg.arguments
            && let Some(syn::GenericArgument::Type(t)) = a.args.first()
        {
            return tokens(t);
        }
        return tokens(inner);
    }
    tokens(ty)
}

/// A builder struct: its name, its parameters (`name`, setter type) and
/// the type `send()` returns.
type Builder = (String, Vec<(String, String)>, String);

/// The usage program for generated `code`: a module body (see the module
/// docs) that refers to the generated crate as `super::api`.
pub fn usage_program(code: &str) -> Result<String> {
    let file = syn::parse_file(code).context("parsing the generated code")?;
    let mut types = String::new();
    let mut methods = String::new();
    let mut builders: Vec<Builder> = Vec::new();
    let mut client_methods: Vec<(String, String)> = Vec::new();
    let mut n = 0usize;
    let mut next = || {
        n += 1;
        n
    };
    for item in &file.items {
        match item {
            Item::Mod(m) if m.ident == "types" => {
                for inner in m.content.iter().flat_map(|(_, items)| items) {
                    match inner {
                        Item::Struct(s) if is_pub(&s.vis) => {
                            let name = &s.ident;
                            let i = next();
                            for bound in derive_bounds(&s.attrs) {
                                let _ = writeln!(
                                    types,
                                    "const _: fn() = || {{ fn f<T: {bound}>() {{}} f::<{name}>(); }};"
                                );
                            }
                            let private = s.fields.iter().any(|f| !is_pub(&f.vis));
                            match &s.fields {
                                Fields::Named(named) if !private => {
                                    let names: Vec<String> = named
                                        .named
                                        .iter()
                                        .filter_map(|f| f.ident.as_ref().map(ToString::to_string))
                                        .collect();
                                    let _ = writeln!(
                                        types,
                                        "#[allow(unused_variables)] fn s{i}(v: {name}) {{ let {name} {{ {} }} = v;",
                                        names.join(", ")
                                    );
                                    for f in &named.named {
                                        let field = f
                                            .ident
                                            .as_ref()
                                            .map(ToString::to_string)
                                            .unwrap_or_default();
                                        let _ = writeln!(
                                            types,
                                            "    let _: {} = {field};",
                                            tokens(&f.ty)
                                        );
                                    }
                                    let _ = writeln!(types, "}}");
                                }
                                Fields::Unnamed(unnamed)
                                    if private && unnamed.unnamed.len() == 1 =>
                                {
                                    let inner = tokens(&unnamed.unnamed[0].ty);
                                    let _ = writeln!(
                                        types,
                                        "fn s{i}(v: &{name}) -> &{inner} {{ &**v }}"
                                    );
                                }
                                _ => {
                                    let _ = writeln!(
                                        types,
                                        "#[allow(unused_variables)] fn s{i}(v: {name}) {{}}"
                                    );
                                }
                            }
                        }
                        Item::Enum(e) if is_pub(&e.vis) => {
                            let name = &e.ident;
                            let i = next();
                            for bound in derive_bounds(&e.attrs) {
                                let _ = writeln!(
                                    types,
                                    "const _: fn() = || {{ fn f<T: {bound}>() {{}} f::<{name}>(); }};"
                                );
                            }
                            let _ = writeln!(
                                types,
                                "#[allow(unused_variables)] fn e{i}(v: {name}) {{ match v {{"
                            );
                            for v in &e.variants {
                                let vn = &v.ident;
                                match &v.fields {
                                    Fields::Unit => {
                                        let _ = writeln!(types, "    {name}::{vn} => {{}}");
                                    }
                                    Fields::Unnamed(u) => {
                                        let binds: Vec<String> =
                                            (0..u.unnamed.len()).map(|k| format!("p{k}")).collect();
                                        let checks: Vec<String> = u
                                            .unnamed
                                            .iter()
                                            .enumerate()
                                            .map(|(k, f)| {
                                                format!("let _: {} = p{k};", tokens(&f.ty))
                                            })
                                            .collect();
                                        let _ = writeln!(
                                            types,
                                            "    {name}::{vn}({}) => {{ {} }}",
                                            binds.join(", "),
                                            checks.join(" ")
                                        );
                                    }
                                    Fields::Named(nf) => {
                                        let binds: Vec<String> = nf
                                            .named
                                            .iter()
                                            .filter_map(|f| {
                                                f.ident.as_ref().map(ToString::to_string)
                                            })
                                            .collect();
                                        let checks: Vec<String> = nf
                                            .named
                                            .iter()
                                            .filter_map(|f| {
                                                let id = f.ident.as_ref()?;
                                                Some(format!("let _: {} = {id};", tokens(&f.ty)))
                                            })
                                            .collect();
                                        let _ = writeln!(
                                            types,
                                            "    {name}::{vn} {{ {} }} => {{ {} }}",
                                            binds.join(", "),
                                            checks.join(" ")
                                        );
                                    }
                                }
                            }
                            let _ = writeln!(types, "}} }}");
                        }
                        Item::Type(t) if is_pub(&t.vis) => {
                            let i = next();
                            let _ = writeln!(
                                types,
                                "fn t{i}(v: {}) -> {} {{ v }}",
                                t.ident,
                                tokens(&t.ty)
                            );
                        }
                        _ => {}
                    }
                }
            }
            Item::Mod(m) if m.ident == "builder" => {
                let mut fields: Vec<(String, Vec<(String, String)>)> = Vec::new();
                let mut sends: Vec<(String, String)> = Vec::new();
                for inner in m.content.iter().flat_map(|(_, items)| items) {
                    match inner {
                        Item::Struct(s) => {
                            let params = match &s.fields {
                                Fields::Named(named) => named
                                    .named
                                    .iter()
                                    .filter_map(|f| {
                                        let name = f.ident.as_ref()?.to_string();
                                        let ty = result_ok(&f.ty)
                                            .replace("types :: builder ::", "types ::");
                                        (name != "client").then_some((name, ty))
                                    })
                                    .collect(),
                                _ => Vec::new(),
                            };
                            fields.push((s.ident.to_string(), params));
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
                                    sends.push((name.clone(), tokens(ty)));
                                }
                            }
                        }
                        _ => {}
                    }
                }
                for (name, params) in fields {
                    let ret = sends
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, r)| r.clone())
                        .unwrap_or_default();
                    builders.push((name, params, ret));
                }
            }
            Item::Impl(imp) => client_methods.extend(super::rust_api::client_builder_methods(imp)),
            _ => {}
        }
    }
    for (method, builder) in client_methods {
        let Some((_, params, ret)) = builders.iter().find(|(n, _, _)| *n == builder) else {
            continue;
        };
        let i = next();
        let args: Vec<String> = params
            .iter()
            .map(|(name, ty)| format!("{name}: {ty}"))
            .collect();
        let _ = write!(
            methods,
            "#[allow(unused)] async fn m{i}(client: &Client{}{}) {{\n    let r: {ret} = client.{method}()",
            if args.is_empty() { "" } else { ", " },
            args.join(", ")
        );
        for (name, _) in params {
            let _ = write!(methods, ".{name}({name})");
        }
        let _ = writeln!(methods, ".send().await;\n}}");
    }
    Ok(format!(
        "#![allow(dead_code, unused_imports, clippy::all)]\n\
         /// Every type, by the names the `types` module uses.\n\
         mod types_use {{\n    use super::super::api::types::*;\n{types}}}\n\
         /// Every method, by the names the `builder` module uses.\n\
         mod methods_use {{\n    use super::super::api::{{types, Client, Error, ResponseValue, ByteStream}};\n{methods}}}\n"
    ))
}
