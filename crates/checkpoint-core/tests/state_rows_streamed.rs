//! `read_state_each` (rows handed to a sink as they are decoded) yields exactly `read_state`'s rows, in the same
//! order, for every query of the golden State Data Source dumps of the shared fixtures (plain stores, join
//! sides, transformWithState variables), and stops when the sink says so. `read_state_text_each` (what `state`
//! prints) yields each row's `to_json()` text, with the same errors, on every fixture: byte for byte but for
//! numbers, which it writes as Spark's `toJSON` does (Java's `BigDecimal` and `Double.toString`: `3.00`,
//! `1.0E-300`), where the values hold the same number.

mod common;

use checkpoint_core::archive::ZipInput;
use checkpoint_core::state::{
    read_state, read_state_each, read_state_metadata, read_state_text_each, JoinSide, StateError, StateLimits,
    StateQuery, StateRow,
};
use serde_json::Value;
use std::collections::BTreeSet;
use std::ops::ControlFlow;

/// The queries of a fixture's golden dumps: one per (operatorId, storeName, stateVarName) of `.state.jsonl`, plus
/// the join sides that have a dump.
fn golden_queries(name: &str) -> Vec<StateQuery> {
    let mut groups = BTreeSet::new();
    let text = std::fs::read_to_string(common::fixtures_dir().join(format!("{name}.state.jsonl"))).unwrap();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let r: Value = serde_json::from_str(l).unwrap();
        groups.insert((
            r["operatorId"].as_i64().unwrap_or(0),
            r["storeName"].as_str().unwrap_or("default").to_string(),
            r["stateVarName"].as_str().map(str::to_string),
        ));
    }
    let mut qs: Vec<StateQuery> = groups
        .into_iter()
        .map(|(operator_id, store_name, state_var)| StateQuery {
            operator_id,
            store_name,
            state_var,
            ..Default::default()
        })
        .collect();
    for side in [JoinSide::Left, JoinSide::Right] {
        if common::fixtures_dir().join(format!("{name}.state-joinside-{}.jsonl", side.name())).exists() {
            qs.push(StateQuery { join_side: Some(side), ..Default::default() });
        }
    }
    qs
}

fn streamed(a: &mut ZipInput<std::fs::File>, q: &StateQuery, stop_after: Option<usize>) -> Vec<StateRow> {
    let mut rows = Vec::new();
    read_state_each(a, "", q, &StateLimits::default(), &mut |r| {
        rows.push(r);
        if stop_after.is_some_and(|n| rows.len() >= n) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .unwrap_or_else(|e| panic!("{q:?}: {e}"));
    rows
}

#[test]
fn sink_form_yields_read_states_rows_on_every_golden_query() {
    let mut names: Vec<String> = std::fs::read_dir(common::fixtures_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".state.jsonl").map(str::to_string))
        .collect();
    names.sort();
    assert!(names.len() >= 15, "golden dumps not found: {names:?}");
    let (mut queries, mut rows_seen, mut tws) = (0, 0, 0);
    for name in &names {
        let mut a = common::open_fixture(name);
        for q in golden_queries(name) {
            let all = read_state(&mut a, "", &q).unwrap_or_else(|e| panic!("{name} {q:?}: {e}"));
            let each = streamed(&mut a, &q, None);
            assert_eq!(each, all, "{name} {q:?}: the sink form differs from read_state");
            assert!(!all.is_empty(), "{name} {q:?}: the golden query has rows");
            queries += 1;
            rows_seen += all.len();
            tws += usize::from(q.state_var.is_some());
            // A sink that stops after the first row gets exactly that row, and the read ends without error.
            assert_eq!(streamed(&mut a, &q, Some(1)), all[..1].to_vec(), "{name} {q:?}: early stop");
        }
    }
    assert!(queries >= 20 && tws >= 2, "too few golden queries compared: {queries} ({tws} transformWithState)");
    println!("{queries} golden queries, {rows_seen} rows: sink form equals read_state");
}

/// The row limit holds for the sink form too: one row more than `max_rows` is an error naming the store.
#[test]
fn sink_form_keeps_the_row_limit() {
    let mut a = common::open_fixture("ss-4.3.0-agg-hdfs");
    let q = StateQuery::default();
    let all = read_state(&mut a, "", &q).unwrap();
    let limits = StateLimits { max_rows: all.len() - 1, ..StateLimits::default() };
    let mut n = 0;
    let e = read_state_each(&mut a, "", &q, &limits, &mut |_| {
        n += 1;
        ControlFlow::Continue(())
    })
    .unwrap_err();
    assert!(e.message.contains(&format!("more than {} rows", all.len() - 1)), "{e}");
    assert!(e.path.starts_with("state/0/"), "{e}");
    assert!(n < all.len());
}

/// Rows as text through the row values (`to_json().to_string()`), and the error if any.
fn texts_of_rows(a: &mut ZipInput<std::fs::File>, q: &StateQuery) -> (Vec<String>, Option<StateError>) {
    let mut rows = Vec::new();
    let e = read_state_each(a, "", q, &StateLimits::default(), &mut |r| {
        rows.push(r.to_json().to_string());
        ControlFlow::Continue(())
    })
    .err();
    (rows, e)
}

/// Rows of the text form, and the error if any.
fn texts(a: &mut ZipInput<std::fs::File>, q: &StateQuery) -> (Vec<String>, Option<StateError>) {
    let mut rows = Vec::new();
    let e = read_state_text_each(a, "", q, &StateLimits::default(), &mut |t| {
        rows.push(t.to_string());
        ControlFlow::Continue(())
    })
    .err();
    (rows, e)
}

/// Two JSON texts of one row that differ only in how numbers are written (`3.00` and `3.0`; a decimal the values
/// keep as a string of digits).
fn same_numbers(a: &str, b: &str) -> bool {
    fn same(a: &Value, b: &Value) -> bool {
        let num = |v: &Value| v.as_f64().or_else(|| v.as_str().and_then(|s| s.parse::<f64>().ok()));
        match (a, b) {
            (Value::Number(_), Value::Number(_) | Value::String(_)) => {
                matches!((num(a), num(b)), (Some(x), Some(y)) if (x - y).abs() <= 4.0 * f64::EPSILON * x.abs().max(y.abs()))
            }
            (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| same(p, q)))
            }
            _ => a == b,
        }
    }
    match (serde_json::from_str::<Value>(a), serde_json::from_str::<Value>(b)) {
        (Ok(x), Ok(y)) => same(&x, &y),
        _ => false,
    }
}

