//! The record API's walk over a row group's rows, replayed on the levels of its columns before it runs.
//!
//! The crate's row reader (`record/reader.rs`, 60.x) assembles each row from one triplet iterator per leaf column
//! (`record/triplet.rs`), which holds a batch of levels at a time. Once a column's levels are used up the iterator
//! says it has none left, but keeps the length of its last batch: advanced once more (as a group advances an optional
//! field it reads as null, without asking whether the column has a level left), it says it has one again, over an
//! empty batch, and the next look at its definition level indexes past the batch (`triplet.rs:270`, "index out of
//! bounds"; for a required column the same at its value). The row reader advances a column past its end whenever the
//! column ends before the rows do: a column with fewer levels than the rows its row group declares (a data page
//! declaring fewer values than its neighbours' pages, or a page of no values, where the column reader stops as at the
//! end of the chunk), or columns of one list or map that disagree on its length, so that one is read faster.
//!
//! So the guard replays the walk on the levels alone: the crate's own reader tree (`TreeBuilder::build`: the same
//! shapes, definition and repetition levels), each leaf column read batch by batch by the check pass's column reader
//! (its levels checked there), and every step the row reader takes (has a next level, the current definition or
//! repetition level, read a field, advance past a null) taken in the same order, for the rows the row group declares.
//! A column advanced past its last level is refused, naming the row, the column and its chunk's first byte; so is a
//! row that needs a level of a column with none left (the crate returns an error there). Every column is then read on
//! to where its column reader ends, so that the pages no row reaches are checked too (a page of no values ends a
//! column reader as the end of its chunk does, and the row reader reads no further either).

use super::parquet::ParquetError;
use super::parquet_guard::{open_column, LevelBatches};
use parquet::basic::Repetition;
use parquet::file::reader::RowGroupReader;
use parquet::record::reader::{Reader, TreeBuilder};
use parquet::schema::types::{ColumnPath, SchemaDescPtr};
use std::collections::HashMap;

/// The shape of the crate's reader tree, with each leaf the index of its column among the leaves.
enum Node {
    Leaf(usize),
    /// The parent's definition level, and the reader of the optional field.
    Option(i16, Box<Node>),
    /// The group's definition level, and each field with whether it is optional.
    Group(i16, Vec<(bool, Node)>),
    /// The list's definition and repetition levels, and the reader of its elements.
    Repeated(i16, i16, Box<Node>),
    /// The map's definition and repetition levels, and the readers of its keys and values.
    KeyValue(i16, i16, Box<Node>, Box<Node>),
}

/// The tree `reader` (leaves numbered from `*leaves` on, depth first, as the crate builds them).
fn shape(reader: &Reader, leaves: &mut usize) -> Node {
    match reader {
        Reader::PrimitiveReader(..) => {
            *leaves += 1;
            Node::Leaf(*leaves - 1)
        }
        Reader::OptionReader(def, r) => Node::Option(*def, Box::new(shape(r, leaves))),
        Reader::GroupReader(_, def, rs) => {
            Node::Group(*def, rs.iter().map(|r| (optional(r), shape(r, leaves))).collect())
        }
        Reader::RepeatedReader(_, def, rep, r) => Node::Repeated(*def, *rep, Box::new(shape(r, leaves))),
        Reader::KeyValueReader(_, def, rep, keys, values) => {
            let keys = shape(keys, leaves);
            Node::KeyValue(*def, *rep, Box::new(keys), Box::new(shape(values, leaves)))
        }
    }
}

/// Whether the crate's `Reader::repetition` of `reader` is optional (a group's field read as null when undefined).
fn optional(reader: &Reader) -> bool {
    let field = match reader {
        Reader::OptionReader(_, r) => return optional(r),
        Reader::GroupReader(None, ..) => return false,
        Reader::PrimitiveReader(f, _) | Reader::GroupReader(Some(f), ..) => f,
        Reader::RepeatedReader(f, ..) | Reader::KeyValueReader(f, ..) => f,
    };
    field.get_basic_info().has_repetition() && field.get_basic_info().repetition() == Repetition::OPTIONAL
}

/// A leaf column as the crate's triplet iterator gives its levels out.
struct Leaf {
    levels: Box<dyn LevelBatches>,
    /// The column's index in the row group.
    column: usize,
    def: Vec<i16>,
    rep: Vec<i16>,
    max_def: i16,
    max_rep: i16,
    at: usize,
    len: usize,
    has_next: bool,
    /// Its levels are used up: advancing it again is what the crate panics after.
    ended: bool,
}

/// Why the walk stopped: the leaf whose column is wrong, and what is wrong.
type Stop = (usize, String);

