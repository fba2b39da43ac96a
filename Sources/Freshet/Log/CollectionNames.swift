import Foundation

/// The collection names of the records a log tool has decoded, so that a record of a known
/// collection gets the `String` made before (a copy: a name of up to 15 UTF-8 bytes is held
/// inline, a longer one costs a retain) instead of one validated and built anew per record —
/// about 160 instructions a record of W5 (docs/performance.md, "Issue 8 speed round 8 (reading
/// side)"). ``LogRecord/decode(_:expectedLSN:rows:ops:layout:names:)`` asks it.
///
/// The name is first guessed — the one that followed the previous record's name last time,
/// right both in a run of one collection's records and when collections take turns — and
/// compared; then looked up by hash. At most ``limit`` names are kept; others are built per
/// record, as without this.
struct CollectionNames {
    /// The names' UTF-8 bytes, one after the other; per name where its bytes are and the name
    /// that followed it last time (-1: none yet), and apart (so that reading a name's place
    /// does not copy, retain and release its `String`) the `String`s.
    private var bytes: [UInt8] = []
    private var names: [(start: Int, count: Int, next: Int)] = []
    private var strings: [String] = []
    private var index = ByteHashIndex()
    /// The name returned last (-1: none, or one not kept).
    private var last = -1

    /// How many names are kept.
    static let limit = 4096

    /// The collection name whose UTF-8 bytes are `raw`, nil when they are not UTF-8 (as
    /// ``Swift/String/validatingUTF8(_:)``).
    mutating func name(_ raw: UnsafeRawBufferPointer) -> String? {
        let previous = last
        if previous >= 0 {
            let guess = names[previous].next
            if guess >= 0, holds(guess, raw) {
                last = guess
                return strings[guess]
            }
        }
        let hash = ByteHashIndex.hash(raw)
        let found = index.find(hash: hash) { holds(Int($0), raw) }.map { Int($0.payload) }
        let number: Int
        if let found {
            number = found
        } else {
            guard let made = String.validatingUTF8(raw) else { return nil }
            guard names.count < Self.limit else {
                last = -1
                return made
            }
            number = names.count
            names.append((bytes.count, raw.count, -1))
            strings.append(made)
            bytes.append(contentsOf: raw)
            index.insert(UInt64(number), hash: hash)
        }
        if previous >= 0 { names[previous].next = number }
        last = number
        return strings[number]
    }

    /// Whether name `number` is `raw`'s bytes.
    private func holds(_ number: Int, _ raw: UnsafeRawBufferPointer) -> Bool {
        let entry = names[number]
        guard entry.count == raw.count else { return false }
        guard let base = raw.baseAddress else { return true }
        return bytes.withUnsafeBytes { memcmp($0.baseAddress.unsafelyUnwrapped + entry.start, base, entry.count) == 0 }
    }
}
