import Foundation

extension Store {
    /// Checks that `directory` holds a store, in the words opening one with `create` false
    /// uses (`DIR does not exist`, `DIR is a file, not a store directory`, `DIR holds no
    /// Freshet store (no data.mdb)`), without opening it: for a tool that opens the store for
    /// writing (`compact`), which must never create one. Nothing is changed.
    /// - Throws: ``StoreError/notAStore``; ``StoreError/storage`` when the path cannot be examined.
    public static func checkExisting(_ directory: URL) throws(StoreError) {
        _ = try StoreFiles.check(directory: directory.standardizedFileURL.path, create: false, shownAs: directory.relativePath)
    }
}
