//! Redaction, collection by patterns: values found by their shape in every string and key of a report (paths and
//! URIs, host names and IPs, cloud storage hosts, secret-shaped tokens, UUIDs), for [`super::redact`].

use super::redact::*;
use serde_json::Value;

// ---------------------------------------------------------------------------------------------------------------
// Collection by patterns over every string and key.

pub(super) fn collect_patterns(v: &Value, c: &mut Collector) {
    match v {
        Value::String(s) => scan_text(s, c),
        Value::Object(m) => {
            for (k, child) in m {
                scan_text(k, c);
                collect_patterns(child, c);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_patterns(x, c)),
        _ => {}
    }
}

/// Public documentation hosts the inspector's own texts link to: never redacted.
pub(super) const DOC_HOSTS: &[&str] = &["spark.apache.org", "docs.delta.io", "kafka.apache.org", "issues.apache.org"];

pub(super) fn scan_text(s: &str, c: &mut Collector) {
    // A whole string that is a path (it may hold spaces).
    let t = s.trim();
    if looks_like_path(t) && !t.contains(char::is_whitespace) && t.len() <= 4096 && !is_doc_url(t) {
        collect_uri_hosts(t, c);
        c.add(t, Kind::Path);
    }
    for tok in tokens(s) {
        for (start, len) in uuids(tok) {
            c.add(&tok[start..start + len], Kind::Id);
        }
        if looks_like_path(tok) {
            if is_doc_url(tok) {
                continue;
            }
            collect_uri_hosts(tok, c);
            c.add(tok, Kind::Path);
            continue;
        }
        if let Some(host) = host_token(tok) {
            c.add(host, Kind::Host);
        }
        if let Some(host) = cloud_host_in(tok) {
            c.add(host, Kind::Host);
        }
        for piece in tok.split('=') {
            if secret_shaped(piece) {
                c.add(piece, Kind::Secret);
            }
        }
    }
}

/// Words of a text: split at whitespace, quotes, brackets and separators; trailing sentence punctuation trimmed.
pub(super) fn tokens(s: &str) -> impl Iterator<Item = &str> {
    s.split(|ch: char| {
        ch.is_whitespace()
            || matches!(ch, '"' | '\'' | '`' | ',' | ';' | '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | '|')
    })
    .map(|t| t.trim_end_matches(['.', ':', '!', '?']))
    .filter(|t| !t.is_empty())
}

pub(super) fn uri_scheme(t: &str) -> Option<&str> {
    let i = t.find(':')?;
    let scheme = &t[..i];
    let ok = scheme.len() >= 2
        && scheme.len() <= 16
        && scheme.as_bytes()[0].is_ascii_alphabetic()
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'));
    (ok && t[i + 1..].starts_with('/')).then_some(scheme)
}

/// An absolute path or a URI: `/x/y`, `/x`, `s3a://b/k`, `file:/x`, `dbfs:/x`, `C:\x`, `\\server\share`.
pub(super) fn looks_like_path(t: &str) -> bool {
    if t.len() < 2 {
        return false;
    }
    if let Some(rest) = t.strip_prefix('/') {
        // `/x`, not `/` or `//` alone; at least one letter (so `/2` in "3/2" style fractions never starts one).
        return !rest.starts_with('/') || rest.len() > 1 && rest.bytes().any(|b| b.is_ascii_alphabetic());
    }
    let b = t.as_bytes();
    if b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/') {
        return true;
    }
    if t.starts_with("\\\\") && t.len() > 3 {
        return true;
    }
    uri_scheme(t).is_some()
}

pub(super) fn is_doc_url(t: &str) -> bool {
    let rest = t.strip_prefix("https://").or_else(|| t.strip_prefix("http://"));
    rest.is_some_and(|r| {
        let host = r.split(['/', '?', '#']).next().unwrap_or("");
        DOC_HOSTS.contains(&host)
    })
}

/// Hosts, buckets, containers and accounts named in a URI's authority.
pub(super) fn collect_uri_hosts(t: &str, c: &mut Collector) {
    let Some(scheme) = uri_scheme(t) else { return };
    let Some(rest) = t[scheme.len() + 1..].strip_prefix("//") else { return };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() {
        return;
    }
    let bucketish = matches!(
        scheme.to_ascii_lowercase().as_str(),
        "s3" | "s3a" | "s3n" | "gs" | "oss" | "r2" | "cos" | "obs" | "wasb" | "wasbs" | "abfs" | "abfss" | "adl"
    );
    let (user, host) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if let Some(u) = user {
        // `abfss://container@account.dfs.core.windows.net`, `wasbs://container@account...`; else a user name.
        let u = u.split(':').next().unwrap_or(u);
        c.add(u, if bucketish { Kind::Bucket } else { Kind::Host });
    }
    let host = strip_port(host);
    if host.is_empty() {
        return;
    }
    if let Some(h) = cloud_host_in(host) {
        c.add(h, Kind::Host);
    }
    let is_bucket =
        bucketish && user.is_none() && !host.contains(".amazonaws.com") && !host.contains(".googleapis.com");
    c.add(host, if is_bucket { Kind::Bucket } else { Kind::Host });
}

pub(super) fn strip_port(h: &str) -> &str {
    let h = h.trim();
    if h.starts_with('[') {
        return h.split(']').next().map(|x| x.trim_start_matches('[')).unwrap_or(h);
    }
    match h.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => h,
    }
}