impl Leaf {
    /// `TypedTripletIter::read_next`: the next level, from the next batch when this one is used up.
    fn read_next(&mut self, me: usize) -> Result<(), Stop> {
        if self.ended {
            return Err((me, "the rows run past the end of its levels".into()));
        }
        self.at += 1;
        while self.at >= self.len {
            self.def.clear();
            self.rep.clear();
            let (records, values, levels) =
                self.levels.next_batch(&mut self.def, &mut self.rep).map_err(|e| (me, e))?;
            if records == 0 && values == 0 && levels == 0 {
                (self.at, self.has_next, self.ended) = (0, false, true);
                return Ok(());
            }
            // As the triplet iterator counts its batch; each level it then looks at must be in the batch.
            let len = if levels == 0 || values <= levels { values.max(levels) } else { usize::MAX };
            let short = |max: i16, got: usize| max > 0 && got < len;
            if len == usize::MAX || short(self.max_def, self.def.len()) || short(self.max_rep, self.rep.len()) {
                return Err((me, format!("a batch of {values} values and {levels} levels")));
            }
            (self.at, self.len) = (0, len);
        }
        self.has_next = true;
        Ok(())
    }

    fn def(&self) -> i16 {
        match (self.has_next, self.max_def) {
            (false, _) | (true, 0) => 0,
            (true, _) => self.def[self.at],
        }
    }

    fn rep(&self) -> i16 {
        match (self.has_next, self.max_rep) {
            (false, _) | (true, 0) => 0,
            (true, _) => self.rep[self.at],
        }
    }
}

/// The row reader's steps (`Reader::has_next`, `current_def_level`, `current_rep_level`, `read_field`,
/// `advance_columns`) over the leaves.
struct Walk {
    leaves: Vec<Leaf>,
}

impl Walk {
    fn has_next(&self, n: &Node) -> bool {
        match n {
            Node::Leaf(i) => self.leaves[*i].has_next,
            Node::Option(_, r) | Node::Repeated(_, _, r) | Node::KeyValue(_, _, r, _) => self.has_next(r),
            Node::Group(_, fields) => fields.first().is_some_and(|(_, r)| self.has_next(r)),
        }
    }

    fn def(&self, n: &Node) -> i16 {
        match n {
            Node::Leaf(i) => self.leaves[*i].def(),
            Node::Option(_, r) | Node::Repeated(_, _, r) | Node::KeyValue(_, _, r, _) => self.def(r),
            Node::Group(_, fields) => fields.first().map_or(0, |(_, r)| self.def(r)),
        }
    }

    fn rep(&self, n: &Node) -> i16 {
        match n {
            Node::Leaf(i) => self.leaves[*i].rep(),
            Node::Option(_, r) | Node::Repeated(_, _, r) | Node::KeyValue(_, _, r, _) => self.rep(r),
            Node::Group(_, fields) => fields.first().map_or(0, |(_, r)| self.rep(r)),
        }
    }

    /// The first leaf under `n`, for an error where the crate's reader of `n` finds no level left.
    fn first_leaf(n: &Node) -> usize {
        match n {
            Node::Leaf(i) => *i,
            Node::Option(_, r) | Node::Repeated(_, _, r) | Node::KeyValue(_, _, r, _) => Self::first_leaf(r),
            Node::Group(_, fields) => fields.first().map_or(0, |(_, r)| Self::first_leaf(r)),
        }
    }

    /// `Reader::read_field` (an error where the crate returns "Unexpected end of column data").
    fn read_field(&mut self, n: &Node) -> Result<(), Stop> {
        let none_left = |n: &Node| (Self::first_leaf(n), "a row needs a level and none is left".to_string());
        match n {
            Node::Leaf(i) if !self.leaves[*i].has_next => return Err(none_left(n)),
            Node::Leaf(i) => self.leaves[*i].read_next(*i)?,
            Node::Option(_, r) | Node::Repeated(_, _, r) | Node::KeyValue(_, _, r, _) if !self.has_next(r) => {
                return Err(none_left(r))
            }
            Node::Option(def, r) if self.def(r) > *def => self.read_field(r)?,
            Node::Option(_, r) => self.advance(r)?,
            Node::Group(def, fields) => {
                for (optional, r) in fields {
                    if !*optional || self.def(r) > *def {
                        self.read_field(r)?;
                    } else {
                        self.advance(r)?;
                    }
                }
            }
            Node::Repeated(def, rep, r) => loop {
                if self.def(r) <= *def {
                    self.advance(r)?;
                    break;
                }
                self.read_field(r)?;
                if !self.has_next(r) || self.rep(r) <= *rep {
                    break;
                }
            },
            Node::KeyValue(def, rep, keys, values) => loop {
                if self.def(keys) <= *def {
                    self.advance(keys)?;
                    self.advance(values)?;
                    break;
                }
                self.read_field(keys)?;
                self.read_field(values)?;
                if !self.has_next(keys) || self.rep(keys) <= *rep {
                    break;
                }
            },
        }
        Ok(())
    }

