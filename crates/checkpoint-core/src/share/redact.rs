//! Redaction of a report before it travels in a link: sensitive values are replaced by stable placeholders.
//!
//! Works on the report's JSON value, not on the typed [`crate::Report`], so that every field (including fields
//! added later) is covered: the values are *collected* from the places the report is known to hold them (the
//! query id, source offsets, recorded confs, ...) and by patterns over every string (absolute paths and URIs,
//! UUIDs, host names), then *replaced* everywhere they occur — in every string and every object key, longest value
//! first, in one pass per string (a placeholder is never rewritten again). Placeholders contain no quote or
//! backslash, so JSON held inside a string keeps its shape.
//!
//! The same value always gets the same placeholder within one report (`topic-1`, `table-A`, `<path-3>`, ...), so
//! evidence that names the same file or topic in two findings still lines up. Numbering follows the order in which
//! values are first met (a deterministic walk), so the same report always gives the same redacted report.
//!
//! Never redacted: Spark's own names (error classes, conf keys, finding codes), batch ids, offsets, sizes, and the
//! evidence paths relative to the checkpoint root (`offsets/11`, `state/0/1/3.delta`): they carry the diagnosis.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

use super::text_scan::*;

/// A kind of sensitive value; each can be switched off on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Query ids (`metadata`'s `id`), run ids and any other UUID (e.g. unique state file ids): `query-1`,
    /// `run-1`, `id-1`.
    Ids,
    /// Checkpoint and source paths: absolute paths and URIs anywhere (`/data/in`, `s3a://b/k`, `C:\x`), the
    /// checkpoint's folder inside the archive, the input's file name, conf values that are paths: `<path-1>`
    /// (a URI keeps its scheme: `s3a://<path-1>`).
    Paths,
    /// Bucket, container, account and host names (from URIs, `host:port` lists, per-bucket conf keys, dotted
    /// names under a known top-level domain, IPv4 addresses): `bucket-1`, `host-1`.
    Hosts,
    /// Kafka topic names (the keys of Kafka source offsets and any `topic`/`topics` field): `topic-1`.
    Topics,
    /// Table names and ids (Delta's `reservoirId`, `tableId`, `table_name`, ...): `table-A`.
    Tables,
    /// Conf values that look like secrets (keys naming a password, secret, token, credential, access or account
    /// key, SAS, JAAS config; values shaped like an AWS access key id or a JWT): `<secret-1>`.
    Secrets,
}

impl Category {
    /// Every category, in the order they are listed to people.
    pub const ALL: [Category; 6] =
        [Category::Ids, Category::Paths, Category::Hosts, Category::Topics, Category::Tables, Category::Secrets];

    /// The name used in JSON, in the CLI (`--no-redact paths`) and on the page.
    pub fn name(self) -> &'static str {
        match self {
            Category::Ids => "ids",
            Category::Paths => "paths",
            Category::Hosts => "hosts",
            Category::Topics => "topics",
            Category::Tables => "tables",
            Category::Secrets => "secrets",
        }
    }

    /// What the category covers, in a few words (for help texts and the page's toggles).
    pub fn describe(self) -> &'static str {
        match self {
            Category::Ids => "query ids, run ids and other UUIDs",
            Category::Paths => "checkpoint and source paths, the input's name",
            Category::Hosts => "bucket, account and host names",
            Category::Topics => "Kafka topic names",
            Category::Tables => "table names and ids (Delta reservoirId)",
            Category::Secrets => "conf values that look like secrets",
        }
    }
}