/// Top-level domains (and common internal suffixes) that make a dotted word a host name.
pub(super) const TLDS: &[&str] = &[
    "com",
    "net",
    "org",
    "io",
    "co",
    "dev",
    "cloud",
    "internal",
    "local",
    "localdomain",
    "lan",
    "corp",
    "intra",
    "intranet",
    "ai",
    "app",
    "biz",
    "info",
    "uk",
    "de",
    "fr",
    "nl",
    "eu",
    "us",
    "ca",
    "au",
    "jp",
    "cn",
    "in",
    "br",
    "ch",
    "se",
    "no",
    "dk",
    "fi",
    "es",
    "it",
    "ru",
    "pl",
    "be",
    "at",
    "ie",
    "sg",
    "kr",
    "tech",
    "site",
    "svc",
];

/// Java/Scala/Spark names that look dotted but are not hosts.
pub(super) const NOT_HOST_PREFIXES: &[&str] = &["spark.", "org.apache.", "java.", "javax.", "scala.", "sun.", "jdk."];

/// A host word: `host:port`, an IPv4 address, or a dotted name under a known TLD.
pub(super) fn host_token(tok: &str) -> Option<&str> {
    let tok = tok.trim_start_matches(['=', ':']);
    let h = strip_port(tok);
    if h.is_empty() || h.contains('/') || h.contains('\\') || h.contains('=') {
        return None;
    }
    if is_ipv4(h) {
        return Some(h);
    }
    let labels: Vec<&str> = h.split('.').collect();
    if labels.len() < 2 || labels.iter().any(|l| l.is_empty()) {
        return None;
    }
    if !h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-') {
        return None;
    }
    let lower = h.to_ascii_lowercase();
    if NOT_HOST_PREFIXES.iter().any(|p| lower.starts_with(p)) || DOC_HOSTS.contains(&lower.as_str()) {
        return None;
    }
    let last = labels.last().copied().unwrap_or("");
    // Lowercase TLD only: `com.example.MyClass` (a class name) ends in a capitalised word, not a TLD.
    (TLDS.contains(&last) && labels.len() >= 2 && !labels[0].bytes().all(|b| b.is_ascii_digit())).then_some(h)
}

pub(super) fn is_ipv4(h: &str) -> bool {
    let parts: Vec<&str> = h.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()))
        && parts.iter().all(|p| p.parse::<u32>().is_ok_and(|n| n <= 255))
}

/// Cloud storage endpoints inside a longer word (e.g. a per-account conf key
/// `fs.azure.account.key.<account>.dfs.core.windows.net`): the account label plus the provider's suffix.
pub(super) fn cloud_host_in(tok: &str) -> Option<&str> {
    const SUFFIXES: &[&str] = &[
        ".dfs.core.windows.net",
        ".blob.core.windows.net",
        ".queue.core.windows.net",
        ".azuredatalakestore.net",
        ".s3.amazonaws.com",
        ".storage.googleapis.com",
    ];
    let lower = tok.to_ascii_lowercase();
    for suf in SUFFIXES {
        if let Some(i) = lower.find(suf) {
            let before = &tok[..i];
            let start = before.rfind(['.', '/', '@', '=', ':']).map(|j| j + 1).unwrap_or(0);
            if start < i {
                return Some(&tok[start..i + suf.len()]);
            }
        }
    }
    None
}

/// Values shaped like credentials wherever they appear: AWS access key ids and JWTs.
pub(super) fn secret_shaped(t: &str) -> bool {
    let b = t.as_bytes();
    let aws = b.len() == 20
        && (t.starts_with("AKIA") || t.starts_with("ASIA"))
        && b.iter().all(|x| x.is_ascii_uppercase() || x.is_ascii_digit());
    let jwt = t.starts_with("eyJ")
        && t.len() > 30
        && t.split('.').count() == 3
        && t.bytes().all(|x| x.is_ascii_alphanumeric() || matches!(x, b'-' | b'_' | b'.'));
    aws || jwt
}

/// Every UUID (8-4-4-4-12 hex digits) inside a word: `(start, len)`.
pub(super) fn uuids(t: &str) -> Vec<(usize, usize)> {
    const GROUPS: [usize; 5] = [8, 4, 4, 4, 12];
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 36 <= b.len() {
        let before_ok = i == 0 || !b[i - 1].is_ascii_hexdigit();
        let mut j = i;
        let mut ok = before_ok;
        for (g, len) in GROUPS.iter().enumerate() {
            if !ok {
                break;
            }
            ok = b[j..j + len].iter().all(u8::is_ascii_hexdigit);
            j += len;
            if g < 4 {
                ok = ok && b[j] == b'-';
                j += 1;
            }
        }
        if ok && (j == b.len() || !b[j].is_ascii_hexdigit()) {
            out.push((i, 36));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}
