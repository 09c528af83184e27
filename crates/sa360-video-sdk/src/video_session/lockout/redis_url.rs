//! The URL forms a `RedisStore` accepts, one per deployment (VS-17): a standalone server,
//! the servers a Sentinel set watches, or a Cluster; each with or without TLS.
//!
//! | form | deployment |
//! |---|---|
//! | `redis://[[user]:password@]host[:port][/db]` | one server (or a proxy in front of several) |
//! | `rediss://…` | the same over TLS |
//! | `redis-sentinel://[[user]:password@]host[:port][,host[:port]…][/db]#master-name` | a primary that Sentinel fails over; the hosts are the sentinels (port 26379 by default) |
//! | `rediss-sentinel://…` | the same, TLS to the sentinels and to the primary |
//! | `redis-cluster://[[user]:password@]host[:port][,host[:port]…]` | a Redis Cluster; the hosts are seed nodes |
//! | `rediss-cluster://…` | the same over TLS |
//!
//! The user and password are those of the data nodes (Redis 6 ACL users; a password alone
//! authenticates as `default`). The sentinel forms follow Lettuce's `redis-sentinel://` URI
//! (<https://redis.github.io/lettuce/user-guide/connecting-redis/#uri-syntax>); the
//! cluster forms use the same host-list syntax.

use std::fmt;

/// What kind of deployment a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Topology {
    /// One server.
    Standalone,
    /// A primary found through Sentinel, by its master name.
    Sentinel,
    /// A Redis Cluster.
    Cluster,
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Topology::Standalone => "standalone",
            Topology::Sentinel => "sentinel",
            Topology::Cluster => "cluster",
        })
    }
}

/// A parsed store URL. `Debug` and `Display` never show the password.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct RedisUrl {
    pub(crate) topology: Topology,
    pub(crate) tls: bool,
    /// `(host, port)`; a bracketed IPv6 host keeps its brackets.
    pub(crate) hosts: Vec<(String, u16)>,
    /// Percent-decoded.
    pub(crate) username: Option<String>,
    /// Percent-decoded.
    pub(crate) password: Option<String>,
    pub(crate) db: i64,
    /// Sentinel only.
    pub(crate) master_name: Option<String>,
}

impl fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedisUrl({self})")
    }
}

/// The most hosts a URL may list (a sentinel set or cluster seeds; more is a mistake).
const MAX_HOSTS: usize = 64;

impl RedisUrl {
    /// Parses `text`; the error says what is wrong without repeating the password.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let (scheme, rest) = text
            .split_once("://")
            .ok_or("not a URL: expected redis://, rediss://, redis-sentinel://, rediss-sentinel://, redis-cluster:// or rediss-cluster://")?;
        let (topology, tls, default_port) = match scheme.to_ascii_lowercase().as_str() {
            "redis" => (Topology::Standalone, false, 6379),
            "rediss" => (Topology::Standalone, true, 6379),
            "redis-sentinel" | "redis+sentinel" => (Topology::Sentinel, false, 26379),
            "rediss-sentinel" | "rediss+sentinel" => (Topology::Sentinel, true, 26379),
            "redis-cluster" | "redis+cluster" => (Topology::Cluster, false, 6379),
            "rediss-cluster" | "rediss+cluster" => (Topology::Cluster, true, 6379),
            other => {
                // Quoted only when it is a scheme's characters (nothing of a password).
                let shown = if other
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
                {
                    format!(" {other:?}")
                } else {
                    String::new()
                };
                return Err(format!(
                    "unknown scheme{shown}: expected redis://, rediss://, redis-sentinel://, rediss-sentinel://, redis-cluster:// or rediss-cluster://"
                ));
            }
        };
        // Nothing of the text after the scheme is ever quoted: it may hold the password. A '@'
        // after the first '/', '?' or '#' means the user info held one of them unencoded.
        if let Some(cut) = rest.find(['/', '?', '#'])
            && rest[cut..].contains('@')
        {
            return Err("the user name or password holds a '/', '?' or '#' that is not percent-encoded: write them as %2F, %3F and %23 (any character may be percent-encoded), or give the password with RedisStoreBuilder::password".to_owned());
        }
        let (rest, fragment) = match rest.split_once('#') {
            Some((r, f)) => (r, Some(f)),
            None => (rest, None),
        };
        if rest.contains('?') {
            return Err(
                "query parameters are not supported; set options on RedisStore::builder".to_owned(),
            );
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        // The password may contain '@' only percent-encoded; the last '@' ends the user info.
        let (userinfo, hostlist) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (username, password) = match userinfo {
            None => (None, None),
            Some(u) => {
                let (user, pass) = match u.split_once(':') {
                    Some((user, pass)) => (user, Some(pass)),
                    None => (u, None),
                };
                let decode = |s: &str, what: &str| {
                    percent_encoding::percent_decode_str(s)
                        .decode_utf8()
                        .map(|c| c.into_owned())
                        .map_err(|_| format!("the {what} is not UTF-8 once percent-decoded"))
                };
                let user = (!user.is_empty())
                    .then(|| decode(user, "user name"))
                    .transpose()?;
                let pass = pass
                    .filter(|p| !p.is_empty())
                    .map(|p| decode(p, "password"))
                    .transpose()?;
                (user, pass)
            }
        };
        let mut hosts = Vec::new();
        for (i, part) in hostlist.split(',').enumerate() {
            if part.is_empty() {
                return Err("an empty host in the host list".to_owned());
            }
            hosts.push(
                parse_host(part, default_port)
                    .map_err(|e| format!("host {} of the URL: {e}", i + 1))?,
            );
        }
        if hosts.len() > 1 && topology == Topology::Standalone {
            return Err(
                "several hosts need redis-sentinel:// (a Sentinel set) or redis-cluster:// (a Cluster)"
                    .to_owned(),
            );
        }
        if hosts.len() > MAX_HOSTS {
            return Err(format!("more than {MAX_HOSTS} hosts"));
        }
        let db = match path.trim_end_matches('/') {
            "" => 0,
            digits => digits
                .parse::<i64>()
                .ok()
                .filter(|d| (0..=1_000_000).contains(d))
                .ok_or("the database (after the host) is not a number from 0 to 1000000")?,
        };
        if topology == Topology::Cluster && db != 0 {
            return Err("a Redis Cluster has only database 0".to_owned());
        }
        let master_name = match (topology, fragment) {
            (Topology::Sentinel, Some(name)) if !name.is_empty() => Some(
                percent_encoding::percent_decode_str(name)
                    .decode_utf8()
                    .map_err(|_| "the master name is not UTF-8".to_owned())?
                    .into_owned(),
            ),
            (Topology::Sentinel, _) => {
                return Err(
                    "a redis-sentinel:// URL names the master after '#', e.g. redis-sentinel://host:26379#mymaster"
                        .to_owned(),
                );
            }
            (_, Some(_)) => {
                return Err("a '#fragment' is only meaningful in redis-sentinel:// URLs".to_owned());
            }
            (_, None) => None,
        };
        Ok(Self {
            topology,
            tls,
            hosts,
            username,
            password,
            db,
            master_name,
        })
    }