/// On every fixture (healthy and broken), for every store, join side, state variable and change feed the metadata
/// names, the text form gives the rows' JSON text byte for byte (numbers as Spark writes them) and fails with the same error after the same rows.
#[test]
fn text_form_is_each_rows_json_on_every_fixture() {
    let mut names: Vec<String> = std::fs::read_dir(common::fixtures_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".zip").map(str::to_string))
        .collect();
    names.sort();
    let (mut queries, mut rows_seen, mut errors) = (0, 0, 0);
    for name in &names {
        let mut a = common::open_fixture(name);
        let mut qs = vec![StateQuery::default()];
        for m in read_state_metadata(&mut a, "").unwrap_or_default() {
            let base =
                StateQuery { operator_id: m.operator_id, store_name: m.state_store_name.clone(), ..Default::default() };
            let vars: Vec<String> = m
                .operator_properties
                .as_deref()
                .and_then(|p| serde_json::from_str::<Value>(p).ok())
                .and_then(|p| p["stateVariables"].as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|v| v["stateName"].as_str().map(str::to_string))
                .collect();
            for v in vars {
                qs.push(StateQuery { state_var: Some(v.clone()), ..base.clone() });
                qs.push(StateQuery { state_var: Some(v), flatten_collection_types: false, ..base.clone() });
            }
            let start = m.min_batch_id.max(0);
            qs.push(StateQuery { read_change_feed: true, change_start_batch_id: Some(start), ..base.clone() });
            qs.push(StateQuery { batch_id: Some(start), ..base.clone() });
            qs.push(StateQuery { join_side: Some(JoinSide::Left), ..base.clone() });
            qs.push(base);
        }
        for q in qs {
            let (want, want_err) = texts_of_rows(&mut a, &q);
            let (got, got_err) = texts(&mut a, &q);
            assert_eq!(got.len(), want.len(), "{name} {q:?}: the text form has other rows");
            for (g, w) in got.iter().zip(&want) {
                assert!(g == w || same_numbers(g, w), "{name} {q:?}: the text form differs: {g} vs {w}");
            }
            assert_eq!(got_err, want_err, "{name} {q:?}: the text form fails otherwise");
            queries += 1;
            rows_seen += got.len();
            errors += usize::from(got_err.is_some());
        }
    }
    assert!(
        queries >= 300 && rows_seen >= 1000 && errors >= 20,
        "{queries} queries, {rows_seen} rows, {errors} errors"
    );
    println!("{queries} queries ({errors} errors), {rows_seen} rows: text form equals the rows' JSON");
}