impl std::str::FromStr for Category {
    type Err = String;
    /// Parses a category name (`ids`, `paths`, `hosts`, `topics`, `tables`, `secrets`; singular forms too).
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        Category::ALL.into_iter().find(|c| c.name() == t || c.name().trim_end_matches('s') == t).ok_or_else(|| {
            format!("unknown redaction category {s:?} (one of {})", Category::ALL.map(Category::name).join(", "))
        })
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which categories are redacted. Default: all of them (redaction is on by default).
///
/// JSON (the page's toggles): `{"ids":true,"paths":false,...}`; a missing field means `true`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Redaction {
    /// [`Category::Ids`].
    pub ids: bool,
    /// [`Category::Paths`].
    pub paths: bool,
    /// [`Category::Hosts`].
    pub hosts: bool,
    /// [`Category::Topics`].
    pub topics: bool,
    /// [`Category::Tables`].
    pub tables: bool,
    /// [`Category::Secrets`].
    pub secrets: bool,
}

impl Default for Redaction {
    fn default() -> Self {
        Redaction { ids: true, paths: true, hosts: true, topics: true, tables: true, secrets: true }
    }
}

impl Redaction {
    /// Nothing redacted (file contents and state rows are still never shared).
    pub fn none() -> Self {
        Redaction { ids: false, paths: false, hosts: false, topics: false, tables: false, secrets: false }
    }

    /// Whether a category is redacted.
    pub fn enabled(&self, c: Category) -> bool {
        match c {
            Category::Ids => self.ids,
            Category::Paths => self.paths,
            Category::Hosts => self.hosts,
            Category::Topics => self.topics,
            Category::Tables => self.tables,
            Category::Secrets => self.secrets,
        }
    }

    /// Switches a category on or off.
    pub fn set(&mut self, c: Category, on: bool) {
        let f = match c {
            Category::Ids => &mut self.ids,
            Category::Paths => &mut self.paths,
            Category::Hosts => &mut self.hosts,
            Category::Topics => &mut self.topics,
            Category::Tables => &mut self.tables,
            Category::Secrets => &mut self.secrets,
        };
        *f = on;
    }

    /// The redacted categories, in [`Category::ALL`] order.
    pub fn categories(&self) -> Vec<Category> {
        Category::ALL.into_iter().filter(|c| self.enabled(*c)).collect()
    }
}

/// The result of [`redact`].
#[derive(Debug, Clone, PartialEq)]
pub struct Redacted {
    /// The report with every value of an enabled category replaced, and file contents / state rows removed.
    pub report: Value,
    /// Distinct values replaced, per category (categories with none are absent).
    pub counts: BTreeMap<Category, usize>,
    /// JSON pointers of the fields removed because they hold file contents or state rows.
    pub stripped: Vec<String>,
}

/// Object keys whose values are file contents or state rows: never shared, whatever the redaction settings.
/// (The report of this version holds none; the list guards fields that front ends or later versions add.)
pub(super) const CONTENT_KEYS: &[&str] = &[
    "content",
    "contents",
    "file_content",
    "file_contents",
    "raw",
    "raw_bytes",
    "raw_text",
    "bytes_base64",
    "base64",
    "hexdump",
    "rows",
    "state_rows",
    "sample_rows",
    "row_sample",
];

/// How a collected value's placeholder is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    Query,
    Run,
    Id,
    Path,
    /// The checkpoint's folder inside the archive: replaced where it stands as a path prefix (`root/offsets/3`)
    /// and in the `root` field itself, never as a word of text (a root is often just `checkpoint`).
    Root,
    /// The input's file name: a word of text when it has an extension (`orders.zip`), else like [`Kind::Root`].
    InputName,
    Host,
    Bucket,
    Topic,
    Table,
    Secret,
}

impl Kind {
    fn category(self) -> Category {
        match self {
            Kind::Query | Kind::Run | Kind::Id => Category::Ids,
            Kind::Path | Kind::Root | Kind::InputName => Category::Paths,
            Kind::Host | Kind::Bucket => Category::Hosts,
            Kind::Topic => Category::Topics,
            Kind::Table => Category::Tables,
            Kind::Secret => Category::Secrets,
        }
    }

