//! Operator metadata (FORMATS.md §13): `state/<op>/_metadata/metadata` (v1, Spark 4.0+ for every stateful
//! operator) and `state/<op>/_metadata/v2/<batchId>` (v2, transformWithState), each a version line then one JSON
//! object. Mirrors `OperatorStateMetadata.scala` (sql/core/.../execution/streaming/state/).

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

crate::parse_error::parse_error_type!(
    /// A metadata file that cannot be read.
    MetadataError,
    OperatorMetadataFormat,
    "byte"
);

/// Parses an operator metadata file (v1 or v2) for the state reader: the one parser is
/// [`crate::log::operator_metadata::parse`]; this view requires what the state reader needs (a supported version,
/// an operator id) and fills Spark's defaults (`default` store, 0 partitions, no prefix columns).
pub fn parse_operator_metadata(bytes: &[u8]) -> Result<OperatorMetadata, MetadataError> {
    let m =
        crate::log::operator_metadata::parse(bytes).map_err(|err| MetadataError::new(err.offset(), err.to_string()))?;
    let json_at = bytes.iter().position(|&b| b == b'\n').map_or(0, |nl| nl as u64 + 1);
    let version = match m.version {
        1 => 1,
        2 => 2,
        other => return Err(MetadataError::new(0u64, format!("unsupported operator metadata version v{other}"))),
    };
    let operator_id = m.operator_id.ok_or_else(|| MetadataError::new(json_at, "operatorInfo.operatorId missing"))?;
    let stores = m
        .stores
        .into_iter()
        .map(|s| StoreMetadata {
            store_name: s.store_name,
            num_cols_prefix_key: s.num_cols_prefix_key,
            num_partitions: s.num_partitions.unwrap_or(0),
            state_schema_file_paths: s.state_schema_file_paths,
        })
        .collect();
    Ok(OperatorMetadata {
        version,
        operator_id,
        operator_name: m.operator_name.unwrap_or_default(),
        stores,
        operator_properties_json: m.operator_properties_json,
    })
}
