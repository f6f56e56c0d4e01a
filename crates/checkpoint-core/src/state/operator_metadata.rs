//! Operator metadata (FORMATS.md §13): `state/<op>/_metadata/metadata` (v1, Spark 4.0+ for every stateful
//! operator) and `state/<op>/_metadata/v2/<batchId>` (v2, transformWithState), each a version line then one JSON
//! object. Mirrors `OperatorStateMetadata.scala` (sql/core/.../execution/streaming/state/).

use serde_json::Value;
use std::fmt;

/// One state store of an operator, as the metadata lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreMetadata {
    /// Store name (`default`, `left-keyToNumValues`, …).
    pub store_name: String,
    /// Number of leading key columns used as a scan prefix (session windows), `numColsPrefixKey`.
    pub num_cols_prefix_key: i64,
    /// Number of state partitions.
    pub num_partitions: i64,
    /// v2: paths of the StateSchemaV3 files (`stateSchemaFilePaths`, or the singular `stateSchemaFilePath`),
    /// absolute as Spark wrote them.
    pub state_schema_file_paths: Vec<String>,
}

/// A parsed operator metadata file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorMetadata {
    /// 1 or 2 (the version line).
    pub version: u8,
    /// `operatorInfo.operatorId`.
    pub operator_id: i64,
    /// `operatorInfo.operatorName` (`stateStoreSave`, `dedupe`, `symmetricHashJoin`, …).
    pub operator_name: String,
    /// `stateStoreInfo`.
    pub stores: Vec<StoreMetadata>,
    /// v2: `operatorPropertiesJson`, a JSON document in a string (timeMode, outputMode, stateVariables).
    pub operator_properties_json: Option<String>,
}

/// A metadata file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataError {
    /// Byte offset in the file (0 = version line, else where the JSON starts or failed).
    pub offset: u64,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for MetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for MetadataError {}

/// Parses an operator metadata file (v1 or v2).
pub fn parse_operator_metadata(bytes: &[u8]) -> Result<OperatorMetadata, MetadataError> {
    let e = |offset: usize, m: String| MetadataError { offset: offset as u64, message: m };
    let nl = bytes.iter().position(|&b| b == b'\n').ok_or_else(|| e(0, "no version line".into()))?;
    let line = String::from_utf8_lossy(&bytes[..nl]).trim().to_string();
    let version = match line.as_str() {
        "v1" => 1,
        "v2" => 2,
        other => return Err(e(0, format!("unsupported operator metadata version line {other:?}"))),
    };
    let json_at = nl + 1;
    let v: Value = serde_json::from_slice(&bytes[json_at..])
        .map_err(|x| e(json_at, format!("metadata JSON does not parse: {x}")))?;
    let info = &v["operatorInfo"];
    let operator_id =
        info["operatorId"].as_i64().ok_or_else(|| e(json_at, "operatorInfo.operatorId missing".into()))?;
    let operator_name = info["operatorName"].as_str().unwrap_or("").to_string();
    let mut stores = Vec::new();
    for s in v["stateStoreInfo"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
        let mut paths: Vec<String> = s["stateSchemaFilePaths"]
            .as_array()
            .map(|a| a.iter().filter_map(|p| p.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        if let Some(p) = s["stateSchemaFilePath"].as_str() {
            paths.push(p.to_string());
        }
        stores.push(StoreMetadata {
            store_name: s["storeName"].as_str().unwrap_or("default").to_string(),
            num_cols_prefix_key: s["numColsPrefixKey"].as_i64().unwrap_or(0),
            num_partitions: s["numPartitions"].as_i64().unwrap_or(0),
            state_schema_file_paths: paths,
        });
    }
    let operator_properties_json = v["operatorPropertiesJson"].as_str().map(str::to_string);
    Ok(OperatorMetadata { version, operator_id, operator_name, stores, operator_properties_json })
}