    /// `redis://` or `rediss://` URL of one node, with the user and password (for the redis
    /// crate; never shown).
    pub(crate) fn node_url(&self, host: &str, port: u16, db: bool) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        let enc = |s: &str| {
            percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
        };
        let userinfo = match (&self.username, &self.password) {
            (None, None) => String::new(),
            (Some(u), None) => format!("{}@", enc(u)),
            (u, Some(p)) => format!("{}:{}@", enc(u.as_deref().unwrap_or("")), enc(p)),
        };
        let db = if db {
            format!("/{}", self.db)
        } else {
            String::new()
        };
        format!("{scheme}://{userinfo}{host}:{port}{db}")
    }
}

impl fmt::Display for RedisUrl {
    /// The URL with the password replaced by `***` (the user name is kept: it names the
    /// ACL user, not a secret).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match (self.topology, self.tls) {
            (Topology::Standalone, false) => "redis",
            (Topology::Standalone, true) => "rediss",
            (Topology::Sentinel, false) => "redis-sentinel",
            (Topology::Sentinel, true) => "rediss-sentinel",
            (Topology::Cluster, false) => "redis-cluster",
            (Topology::Cluster, true) => "rediss-cluster",
        };
        write!(f, "{scheme}://")?;
        match (&self.username, &self.password) {
            (None, None) => {}
            (Some(u), None) => write!(f, "{u}@")?,
            (u, Some(_)) => write!(f, "{}:***@", u.as_deref().unwrap_or(""))?,
        }
        for (i, (host, port)) in self.hosts.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{host}:{port}")?;
        }
        if self.topology != Topology::Cluster {
            write!(f, "/{}", self.db)?;
        }
        if let Some(name) = &self.master_name {
            write!(f, "#{name}")?;
        }
        Ok(())
    }
}

