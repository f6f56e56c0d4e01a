//! Schema changes between two Delta table schemas as the streaming source judges them
//! (delta-io/delta `DeltaSource.checkReadIncompatibleSchemaChanges`, `DeltaColumnMapping.
//! hasNoColumnMappingSchemaChanges`, `SchemaUtils.isReadCompatible`): the stream reads every version with
//! the latest schema, so a column of an older version that the latest schema lacks (dropped, or renamed),
//! a changed type, a nullable column made non-nullable, or changed partition columns is read-incompatible.
//! A column added is not. On a column-mapping table (`delta.columnMapping.mode` `name`/`id`) renames and
//! drops are recognised by the physical name.

use serde_json::Value;

/// One column (nested fields of structs flattened as `a.b`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Dotted path.
    pub path: String,
    /// The type as Delta writes it (`long`, `string`, or a complex type's JSON).
    pub data_type: String,
    /// `nullable`.
    pub nullable: bool,
    /// `delta.columnMapping.physicalName`, when column mapping is on.
    pub physical_name: Option<String>,
}

/// One change from an older schema to a newer one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaChange {
    /// A column added (additive: streams go on).
    Added(String),
    /// A column of the older schema is absent from the newer one.
    Dropped(String),
    /// A column renamed (column mapping: same physical name).
    Renamed(String, String),
    /// A column's type changed `(column, old, new)`.
    TypeChanged(String, String, String),
    /// A nullable column became non-nullable.
    NullabilityTightened(String),
    /// The partition columns changed `(old, new)`.
    PartitioningChanged(Vec<String>, Vec<String>),
}

impl SchemaChange {
    /// True for the changes a stream cannot cross with its read schema.
    pub fn non_additive(&self) -> bool {
        !matches!(self, SchemaChange::Added(_))
    }
    /// True for a type change only.
    pub fn is_type_change(&self) -> bool {
        matches!(self, SchemaChange::TypeChanged(..))
    }
    /// In plain words.
    pub fn describe(&self) -> String {
        match self {
            SchemaChange::Added(c) => format!("column {c} added"),
            SchemaChange::Dropped(c) => format!("column {c} dropped"),
            SchemaChange::Renamed(a, b) => format!("column {a} renamed to {b}"),
            SchemaChange::TypeChanged(c, a, b) => format!("column {c} changed type from {a} to {b}"),
            SchemaChange::NullabilityTightened(c) => format!("column {c} made non-nullable"),
            SchemaChange::PartitioningChanged(a, b) => {
                format!("partition columns changed from [{}] to [{}]", a.join(", "), b.join(", "))
            }
        }
    }
}

fn type_text(t: &Value) -> String {
    match t {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn flatten(prefix: &str, fields: &[Value], out: &mut Vec<Column>) {
    for f in fields {
        let Some(name) = f.get("name").and_then(Value::as_str) else { continue };
        let path = if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") };
        let t = f.get("type").cloned().unwrap_or(Value::Null);
        let physical_name = f
            .get("metadata")
            .and_then(|m| m.get("delta.columnMapping.physicalName"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let nested = t.get("type").and_then(Value::as_str) == Some("struct");
        out.push(Column {
            path: path.clone(),
            data_type: if nested { "struct".into() } else { type_text(&t) },
            nullable: f.get("nullable").and_then(Value::as_bool).unwrap_or(true),
            physical_name,
        });
        if nested {
            if let Some(sub) = t.get("fields").and_then(Value::as_array) {
                flatten(&path, sub, out);
            }
        }
    }
}

/// The columns of a `schemaString`; `None` when it does not parse as a struct.
pub fn columns(schema_string: &str) -> Option<Vec<Column>> {
    let v: Value = serde_json::from_str(schema_string).ok()?;
    let fields = v.get("fields")?.as_array()?;
    let mut out = Vec::new();
    flatten("", fields, &mut out);
    Some(out)
}

/// The changes from `old` to `new` (schema strings and partition columns); `column_mapping` = match
/// columns by physical name (renames) as Delta does on a column-mapping table.
pub fn diff(
    old: &str,
    new: &str,
    old_partitions: &[String],
    new_partitions: &[String],
    column_mapping: bool,
) -> Option<Vec<SchemaChange>> {
    let (a, b) = (columns(old)?, columns(new)?);
    let mut out = Vec::new();
    let by_physical = |cols: &[Column], p: &Option<String>| -> Option<usize> {
        p.as_ref().and_then(|p| cols.iter().position(|c| c.physical_name.as_ref() == Some(p)))
    };
    let mut matched = vec![false; b.len()];
    for c in &a {
        let same = if column_mapping && c.physical_name.is_some() {
            by_physical(&b, &c.physical_name)
        } else {
            b.iter().position(|n| n.path.eq_ignore_ascii_case(&c.path))
        };
        match same {
            None => out.push(SchemaChange::Dropped(c.path.clone())),
            Some(i) => {
                matched[i] = true;
                let n = &b[i];
                if !n.path.eq_ignore_ascii_case(&c.path) {
                    out.push(SchemaChange::Renamed(c.path.clone(), n.path.clone()));
                }
                if n.data_type != c.data_type {
                    out.push(SchemaChange::TypeChanged(n.path.clone(), c.data_type.clone(), n.data_type.clone()));
                }
                if c.nullable && !n.nullable {
                    out.push(SchemaChange::NullabilityTightened(n.path.clone()));
                }
            }
        }
    }
    for (i, n) in b.iter().enumerate() {
        if !matched[i] {
            out.push(SchemaChange::Added(n.path.clone()));
        }
    }
    if old_partitions != new_partitions {
        out.push(SchemaChange::PartitioningChanged(old_partitions.to_vec(), new_partitions.to_vec()));
    }
    // A dropped parent implies its nested fields: keep the parent only.
    let dropped: Vec<String> =
        out.iter().filter_map(|c| if let SchemaChange::Dropped(p) = c { Some(p.clone()) } else { None }).collect();
    out.retain(|c| match c {
        SchemaChange::Dropped(p) | SchemaChange::Added(p) => !dropped.iter().any(|d| p.starts_with(&format!("{d}."))),
        _ => true,
    });
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V3: &str = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}},{"name":"value","type":"double","nullable":true,"metadata":{}}]}"#;
    const V7: &str = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}},{"name":"extra","type":"string","nullable":true,"metadata":{}}]}"#;

    #[test]
    fn a_drop_is_non_additive_an_add_is_not() {
        let d = diff(V3, V7, &[], &[], false).unwrap();
        assert_eq!(d, vec![SchemaChange::Dropped("value".into()), SchemaChange::Added("extra".into())]);
        assert!(d[0].non_additive() && !d[1].non_additive());
    }

    #[test]
    fn column_mapping_renames_by_physical_name() {
        let a = r#"{"type":"struct","fields":[{"name":"a","type":"int","nullable":true,"metadata":{"delta.columnMapping.physicalName":"col-1"}}]}"#;
        let b = r#"{"type":"struct","fields":[{"name":"b","type":"long","nullable":false,"metadata":{"delta.columnMapping.physicalName":"col-1"}}]}"#;
        let d = diff(a, b, &[], &[], true).unwrap();
        assert_eq!(
            d,
            vec![
                SchemaChange::Renamed("a".into(), "b".into()),
                SchemaChange::TypeChanged("b".into(), "int".into(), "long".into()),
                SchemaChange::NullabilityTightened("b".into()),
            ]
        );
    }
}