    /// The placeholder's word; kinds sharing one share its numbering (`<path-N>` for paths, roots, input names).
    fn prefix(self) -> &'static str {
        match self {
            Kind::Query => "query",
            Kind::Run => "run",
            Kind::Id => "id",
            Kind::Path | Kind::Root | Kind::InputName => "path",
            Kind::Host => "host",
            Kind::Bucket => "bucket",
            Kind::Topic => "topic",
            Kind::Table => "table",
            Kind::Secret => "secret",
        }
    }

    /// Whether a match must stand alone (not inside a longer word): for names that may be short or common.
    /// UUIDs and paths are distinctive and are replaced wherever they occur.
    fn needs_boundary(self) -> bool {
        !matches!(self, Kind::Query | Kind::Run | Kind::Id | Kind::Path)
    }
}

/// The values found in a report, in the order first met, each with its kind.
#[derive(Default)]
pub(super) struct Collector {
    order: Vec<(String, Kind)>,
    seen: HashMap<String, usize>,
}

impl Collector {
    pub(super) fn add(&mut self, value: &str, kind: Kind) {
        let v = value.trim();
        if v.is_empty() || is_placeholder(v) || self.seen.contains_key(v) {
            return;
        }
        // Short non-distinctive names would match ordinary words everywhere; values of one or two characters
        // are still replaced where they stand structurally (e.g. a Kafka offsets key), see `apply`.
        self.seen.insert(v.to_string(), self.order.len());
        self.order.push((v.to_string(), kind));
    }
}

pub(super) fn is_placeholder(v: &str) -> bool {
    let strip = |p: &str| v.strip_prefix(p).map(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_alphanumeric()));
    if let Some(inner) = v.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
        return ["path-", "secret-"].iter().any(|p| inner.strip_prefix(p).is_some_and(|n| n.parse::<u32>().is_ok()));
    }
    ["query-", "run-", "id-", "host-", "bucket-", "topic-", "table-"].iter().any(|p| strip(p) == Some(true))
}

/// Redacts a report (the JSON of a [`crate::Report`], or any JSON holding one) with the given categories.
///
/// File contents and state rows (fields named in `CONTENT_KEYS`) are removed whatever `redaction` says.
/// Deterministic: the same input and settings give the same output.
pub fn redact(report: &Value, redaction: &Redaction) -> Redacted {
    let mut report = report.clone();
    let mut stripped = Vec::new();
    strip_contents(&mut report, &mut String::new(), &mut stripped);

    let mut c = Collector::default();
    collect_structured(&report, &mut c);
    collect_patterns(&report, &mut c);

    // Placeholders, numbered per kind in the order values were first met.
    let mut counters: HashMap<&'static str, usize> = HashMap::new();
    let mut table: Vec<(String, String, Kind)> = Vec::new();
    let mut counts = BTreeMap::new();
    for (orig, kind) in &c.order {
        if !redaction.enabled(kind.category()) {
            continue;
        }
        let n = counters.entry(kind.prefix()).or_insert(0);
        *n += 1;
        let ph = placeholder(*kind, *n, orig);
        *counts.entry(kind.category()).or_insert(0) += 1;
        table.push((orig.clone(), ph, *kind));
    }
    // Longest first; ties by value, so the order does not depend on hashing.
    table.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    let exact: HashMap<&str, &str> = table.iter().map(|(o, p, _)| (o.as_str(), p.as_str())).collect();
    let secret_ph = |v: &str| exact.get(v).map(|s| s.to_string());

    let orig_name = report.pointer("/input/name").and_then(Value::as_str).map(str::to_string);
    let orig_roots: Vec<Option<String>> = report
        .get("checkpoints")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|cp| cp.get("root").and_then(Value::as_str).map(str::to_string)).collect())
        .unwrap_or_default();
    let r = Replacer { table: &table };
    let mut report = apply(&report, &r, redaction, &secret_ph);
    // The root and the input's name, in their own fields (elsewhere only as a path prefix, see `Kind::Root`).
    if let (Some(orig), Some(Value::String(name))) = (orig_name, report.pointer_mut("/input/name")) {
        if let Some(p) = exact.get(orig.trim()) {
            *name = p.to_string();
        }
    }
    if let Some(cps) = report.get_mut("checkpoints").and_then(Value::as_array_mut) {
        for (cp, orig) in cps.iter_mut().zip(orig_roots) {
            if let (Some(orig), Some(Value::String(root))) = (orig, cp.get_mut("root")) {
                if let Some(p) = exact.get(orig.trim_end_matches('/')) {
                    *root = p.to_string();
                }
            }
        }
    }
    Redacted { report, counts, stripped }
}

