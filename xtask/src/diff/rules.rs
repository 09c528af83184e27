//! The classification table of `cargo xtask diff`: every kind of change the comparer reports,
//! with its *wire* class in a request and in a response and its *rust-api* class
//! ([`RustApiClass`]: what it typically does to the generated crate; the verdict itself is
//! computed by [`super::rust_api`], and the ground-truth test holds the two together).
//! CONTRIBUTING.md ("Reviewing a spec change", "Wire classes") says how a change is classed,
//! as strict as oasdiff and no stricter (scored by `xtask/tests/it/oasdiff_corpus.rs`);
//! [`markdown_table`] is its rule table (a test fails when they differ).
//!
//! [`RULES`] is the single table; [`Rule::class`] is the only place a class is decided (a
//! callback's swap, [`Class::swapped`], is applied to its result). Each rule has a fixture case
//! in `compare/tests.rs` (a test fails if a rule has none).

use std::fmt;

/// Which way the data flows where a change was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// Client → server: parameters and request bodies.
    Request,
    /// Server → client: response bodies.
    Response,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Request => "request",
            Direction::Response => "response",
        })
    }
}

/// Who a change breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Breaks nobody.
    Compatible,
    /// Breaks nobody for certain, but may break some (a pattern changed, a
    /// response field a server stops sending because it became `writeOnly`):
    /// the wire verdict is `none`, shown as a warning (oasdiff's `warning`
    /// level).
    Warning,
    /// Breaks existing clients (and code using the generated crates).
    Clients,
    /// Breaks servers implemented from the base spec.
    Servers,
    /// Breaks both.
    ClientsAndServers,
}

