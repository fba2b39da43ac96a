import Foundation
import FreshetLMDB

/// Reads and writes the materialized collections (rows in order, and SyncMarks) inside a
/// transaction. Only ``Fold`` writes through it; snapshots and tools read through it.
struct MaterializedState {
    let dbs: StoreDatabases
    /// Set by the writer for the length of one commit: SyncMarks are then read from and
    /// written to the cache, decoded and encoded once per commit (see ``SyncMarkCache``).
    var marks: SyncMarkCache?

    init(dbs: StoreDatabases, marks: SyncMarkCache? = nil) {
        self.dbs = dbs
        self.marks = marks
    }

    // MARK: Reading

    /// The collection's rows in order (by position).
    func rows(_ collection: String, in txn: borrowing some FoldTables & ~Copyable) throws -> [Row] {
        let prefix = Keys.collection(collection)
        var rows: [Row] = []
        var failure: (any Error)?
        try txn.forEach(dbs.rows, from: prefix) { key, value in
            guard key.count == prefix.count + 8, key.starts(with: prefix) else { return false }
            do {
                rows.append(try Self.decodeRow(value))
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
        return rows
    }

    /// The number of rows in the collection.
    func rowCount(_ collection: String, in txn: borrowing some FoldTables & ~Copyable) throws -> Int {
        let prefix = Keys.collection(collection)
        var n = 0
        try txn.forEach(dbs.rowIndex, from: prefix) { key, _ in
            guard key.starts(with: prefix) else { return false }
            n += 1
            return true
        }
        return n
    }

    /// The collection's SyncMark: its `marks` entry with the stamp journal's LSNs applied
    /// (``MarkStamps``), nil when it has none.
    func syncMark(_ collection: String, in txn: borrowing some FoldTables & ~Copyable) throws -> SyncMark? {
        if let marks, let cached = marks.cached(collection) { return cached }
        let key = Array(collection.utf8)
        guard let bytes = try txn.get(dbs.marks, key: key) else {
            marks?.remember(nil, for: collection)
            return nil
        }
        let stored = try SyncMark.decodeStored(bytes, of: collection)
        let stamps = try marks?.stamps(in: txn, meta: dbs.meta) ?? MarkStamps.read(dbs.meta, in: txn)
        let mark = stamps.applied(to: stored, name: key)
        marks?.remember(mark, for: collection)
        return mark
    }

    /// Drops the collection's stamp from the journal, where a change writes its mark whole
    /// without a cache (a cache does it when it flushes).
    private func dropStamp(_ key: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws {
        var stamps = try MarkStamps.read(dbs.meta, in: txn)
        if stamps.remove(key) { try stamps.write(dbs.meta, in: txn) }
    }

    /// Every collection that has a SyncMark (every collection any event touched), sorted by name.
    func collections(in txn: borrowing some FoldTables & ~Copyable) throws -> [String] {
        var names: [String] = []
        try txn.forEach(dbs.marks) { key, _ in
            names.append(String(decoding: key, as: UTF8.self))
            return true
        }
        return names
    }

    static func decodeRow(_ value: UnsafeRawBufferPointer) throws -> Row {
        // Read in place: the ID's varint length, the ID, then the JSON (the rest), each copied once.
        let (length, start) = try idLength(value)
        guard let base = value.baseAddress, length <= UInt64(value.count - start) else {
            throw StoreError(.corruptRecord, "materialized row: row ID is truncated")
        }
        let end = start + Int(length)
        guard let id = rowID(UnsafeRawBufferPointer(rebasing: value[start..<end])) else {
            throw StoreError(.corruptRecord, "materialized row: row ID is not UTF-8")
        }
        return Row(id: id, json: Data(bytes: base + end, count: value.count - end))
    }

    /// The ID's bytes as a `String`, or nil when they are not UTF-8. An ASCII ID (the usual
    /// case) skips the generic validating initializer, which was most of a snapshot read.
    @inline(__always)
    private static func rowID(_ bytes: UnsafeRawBufferPointer) -> String? {
        String.validatingUTF8(bytes)
    }

    /// The varint length of an encoded row's ID and the offset just after it.
    private static func idLength(_ value: UnsafeRawBufferPointer) throws -> (length: UInt64, next: Int) {
        var length: UInt64 = 0
        var shift: UInt64 = 0
        var i = 0
        while true {
            guard i < value.count, shift < 64 else { throw StoreError(.corruptRecord, "materialized row: truncated row ID length") }
            let b = value[i]
            i += 1
            length |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return (length, i) }
            shift += 7
        }
    }

    /// The ID of an encoded row, without copying its JSON.
    static func decodeRowID(_ value: UnsafeRawBufferPointer) throws -> String {
        let (length, i) = try idLength(value)
        guard length <= UInt64(value.count - i), let id = rowID(UnsafeRawBufferPointer(rebasing: value[i..<(i + Int(length))])) else {
            throw StoreError(.corruptRecord, "materialized row: row ID is truncated or not UTF-8")
        }
        return id
    }

    /// Where an encoded row's ID lies (`value[id]`; the JSON is the rest, `value[id.upperBound...]`),
    /// checked as ``decodeRow(_:)`` checks it, with its errors, but without making the row: the
    /// ID's varint length, the ID within the value, the ID UTF-8 (an ASCII ID checked 8 bytes at
    /// a time). `replay` prints rows from these bytes (docs/performance.md, "Issue 8 speed round 7 (tail)").
    static func rowIDRange(_ value: UnsafeRawBufferPointer) throws -> Range<Int> {
        let (length, start) = try idLength(value)
        guard length <= UInt64(value.count - start) else {
            throw StoreError(.corruptRecord, "materialized row: row ID is truncated")
        }
        let id = start..<(start + Int(length))
        let bytes = UnsafeRawBufferPointer(rebasing: value[id])
        if !String.isASCII(bytes), String(validating: bytes, as: UTF8.self) == nil {
            throw StoreError(.corruptRecord, "materialized row: row ID is not UTF-8")
        }
        return id
    }

    static func encodeRow(_ row: Row) -> [UInt8] {
        var w = ByteWriter(capacity: row.json.count + row.id.utf8.count + 10)
        appendRow(row, to: &w)
        return w.bytes
    }

    /// The bytes ``encodeRow(_:)`` starts with: the ID's varint length and the ID.
    static func rowHeader(_ row: Row) -> [UInt8] {
        var w = ByteWriter(capacity: row.id.utf8.count + 10)
        appendHeader(row.id, to: &w)
        return w.bytes
    }

    private static func appendHeader(_ id: String, to w: inout ByteWriter) {
        var id = id
        id.withUTF8 { id in
            w.varint(UInt64(id.count))
            w.raw(id)
        }
    }

    /// Appends the bytes ``encodeRow(_:)`` returns: the ID's varint length, the ID, the JSON.
    static func appendRow(_ row: Row, to w: inout ByteWriter) {
        appendHeader(row.id, to: &w)
        w.raw(row.json)
    }

    // MARK: Writing (fold only)

    /// Stores the mark: in the commit's cache when there is one (written when the commit
    /// ends), else in the database at once.
    func putSyncMark(_ mark: SyncMark, _ collection: String, in txn: borrowing some FoldTables & ~Copyable) throws {
        if let marks {
            marks.set(mark, for: collection)
            return
        }
        try txn.put(dbs.marks, key: Array(collection.utf8), value: mark.encoded())
        try dropStamp(Array(collection.utf8), in: txn)
    }

    /// What a local write (or a change without an origin) does to the collection's mark:
    /// `lastLSN` becomes `lsn`, and `rowsLSN` too when `rowsChanged`; a collection without a
    /// mark gets one. With a cache (the writer's commit, a tool's chunk) the cached mark is
    /// changed in place (``SyncMarkCache/stamp(_:lsn:rowsChanged:)``); else it is read and put.
    func stampSyncMark(_ collection: String, lsn: LSN, rowsChanged: Bool, in txn: borrowing some FoldTables & ~Copyable) throws {
        if let marks {
            if marks.stamp(collection, lsn: lsn, rowsChanged: rowsChanged) { return }
            // Read into the cache as stored, then stamped there: a mark read and set again
            // would be written whole instead of journaled (SyncMarkCache).
            _ = try syncMark(collection, in: txn)
            guard marks.stamp(collection, lsn: lsn, rowsChanged: rowsChanged) else {
                preconditionFailure("SyncMarkCache forgot \(collection) as it was remembered")
            }
            return
        }
        var mark = try syncMark(collection, in: txn) ?? SyncMark()
        mark.lastLSN = lsn
        if rowsChanged { mark.rowsLSN = lsn }
        try putSyncMark(mark, collection, in: txn)
    }

    /// Where a local write (or a change without an origin) to `collection` folds: the
    /// collection's key prefix and, with a cache (the writer's commit, a tool's chunk), the
    /// slot of its mark, for ``stampLocalWrite(_:at:lsn:rowsChanged:in:)`` after the ops. With a
    /// cache the collection is looked up by name once per record: the prefix comes from the
    /// cache (built once per commit, not once per record) and the mark is stamped through the
    /// same slot (docs/performance.md, "Issue 8 speed round 5 (fold side)"). The mark is read
    /// into the cache here, before the ops; they touch rows only, so the mark is the one
    /// ``stampSyncMark(_:lsn:rowsChanged:in:)`` gives after them.
    func localWriteTarget(_ collection: String, in txn: borrowing some FoldTables & ~Copyable) throws -> (prefix: [UInt8], slot: SyncMarkCache.Slot?) {
        guard let marks else { return (Keys.collection(collection), nil) }
        if let slot = marks.slot(for: collection) { return (marks.prefix(at: slot), slot) }
        _ = try syncMark(collection, in: txn) // remembered by the cache
        guard let slot = marks.slot(for: collection) else {
            preconditionFailure("SyncMarkCache forgot \(collection) as it was remembered")
        }
        return (marks.prefix(at: slot), slot)
    }

    /// Stamps the mark of a local write's collection (``localWriteTarget(_:in:)``), as
    /// ``stampSyncMark(_:lsn:rowsChanged:in:)`` does; through `slot` when there is one.
    func stampLocalWrite(_ collection: String, at slot: SyncMarkCache.Slot?, lsn: LSN, rowsChanged: Bool, in txn: borrowing some FoldTables & ~Copyable) throws {
        if let marks, let slot {
            marks.stamp(at: slot, lsn: lsn, rowsChanged: rowsChanged)
            return
        }
        try stampSyncMark(collection, lsn: lsn, rowsChanged: rowsChanged, in: txn)
    }

    /// Removes the collection's mark: from the commit's cache when there is one (deleted
    /// when the commit ends), else from the database at once.
    func removeSyncMark(_ collection: String, in txn: borrowing some FoldTables & ~Copyable) throws {
        if let marks {
            marks.remove(collection)
            return
        }
        _ = try txn.delete(dbs.marks, key: Array(collection.utf8))
        try dropStamp(Array(collection.utf8), in: txn)
    }

    /// The position of `id`, if the collection holds it.
    func position(of id: String, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws -> UInt64? {
        try txn.withValue(dbs.rowIndex, key: Keys.index(prefix, id: id)) { v in
            v.count == 8 ? Keys.readUInt64(v, at: 0) : nil
        } ?? nil
    }

    /// Writes `row` at `position`, replacing what was there, and indexes its ID.
    func put(_ row: Row, at position: UInt64, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws {
        try put(header: Self.rowHeader(row), json: row.json, id: row.id, at: position, prefix: prefix, in: txn)
    }

    /// Writes the row ``encodeRow(_:)`` gives — `header` (``rowHeader(_:)``) then `json` — at
    /// `position` and indexes its `id`. The bytes go straight into the table's storage (an
    /// LMDB page, `MDB_RESERVE`): a 300 KB document is copied once, not into an array first
    /// and then by LMDB (docs/performance.md, round 7).
    func put(header: [UInt8], json: Data, id: String, at position: UInt64, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws {
        try txn.put(dbs.rows, key: Keys.row(prefix, position: position), reserving: header.count + json.count) { out in
            header.withUnsafeBytes { out.copyMemory(from: $0) }
            json.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[header.count...]).copyMemory(from: $0) }
        }
        try txn.put(dbs.rowIndex, key: Keys.index(prefix, id: id), value: withUnsafeBytes(of: position.bigEndian) { Array($0) })
    }

    /// Writes `rows` at their positions (where no row is) and indexes their IDs; a row the
    /// collection already holds under one of the IDs elsewhere is removed, so the ID moves
    /// here, and of rows sharing an ID the last one stays. The same result as, row by row,
    /// ``remove(id:prefix:in:)`` then ``put(header:json:id:at:prefix:in:)``, for less:
    /// - the rows go in through one cursor in position order, and the index entries through
    ///   another in key order (sorted here), so LMDB searches one leaf page per put instead
    ///   of descending from the root (``FoldTables/putEach(_:count:noOverwrite:_:)``);
    /// - each index entry is put with `MDB_NOOVERWRITE`, which leaves a held ID alone and
    ///   reports it (LMDB's `mdb_put` documentation): only those IDs are looked up again.
    func place(_ rows: EncodedRows, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws {
        try rows.withBuffers { b in
            _ = try txn.putEach(dbs.rows, count: rows.count, noOverwrite: false) { i in (b.rowKey(i), b.row(i)) }
            let order = Self.keyOrder(b, count: rows.count, skipping: prefix.count)
            let held = try txn.putEach(dbs.rowIndex, count: rows.count, noOverwrite: true) { j in
                (b.indexKey(order[j]), b.value(order[j]))
            }
            // In key order, and rows with one ID in page order: the last of them wins, as if
            // they had been put one by one.
            for j in held {
                let i = order[j]
                let key = Array(b.indexKey(i))
                let position = rows.positions[i]
                let old = try txn.withValue(dbs.rowIndex, key: key) { v in v.count == 8 ? Keys.readUInt64(v, at: 0) : nil } ?? nil
                if let old, old != position {
                    try txn.delete(dbs.rows, key: Keys.row(prefix, position: old))
                }
                try txn.put(dbs.rowIndex, key: key, bytes: b.value(i), append: false, noOverwrite: false)
            }
        }
    }

    /// The rows' indices in the order of their index keys as LMDB sorts them (`memcmp`, then
    /// the shorter first; all share the first `skip` bytes), rows with equal keys in page order.
    private static func keyOrder(_ b: EncodedRows.Buffers, count: Int, skipping skip: Int) -> [Int] {
        // Ordered by the first 8 bytes after the prefix as one big-endian integer (a radix
        // sort: eight stable passes of one byte each, a pass skipped when every key has the
        // same byte there), then by the rest of the key only within runs whose first 8 bytes
        // tie. The standard library's generic `sort(by:)` was a tenth of folding the page.
        var entries = [KeyOrderEntry](unsafeUninitializedCapacity: count) { out, initialized in
            for i in 0..<count {
                let key = b.indexKey(i)
                var head: UInt64 = 0
                for k in 0..<8 {
                    head <<= 8
                    if skip + k < key.count { head |= UInt64(key[skip + k]) }
                }
                out.initializeElement(at: i, to: KeyOrderEntry(head: head, index: i))
            }
            initialized = count
        }
        var scratch = entries
        var counts = [Int](repeating: 0, count: 257)
        entries.withUnsafeMutableBufferPointer { a in
            scratch.withUnsafeMutableBufferPointer { t in
                counts.withUnsafeMutableBufferPointer { counts in
                    var source = a, target = t
                    var inTarget = false
                    for shift in stride(from: UInt64(0), to: 64, by: 8) {
                        counts.update(repeating: 0)
                        for e in source { counts[Int(truncatingIfNeeded: (e.head >> shift) & 0xFF) + 1] += 1 }
                        if counts.contains(count) { continue }
                        for d in 1..<257 { counts[d] += counts[d - 1] }
                        for e in source {
                            let d = Int(truncatingIfNeeded: (e.head >> shift) & 0xFF)
                            target[counts[d]] = e
                            counts[d] += 1
                        }
                        swap(&source, &target)
                        inTarget.toggle()
                    }
                    if inTarget { _ = a.update(fromContentsOf: t) }
                }
                // Runs of equal first 8 bytes, by the rest of the key (memcmp, then the shorter
                // first), ties in page order: an insertion sort (stable; runs are short).
                var start = 0
                while start < count {
                    var end = start + 1
                    while end < count && a[end].head == a[start].head { end += 1 }
                    if end - start > 1 {
                        for i in (start + 1)..<end {
                            let x = a[i]
                            var j = i
                            while j > start && Self.keyBefore(b.indexKey(x.index), b.indexKey(a[j - 1].index), from: skip + 8) {
                                a[j] = a[j - 1]
                                j -= 1
                            }
                            a[j] = x
                        }
                    }
                    start = end
                }
            }
        }
        return entries.map(\.index)
    }

    /// Whether key `a` sorts before key `c` in LMDB's order, both known equal before `offset`;
    /// equal keys are not before each other.
    private static func keyBefore(_ a: UnsafeRawBufferPointer, _ c: UnsafeRawBufferPointer, from offset: Int) -> Bool {
        let shared = min(a.count, c.count)
        if shared > offset, let pa = a.baseAddress, let pc = c.baseAddress {
            let r = memcmp(pa + offset, pc + offset, shared - offset)
            if r != 0 { return r < 0 }
        }
        return a.count < c.count
    }

    private struct KeyOrderEntry {
        var head: UInt64
        var index: Int
    }

    /// Removes the row with `id`; returns whether it was there.
    @discardableResult
    func remove(id: String, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws -> Bool {
        guard let position = try position(of: id, prefix: prefix, in: txn) else { return false }
        try txn.delete(dbs.rows, key: Keys.row(prefix, position: position))
        try txn.delete(dbs.rowIndex, key: Keys.index(prefix, id: id))
        return true
    }

    /// Removes every row whose position is in `lower ..< upper` (nil upper: to the end).
    func removePositions(from lower: UInt64, to upper: UInt64?, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws {
        var doomed: [(key: [UInt8], id: String)] = []
        var failure: (any Error)?
        try txn.forEach(dbs.rows, from: Keys.row(prefix, position: lower)) { key, value in
            guard key.count == prefix.count + 8, key.starts(with: prefix) else { return false }
            if let upper, Keys.readUInt64(key, at: prefix.count) >= upper { return false }
            do {
                doomed.append((Array(key), try Self.decodeRowID(value)))
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
        for d in doomed {
            try txn.delete(dbs.rows, key: d.key)
            try txn.delete(dbs.rowIndex, key: Keys.index(prefix, id: d.id))
        }
    }

    /// Whether the rows at positions `lower ..< upper` (nil: to the end) are exactly `wanted`
    /// (positions and encoded bytes, in order); compares in place, copying nothing.
    func range(from lower: UInt64, to upper: UInt64?, prefix: [UInt8], holds wanted: EncodedRows, in txn: borrowing some FoldTables & ~Copyable) throws -> Bool {
        var i = 0
        var same = true
        try txn.forEach(dbs.rows, from: Keys.row(prefix, position: lower)) { key, value in
            guard key.count == prefix.count + 8, key.starts(with: prefix) else { return false }
            let position = Keys.readUInt64(key, at: prefix.count)
            if let upper, position >= upper { return false }
            guard i < wanted.count, wanted.positions[i] == position, wanted.withRow(i, { Self.same(value, $0) }) else {
                same = false
                return false
            }
            i += 1
            return true
        }
        return same && i == wanted.count
    }

    /// The encoded row stored at `position`, if any.
    func value(at position: UInt64, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws -> [UInt8]? {
        try txn.get(dbs.rows, key: Keys.row(prefix, position: position))
    }

    /// Where the collection holds `id` and whether the row stored there is byte for byte the
    /// one ``put(header:json:id:at:prefix:in:)`` writes for `id` and `json`; nil when `id` is
    /// not indexed (or its index entry is not an 8-byte position). One lookup in memory
    /// (``FoldTables/withIndexedValue(_:key:rows:prefix:_:)``), compared in place, nothing
    /// allocated: an upsert of a row the collection already holds unchanged (most of a replayed
    /// log of local writes) reads one index entry and the row and copies nothing
    /// (docs/performance.md, "Issue 8 speed round 4 (fold side)").
    func storedRow(id: String, json: Data, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws -> (position: UInt64, same: Bool)? {
        // The JSON's bytes reached once (each access to a `Data`'s storage costs dynamic
        // exclusivity checks inside Foundation).
        try json.withUnsafeBytes { try storedRow(id: id, json: $0, prefix: prefix, in: txn) }
    }

    /// ``storedRow(id:json:prefix:in:)`` with the JSON's bytes lent.
    func storedRow(id: String, json: UnsafeRawBufferPointer, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws -> (position: UInt64, same: Bool)? {
        var id = id
        return try id.withUTF8 { id in
            try prefix.withUnsafeBytes { prefix in
                // The index key, prefix ‖ ID, on the stack (IDs are at most 250 bytes, names 200).
                try withUnsafeTemporaryAllocation(byteCount: prefix.count + id.count, alignment: 1) { key in
                    key.copyMemory(from: prefix)
                    UnsafeMutableRawBufferPointer(rebasing: key[prefix.count...]).copyMemory(from: UnsafeRawBufferPointer(id))
                    return try txn.withIndexedValue(dbs.rowIndex, key: UnsafeRawBufferPointer(key), rows: dbs.rows, prefix: prefix) { position, stored in
                        (position, stored.map { Self.same($0, id: UnsafeRawBufferPointer(id), json: json) } ?? false)
                    }
                }
            }
        }
    }

    /// ``Fold/upsert(_:state:prefix:in:)`` of a row given as bytes in the log tools' tables:
    /// `key` is its `rowIndex` key (`prefix` ‖ ID) whose hash is `hash`, `row` the row as
    /// ``encodeRow(_:)`` encodes it; `index` and `rowsTable` are the numbers of `rowIndex` and `rows`
    /// (``MemoryTables/tableNumber(_:)``). The same lookups, comparison and puts, in the same
    /// order, as the upsert of a ``Row`` (the same bytes written, the same undo journal); only
    /// nothing is built or hashed here: the reading thread prepared it (``FoldChunk/Upsert``).
    /// Returns whether anything changed.
    func upsert(key: UnsafeRawBufferPointer, hash: UInt64, prefix: UnsafeRawBufferPointer, row: UnsafeRawBufferPointer,
                index: Int, rowsTable: Int, in tables: MemoryTables) throws -> Bool {
        let stored = try tables.withIndexedValue(index, key: key, hash: hash, rows: rowsTable, prefix: prefix) { position, value in
            (position: position, same: value.map { $0.count == row.count && OrderedTable.compare($0, row) == 0 } ?? false)
        }
        var position: UInt64 = 0
        if let stored {
            if stored.same { return false }
            position = stored.position
        } else if let last = tables.lastPosition(rowsTable, prefix: prefix) {
            // A position read from disk: the largest one has no successor (never a trap).
            guard last < UInt64.max else {
                let id = String(decoding: UnsafeRawBufferPointer(rebasing: key[prefix.count...]), as: UTF8.self)
                throw StoreError(.corruptRecord, "row \(id) cannot be added: the collection's last position is 2^64 - 1")
            }
            position = last + 1
        }
        // Keys and the index's value lent, not arrays: an inserted row allocated five (round 9).
        MemoryTables.withRowKey(prefix, position) { tables.put(rowsTable, key: $0, bytes: row) }
        withUnsafeBytes(of: position.bigEndian) { tables.put(index, key: key, hash: hash, bytes: $0) }
        return true
    }

    /// Whether `stored` is byte for byte ``encodeRow(_:)`` of a row with ID bytes `id` and
    /// `json`: the ID's length as the shortest varint (``ByteWriter/varint(_:)``), the ID, the JSON.
    static func same(_ stored: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, json: Data) -> Bool {
        // The JSON's bytes reached once: each access to a `Data`'s storage costs dynamic
        // exclusivity checks inside Foundation (three per row here before round 5).
        json.withUnsafeBytes { same(stored, id: id, json: $0) }
    }

    /// ``same(_:id:json:)`` with the JSON's bytes lent.
    static func same(_ stored: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, json: UnsafeRawBufferPointer) -> Bool {
        let i = ByteWriter.varintLength(UInt64(id.count))
        guard stored.count == i + id.count + json.count else { return false }
        // The length's varint compared byte by byte as ByteWriter.writeVarint writes it.
        var v = UInt64(id.count)
        var k = 0
        while v >= 0x80 {
            guard stored[k] == UInt8(truncatingIfNeeded: v & 0x7F) | 0x80 else { return false }
            k += 1
            v >>= 7
        }
        guard stored[k] == UInt8(truncatingIfNeeded: v) else { return false }
        return same(UnsafeRawBufferPointer(rebasing: stored[i..<(i + id.count)]), id)
            && same(UnsafeRawBufferPointer(rebasing: stored[(i + id.count)...]), json)
    }

    static func same(_ stored: UnsafeRawBufferPointer, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { same(stored, $0) }
    }

    static func same(_ stored: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard stored.count == bytes.count else { return false }
        guard let a = stored.baseAddress, let b = bytes.baseAddress else { return true }
        return memcmp(a, b, stored.count) == 0
    }

    /// The largest position in the collection, or nil when it is empty.
    func lastPosition(prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws -> UInt64? {
        var last: UInt64?
        try prefix.withUnsafeBytes { prefix in
            try txn.forEach(dbs.rows, from: Keys.row(prefix, position: UInt64.max), reverse: true) { key, _ in
                last = Self.position(ofRowKey: key, prefix: prefix)
                return false
            }
        }
        return last
    }

    /// The position in `key` when it is a `rows` key of the collection whose key prefix is
    /// `prefix` (`prefix` ‖ 8 bytes, big-endian: ``Keys/row(_:position:)``), else nil.
    @inline(__always)
    static func position(ofRowKey key: UnsafeRawBufferPointer, prefix: UnsafeRawBufferPointer) -> UInt64? {
        guard key.count == prefix.count + 8, key.starts(with: prefix) else { return nil }
        return Keys.readUInt64(key, at: prefix.count)
    }
}

/// A page's rows encoded by ``MaterializedState/encodeRow(_:)`` into one buffer, each with the
/// position it is to be stored at, and the keys of both tables built alongside: a handful of
/// allocations for a whole page instead of several per row (freeing a thousand small arrays
/// was a twelfth of folding a 1,000-row page; building a key array per put a sixth).
struct EncodedRows {
    private var bytes: [UInt8]
    private var ends: [Int]
    private(set) var positions: [UInt64]
    /// The rows table's keys (`prefix` + position, big-endian), `rowKeyLength` bytes each.
    private var rowKeys: [UInt8]
    private let rowKeyLength: Int
    /// The row index's keys (`prefix` + ID), row `i`'s ending at `indexEnds[i]`.
    private var indexKeys: [UInt8]
    private var indexEnds: [Int]
    /// The index's values: each position, big-endian, 8 bytes a row.
    private var values: [UInt8]

    /// `rows` placed as page `page`, in order, in the collection whose key prefix is `prefix`;
    /// with `slices` (the rows' JSON in one buffer, ``RowSlices``) each row's JSON is read
    /// from it instead of from the row's `Data`.
    init(_ rows: [Row], page: Int, prefix: [UInt8], slices: RowSlices? = nil) {
        if let slices {
            self = slices.withBytes { body, ranges in
                EncodedRows(rows, page: page, prefix: prefix, jsonCount: { ranges[$0].count },
                            json: { i, copy in copy(UnsafeRawBufferPointer(rebasing: body[ranges[i]])) })
            }
        } else {
            self.init(rows, page: page, prefix: prefix, jsonCount: { rows[$0].json.count }, json: { i, copy in rows[i].json.withUnsafeBytes(copy) })
        }
    }

    /// Row `i`'s JSON being `jsonCount(i)` bytes that `json(i, copy)` lends to `copy`.
    @inline(__always)
    private init(_ rows: [Row], page: Int, prefix: [UInt8], jsonCount: (Int) -> Int, json: (Int, (UnsafeRawBufferPointer) -> Void) -> Void) {
        let n = rows.count
        var rowTotal = 0
        var idTotal = 0
        for i in 0..<n {
            let idCount = rows[i].id.utf8.count
            idTotal += idCount
            rowTotal += ByteWriter.varintLength(UInt64(idCount)) + idCount + jsonCount(i)
        }
        var ends = [Int](repeating: 0, count: n)
        var indexEnds = [Int](repeating: 0, count: n)
        var positions = [UInt64](repeating: 0, count: n)
        rowKeyLength = prefix.count + 8
        var rowKeys = [UInt8](repeating: 0, count: n * rowKeyLength)
        var values = [UInt8](repeating: 0, count: n * 8)
        var indexKeys = [UInt8](repeating: 0, count: n * prefix.count + idTotal)
        var bytes = [UInt8](repeating: 0, count: rowTotal)
        let keyLength = rowKeyLength
        bytes.withUnsafeMutableBytes { out in
        indexKeys.withUnsafeMutableBytes { index in
        rowKeys.withUnsafeMutableBytes { keys in
        values.withUnsafeMutableBytes { values in
        prefix.withUnsafeBytes { prefix in
            var at = 0
            var indexAt = 0
            for i in 0..<n {
                let row = rows[i]
                var id = row.id
                id.withUTF8 { id in
                    at = ByteWriter.writeVarint(UInt64(id.count), into: out, at: at)
                    UnsafeMutableRawBufferPointer(rebasing: out[at..<(at + id.count)]).copyMemory(from: UnsafeRawBufferPointer(id))
                    at += id.count
                    UnsafeMutableRawBufferPointer(rebasing: index[indexAt..<(indexAt + prefix.count)]).copyMemory(from: prefix)
                    indexAt += prefix.count
                    UnsafeMutableRawBufferPointer(rebasing: index[indexAt..<(indexAt + id.count)]).copyMemory(from: UnsafeRawBufferPointer(id))
                    indexAt += id.count
                }
                json(i) { json in
                    UnsafeMutableRawBufferPointer(rebasing: out[at..<(at + json.count)]).copyMemory(from: json)
                    at += json.count
                }
                ends[i] = at
                indexEnds[i] = indexAt
                let position = Keys.position(page: page, index: i)
                positions[i] = position
                let key = UnsafeMutableRawBufferPointer(rebasing: keys[(i * keyLength)..<((i + 1) * keyLength)])
                key.copyMemory(from: prefix)
                key.storeBytes(of: position.bigEndian, toByteOffset: prefix.count, as: UInt64.self)
                values.storeBytes(of: position.bigEndian, toByteOffset: i * 8, as: UInt64.self)
            }
        }
        }
        }
        }
        }
        self.bytes = bytes
        self.ends = ends
        self.indexEnds = indexEnds
        self.positions = positions
        self.rowKeys = rowKeys
        self.values = values
        self.indexKeys = indexKeys
    }

    var count: Int { ends.count }

    /// Lends row `i`'s encoded bytes to `body`.
    func withRow<R, E: Error>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let start = i == 0 ? 0 : ends[i - 1]
        let result: Result<R, E> = bytes.withUnsafeBytes { all in
            do throws(E) {
                return .success(try body(UnsafeRawBufferPointer(rebasing: all[start..<ends[i]])))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The buffers, lent to `body` for the length of the call.
    func withBuffers<R>(_ body: (Buffers) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { bytes in
            try rowKeys.withUnsafeBytes { rowKeys in
                try indexKeys.withUnsafeBytes { indexKeys in
                    try values.withUnsafeBytes { values in
                        try ends.withUnsafeBufferPointer { ends in
                            try indexEnds.withUnsafeBufferPointer { indexEnds in
                                try body(Buffers(bytes: bytes, ends: ends, rowKeys: rowKeys, rowKeyLength: rowKeyLength,
                                                 indexKeys: indexKeys, indexEnds: indexEnds, values: values))
                            }
                        }
                    }
                }
            }
        }
    }

    /// Row `i`'s encoded bytes, its rows-table key, its index key and index value, read
    /// from the lent buffers.
    struct Buffers {
        let bytes: UnsafeRawBufferPointer
        let ends: UnsafeBufferPointer<Int>
        let rowKeys: UnsafeRawBufferPointer
        let rowKeyLength: Int
        let indexKeys: UnsafeRawBufferPointer
        let indexEnds: UnsafeBufferPointer<Int>
        let values: UnsafeRawBufferPointer

        func row(_ i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[(i == 0 ? 0 : ends[i - 1])..<ends[i]])
        }
        func rowKey(_ i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: rowKeys[(i * rowKeyLength)..<((i + 1) * rowKeyLength)])
        }
        func indexKey(_ i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: indexKeys[(i == 0 ? 0 : indexEnds[i - 1])..<indexEnds[i]])
        }
        func value(_ i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: values[(i * 8)..<((i + 1) * 8)])
        }
    }
}