/// `host[:port]` or `[v6][:port]`. The error never quotes `part` (a malformed URL may have put a
/// piece of the password there).
fn parse_host(part: &str, default_port: u16) -> Result<(String, u16), &'static str> {
    let (host, port) = if let Some(rest) = part.strip_prefix('[') {
        let (v6, after) = rest
            .split_once(']')
            .ok_or("an IPv6 address without its closing ']'")?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or("expected ':' after ']'")?),
        };
        (format!("[{v6}]"), port)
    } else {
        match part.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), Some(p)),
            None => (part.to_owned(), None),
        }
    };
    if host.is_empty() || host == "[]" {
        return Err(
            "no host name (a password holding ':' or '@' must percent-encode them: %3A, %40)",
        );
    }
    if host.contains(['/', '@', ' ', '?', '#']) || (!host.starts_with('[') && host.contains(':')) {
        return Err("not a host name");
    }
    let port = match port {
        None => default_port,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or("the port is not a number from 1 to 65535 (a password holding ':', '/', '?', '#' or '@' must percent-encode them)")?,
    };
    Ok((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_parses() {
        let u = RedisUrl::parse("redis://127.0.0.1:6380/2").unwrap();
        assert_eq!(
            (u.topology, u.tls, u.hosts.clone(), u.db),
            (
                Topology::Standalone,
                false,
                vec![("127.0.0.1".into(), 6380)],
                2
            )
        );
        let u = RedisUrl::parse("rediss://app:s%40cret@redis.internal").unwrap();
        assert_eq!(
            (u.tls, u.username.as_deref(), u.password.as_deref()),
            (true, Some("app"), Some("s@cret"))
        );
        assert_eq!(u.hosts, vec![("redis.internal".into(), 6379)]);
        let u = RedisUrl::parse("redis-sentinel://:pw@s1,s2:26380,[::1]:26381/1#mymaster").unwrap();
        assert_eq!(u.topology, Topology::Sentinel);
        assert_eq!(
            u.hosts,
            vec![
                ("s1".into(), 26379),
                ("s2".into(), 26380),
                ("[::1]".into(), 26381)
            ]
        );
        assert_eq!(
            (u.db, u.master_name.as_deref(), u.username.as_deref()),
            (1, Some("mymaster"), None)
        );
        let u = RedisUrl::parse("rediss-cluster://a:7000,b:7001").unwrap();
        assert_eq!(
            (u.topology, u.tls, u.hosts.len()),
            (Topology::Cluster, true, 2)
        );
    }

    #[test]
    fn display_hides_the_password_and_names_the_form() {
        let u = RedisUrl::parse("redis-sentinel://app:topsecret@s1:1,s2:2/0#m").unwrap();
        let shown = format!("{u} {u:?}");
        assert!(!shown.contains("topsecret"), "{shown}");
        assert_eq!(u.to_string(), "redis-sentinel://app:***@s1:1,s2:2/0#m");
        let node = u.node_url("10.0.0.1", 6379, true);
        assert_eq!(node, "redis://app:topsecret@10.0.0.1:6379/0");
    }

    #[test]
    fn mistakes_are_named_without_the_password() {
        for (url, says) in [
            ("http://x", "unknown scheme"),
            ("redis://a,b", "several hosts"),
            ("redis-sentinel://a:26379", "names the master"),
            ("redis://h:0", "port"),
            ("redis://h:99999", "port"),
            ("redis-cluster://h/3", "only database 0"),
            ("redis://h/x", "not a number"),
            ("redis://h?timeout=1", "query parameters"),
            ("redis://h#m", "fragment"),
            ("redis://u:pw@,h", "empty host"),
            ("localhost:6379", "not a URL"),
        ] {
            let e = RedisUrl::parse(url).unwrap_err();
            assert!(e.contains(says), "{url}: {e}");
            assert!(!e.contains("pw"), "{e}");
        }
    }

    /// Passwords with characters a URL reserves, written without percent-encoding: the error says
    /// what to encode and quotes no character of the password (each password's characters are
    /// unique to it, so any 3-character piece in the message would be a leak).
    #[test]
    fn a_misparsed_password_is_never_quoted() {
        for (url, says) in [
            ("redis://app:s3cret#hash@redis.internal:6379", "%23"),
            (
                "rediss://:AzureKeyPart1/Part2+xyz=@cache.example:6380",
                "%2F",
            ),
            ("redis://:Qw?Er@h:6379", "%3F"),
            ("redis://:Mn@Bv@", "empty host"),
            // The '@' and host forgotten: what looks like a host and port is the user info.
            ("redis://:Wq3Er", "no host"),
            ("redis://app:Pa55w0rd", "port"),
            ("redis-sentinel://u:Lk/Jh@s1,s2#m", "%2F"),
            ("redis://:Ty@Ui:Op@h:1,", "empty host"),
            ("redis://:Gh@Jk@[::1", "closing ']'"),
        ] {
            let e = RedisUrl::parse(url).unwrap_err();
            assert!(e.contains(says), "{url}: {e}");
            let password = url.split("://").nth(1).unwrap();
            let end = password.rfind('@').unwrap_or(password.len());
            let password = &password[password.find(':').unwrap() + 1..end];
            for piece in password.as_bytes().windows(3) {
                let piece = std::str::from_utf8(piece).unwrap();
                assert!(!e.contains(piece), "{url}: {e} quotes {piece:?}");
            }
        }
        // Percent-encoded, every one of them parses.
        let u = RedisUrl::parse("redis://app:s3cret%23hash%2F%3F%40%3A@h:1").unwrap();
        assert_eq!(u.password.as_deref(), Some("s3cret#hash/?@:"));
        // A ':' after the first one belongs to the password (RFC 3986 user info).
        let u = RedisUrl::parse("redis://:Zx:Cv@h").unwrap();
        assert_eq!(u.password.as_deref(), Some("Zx:Cv"));
    }
}
