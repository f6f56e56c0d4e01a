// The input's files as the worker lists them (at most its listing limit): one string of every path, the end of
// each path in it (UTF-16 units) and the sizes. Three values cross from the worker instead of one array per file
// (20,000 of them on a big checkpoint), so the report's message is cheap to receive on the main thread; rows and
// the size of a path are made only when the page asks for them.

export class Listing {
  /**
   * @param {string} paths every path, one after the other
   * @param {number[]} ends where each path ends in `paths` (UTF-16 code units)
   * @param {number[]} sizes each file's uncompressed size in bytes
   */
  constructor(paths = '', ends = [], sizes = []) {
    this.paths = paths;
    this.ends = ends;
    this.sizes = sizes;
    this.sizeByPath = null;
  }

  /** How many files are listed. */
  get length() {
    return this.ends.length;
  }

  /** The path of file `i`. */
  path(i) {
    return this.paths.slice(i > 0 ? this.ends[i - 1] : 0, this.ends[i]);
  }

  /** Files `start` to `end` (exclusive) as `[path, size]`. */
  rows(start = 0, end = this.length) {
    const out = [];
    for (let i = start; i < Math.min(end, this.length); i += 1) out.push([this.path(i), this.sizes[i]]);
    return out;
  }

  /** The size of the listed file `path`, or undefined; the index is built on the first call. */
  sizeOf(path) {
    if (!this.sizeByPath) {
      this.sizeByPath = new Map();
      for (let i = 0; i < this.length; i += 1) this.sizeByPath.set(this.path(i), this.sizes[i]);
    }
    return this.sizeByPath.get(path);
  }
}

/** The listing of a report message from the worker (`entry_paths`, `entry_ends`, `entry_sizes`). */
export function listingOf(m) {
  return new Listing(m.entry_paths || '', m.entry_ends || [], m.entry_sizes || []);
}