impl Class {
    /// Stable identifier, used in JSON output.
    pub fn id(self) -> &'static str {
        match self {
            Class::Compatible => "compatible",
            Class::Warning => "warning",
            Class::Clients => "breaking-clients",
            Class::Servers => "breaking-servers",
            Class::ClientsAndServers => "breaking-clients-and-servers",
        }
    }

    /// Human-readable label.
    pub fn label(self) -> &'static str {
        match self {
            Class::Compatible => "compatible",
            Class::Warning => "warning",
            Class::Clients => "breaking for clients",
            Class::Servers => "breaking for servers",
            Class::ClientsAndServers => "breaking for clients and servers",
        }
    }

    /// Whether the change breaks anyone.
    pub fn is_breaking(self) -> bool {
        !matches!(self, Class::Compatible | Class::Warning)
    }

    /// The wire verdict: `none`, `clients`, `servers` or `both` (a warning
    /// is `none` on the wire; see [`Class::is_warning`]).
    pub fn wire(self) -> &'static str {
        match self {
            Class::Compatible | Class::Warning => "none",
            Class::Clients => "clients",
            Class::Servers => "servers",
            Class::ClientsAndServers => "both",
        }
    }

    /// Whether it is a warning (not breaking, but worth a look).
    pub fn is_warning(self) -> bool {
        self == Class::Warning
    }

    /// The class with clients and servers swapped (for a change inside a
    /// callback, where the API provider is the one sending requests).
    pub fn swapped(self) -> Class {
        match self {
            Class::Clients => Class::Servers,
            Class::Servers => Class::Clients,
            other => other,
        }
    }

    /// The class of a change that is both `self` and `other` (e.g. one found
    /// in a request and in a response).
    pub fn union(self, other: Class) -> Class {
        use Class::*;
        match (self, other) {
            (Compatible, x) | (x, Compatible) => x,
            (Warning, x) | (x, Warning) => x,
            (Clients, Clients) => Clients,
            (Servers, Servers) => Servers,
            _ => ClientsAndServers,
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// How a rule's class depends on the direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classes {
    /// The same class wherever the change is found (operation-level and
    /// naming changes).
    Always(Class),
    /// One class in a request, another in a response.
    ByDirection {
        /// Class when found in a parameter or request body.
        request: Class,
        /// Class when found in a response body.
        response: Class,
    },
}

/// The class pair of a narrowing edit (fewer values accepted).
const NARROWED: Classes = Classes::ByDirection {
    request: Class::Clients,
    response: Class::Servers,
};
/// The class pair of a widening edit (more values accepted).
const WIDENED: Classes = Classes::ByDirection {
    request: Class::Servers,
    response: Class::Clients,
};
/// Breaks whoever is on the other side, in either direction.
const BOTH: Classes = Classes::Always(Class::ClientsAndServers);

/// What a kind of change does to the generated Rust API where progenitor
/// generates the value (bodies and parameters; it generates no response
/// headers and no callbacks), with the generated item it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RustApiClass {
    /// Code using the generated crate still compiles (a note, may be empty).
    None(&'static str),
    /// Code using the generated crate stops compiling: the item and how.
    Breaks(&'static str),
    /// It depends on the schema: what may change.
    May(&'static str),
}

impl RustApiClass {
    /// The table cell: `none`, `breaks: method removed`, `may break: …`.
    pub fn cell(self) -> String {
        match self {
            RustApiClass::None("") => "none".to_owned(),
            RustApiClass::None(note) => format!("none ({note})"),
            RustApiClass::Breaks(what) => format!("breaks: {what}"),
            RustApiClass::May(what) => format!("may break: {what}"),
        }
    }
}

/// One kind of change: a stable id, its classes and why.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable identifier (the `kind` of a change in JSON output).
    pub id: &'static str,
    /// The wire class, depending on the direction.
    pub classes: Classes,
    /// What it typically does to the generated Rust API.
    pub rust_api: RustApiClass,
    /// Why it is classed so, in one line.
    pub why: &'static str,
}

impl Rule {
    /// The class of this kind of change found in `direction` (`None` for an
    /// operation-level change; a directional rule then counts as both).
    pub fn class(&self, direction: Option<Direction>) -> Class {
        match (self.classes, direction) {
            (Classes::Always(class), _) => class,
            (Classes::ByDirection { request, .. }, Some(Direction::Request)) => request,
            (Classes::ByDirection { response, .. }, Some(Direction::Response)) => response,
            (Classes::ByDirection { request, response }, None) => request.union(response),
        }
    }
}

macro_rules! rules {
    ($($(#[$doc:meta])* $name:ident = $id:literal, $classes:expr, $rust_api:expr, $why:literal;)*) => {
        $(
            $(#[$doc])*
            pub const $name: Rule = Rule { id: $id, classes: $classes, rust_api: $rust_api, why: $why };
        )*
        /// Every rule, in reporting order.
        pub const RULES: &[&Rule] = &[$(&$name),*];
    };
}

use Class::{Clients, Compatible, Servers};
use Classes::Always;

rules! {
    // ------------------------------------------------------------ operations
    /// An operation disappeared.
    OPERATION_REMOVED = "operation-removed", Always(Clients),
        RustApiClass::Breaks("method removed"),
        "callers get an error status and the generated method is gone";
    /// An operation disappeared after the sunset date (`x-sunset`) it
    /// announced while deprecated.
    OPERATION_REMOVED_AFTER_SUNSET = "operation-removed-after-sunset", Always(Compatible),
        RustApiClass::Breaks("method removed"),
        "it was deprecated and the announced sunset date has passed";
    /// A sunset date (`x-sunset`) moved earlier.
    SUNSET_BROUGHT_FORWARD = "sunset-brought-forward", Always(Clients),
        RustApiClass::None(""),
        "callers have less time to migrate than they were promised";
    /// A sunset date announced, postponed or withdrawn.
    SUNSET_CHANGED = "sunset-changed", Always(Compatible),
        RustApiClass::None(""),
        "nothing stops working earlier than announced";
    /// A new operation.
    OPERATION_ADDED = "operation-added", Always(Compatible),
        RustApiClass::None(""),
        "nobody has to call it";
    /// Same method and path, different operationId.
    OPERATION_ID_CHANGED = "operation-id-changed", Always(Compatible),
        RustApiClass::Breaks("method renamed"),
        "the wire is unchanged (same method and path); the generated method and builder are \
         named after the operationId, so the Rust API changes";
    /// Same operationId, different method or path.
    OPERATION_ROUTE_CHANGED = "operation-route-changed", BOTH,
        RustApiClass::May("the method's path parameters follow the route; renamed when the id changes"),
        "old clients call the old route, old servers do not serve the new one";
    /// An operation, parameter, property or schema became deprecated.
    DEPRECATED = "deprecated", Always(Compatible),
        RustApiClass::None(""),
        "a warning: it still works";
    /// A deprecation was withdrawn.
    UNDEPRECATED = "undeprecated", Always(Compatible),
        RustApiClass::None(""),
        "nothing stops working";
    /// More or stronger credentials required (a requirement or scope added,
    /// an alternative removed).
    SECURITY_TIGHTENED = "security-tightened", Always(Class::Warning),
        RustApiClass::None(""),
        "clients that do not already send the credentials or scopes get 401/403: check who calls \
         it (oasdiff: info, since most clients already authenticate)";
    /// Fewer credentials required (a requirement or scope removed, an
    /// alternative added).
    SECURITY_RELAXED = "security-relaxed", Always(Servers),
        RustApiClass::None(""),
        "a server built on the base still demands what the new spec says is optional";
    /// A security scheme's definition (type, location, flows, scopes) changed.
    SECURITY_SCHEME_CHANGED = "security-scheme-changed", BOTH,
        RustApiClass::None(""),
        "credentials are sent or checked differently (its type, `in`, `name` or `scheme`): \
         deployed clients send what the server no longer takes (oasdiff: info, it has no check \
         for most of these)";
    /// An OAuth2 or OpenID Connect scheme's flows changed (authorization or
    /// token URL, scopes offered), or its `openIdConnectUrl` or
    /// `bearerFormat`.
    SECURITY_FLOWS_CHANGED = "security-flows-changed", Always(Class::Warning),
        RustApiClass::None(""),
        "tokens are still sent the same way; clients that fetch them from a moved URL or ask for \
         a scope no longer offered need a look (oasdiff: info)";

    // ------------------------------------------------------------ parameters
    /// A new optional parameter.
    PARAMETER_ADDED = "parameter-added", Always(Compatible),
        RustApiClass::None("a new setter"),
        "old clients do not send it; old servers ignore it";
    /// A new required parameter.
    PARAMETER_ADDED_REQUIRED = "parameter-added-required", Always(Clients),
        RustApiClass::None("at compile time (`send()` fails without it)"),
        "old clients do not send it";
    /// A parameter disappeared after the sunset date it announced while
    /// deprecated.
    PARAMETER_REMOVED_AFTER_SUNSET = "parameter-removed-after-sunset", Always(Compatible),
        RustApiClass::Breaks("builder setter removed"),
        "it was deprecated and the announced sunset date has passed";
    /// A parameter's serialization changed: `style`, `explode` or
    /// `allowReserved` (defaults taken into account).
    PARAMETER_STYLE_CHANGED = "parameter-style-changed", BOTH,
        RustApiClass::None(""),
        "the value is written differently on the wire: old clients and old servers disagree";
    /// A parameter disappeared (or moved between query, header and path).
    PARAMETER_REMOVED = "parameter-removed", Always(Class::Warning),
        RustApiClass::Breaks("builder setter removed"),
        "old clients still send it: servers usually ignore it, some reject it (oasdiff: warning); \
         the generated setter is gone";
    /// A path parameter kept its position but changed its name.
    PARAMETER_RENAMED = "parameter-renamed", Always(Compatible),
        RustApiClass::Breaks("builder setter renamed"),
        "the wire is unchanged (a path parameter is positional); the generated setter is renamed";
    /// An optional parameter became required.
    PARAMETER_BECAME_REQUIRED = "parameter-became-required", Always(Clients),
        RustApiClass::None(""),
        "old clients may omit it";
    /// A required parameter became optional.
    PARAMETER_BECAME_OPTIONAL = "parameter-became-optional", Always(Servers),
        RustApiClass::None(""),
        "a server built on the base rejects requests without it";

    // --------------------------------------------------------- request bodies
    /// A new optional request body.
    REQUEST_BODY_ADDED = "request-body-added", Always(Compatible),
        RustApiClass::None(""),
        "old clients do not send it";
    /// A new required request body.
    REQUEST_BODY_ADDED_REQUIRED = "request-body-added-required", Always(Clients),
        RustApiClass::None(""),
        "old clients do not send it";
    /// The request body disappeared.
    REQUEST_BODY_REMOVED = "request-body-removed", Always(Clients),
        RustApiClass::Breaks("`body` setter removed"),
        "old clients send a body the server no longer takes; the generated setter is gone";
    /// The request body became required.
    REQUEST_BODY_BECAME_REQUIRED = "request-body-became-required", Always(Clients),
        RustApiClass::None(""),
        "old clients may omit it";
    /// The request body became optional.
    REQUEST_BODY_BECAME_OPTIONAL = "request-body-became-optional", Always(Servers),
        RustApiClass::None(""),
        "a server built on the base rejects requests without it";

    // -------------------------------------------------------------- responses
    /// A response status not covered before (not even by a range or default).
    RESPONSE_ADDED = "response-added", Always(Compatible),
        RustApiClass::May("`send()` result type may change (another success body)"),
        "a server may answer any status: clients already handle unknown ones (oasdiff: info); \
         the generated send() may return another type";
    /// A success (2xx) response status no longer described.
    RESPONSE_SUCCESS_REMOVED = "response-success-removed", BOTH,
        RustApiClass::May("`send()` result type may change"),
        "clients relying on the status no longer get it; a server built on the base still sends it";
    /// A non-success response status (or `default`) no longer described.
    RESPONSE_REMOVED = "response-removed", Always(Servers),
        RustApiClass::May("error type of `send()` may change"),
        "a server built on the base still sends it; clients treat an unknown error status as an error";
    /// A response that had no body now has one.
    RESPONSE_BODY_ADDED = "response-body-added", Always(Compatible),
        RustApiClass::Breaks("`send()` result type changes"),
        "old clients ignore the body";
    /// A response lost its body.
    RESPONSE_BODY_REMOVED = "response-body-removed", Always(Clients),
        RustApiClass::Breaks("`send()` result type changes"),
        "old clients expect a body";
    /// A response header not described before, optional.
    RESPONSE_HEADER_ADDED = "response-header-added", Always(Compatible),
        RustApiClass::None(""),
        "old clients ignore it";
    /// A response header not described before, required.
    RESPONSE_HEADER_ADDED_REQUIRED = "response-header-added-required", Always(Servers),
        RustApiClass::None(""),
        "a server built on the base does not send it";
    /// A response header no longer described.
    RESPONSE_HEADER_REMOVED = "response-header-removed", Always(Clients),
        RustApiClass::None(""),
        "clients reading it no longer get it";
    /// A required response header became optional.
    RESPONSE_HEADER_BECAME_OPTIONAL = "response-header-became-optional", Always(Clients),
        RustApiClass::None(""),
        "clients reading it may no longer get it";
    /// An optional response header became required.
    RESPONSE_HEADER_BECAME_REQUIRED = "response-header-became-required", Always(Servers),
        RustApiClass::None(""),
        "a server built on the base may omit it";
    /// A response link added.
    LINK_ADDED = "link-added", Always(Compatible),
        RustApiClass::None(""),
        "nobody has to follow it";
    /// A response link removed.
    LINK_REMOVED = "link-removed", Always(Clients),
        RustApiClass::None(""),
        "clients following it lose the relation";
    /// A response link now targets another operation or passes other values.
    LINK_CHANGED = "link-changed", Always(Clients),
        RustApiClass::None(""),
        "clients following it call something else";
    /// A callback (or one of its requests) added.
    CALLBACK_ADDED = "callback-added", Always(Compatible),
        RustApiClass::None(""),
        "consumers that do not implement it are not affected by its existence";
    /// A callback (or one of its requests) removed.
    CALLBACK_REMOVED = "callback-removed", Always(Clients),
        RustApiClass::None(""),
        "consumers stop receiving calls they rely on";
    /// The `encoding` of a multipart or form body changed (a part's
    /// `contentType`, `style`, `explode`, `allowReserved` or headers).
    ENCODING_CHANGED = "encoding-changed", BOTH,
        RustApiClass::None(""),
        "the parts are written differently on the wire: old clients and old servers disagree";
    /// A media type (content type) added to a request or response.
    MEDIA_TYPE_ADDED = "media-type-added",
        Classes::ByDirection { request: Class::Servers, response: Class::Compatible },
        RustApiClass::May("body or result type may change"),
        "request: old servers do not accept it; response: content negotiation sends it only to \
         clients that ask for it (`Accept`), as oasdiff and openapi-diff judge";
    /// A media type removed from a request or response.
    MEDIA_TYPE_REMOVED = "media-type-removed",
        Classes::ByDirection { request: Clients, response: Class::ClientsAndServers },
        RustApiClass::May("body or result type may change"),
        "request: old clients still send it; response: old servers still send it, and old clients that accept or decode only it get something else";

    /// A media type replaced by a more specific one
    /// (`application/json` → `application/problem+json`), or only its
    /// parameters changed.
    MEDIA_TYPE_SPECIALIZED = "media-type-specialized", NARROWED,
        RustApiClass::May("body or result type may change"),
        "request: old clients send the general type, which is no longer described; response: a \
         server built on the base sends the general type, while clients reading it as the general \
         type still can (oasdiff: info)";
    /// A media type replaced by a more general one
    /// (`application/problem+json` → `application/json`).
    MEDIA_TYPE_GENERALIZED = "media-type-generalized", WIDENED,
        RustApiClass::May("body or result type may change"),
        "request: a server built on the base takes only the specific type; response: clients \
         expecting the specific type get the general one (oasdiff: error)";

    // ------------------------------------------------------- schemas: objects
    /// A new optional property of an open object.
    PROPERTY_ADDED = "property-added", Always(Compatible),
        RustApiClass::Breaks("struct field added (breaks struct literals and exhaustive patterns)"),
        "request: nobody has to send it; response: clients ignore unknown fields";
    /// A new optional property of a closed object (`additionalProperties: false`).
    PROPERTY_ADDED_TO_CLOSED = "property-added-to-closed-object", WIDENED,
        RustApiClass::Breaks("struct field added"),
        "request: a server built on the base rejects unknown properties; response: old clients deny unknown fields";
    /// A new required property.
    PROPERTY_ADDED_REQUIRED = "property-added-required", NARROWED,
        RustApiClass::Breaks("struct field added"),
        "request: old clients do not send it; response: old servers do not send it";
    /// A property disappeared.
    PROPERTY_REMOVED = "property-removed",
        Classes::ByDirection { request: Class::Warning, response: Clients },
        RustApiClass::Breaks("struct field removed"),
        "response: clients lose the field; request: an open object still takes it from old \
         clients, who should be checked (oasdiff: warning)";
    /// A property disappeared from a closed object (`additionalProperties: false`).
    PROPERTY_REMOVED_FROM_CLOSED = "property-removed-from-closed-object", Always(Clients),
        RustApiClass::Breaks("struct field removed"),
        "response: clients lose the field; request: the object now rejects it from old clients";
    /// An optional property became required.
    PROPERTY_BECAME_REQUIRED = "property-became-required", NARROWED,
        RustApiClass::Breaks("field `Option<T>` → `T`"),
        "request: old clients may omit it; response: old servers may omit it";
    /// A required property became optional.
    PROPERTY_BECAME_OPTIONAL = "property-became-optional", WIDENED,
        RustApiClass::Breaks("field `T` → `Option<T>`"),
        "request: old servers expect it; response: old clients expect it";
    /// An open object became closed (`additionalProperties: false`) or lost its
    /// map values schema.
    OBJECT_CLOSED = "object-closed", NARROWED,
        RustApiClass::May("map values or struct fields may change"),
        "request: extra properties old clients send are rejected; response: old servers may send extras";
    /// A closed object became open.
    OBJECT_OPENED = "object-opened", WIDENED,
        RustApiClass::May("map values or struct fields may change"),
        "request: old servers reject extras; response: old clients deny unknown fields";

    // ------------------------------------------------------- schemas: values
    /// The JSON type (or composition kind) changed.
    TYPE_CHANGED = "type-changed", BOTH,
        RustApiClass::Breaks("field or alias type changes"),
        "values of the old type are invalid under the new one and vice versa";
    /// The type narrowed: `number` → `integer`.
    TYPE_NARROWED = "type-narrowed", NARROWED,
        RustApiClass::Breaks("`f64` → `i64`"),
        "every integer is a number, not the other way round: fewer values are valid";
    /// The type widened: `integer` → `number`.
    TYPE_WIDENED = "type-widened", WIDENED,
        RustApiClass::Breaks("`i64` → `f64`"),
        "more values are valid";
    /// A `format` added, or changed to a narrower one (int64 → int32).
    FORMAT_NARROWED = "format-narrowed", NARROWED,
        RustApiClass::May("type may change (`String` → `Uuid`, `i64` → `i32`)"),
        "fewer values are valid";
    /// A `format` removed, or changed to a wider one (int32 → int64).
    FORMAT_WIDENED = "format-widened", WIDENED,
        RustApiClass::May("type may change"),
        "more values are valid";
    /// A `format` changed to an unrelated one.
    FORMAT_CHANGED = "format-changed", BOTH,
        RustApiClass::May("type may change"),
        "the value sets are unrelated";
    /// Enum values removed (or an enum introduced).
    ENUM_NARROWED = "enum-narrowed", NARROWED,
        RustApiClass::Breaks("enum variant removed"),
        "request: old clients may send a removed value; response: old servers may send it";
    /// Enum values added (or the enum dropped).
    ENUM_WIDENED = "enum-widened", WIDENED,
        RustApiClass::Breaks("enum variant added (breaks exhaustive matches)"),
        "request: old servers reject the new value; response: old clients do not know it";
    /// Values removed from an `x-extensible-enum` (an open enum).
    EXTENSIBLE_ENUM_NARROWED = "extensible-enum-narrowed", NARROWED,
        RustApiClass::None(""),
        "request: old clients may send a removed value; response: old servers may send it";
    /// Values added to an `x-extensible-enum`.
    EXTENSIBLE_ENUM_WIDENED = "extensible-enum-widened", Always(Compatible),
        RustApiClass::None(""),
        "an extensible enum promises new values: readers must already accept unknown ones";
    /// A bound tightened: minimum/maximum, lengths, item and property counts,
    /// uniqueItems, a pattern or multipleOf added.
    BOUND_NARROWED = "bound-narrowed", NARROWED,
        RustApiClass::May("may turn a type into a constrained newtype"),
        "fewer values are valid";
    /// A bound loosened or removed.
    BOUND_WIDENED = "bound-widened", WIDENED,
        RustApiClass::May("may turn a constrained newtype into a plain type"),
        "more values are valid";
    /// A `pattern` changed to another one (neither provably wider nor
    /// narrower).
    PATTERN_CHANGED = "pattern-changed", Always(Class::Warning),
        RustApiClass::None("same newtype"),
        "values matching the old pattern may not match the new one: check by hand (oasdiff: warning)";
    /// A `pattern` removed (or now `.*` or empty).
    PATTERN_REMOVED = "pattern-removed",
        Classes::ByDirection { request: Class::Servers, response: Class::Warning },
        RustApiClass::May("may turn a constrained newtype into a plain type"),
        "request: a server built on the base rejects values it did not match; response: clients \
         validating it may get other values (oasdiff: info)";
    /// A discriminator added, removed or changed.
    DISCRIMINATOR_CHANGED = "discriminator-changed", Always(Class::Warning),
        RustApiClass::May("the generated enum may change"),
        "the values are the same; the discriminator only tells readers which member to decode \
         (oasdiff: info); the generated enum may change";
    /// A pattern, multipleOf or `not` changed incomparably.
    CONSTRAINT_CHANGED = "constraint-changed", BOTH,
        RustApiClass::May("the generated type may change"),
        "neither value set contains the other";
    /// `null` no longer allowed.
    NULLABLE_REMOVED = "nullable-removed", NARROWED,
        RustApiClass::May("`Option<T>` → `T` for a required property"),
        "request: old clients may send null; response: old servers may send null";
    /// `null` now allowed.
    NULLABLE_ADDED = "nullable-added", WIDENED,
        RustApiClass::May("`T` → `Option<T>` for a required property"),
        "request: old servers reject null; response: old clients do not expect null";
    /// A oneOf/anyOf member removed or an allOf member added.
    COMPOSITION_NARROWED = "composition-narrowed", NARROWED,
        RustApiClass::Breaks("enum variant removed"),
        "fewer values are valid";
    /// A oneOf member added.
    COMPOSITION_WIDENED = "composition-widened", WIDENED,
        RustApiClass::Breaks("enum variant added"),
        "more values are valid (oasdiff: a oneOf member added to a response is an error)";
    /// An anyOf member added or an allOf member removed.
    COMPOSITION_LOOSENED = "composition-loosened",
        Classes::ByDirection { request: Class::Servers, response: Class::Warning },
        RustApiClass::May("enum variants or struct fields may change"),
        "more values are valid; in a response old clients that decode by the members they know \
         usually still do (oasdiff: info)";
    /// A parameter's `default` added, removed or changed, inline or on the component schema
    /// its schema references.
    PARAMETER_DEFAULT_CHANGED = "parameter-default-changed", Always(Clients),
        RustApiClass::None(""),
        "an omitted parameter now means something else to the server";
    /// A `default` of a body value or header added, removed or changed.
    DEFAULT_CHANGED = "default-changed", Always(Class::Warning),
        RustApiClass::None("a serde default function changes"),
        "documentation of what the receiver assumes for an omitted value; check that no client \
         relies on it (oasdiff: info)";
    /// A `$ref` now points at another component, or moved between a `$ref`
    /// and an inline schema.
    SCHEMA_REPLACED = "schema-replaced", Always(Compatible),
        RustApiClass::May("the value's generated type may be renamed"),
        "the wire shapes are compared on their own; the generated Rust type of this value is renamed";

    // ------------------------------------------------------------ components
    /// A new component schema.
    SCHEMA_ADDED = "schema-added", Always(Compatible),
        RustApiClass::None(""),
        "a new generated type";
    /// A response property became `writeOnly` (no longer sent in responses).
    PROPERTY_BECAME_WRITE_ONLY = "property-became-write-only", Always(Class::Warning),
        RustApiClass::None("progenitor ignores writeOnly"),
        "the property stays in the schema; servers stop returning it, so clients reading it \
         should be checked (oasdiff: info)";
    /// A component schema disappeared.
    SCHEMA_REMOVED = "schema-removed", Always(Compatible),
        RustApiClass::Breaks("type removed"),
        "a component is not on the wire: what its users lost is reported on them; its generated type is gone";
    /// A component schema was renamed without changing its shape.
    SCHEMA_RENAMED = "schema-renamed", Always(Compatible),
        RustApiClass::Breaks("type renamed"),
        "the wire is unchanged; the generated type is renamed";
}

/// Look a rule up by id.
pub fn find(id: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|r| r.id == id)
}

/// The rule table of CONTRIBUTING.md: every rule with its wire class in a
/// request and in a response (`warning` is wire `none`, flagged for a look)
/// and its rust-api class.
pub fn markdown_table() -> String {
    let wire = |class: Class| match class {
        Class::Warning => "warning",
        other => other.wire(),
    };
    let mut out = String::from(
        "| rule | wire, in a request | wire, in a response | rust-api (where progenitor generates \
         the value; the verdict itself is computed from the generated code) |\n|---|---|---|---|\n",
    );
    for rule in RULES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            rule.id,
            wire(rule.class(Some(Direction::Request))),
            wire(rule.class(Some(Direction::Response))),
            rule.rust_api.cell()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn ids_are_unique_and_kebab_case() {
        let ids: BTreeSet<_> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids.len(), RULES.len());
        for id in ids {
            assert!(
                id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{id}"
            );
        }
    }

    #[test]
    fn direction_swaps_narrowing_and_widening() {
        assert_eq!(
            ENUM_NARROWED.class(Some(Direction::Request)),
            Class::Clients
        );
        assert_eq!(
            ENUM_NARROWED.class(Some(Direction::Response)),
            Class::Servers
        );
        assert_eq!(ENUM_WIDENED.class(Some(Direction::Request)), Class::Servers);
        assert_eq!(
            ENUM_WIDENED.class(Some(Direction::Response)),
            Class::Clients
        );
        assert_eq!(
            PROPERTY_BECAME_OPTIONAL.class(Some(Direction::Response)),
            Class::Clients
        );
        assert_eq!(ENUM_NARROWED.class(None), Class::ClientsAndServers);
        assert_eq!(
            OPERATION_REMOVED.class(Some(Direction::Response)),
            Class::Clients
        );
    }

    #[test]
    fn contributing_lists_every_rule_with_both_classes() {
        let contributing = include_str!("../../../CONTRIBUTING.md");
        let table = markdown_table();
        assert!(
            contributing.contains(&table),
            "CONTRIBUTING.md's rule table is not the one in rules.rs; paste this one:\n\n{table}"
        );
    }

    #[test]
    fn class_union() {
        use Class::*;
        assert_eq!(Compatible.union(Servers), Servers);
        assert_eq!(Clients.union(Clients), Clients);
        assert_eq!(Clients.union(Servers), ClientsAndServers);
        assert_eq!(ClientsAndServers.union(Compatible), ClientsAndServers);
        assert!(!Compatible.is_breaking());
        assert!(Servers.is_breaking());
    }
}
