//! Ready-to-paste PySpark and Scala snippets for a way out: the options it sets on each source and, for a new
//! checkpoint, the writer's `checkpointLocation` (and a file sink's new `path`). Text only; nothing here is ever
//! executed. Values are quoted as string literals of the target language (Python `'…'` with `\` and `'` escaped;
//! Scala `"""…"""` raw strings, or `"…"` with escapes when the value holds `"""`).

use super::{Snippet, SourceOption};
use crate::source::SourceKind;

/// The placeholder for the new checkpoint location in snippets.
pub const NEW_CHECKPOINT: &str = "<new checkpoint path>";

/// The `format(...)` name of a source kind and a comment on what else to keep.
fn format_of(kind: SourceKind) -> (&'static str, &'static str) {
    match kind {
        SourceKind::Kafka => {
            ("kafka", "keep kafka.bootstrap.servers, subscribe/subscribePattern/assign and your other options")
        }
        SourceKind::Delta => ("delta", "keep your table path or name and your other options"),
        SourceKind::AutoLoader => ("cloudFiles", "keep cloudFiles.format, the source path and your other options"),
        SourceKind::File => {
            ("<format>", "your file format (parquet, json, csv, ...); keep the path and your other options")
        }
        SourceKind::Rate => ("rate-micro-batch", "keep rowsPerBatch and your other options"),
        SourceKind::Memory | SourceKind::None | SourceKind::Unknown => ("<format>", "keep your options"),
    }
}

/// Python string literal.
pub fn py_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'").replace('\n', "\\n"))
}

/// Scala string literal (a raw `"""…"""` when it contains a `"` and no `"""`, else an escaped `"…"`).
pub fn scala_str(s: &str) -> String {
    if s.contains('"') && !s.contains("\"\"\"") && !s.ends_with('"') && !s.contains('\n') {
        format!("\"\"\"{s}\"\"\"")
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n"))
    }
}

/// Snippets setting `options` on the sources (`kinds[i]` is the kind of `sources/<i>`); with
/// `new_checkpoint`, the writer gets `checkpointLocation` = [`NEW_CHECKPOINT`].
pub fn source_snippets(options: &[SourceOption], kinds: &[SourceKind], new_checkpoint: bool) -> Vec<Snippet> {
    let mut sources: Vec<usize> = options.iter().filter_map(|o| o.source_index).collect();
    sources.sort_unstable();
    sources.dedup();
    let mut py = String::new();
    let mut scala = String::new();
    for i in &sources {
        let kind = kinds.get(*i).copied().unwrap_or(SourceKind::Unknown);
        let (format, keep) = format_of(kind);
        py.push_str(&format!(
            "# source #{i} ({}): {keep}\nsource{i} = (spark.readStream.format({})\n",
            kind.as_str(),
            py_str(format)
        ));
        scala.push_str(&format!(
            "// source #{i} ({}): {keep}\nval source{i} = spark.readStream.format({})\n",
            kind.as_str(),
            scala_str(format)
        ));
        for o in options.iter().filter(|o| o.source_index == Some(*i)) {
            let note = if o.fresh_checkpoint_only { "  # honoured only on a new checkpoint" } else { "" };
            py.push_str(&format!("    .option({}, {}){note}\n", py_str(&o.key), py_str(&o.value)));
            let note = if o.fresh_checkpoint_only { "  // honoured only on a new checkpoint" } else { "" };
            scala.push_str(&format!("  .option({}, {}){note}\n", scala_str(&o.key), scala_str(&o.value)));
        }
        py.push_str("    .load())\n");
        scala.push_str("  .load()\n");
    }
    if new_checkpoint {
        // The writer's options besides the location (a file sink's new output `path`), kept in order.
        let writer: Vec<&SourceOption> =
            options.iter().filter(|o| o.source_index.is_none() && o.key != "checkpointLocation").collect();
        py.push_str(&format!(
            "# the writer: a NEW checkpoint location (keep the old one untouched, for reference)\nquery = (result.writeStream\n    .option('checkpointLocation', {})\n",
            py_str(NEW_CHECKPOINT)
        ));
        scala.push_str(&format!(
            "// the writer: a NEW checkpoint location (keep the old one untouched, for reference)\nval query = result.writeStream\n  .option(\"checkpointLocation\", {})\n",
            scala_str(NEW_CHECKPOINT)
        ));
        for o in writer {
            py.push_str(&format!("    .option({}, {})\n", py_str(&o.key), py_str(&o.value)));
            scala.push_str(&format!("  .option({}, {})\n", scala_str(&o.key), scala_str(&o.value)));
        }
        py.push_str("    .start())\n");
        scala.push_str("  .start()\n");
    }
    if py.is_empty() {
        return Vec::new();
    }
    vec![Snippet { language: "pyspark".into(), code: py }, Snippet { language: "scala".into(), code: scala }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_values_for_each_language() {
        assert_eq!(py_str(r#"{"t":{"0":5}}"#), r#"'{"t":{"0":5}}'"#);
        assert_eq!(py_str("it's"), r"'it\'s'");
        assert_eq!(scala_str(r#"{"t":{"0":5}}"#), r#""""{"t":{"0":5}}""""#);
        assert_eq!(scala_str("plain"), "\"plain\"");
        assert_eq!(scala_str("a\"\"\"b"), "\"a\\\"\\\"\\\"b\"");
    }

    #[test]
    fn one_block_per_source_and_the_writer() {
        let opts = vec![SourceOption::new(0, "startingOffsets", r#"{"t":{"0":5}}"#, true)];
        let s = source_snippets(&opts, &[SourceKind::Kafka], true);
        assert_eq!(s.len(), 2);
        assert!(s[0]
            .code
            .contains(".option('startingOffsets', '{\"t\":{\"0\":5}}')  # honoured only on a new checkpoint"));
        assert!(s[0].code.contains("checkpointLocation"));
        assert!(s[1].code.contains("spark.readStream.format(\"kafka\")"));
    }
}