/// A root or input name that is a plain word (`checkpoint`, `chk`, `query1`): replaced only as a path prefix,
/// since as a word of text it would match the inspector's own sentences. Anything else (`orders_prod`,
/// `chk%20x`, `orders.zip`) is distinctive and replaced wherever it stands alone.
pub(super) fn common_word(v: &str) -> bool {
    v.len() <= 12 && v.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

pub(super) fn placeholder(kind: Kind, n: usize, orig: &str) -> String {
    match kind {
        Kind::Query => format!("query-{n}"),
        Kind::Run => format!("run-{n}"),
        Kind::Id => format!("id-{n}"),
        Kind::Root | Kind::InputName => format!("<path-{n}>"),
        Kind::Path => match uri_scheme(orig) {
            Some(scheme) if orig[scheme.len()..].starts_with("://") => format!("{scheme}://<path-{n}>"),
            Some(scheme) => format!("{scheme}:<path-{n}>"),
            None => format!("<path-{n}>"),
        },
        Kind::Host => format!("host-{n}"),
        Kind::Bucket => format!("bucket-{n}"),
        Kind::Topic => format!("topic-{n}"),
        Kind::Table => format!("table-{}", letters(n)),
        Kind::Secret => format!("<secret-{n}>"),
    }
}

/// 1 → A, 26 → Z, 27 → AA.
pub(super) fn letters(mut n: usize) -> String {
    let mut s = Vec::new();
    while n > 0 {
        n -= 1;
        s.push(b'A' + (n % 26) as u8);
        n /= 26;
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

pub(super) fn strip_contents(v: &mut Value, pointer: &mut String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            let drop: Vec<String> =
                m.keys().filter(|k| CONTENT_KEYS.contains(&k.to_ascii_lowercase().as_str())).cloned().collect();
            for k in drop {
                m.remove(&k);
                out.push(format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1")));
            }
            for (k, child) in m.iter_mut() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&k.replace('~', "~0").replace('/', "~1"));
                strip_contents(child, pointer, out);
                pointer.truncate(len);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter_mut().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                strip_contents(child, pointer, out);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Collection from known places.

pub(super) fn as_str(v: &Value) -> Option<&str> {
    v.as_str().filter(|s| !s.trim().is_empty())
}

pub(super) fn collect_structured(report: &Value, c: &mut Collector) {
    // The query id of every checkpoint first: it gets `query-1`, `query-2`, ...
    if let Some(cps) = report.get("checkpoints").and_then(Value::as_array) {
        for cp in cps {
            if let Some(q) = cp.get("query_id").and_then(as_str) {
                c.add(q, Kind::Query);
            }
        }
    }
    if let Some(name) = report.pointer("/input/name").and_then(as_str) {
        c.add(name, Kind::InputName);
    }
    for cp in report.get("checkpoints").and_then(Value::as_array).into_iter().flatten() {
        if let Some(root) = cp.get("root").and_then(as_str) {
            let root = root.trim_end_matches('/');
            c.add(root, Kind::Root);
            // Findings may quote the folder decoded (a percent-escaped legacy folder, `escaped-path`).
            let mut r = root.to_string();
            for _ in 0..4 {
                let Some(d) = crate::checks::metadata::unescape_once(&r) else { break };
                c.add(&d, Kind::Root);
                r = d;
            }
        }
    }
    walk_keys(report, c);
    if let Some(cps) = report.get("checkpoints").and_then(Value::as_array) {
        for cp in cps {
            for s in cp.get("sources").and_then(Value::as_array).into_iter().flatten() {
                let kind = s.get("kind").and_then(Value::as_str).unwrap_or("");
                let off = s.get("latest_offset");
                if kind == "kafka" {
                    if let Some(m) = off.and_then(Value::as_object) {
                        for topic in m.keys() {
                            c.add(topic, Kind::Topic);
                        }
                    }
                }
                if let Some(name) = s.get("name").and_then(as_str) {
                    // A v2 offset log's source name is chosen by the user; treat it like a table name.
                    c.add(name, Kind::Table);
                }
            }
        }
    }
}

pub(super) fn lower(k: &str) -> String {
    k.to_ascii_lowercase().replace(['_', '-'], "")
}

/// Field names whose string values are of a kind, wherever they occur in the report.
pub(super) fn kind_of_key(key: &str) -> Option<Kind> {
    match lower(key).as_str() {
        "queryid" => Some(Kind::Query),
        "runid" => Some(Kind::Run),
        "reservoirid" | "tableid" | "deltatableid" | "tablename" | "table" | "tables" => Some(Kind::Table),
        "topic" | "topics" | "topicname" => Some(Kind::Topic),
        "bucket" | "bucketname" | "container" | "storageaccount" | "account" => Some(Kind::Bucket),
        "host" | "hostname" | "bootstrapservers" | "brokers" | "endpoint" => Some(Kind::Host),
        "path" | "tablepath" | "location" | "checkpointlocation" | "sourcepath" | "datapath" => None,
        _ => None,
    }
}

/// A conf key (or field name) whose value is a secret.
pub(super) fn secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "password",
        "passwd",
        "passphrase",
        "secret",
        "token",
        "credential",
        "apikey",
        "api.key",
        "api_key",
        "access.key",
        "accesskey",
        "account.key",
        "private",
        "signature",
        "jaas.config",
        "sas",
        "auth.key",
        "client.key",
    ];
    WORDS.iter().any(|w| {
        // `sas` only as a whole dotted/underscored word (not inside `sasl`'s mechanism name etc.).
        if *w == "sas" {
            k.split(['.', '_', '-']).any(|p| p == "sas" || p == "sastoken")
        } else {
            k.contains(w)
        }
    }) || k.ends_with(".key")
        || k.ends_with(".pwd")
}

/// A conf key whose value names hosts (`host:port` lists, endpoints) or a bucket.
pub(super) fn host_key(key: &str) -> Option<Kind> {
    let k = key.to_ascii_lowercase();
    if k.ends_with(".bucket") || k.ends_with(".container") {
        return Some(Kind::Bucket);
    }
    if k.contains("bootstrap.servers")
        || k.ends_with(".servers")
        || k.ends_with(".host")
        || k.ends_with(".hostname")
        || k.ends_with(".endpoint")
        || k.ends_with(".brokers")
        || k.ends_with(".address")
    {
        return Some(Kind::Host);
    }
    None
}

pub(super) fn boring_value(v: &str) -> bool {
    let t = v.trim();
    t.is_empty()
        || t.eq_ignore_ascii_case("true")
        || t.eq_ignore_ascii_case("false")
        || t.eq_ignore_ascii_case("null")
        || t.eq_ignore_ascii_case("none")
        || t.parse::<f64>().is_ok()
}

pub(super) fn walk_keys(v: &Value, c: &mut Collector) {
    match v {
        Value::Object(m) => {
            // Kafka-shaped offsets anywhere: {"topic": {"0": 12, "1": 7}}.
            if !m.is_empty() && m.values().all(kafka_partitions) {
                for topic in m.keys() {
                    c.add(topic, Kind::Topic);
                }
            }
            // A {key, recorded/session/value} record of a conf (forced_conf).
            let rec_key = m.get("key").and_then(Value::as_str);
            for (k, child) in m {
                let kind = kind_of_key(k);
                match (kind, child) {
                    (Some(kind), Value::String(s)) if !boring_value(s) => {
                        if kind == Kind::Topic {
                            for t in s.split(',') {
                                c.add(t, kind);
                            }
                        } else {
                            add_typed(c, s, kind);
                        }
                    }
                    (Some(kind), Value::Array(a)) => {
                        for s in a.iter().filter_map(Value::as_str) {
                            add_typed(c, s, kind);
                        }
                    }
                    _ => {}
                }
                if let Value::String(s) = child {
                    conf_entry(c, k, s);
                    if let Some(rk) = rec_key {
                        if matches!(k.as_str(), "recorded" | "session" | "value") {
                            conf_entry(c, rk, s);
                        }
                    }
                }
                walk_keys(child, c);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| walk_keys(x, c)),
        _ => {}
    }
}

pub(super) fn add_typed(c: &mut Collector, s: &str, kind: Kind) {
    if kind == Kind::Host {
        for part in s.split([',', ' ', ';']) {
            let host = strip_port(part.trim());
            if !host.is_empty() {
                c.add(host, Kind::Host);
            }
        }
    } else {
        c.add(s, kind);
    }
}

/// The recorded conf `key = value`: secrets, hosts, buckets and paths by the key's meaning.
pub(super) fn conf_entry(c: &mut Collector, key: &str, value: &str) {
    if boring_value(value) {
        return;
    }
    if secret_key(key) {
        c.add(value, Kind::Secret);
        return;
    }
    if let Some(kind) = host_key(key) {
        add_typed(c, value, kind);
    }
    // A conf value (dotted key) or a path-named field that is a path is one path, even with spaces in it.
    let t = value.trim();
    let k = key.to_ascii_lowercase();
    let pathish_key =
        key.contains('.') || ["path", "location", "dir", "file", "uri", "url"].iter().any(|w| k.contains(w));
    if looks_like_path(t) && !t.contains('\n') && (pathish_key || !t.contains(char::is_whitespace)) && !is_doc_url(t) {
        collect_uri_hosts(t, c);
        c.add(t, Kind::Path);
    }
    // Per-bucket / per-account conf keys name the bucket in the key itself.
    collect_in_conf_key(c, key);
}

pub(super) fn collect_in_conf_key(c: &mut Collector, key: &str) {
    let k = key.to_ascii_lowercase();
    for marker in ["fs.s3a.bucket.", "fs.s3.bucket.", "fs.gs.bucket.", "fs.oss.bucket."] {
        if let Some(i) = k.find(marker) {
            let rest = &key[i + marker.len()..];
            if let Some(bucket) = rest.split('.').next().filter(|b| !b.is_empty()) {
                c.add(bucket, Kind::Bucket);
            }
        }
    }
}

pub(super) fn kafka_partitions(v: &Value) -> bool {
    match v {
        Value::Object(p) => {
            !p.is_empty() && p.iter().all(|(k, n)| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) && n.is_i64())
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Replacement.

/// Shortest id or path replaced inside other text (shorter ones only as whole words); Spark's query and run ids
/// are 36-character UUIDs.
const MIN_UNBOUNDED_LEN: usize = 8;

pub(super) struct Replacer<'a> {
    /// `(original, placeholder, kind)`, longest original first.
    table: &'a [(String, String, Kind)],
}

pub(super) fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Replacer<'_> {
    /// Replaces every occurrence of every value in one pass: longer values claim their spans first, a span
    /// once claimed is not matched again (so a placeholder is never rewritten).
    fn replace(&self, s: &str) -> String {
        if self.table.is_empty() || s.is_empty() {
            return s.to_string();
        }
        let b = s.as_bytes();
        // start → (end, table index). The spans never overlap, so the one starting last before a new span's end
        // is the only one that can overlap it: a check in log time, not a walk of every span so far.
        let mut claimed: std::collections::BTreeMap<usize, (usize, usize)> = std::collections::BTreeMap::new();
        for (ti, (orig, _, kind)) in self.table.iter().enumerate() {
            if orig.len() > s.len() {
                continue;
            }
            for (start, _) in s.match_indices(orig.as_str()) {
                let end = start + orig.len();
                let prefix_only = matches!(kind, Kind::Root | Kind::InputName) && common_word(orig);
                if prefix_only && (b.get(end) != Some(&b'/') || (start > 0 && word_byte(b[start - 1]))) {
                    continue;
                }
                // Ids and paths match anywhere (a UUID inside a file name), but a short one only as a whole word:
                // a query id `e` from a hostile `metadata` must not rewrite every `e` of the report.
                if (kind.needs_boundary() || orig.len() < MIN_UNBOUNDED_LEN) && !prefix_only {
                    let before = start > 0 && word_byte(b[start - 1]) && word_byte(orig.as_bytes()[0]);
                    let after = end < b.len() && word_byte(b[end]) && word_byte(orig.as_bytes()[orig.len() - 1]);
                    if before || after {
                        continue;
                    }
                }
                if claimed.range(..end).next_back().is_some_and(|(_, &(e0, _))| start < e0) {
                    continue;
                }
                claimed.insert(start, (end, ti));
            }
        }
        if claimed.is_empty() {
            return s.to_string();
        }
        let mut out = String::with_capacity(s.len());
        let mut pos = 0;
        for (start, (end, ti)) in claimed {
            out.push_str(&s[pos..start]);
            out.push_str(&self.table[ti].1);
            pos = end;
        }
        out.push_str(&s[pos..]);
        out
    }

    /// An object's key. A key shaped like a field name (`[a-z0-9_]`, as the report's own fields are) is replaced
    /// only when it is a whole value (a topic `orders` keying its offsets), never inside: a one-letter query id
    /// from a hostile `metadata` would otherwise rewrite `checkpoints` and every field name holding that letter.
    /// The fields of the report and of each checkpoint (`structural`) are never replaced: a link must open.
    fn replace_key(&self, k: &str, structural: bool) -> String {
        let field_like = !k.is_empty() && k.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if structural && field_like {
            return k.to_string();
        }
        if field_like {
            return match self.table.iter().find(|(orig, _, _)| orig == k) {
                Some((_, ph, _)) => ph.clone(),
                None => k.to_string(),
            };
        }
        self.replace(k)
    }
}

pub(super) fn apply(v: &Value, r: &Replacer<'_>, red: &Redaction, secret_ph: &dyn Fn(&str) -> Option<String>) -> Value {
    apply_at(v, r, red, secret_ph, Place::Report)
}

/// Where a value sits: the report object, its `checkpoints` list, one checkpoint, or anywhere else.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Report,
    Checkpoints,
    Checkpoint,
    Other,
}

fn apply_at(
    v: &Value,
    r: &Replacer<'_>,
    red: &Redaction,
    secret_ph: &dyn Fn(&str) -> Option<String>,
    at: Place,
) -> Value {
    match v {
        Value::String(s) => Value::String(r.replace(s)),
        Value::Array(a) => {
            let inner = if at == Place::Checkpoints { Place::Checkpoint } else { Place::Other };
            Value::Array(a.iter().map(|x| apply_at(x, r, red, secret_ph, inner)).collect())
        }
        Value::Object(m) => {
            let rec_key_secret = m.get("key").and_then(Value::as_str).is_some_and(secret_key);
            let structural = matches!(at, Place::Report | Place::Checkpoint);
            let mut out = Map::new();
            for (k, child) in m {
                let is_secret_field =
                    secret_key(k) || (rec_key_secret && matches!(k.as_str(), "recorded" | "session" | "value"));
                let inner = if at == Place::Report && k == "checkpoints" { Place::Checkpoints } else { Place::Other };
                let new_child = match child {
                    // A secret conf value is replaced whole, however short it is.
                    Value::String(s) if red.secrets && is_secret_field && !boring_value(s) => {
                        Value::String(secret_ph(s.trim()).unwrap_or_else(|| "<secret>".to_string()))
                    }
                    _ => apply_at(child, r, red, secret_ph, inner),
                };
                let mut nk = r.replace_key(k, structural);
                while out.contains_key(&nk) {
                    nk.push('~');
                }
                out.insert(nk, new_child);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}