    /// `Reader::advance_columns`: every leaf under `n` one level on.
    fn advance(&mut self, n: &Node) -> Result<(), Stop> {
        match n {
            Node::Leaf(i) => self.leaves[*i].read_next(*i),
            Node::Option(_, r) | Node::Repeated(_, _, r) => self.advance(r),
            Node::Group(_, fields) => fields.iter().try_for_each(|(_, r)| self.advance(r)),
            Node::KeyValue(_, _, keys, values) => {
                self.advance(keys)?;
                self.advance(values)
            }
        }
    }
}

/// Replays the row reader over row group `g` (`group`, of the file's schema `schema`), then reads every column to
/// its end; `Err` names the row, the column and its chunk's first byte.
pub fn check_row_group(group: &dyn RowGroupReader, schema: &SchemaDescPtr, g: usize) -> Result<(), ParquetError> {
    let meta = group.metadata();
    let at_column = |c: usize, reason: String| {
        let column = meta.column(c);
        // Inside the file: `check_footer` ran first.
        let start = column.byte_range().0;
        ParquetError {
            offset: Some(start),
            reason: format!("row group {g}, column {}: {reason}", column.column_path().string()),
        }
    };
    let at_group = |reason: String| ParquetError { offset: None, reason: format!("row group {g}: {reason}") };
    let tree = TreeBuilder::new().build(schema.clone(), group).map_err(|e| at_group(e.to_string()))?;
    let mut count = 0;
    let Node::Group(_, root) = shape(&tree, &mut count) else { return Err(at_group("no root group".into())) };
    drop(tree);
    if count != schema.num_columns() {
        return Err(at_group(format!("{count} leaf readers for {} columns", schema.num_columns())));
    }
    // Each leaf reads the column of its path (the last of that path, as the crate's map of paths).
    let paths: HashMap<&ColumnPath, usize> =
        (0..meta.num_columns()).map(|c| (meta.column(c).column_path(), c)).collect();
    let mut leaves = Vec::with_capacity(count);
    for k in 0..count {
        let leaf = schema.column(k);
        let c = *paths.get(leaf.path()).ok_or_else(|| at_group(format!("no column {}", leaf.path())))?;
        let descr = meta.column(c).column_descr();
        let (max_def, max_rep) = (descr.max_def_level(), descr.max_rep_level());
        let levels = open_column(group, c).map_err(|e| at_column(c, e))?;
        let (def, rep) = (Vec::new(), Vec::new());
        leaves.push(Leaf {
            levels,
            column: c,
            def,
            rep,
            max_def,
            max_rep,
            at: 0,
            len: 0,
            has_next: false,
            ended: false,
        });
    }
    let mut walk = Walk { leaves };
    let mut row = 0;
    replay(&mut walk, &root, usize::try_from(meta.num_rows()).unwrap_or(usize::MAX), &mut row).map_err(
        |(leaf, reason)| at_column(walk.leaves[leaf].column, format!("row {row} of {}: {reason}", meta.num_rows())),
    )?;
    // The rest of every column, and the columns no leaf reads (a path twice in the schema).
    let mut read = vec![false; meta.num_columns()];
    for leaf in &mut walk.leaves {
        read[leaf.column] = true;
        drain(leaf.levels.as_mut()).map_err(|e| at_column(leaf.column, e))?;
    }
    for c in (0..meta.num_columns()).filter(|c| !read[*c]) {
        drain(open_column(group, c).map_err(|e| at_column(c, e))?.as_mut()).map_err(|e| at_column(c, e))?;
    }
    Ok(())
}

/// `ReaderIter`: the root's fields advanced to their first levels, then `rows` rows read (`*row` counts them).
fn replay(walk: &mut Walk, root: &[(bool, Node)], rows: usize, row: &mut usize) -> Result<(), Stop> {
    root.iter().try_for_each(|(_, r)| walk.advance(r))?;
    while *row < rows {
        root.iter().try_for_each(|(_, r)| walk.read_field(r))?;
        *row += 1;
    }
    Ok(())
}

/// Reads a column's levels to the end.
fn drain(levels: &mut dyn LevelBatches) -> Result<(), String> {
    let (mut def, mut rep) = (Vec::new(), Vec::new());
    loop {
        def.clear();
        rep.clear();
        if levels.next_batch(&mut def, &mut rep)? == (0, 0, 0) {
            return Ok(());
        }
    }
}
