//! Operator metadata (FORMATS.md §13): `state/<op>/_metadata/metadata` (v1) and
//! `state/<op>/_metadata/v2/<batchId>` (v2, transformWithState). Version line, then one JSON object with
//! `operatorInfo` (`operatorId`, `operatorName`) and `stateStoreInfo` (store names, partitions).
//! Mirrors Spark's `OperatorStateMetadataReader`.

use super::{json_error, lines_with_offsets, parse_version_line, utf8, LogError};

/// One store recorded in operator metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreInfo {
    /// `storeName` (`default`, or the join stores; `default` when absent, as Spark's default store).
    pub store_name: String,
    /// `numPartitions`.
    pub num_partitions: Option<i64>,
    /// `numColsPrefixKey`: leading key columns used as a scan prefix (session windows); 0 when absent.
    pub num_cols_prefix_key: i64,
    /// v2: paths of the StateSchemaV3 files (`stateSchemaFilePaths`, or the singular `stateSchemaFilePath`),
    /// absolute as Spark wrote them.
    pub state_schema_file_paths: Vec<String>,
}

/// Parsed operator metadata (v1 or v2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorMetadata {
    /// The version line's number.
    pub version: u32,
    /// `operatorInfo.operatorId`.
    pub operator_id: Option<i64>,
    /// `operatorInfo.operatorName` (`stateStoreSave`, `dedupe`, `symmetricHashJoin`, ...).
    pub operator_name: Option<String>,
    /// `stateStoreInfo`.
    pub stores: Vec<StoreInfo>,
    /// v2: `operatorPropertiesJson`, a JSON document in a string (timeMode, outputMode, stateVariables).
    pub operator_properties_json: Option<String>,
}

/// Parses an operator metadata file.
pub fn parse(bytes: &[u8]) -> Result<OperatorMetadata, LogError> {
    let text = utf8(bytes)?;
    let mut lines = lines_with_offsets(text);
    let Some((_, first)) = lines.next() else {
        return Err(LogError::Empty);
    };
    let version = parse_version_line(first)?;
    let Some((off, line)) = lines.next() else {
        return Err(LogError::MissingLine { offset: bytes.len() as u64, message: "Incomplete log file".into() });
    };
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| json_error(&e, line, off, 2))?;
    let info = v.get("operatorInfo");
    let stores = v
        .get("stateStoreInfo")
        .and_then(|s| s.as_array())
        .map(|a| {
            a.iter()
                .map(|s| {
                    let mut paths: Vec<String> = s
                        .get("stateSchemaFilePaths")
                        .and_then(|a| a.as_array())
                        .map(|a| a.iter().filter_map(|p| p.as_str().map(str::to_string)).collect())
                        .unwrap_or_default();
                    if let Some(p) = s.get("stateSchemaFilePath").and_then(|p| p.as_str()) {
                        paths.push(p.to_string());
                    }
                    StoreInfo {
                        store_name: s.get("storeName").and_then(|n| n.as_str()).unwrap_or("default").to_string(),
                        num_partitions: s.get("numPartitions").and_then(|n| n.as_i64()),
                        num_cols_prefix_key: s.get("numColsPrefixKey").and_then(|n| n.as_i64()).unwrap_or(0),
                        state_schema_file_paths: paths,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(OperatorMetadata {
        version,
        operator_id: info.and_then(|i| i.get("operatorId")).and_then(|x| x.as_i64()),
        operator_name: info.and_then(|i| i.get("operatorName")).and_then(|x| x.as_str()).map(str::to_string),
        stores,
        operator_properties_json: v.get("operatorPropertiesJson").and_then(|x| x.as_str()).map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1() {
        let m = parse(b"v1\n{\"operatorInfo\":{\"operatorId\":0,\"operatorName\":\"stateStoreSave\"},\"stateStoreInfo\":[{\"storeName\":\"default\",\"numColsPrefixKey\":0,\"numPartitions\":2}]}").unwrap();
        assert_eq!(m.operator_name.as_deref(), Some("stateStoreSave"));
        assert_eq!(m.stores[0].num_partitions, Some(2));
    }
}
