/// What ``DataFile`` found wrong with an LMDB `data.mdb` before LMDB mapped it: the page
/// concerned (when one is) and one line for a person.
package struct DataFileDamage: Error, Sendable, Hashable, CustomStringConvertible {
    /// The page number (file offset divided by the page size), when the damage is on a page.
    package let page: Int?
    /// What is wrong, for a person.
    package let reason: String

    /// Whether the file is not an LMDB file at all (meta page 0 is too short or lacks LMDB's
    /// magic), rather than a damaged one.
    package let isNotLMDB: Bool

    /// Whether a read met the end of the file: ``DataFile/check(readingPagesInOneGo:)`` then
    /// reports the file as cut short when it ends before its meta page's last page.
    package let isPastEnd: Bool

    package init(page: Int?, _ reason: String, isNotLMDB: Bool = false, isPastEnd: Bool = false) {
        self.page = page
        self.reason = reason
        self.isNotLMDB = isNotLMDB
        self.isPastEnd = isPastEnd
    }

    package var description: String {
        if let page { return "page \(page): \(reason)" }
        return reason
    }
}
